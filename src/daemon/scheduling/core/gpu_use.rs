//! Each running job's and step's GPU use, as the scheduler keeps it between looks at the
//! GPUs: tallied at each look, taken into the step's record when it ends.

use super::Core;
use crate::api::acct::{GpuUse, StepId};
use crate::daemon::gpu_use::{JobProcesses, Owner};
use crate::gpu::{GpuProcess, GpuSample};
use std::collections::HashMap;

impl Core {
    /// Counts one look at the GPUs into the tallies of the running jobs of `jobs` and of
    /// their running steps: each gets the sums of the memory and SM utilisation of its
    /// processes among `processes` (found by `owners`), 0 when none was seen. A job given no
    /// GPUs is counted only once one of its processes was seen on one.
    pub fn tally_gpu_use(&mut self, processes: &[GpuProcess], owners: &HashMap<u32, Owner>, jobs: &JobProcesses) {
        let mut sums: HashMap<Owner, (u64, u32)> = HashMap::new();
        for p in processes {
            if let Some(owner) = owners.get(&p.pid) {
                let sum = sums.entry(*owner).or_default();
                sum.0 += p.used_memory.unwrap_or(0);
                sum.1 += p.sm_util.unwrap_or(0);
            }
        }
        for job in &jobs.jobs {
            if !self.holding.contains(&job.id) {
                continue;
            }
            // Only the steps still running: one that ended since the look has its record.
            let running = self.steps.running(job.id);
            let keys: Vec<Owner> = std::iter::once(StepId::Batch)
                .chain(job.steps.iter().filter(|(s, _)| running.contains(s)).map(|&(s, _)| StepId::Number(s)))
                .map(|step| (job.id, step))
                .collect();
            let watched = job.has_gpus || keys.iter().any(|k| sums.contains_key(k) || self.gpu_tallies.contains_key(k));
            if !watched {
                continue;
            }
            for key in keys {
                let (memory, util) = sums.get(&key).copied().unwrap_or_default();
                self.gpu_tallies.entry(key).or_default().add(memory, util);
            }
        }
    }

    /// Keeps what the last look at the GPUs saw, for the views of the GPUs.
    pub fn set_gpu_sample(&mut self, sample: GpuSample) {
        self.gpu_sample = Some((crate::options::now(), sample));
    }

    /// What the last look at the GPUs saw and when; `None` before the first, or when the
    /// GPUs are not looked at.
    pub fn gpu_sample(&self) -> Option<&(u64, GpuSample)> {
        self.gpu_sample.as_ref()
    }

    /// The GPU use of step `step` of job `job` so far (`None`: not watched).
    pub fn gpu_use(&self, job: u32, step: StepId) -> Option<GpuUse> {
        self.gpu_tallies.get(&(job, step)).and_then(|t| t.figures())
    }

    /// Takes the GPU use of step `step` of job `job`, which ended.
    pub(super) fn take_gpu_use(&mut self, job: u32, step: StepId) -> Option<GpuUse> {
        self.gpu_tallies.remove(&(job, step)).and_then(|t| t.figures())
    }

    /// Forgets the tallies of job `job`, which ended.
    pub(super) fn forget_gpu_use(&mut self, job: u32) {
        self.gpu_tallies.retain(|(j, _), _| *j != job);
    }
}
