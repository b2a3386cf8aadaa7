//! The GPU samples the daemon keeps ([`GpuHistory`]): the looks at the GPUs are averaged in
//! memory over steps of `gpu_history_resolution` seconds; when a look falls in a later step,
//! the one before is closed and its means go to the store, one row per GPU and one per job.

use crate::daemon::store::gpu_samples::StepSamples;
use std::collections::BTreeMap;

/// The sums of the looks within one step, for their mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mean {
    looks: u64,
    memory: u128,
    util: u64,
}

impl Mean {
    fn add(&mut self, memory: u64, util: u32) {
        self.looks += 1;
        self.memory += memory as u128;
        self.util += util as u64;
    }

    /// `(memory, utilisation)`, the means of the looks counted.
    fn figures(&self) -> (u64, u32) {
        let looks = self.looks.max(1);
        ((self.memory / looks as u128) as u64, (self.util / looks) as u32)
    }
}

/// The looks within the open step.
#[derive(Debug, Clone, Default)]
struct OpenStep {
    /// Its start, UNIX seconds.
    start: u64,
    /// Each GPU's sums, by index.
    gpus: BTreeMap<u32, Mean>,
    /// Each job's sums, by id.
    jobs: BTreeMap<u32, Mean>,
}

impl OpenStep {
    /// Its means so far.
    fn figures(&self) -> StepSamples {
        let row = |(&key, mean): (&u32, &Mean)| {
            let (memory, util) = mean.figures();
            (key, memory, util)
        };
        StepSamples {
            time: self.start as i64,
            gpus: self.gpus.iter().map(row).collect(),
            jobs: self.jobs.iter().map(row).collect(),
        }
    }
}

/// The step still open and the last one closed.
#[derive(Debug, Clone)]
pub struct GpuHistory {
    resolution: u64,
    open: Option<OpenStep>,
    /// The step closed last, until the next closes: the store may not have it yet.
    last_closed: Option<StepSamples>,
}

impl GpuHistory {
    /// No samples yet, in steps of `resolution` seconds (at least 1).
    pub fn new(resolution: u64) -> GpuHistory {
        GpuHistory { resolution: resolution.max(1), open: None, last_closed: None }
    }

    /// Seconds per step.
    pub fn resolution(&self) -> u64 {
        self.resolution
    }

    /// Counts one look at UNIX time `at`, which saw `gpus` (`(index, memory used,
    /// utilisation)`) and `jobs` (`(job, memory, utilisation)`, summed over each job's
    /// processes). Returns the step it closed when it falls in a later step than the open
    /// one.
    pub fn look(&mut self, at: u64, gpus: &[(u32, u64, u32)], jobs: &[(u32, u64, u32)]) -> Option<StepSamples> {
        let step = at - at % self.resolution;
        let closed = match &self.open {
            Some(open) if open.start < step => self.open.take().map(|o| o.figures()),
            _ => None,
        };
        let open = self.open.get_or_insert_with(|| OpenStep { start: step, ..Default::default() });
        for &(index, memory, util) in gpus {
            open.gpus.entry(index).or_default().add(memory, util);
        }
        for &(job, memory, util) in jobs {
            open.jobs.entry(job).or_default().add(memory, util);
        }
        if let Some(c) = &closed {
            self.last_closed = Some(c.clone());
        }
        closed
    }

    /// The steps the store may not have yet: the one closed last, then the open one's means
    /// so far.
    pub fn unstored(&self) -> Vec<StepSamples> {
        let open = self.open.as_ref().map(OpenStep::figures);
        self.last_closed.iter().cloned().chain(open).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn looks_are_averaged_per_step_and_a_later_look_closes_the_step() {
        let mut h = GpuHistory::new(60);
        assert!(h.unstored().is_empty());
        assert_eq!(h.look(125, &[(0, 2 * GIB, 40), (1, 0, 0)], &[(7, GIB, 30)]), None);
        assert_eq!(h.look(170, &[(0, 4 * GIB, 80)], &[(7, 3 * GIB, 50)]), None);
        let open = StepSamples { time: 120, gpus: vec![(0, 3 * GIB, 60), (1, 0, 0)], jobs: vec![(7, 2 * GIB, 40)] };
        assert_eq!(h.unstored(), std::slice::from_ref(&open), "the open step's means so far");
        // A look in a later step closes it; the job, gone, has no row in the next.
        let closed = h.look(185, &[(0, GIB, 10)], &[]).expect("closed");
        assert_eq!(closed, open);
        let next = StepSamples { time: 180, gpus: vec![(0, GIB, 10)], jobs: vec![] };
        assert_eq!(h.unstored(), [open, next]);
        // A step with no look in it has no samples: the next look closes the one before.
        let closed = h.look(400, &[(0, 0, 0)], &[]).expect("closed");
        assert_eq!(closed.time, 180);
        assert_eq!(GpuHistory::new(0).resolution(), 1);
    }
}
