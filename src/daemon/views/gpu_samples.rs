//! `GET /slurmlet/v1/gpus/samples` and `GET /slurmlet/v1/job/{job_id}/gpu_samples`: the GPU
//! samples the daemon keeps for the board, read from the store on a connection of its own
//! (without the daemon's lock), followed by those the store may not have yet: the step
//! closed last, and the open one's means so far.

use crate::api::activity::Sample;
use crate::daemon::store::gpu_samples::StepSamples;

/// How far back the GPU samples go when the caller gives no `since`: an hour.
pub const DEFAULT_SPAN_SECS: i64 = 3600;

/// `kept` (the store's samples, oldest first) followed by the samples `pick` finds in the
/// `unstored` steps that start at or after `since` and after the last kept one.
pub fn followed(
    mut kept: Vec<Sample>,
    unstored: &[StepSamples],
    since: i64,
    pick: impl Fn(&StepSamples) -> Option<(u64, u32)>,
) -> Vec<Sample> {
    for step in unstored {
        let later = kept.last().is_none_or(|(t, _, _)| step.time > *t);
        if step.time >= since && later {
            if let Some((memory, util)) = pick(step) {
                kept.push((step.time, memory, util));
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unstored_steps_follow_the_kept_samples_once() {
        let step = |time: i64, util: u32| StepSamples { time, gpus: vec![(0, 5, util)], jobs: vec![] };
        let pick = |s: &StepSamples| s.gpus.first().map(|&(_, m, u)| (m, u));
        // The last closed step is in the store already: only the open one follows.
        let kept = vec![(60, 5, 1), (120, 5, 2)];
        assert_eq!(
            followed(kept.clone(), &[step(120, 2), step(180, 3)], 0, pick),
            [(60, 5, 1), (120, 5, 2), (180, 5, 3)]
        );
        // Not yet stored: both follow.
        assert_eq!(followed(vec![(60, 5, 1)], &[step(120, 2), step(180, 3)], 0, pick).len(), 3);
        // Before `since`: left out.
        assert_eq!(followed(Vec::new(), &[step(120, 2), step(180, 3)], 150, pick), [(180, 5, 3)]);
        // A step without the GPU adds nothing.
        assert_eq!(followed(kept.clone(), &[StepSamples { time: 180, ..Default::default() }], 0, pick), kept);
    }
}
