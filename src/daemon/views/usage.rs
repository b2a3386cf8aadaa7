//! `GET /slurmlet/v1/usage?days=N`: each user's use of the GPUs over the last `N` days, from
//! the accounting records (the store's jobs, read on a connection of its own) and the jobs
//! the daemon holds in memory: the GPU-seconds their jobs held within the window (a shard
//! job counts its shards' part of a GPU) and how many of their jobs ran within it. Under
//! `private_data = ["usage"]` a caller who is not root or an operator sees their own row
//! only, as Slurm's `PrivateData=usage` keeps sshare and sreport to the caller's own.

use crate::daemon::model::job::Job;
use std::collections::BTreeMap;

/// The window, in days, when the caller gives none.
pub const DEFAULT_DAYS: u32 = 7;

/// The longest window a caller may ask for: ten years.
pub const MAX_DAYS: u32 = 3650;

/// What the usage counts of one job that ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// Its owner.
    pub uid: u32,
    /// When it started.
    pub start: u64,
    /// When it ended; 0 while it runs.
    pub end: u64,
    /// The GPUs it held: whole ones, plus its shards' part of one.
    pub gpus: f64,
}

impl Run {
    /// What counts of `job`, when it ran (`None`: it never started); a shard is
    /// `1 / shards_per_gpu` of a GPU.
    pub fn of(job: &Job, shards_per_gpu: u32) -> Option<Run> {
        (job.start_time > 0).then(|| Run {
            uid: job.uid,
            start: job.start_time,
            end: if job.state().is_finished() { job.end_time.max(job.start_time) } else { 0 },
            gpus: job.req.gpus as f64 + job.req.shards as f64 / shards_per_gpu.max(1) as f64,
        })
    }
}

/// Each user's `(GPU-seconds, jobs)` over `runs` within `[since, until]`, by uid.
pub fn tally(runs: &[Run], since: u64, until: u64) -> BTreeMap<u32, (f64, u32)> {
    let mut users: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
    for run in runs {
        let end = if run.end == 0 { until } else { run.end.min(until) };
        let start = run.start.max(since);
        if run.start > until || end < since {
            continue;
        }
        let user = users.entry(run.uid).or_default();
        user.0 += end.saturating_sub(start) as f64 * run.gpus;
        user.1 += 1;
    }
    users
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::{JobState, Resources};

    #[test]
    fn gpu_seconds_count_the_part_of_each_run_within_the_window() {
        let run = |uid, start, end, gpus| Run { uid, start, end, gpus };
        let runs = [
            run(1, 100, 200, 2.0), // all within: 200
            run(1, 50, 150, 1.0),  // half within: 50
            run(2, 900, 0, 0.25),  // running, to `until`: 25
            run(2, 10, 90, 4.0),   // ended before the window: not counted
            run(3, 1100, 0, 1.0),  // started after `until`: not counted
            run(3, 300, 300, 0.0), // a job without GPUs that ran: counted, 0 s
        ];
        let users = tally(&runs, 100, 1000);
        assert_eq!(users.get(&1), Some(&(250.0, 2)));
        assert_eq!(users.get(&2), Some(&(25.0, 1)));
        assert_eq!(users.get(&3), Some(&(0.0, 1)));
    }

    #[test]
    fn a_shard_counts_its_part_of_a_gpu_and_a_job_that_never_ran_nothing() {
        let req = Resources { cpus: 1, mem_mb: 0, gpus: 0, shards: 2, gpu_type: None };
        let job =
            Job { uid: 5, state: Some(JobState::Completed), start_time: 10, end_time: 20, req, ..Default::default() };
        assert_eq!(Run::of(&job, 8), Some(Run { uid: 5, start: 10, end: 20, gpus: 0.25 }));
        let running = Job { state: Some(JobState::Running), end_time: 0, ..job.clone() };
        assert_eq!(Run::of(&running, 8).map(|r| r.end), Some(0));
        assert_eq!(Run::of(&Job { start_time: 0, ..job }, 8), None);
    }
}
