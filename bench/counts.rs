//! How many jobs, processes and samples each figure uses: the full sizes, scaled by
//! `--scale`, or tiny ones for `--smoke`.

/// The sizes of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Counts {
    /// Timed `sbatch` runs per queue state (figure 1).
    pub sbatch_runs: usize,
    /// Timed `sbatch` runs against real Slurm per queue state (figure 1).
    pub real_sbatch_runs: usize,
    /// Held jobs queued for the second half of figure 1.
    pub queued_held: usize,
    /// Sequential `sbatch` processes (figure 2).
    pub seq_sbatch: usize,
    /// REST submits (figure 2).
    pub rest_submits: usize,
    /// Concurrent keep-alive connections for REST submits (figure 2) and for filling stores.
    pub connections: usize,
    /// GPUs of the daemon under test.
    pub gpus: usize,
    /// Jobs per GPU in the dispatch queue (figure 3).
    pub dispatch_rounds: usize,
    /// How long each dispatch job sleeps between its stamps, in ms (figure 3).
    pub dispatch_sleep_ms: u64,
    /// Trivial jobs run through the queue (figure 4).
    pub trivial_jobs: usize,
    /// Trivial jobs run through real Slurm (figure 4), which starts about one a second.
    pub real_trivial_jobs: usize,
    /// Store sizes at which `squeue` is timed (figure 5); the last one is used by figure 6.
    pub store_levels: Vec<usize>,
    /// Timed `squeue` runs per store size (figure 5), in the order of `store_levels`.
    pub squeue_runs: Vec<usize>,
    /// Timed `squeue --json` runs per store size (figure 5).
    pub squeue_json_runs: Vec<usize>,
    /// Timed daemon restarts (figure 6).
    pub restarts: usize,
    /// Pending jobs of mixed sizes for the scheduler pass (figure 7).
    pub pending_mixed: usize,
    /// Timed submits per queue state for the scheduler pass (figure 7).
    pub pass_samples: usize,
    /// Timed `srun true` runs (figure 8).
    pub srun_runs: usize,
    /// Mebibytes a step writes to its stdout (figure 8).
    pub srun_mib: usize,
}

impl Counts {
    /// The full sizes, with every job or queue count multiplied by `scale` (sample counts
    /// are kept so that medians stay meaningful).
    pub fn full(scale: f64) -> Counts {
        let s = |n: usize| ((n as f64 * scale).round() as usize).max(1);
        Counts {
            sbatch_runs: 500,
            real_sbatch_runs: 100,
            queued_held: s(10_000),
            seq_sbatch: s(2_000),
            rest_submits: s(20_000),
            connections: 8,
            gpus: 8,
            dispatch_rounds: s(50).max(2),
            dispatch_sleep_ms: 50,
            trivial_jobs: s(2_000),
            real_trivial_jobs: s(100).min(s(2_000)),
            store_levels: vec![s(1_000), s(10_000), s(100_000)],
            squeue_runs: vec![50, 30, 10],
            squeue_json_runs: vec![20, 10, 5],
            restarts: 5,
            pending_mixed: s(10_000),
            pass_samples: 200,
            srun_runs: 100,
            srun_mib: 100,
        }
    }

    /// Tiny sizes that only check that every figure works (a few seconds in all).
    pub fn smoke() -> Counts {
        Counts {
            sbatch_runs: 10,
            real_sbatch_runs: 3,
            queued_held: 50,
            seq_sbatch: 20,
            rest_submits: 200,
            connections: 8,
            gpus: 8,
            dispatch_rounds: 2,
            dispatch_sleep_ms: 20,
            trivial_jobs: 10,
            real_trivial_jobs: 3,
            store_levels: vec![20, 50, 100],
            squeue_runs: vec![3, 3, 3],
            squeue_json_runs: vec![2, 2, 2],
            restarts: 2,
            pending_mixed: 50,
            pass_samples: 10,
            srun_runs: 3,
            srun_mib: 4,
        }
    }
}
