//! What the processes of running steps use now, for `sstat` (`GET /slurmlet/v1/steps?stats=true`):
//! the processes below each step's supervisor, read from `/proc` once the scheduler's lock is
//! let go, and the daemon's tally of each step's GPU use.

use crate::api::acct::{GpuUse, StepId};
use crate::api::step_info::{StepInfo, StepStats};
use crate::daemon::http::caller::Caller;
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
            found.push(StatsSource { index, supervisor, except, gpu_use: core.gpu_use(s.job_id, s.step) });
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
        steps[source.index].stats = Some(stats);
    }
}
