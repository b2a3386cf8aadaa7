//! GPUs in use outside the queue, as the scheduler keeps them: what the last look found,
//! which free GPUs new jobs are kept off, and the processes to tell users of.

use super::{Core, Effects};
use crate::config::ForeignGpuProcesses;
use crate::daemon::gpu_use::{ForeignProcess, JobProcesses, RunningJob};
use std::collections::BTreeSet;

/// How many new processes outside the queue one look names in the log; the rest are
/// counted.
const LOGGED_PER_LOOK: usize = 8;

impl Core {
    /// The running jobs' and steps' supervisors and the jobs' directories, through which
    /// their processes are told from others.
    pub fn job_processes(&self) -> JobProcesses {
        let jobs = self
            .index
            .holding
            .iter()
            .map(|&id| {
                let job = self.jobs.get(&id);
                RunningJob {
                    id,
                    supervisor: job.and_then(|j| j.stepd_pid),
                    steps: self.steps.step_supervisors(id),
                    dir: self.job_dir(id),
                    has_gpus: job.is_some_and(|j| !j.gpus.is_empty()),
                }
            })
            .collect();
        JobProcesses { jobs }
    }

    /// Records the processes outside the queue the last look found; a scheduling pass is
    /// asked for when the GPUs they use are not those they used before.
    pub fn set_foreign_gpu_processes(&mut self, found: Vec<ForeignProcess>) -> Effects {
        let gpus = |list: &[ForeignProcess]| list.iter().map(|p| p.gpu).collect::<BTreeSet<u32>>();
        let changed = gpus(&found) != gpus(&self.gpu_watch.foreign_processes);
        if found != self.gpu_watch.foreign_processes {
            let known: std::collections::HashSet<(u32, u32)> =
                self.gpu_watch.foreign_processes.iter().map(|p| (p.gpu, p.pid)).collect();
            let new: Vec<&ForeignProcess> = found.iter().filter(|p| !known.contains(&(p.gpu, p.pid))).collect();
            for p in new.iter().take(LOGGED_PER_LOOK) {
                tracing::info!("{}", p.describe());
            }
            if new.len() > LOGGED_PER_LOOK {
                tracing::info!("and {} more processes outside the queue", new.len() - LOGGED_PER_LOOK);
            }
            self.gpu_watch.foreign_processes = found;
            self.gpu_watch.foreign_processes_since = crate::sys::now();
        }
        if changed {
            Effects::reschedule()
        } else {
            Effects::default()
        }
    }

    /// The processes outside the queue that use the node's GPUs, by GPU.
    pub fn foreign_gpu_processes(&self) -> &[ForeignProcess] {
        &self.gpu_watch.foreign_processes
    }

    /// When the processes outside the queue last changed.
    pub fn foreign_gpu_processes_since(&self) -> u64 {
        self.gpu_watch.foreign_processes_since
    }

    /// The GPUs new jobs are kept off: the drained ones, and those not held whole that a
    /// process outside the queue uses (free ones, and shared ones: no new shard job joins
    /// it), unless the configuration says to ignore such processes.
    pub(super) fn avoided_gpus(&self) -> BTreeSet<u32> {
        let mut avoided: BTreeSet<u32> = self.gpu_drains().keys().copied().collect();
        avoided.extend(self.failed_gpus().keys().copied());
        if self.config.foreign_gpu_processes != ForeignGpuProcesses::Ignore {
            let not_whole = |g: &u32| self.gpu_held(*g) != super::GpuHeld::Whole;
            avoided.extend(self.gpu_watch.foreign_processes.iter().map(|p| p.gpu).filter(not_whole));
        }
        avoided
    }
}
