//! What the processes of running steps use now, for `sstat` (`GET /slurmlet/v1/steps?stats=true`):
//! the processes below each step's supervisor, read from `/proc` once the scheduler's lock is
//! let go, and the daemon's tally of each step's GPU use. Where the job is contained in
//! cgroups, its step's group gives its memory peak and CPU time, those of processes gone
//! already included.

use crate::api::acct::{GpuUse, StepId};
use crate::api::step_info::{StepInfo, StepStats};
use crate::daemon::model::caller::Caller;
use crate::daemon::scheduling::core::Core;
use crate::daemon::supervision::process_tree::ProcessTree;

/// Where to find one listed step's processes: below `supervisor`, except below `except` (a
/// batch script's supervisor may have its steps' below it).
#[derive(Debug, Clone)]
pub struct StatsSource {
    /// The step's index in the listing.
    pub index: usize,
    /// Its supervisor.
    pub supervisor: i32,
    /// Supervisors whose processes are not the step's.
    pub except: Vec<i32>,
    /// Its GPU use so far.
    pub gpu_use: Option<GpuUse>,
    /// Its job's directory, whose `cgroup` file lists the job's groups.
    pub job_dir: std::path::PathBuf,
    /// Its group's name below the job's (`step_batch`, `step_0`).
    pub group: String,
}

/// For each of `steps` that `caller` may look into (its own, or any for a privileged caller),
/// where its processes are; read under the scheduler's lock.
pub fn sources(core: &Core, steps: &[StepInfo], caller: Caller) -> Vec<StatsSource> {
    let privileged = caller.privileged(&core.config);
    let mut found = Vec::new();
    for (index, s) in steps.iter().enumerate() {
        if !privileged && s.user_id != caller.uid {
            continue;
        }
        let (supervisor, except) = match s.step {
            StepId::Batch => (core.job_supervisor(s.job_id), core.steps.supervisors(s.job_id)),
            StepId::Number(n) => (core.steps.supervisor(s.job_id, n), Vec::new()),
            _ => (None, Vec::new()),
        };
        if let Some(supervisor) = supervisor {
            found.push(StatsSource {
                index,
                supervisor,
                except,
                gpu_use: core.gpu_use(s.job_id, s.step),
                job_dir: core.job_dir(s.job_id),
                group: format!("step_{}", s.step),
            });
        }
    }
    found
}

/// Fills in the stats of the steps `sources` names, from one reading of `/proc`.
pub fn fill(steps: &mut [StepInfo], sources: &[StatsSource]) {
    if sources.is_empty() {
        return;
    }
    let tree = ProcessTree::read();
    for source in sources {
        let processes = tree.descendants(source.supervisor, &source.except);
        let mut stats = StepStats { gpu_use: source.gpu_use, ..Default::default() };
        for (pid, u) in &processes {
            stats.pids.push(*pid as u32);
            stats.cpu_usec += u.cpu_usec;
            stats.rss_max_kb = stats.rss_max_kb.max(u.rss_kb);
            stats.rss_total_kb += u.rss_kb;
            stats.vsize_max_kb = stats.vsize_max_kb.max(u.vsize_kb);
            stats.vsize_total_kb += u.vsize_kb;
        }
        contained_figures(source, &mut stats);
        steps[source.index].stats = Some(stats);
    }
}

/// Where the step's job is contained in cgroups, its step group's memory peak (all its
/// processes together) and CPU time in place of the sums over the processes alive now.
fn contained_figures(source: &StatsSource, stats: &mut StepStats) {
    use crate::stepd::containment::{cgroup::plan::read_job_groups, JOB_CGROUPS};
    let groups: Vec<_> =
        read_job_groups(&source.job_dir.join(JOB_CGROUPS)).iter().map(|g| g.child(&source.group)).collect();
    if let Some(peak) = groups.iter().find_map(|g| g.memory_peak()) {
        stats.rss_max_kb = peak / 1024;
    }
    if let Some((user, system)) = groups.iter().find_map(|g| g.cpu_times()) {
        stats.cpu_usec = user + system;
    }
}
