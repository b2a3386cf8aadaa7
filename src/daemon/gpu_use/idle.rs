//! How busy a job keeps its GPUs, look by look, and how long it has kept every one of them
//! below a threshold: the measure of the `[idle_gpus]` policy.
//!
//! A GPU given whole is as busy as the driver reads the GPU (its utilisation, what
//! `nvidia-smi` and jobstats show). A shard job shares its GPU, so it counts its own
//! processes' SM utilisation. A GPU none of the job's processes is on, where the driver does
//! not read the GPU itself, is idle (0%). A reading that cannot be had (a MIG instance, a
//! process whose use the driver does not report) makes the job's look unknown, and an
//! unknown look stops the clock: what cannot be seen is never called idle.

use super::foreign::node_index;
use super::share::reading_of;
use super::Owner;
use crate::gpu::{Gpu, GpuSample};
use std::collections::{HashMap, HashSet};

/// How busy each GPU of job `job` (given `gpus` of the node's `node_gpus`, whole unless
/// `shared`) was at the look that saw `sample`: `(index, percent)` per GPU, or `None` when
/// one of them cannot be read.
pub fn job_busy(
    job: u32,
    gpus: &[Gpu],
    shared: bool,
    sample: &GpuSample,
    owners: &HashMap<u32, Owner>,
    node_gpus: &[Gpu],
) -> Option<Vec<(u32, u32)>> {
    gpus.iter()
        .map(|gpu| {
            let whole = reading_of(gpu, &sample.gpus).and_then(|r| r.utilization).filter(|_| !shared);
            let busy = match whole {
                Some(percent) => Some(percent),
                None => processes_busy(job, gpu.index, sample, owners, node_gpus),
            };
            busy.map(|b| (gpu.index, b.min(100)))
        })
        .collect()
}

/// The SM utilisation of job `job`'s processes on GPU `index`, summed; 0 with none there,
/// `None` when one of them has no reading.
fn processes_busy(
    job: u32,
    index: u32,
    sample: &GpuSample,
    owners: &HashMap<u32, Owner>,
    node_gpus: &[Gpu],
) -> Option<u32> {
    let mine = sample.processes.iter().filter(|p| {
        owners.get(&p.pid).is_some_and(|(j, _)| *j == job) && node_index(node_gpus, &p.gpu_uuid) == Some(index)
    });
    mine.map(|p| p.sm_util).try_fold(0u32, |sum, u| u.map(|u| sum.saturating_add(u)))
}

/// Since when a job has kept every GPU below the threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleClock {
    /// The start of its run that is measured (a requeued job's next run starts afresh).
    pub start_time: u64,
    /// The first look of the idle stretch (UNIX seconds).
    pub since: u64,
    /// How busy each of its GPUs was at the last look.
    pub busy: Vec<(u32, u32)>,
    /// Whether the policy has acted on it already (a job is warned or cancelled once).
    pub acted: bool,
}

/// The clocks of the running jobs whose GPUs are idle.
#[derive(Debug, Default)]
pub struct IdleClocks(HashMap<u32, IdleClock>);

impl IdleClocks {
    /// Counts one look at `now` for job `job` (run started at `start_time`): `busy` as
    /// [`job_busy`] read it, against `below` percent. Returns how long it has been idle when
    /// that reached `after` seconds and the policy has not acted on it yet.
    pub fn look(
        &mut self,
        job: u32,
        start_time: u64,
        busy: Option<Vec<(u32, u32)>>,
        below: u32,
        after: u64,
        now: u64,
    ) -> Option<u64> {
        let Some(busy) = busy.filter(|b| !b.is_empty() && b.iter().all(|(_, percent)| *percent < below)) else {
            self.0.remove(&job);
            return None;
        };
        let clock =
            self.0.entry(job).or_insert_with(|| IdleClock { start_time, since: now, busy: Vec::new(), acted: false });
        if clock.start_time != start_time {
            *clock = IdleClock { start_time, since: now, busy: Vec::new(), acted: false };
        }
        clock.busy = busy;
        let idle_for = now.saturating_sub(clock.since);
        (idle_for >= after && !clock.acted).then_some(idle_for)
    }

    /// Notes that the policy acted on job `job`.
    pub fn acted(&mut self, job: u32) {
        if let Some(clock) = self.0.get_mut(&job) {
            clock.acted = true;
        }
    }

    /// Forgets the jobs not in `running`.
    pub fn keep_only(&mut self, running: &HashSet<u32>) {
        self.0.retain(|job, _| running.contains(job));
    }

    /// Job `job`'s clock, while its GPUs are idle.
    pub fn of(&self, job: u32) -> Option<&IdleClock> {
        self.0.get(&job)
    }

    /// Forgets every clock (the policy was turned off).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::StepId;
    use crate::gpu::{GpuProcess, GpuReading};

    fn gpu(index: u32, uuid: &str) -> Gpu {
        Gpu { uuid: Some(uuid.into()), ..Gpu::nvidia(index) }
    }

    fn sample(utilization: Option<u32>, processes: Vec<(u32, Option<u32>)>) -> GpuSample {
        GpuSample {
            gpus: vec![GpuReading { uuid: "GPU-a".into(), utilization, ..Default::default() }],
            processes: processes
                .into_iter()
                .map(|(pid, sm_util)| GpuProcess { gpu_uuid: "GPU-a".into(), pid, used_memory: None, sm_util })
                .collect(),
            troubles: Vec::new(),
        }
    }

    #[test]
    fn a_whole_gpu_reads_as_the_driver_reads_it_and_a_share_by_its_processes() {
        let node = [gpu(0, "GPU-a")];
        let owners: HashMap<u32, Owner> = [(10, (7, StepId::Batch)), (11, (8, StepId::Batch))].into();
        let s = sample(Some(60), vec![(10, Some(3)), (11, Some(57))]);
        assert_eq!(job_busy(7, &node, false, &s, &owners, &node), Some(vec![(0, 60)]));
        assert_eq!(job_busy(7, &node, true, &s, &owners, &node), Some(vec![(0, 3)]));
        // No reading of the GPU: the job's processes; none there is idle; one unread is unknown.
        assert_eq!(job_busy(7, &node, false, &sample(None, vec![]), &owners, &node), Some(vec![(0, 0)]));
        assert_eq!(job_busy(7, &node, false, &sample(None, vec![(10, None)]), &owners, &node), None);
    }

    #[test]
    fn the_clock_runs_while_every_gpu_stays_below_and_stops_at_a_busy_or_unknown_look() {
        let mut clocks = IdleClocks::default();
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 1), (1, 4)]), 5, 60, 200), None);
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0), (1, 4)]), 5, 60, 259), None);
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0), (1, 0)]), 5, 60, 260), Some(60));
        clocks.acted(7);
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0), (1, 0)]), 5, 60, 300), None, "acted on once");
        assert_eq!(clocks.of(7).map(|c| c.since), Some(200));
        // One GPU busy: the job uses its GPUs, and its clock starts again later.
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0), (1, 5)]), 5, 60, 310), None);
        assert_eq!(clocks.of(7), None);
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0), (1, 0)]), 5, 60, 320), None);
        assert_eq!(clocks.look(7, 100, None, 5, 60, 400), None, "unknown stops it");
        assert_eq!(clocks.of(7), None);
        // A new run of the job starts afresh.
        assert_eq!(clocks.look(7, 100, Some(vec![(0, 0)]), 5, 10, 500), None);
        assert_eq!(clocks.look(7, 600, Some(vec![(0, 0)]), 5, 10, 605), None);
        assert_eq!(clocks.of(7).map(|c| c.since), Some(605));
        clocks.keep_only(&HashSet::new());
        assert_eq!(clocks.of(7), None);
    }
}
