//! The machine's activity as the board (`slurmlet board`) shows it, under `/slurmlet/v1/…`:
//! the GPU samples of the last week, each job's GPU use over its life, the queue in
//! scheduling order with the expected starts of the backfill plan, the GPU-hours and jobs of
//! each user, and a counter that moves whenever any of these changes. slurmrestd has none of
//! these calls.
//!
//! The shape is stable: fields are added, never renamed or removed. Times are Unix seconds,
//! sizes bytes, utilisation percent. Samples are `[time, memory_used, utilization]` triples,
//! so that a week of them stays small on the wire.

use super::types::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// One sample: `(time, memory_used, utilization)`. A GPU's sample is the mean of the looks
/// at it within one resolution step; a job's sums its processes over its GPUs.
pub type Sample = (i64, u64, u32);

/// One GPU's samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuSeries {
    /// Its device index (`CUDA_VISIBLE_DEVICES=0`).
    pub index: u32,
    /// Its memory, bytes; `None` when not known.
    pub total_memory: Option<u64>,
    /// Its samples, oldest first.
    pub samples: Vec<Sample>,
}

/// `GET /slurmlet/v1/gpus/samples?since=T`: the node's GPU samples since `since` (default: an
/// hour ago; the daemon keeps a week).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuSamplesResponse {
    /// Seconds between samples.
    pub resolution: u64,
    /// The time the samples start from.
    pub since: i64,
    /// One series per GPU, by index.
    pub gpus: Vec<GpuSeries>,
    /// Standard slurmrestd envelope.
    pub meta: Option<Meta>,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// `GET /slurmlet/v1/job/{job_id}/gpu_samples`: one job's GPU use over its life.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobGpuSamplesResponse {
    /// The job.
    pub job_id: u32,
    /// Seconds between samples.
    pub resolution: u64,
    /// Its samples, oldest first: the memory its processes held on its GPUs and their summed
    /// utilisation.
    pub samples: Vec<Sample>,
    /// Standard slurmrestd envelope.
    pub meta: Option<Meta>,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// A job as the board's queue lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct QueueJob {
    /// Its id as squeue shows it (`12`, or `10_3` for task 3 of array 10).
    pub job: String,
    /// Its own job id.
    pub job_id: u32,
    /// Its name.
    pub name: String,
    /// Its owner's name.
    pub user_name: String,
    /// Its owner's uid.
    pub user_id: u32,
    /// Its partition.
    pub partition: String,
    /// Its state as squeue's `%T` writes it (`RUNNING`, `PENDING`, …).
    pub state: String,
    /// Its pending reason (`Resources`, `Priority`, …); `None` when it has none.
    pub reason: Option<String>,
    /// When it was submitted.
    pub submit_time: i64,
    /// When it started; for a pending job, when the backfill plan expects it to start
    /// (`squeue --start`), `None` when the plan has no start for it.
    pub start_time: Option<i64>,
    /// Its time limit, seconds; `None` when unlimited.
    pub time_limit: Option<u64>,
    /// The GPUs it holds (running) or asks for (pending), by index when held.
    pub gpus: Vec<u32>,
    /// How many GPUs it asks for.
    pub gpu_count: u32,
    /// The shards it holds or asks for; 0 when none.
    pub shards: u32,
    /// Its CPUs.
    pub cpus: u32,
    /// Its priority (0 for a held job).
    pub priority: u32,
}

/// `GET /slurmlet/v1/queue?pending=N`: the running jobs and the first `N` pending ones
/// (default 200) in scheduling order, with the totals, as the caller may see them.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct QueueResponse {
    /// The change counter this reply was read at ([`ChangesResponse::generation`]).
    pub generation: u64,
    /// The time the daemon read it.
    pub now: i64,
    /// Running (and suspended) jobs, the longest running first.
    pub running: Vec<QueueJob>,
    /// Pending jobs in scheduling order, at most the `pending` asked for.
    pub pending: Vec<QueueJob>,
    /// All running jobs the caller may see.
    pub running_total: u32,
    /// All pending jobs the caller may see.
    pub pending_total: u32,
    /// Standard slurmrestd envelope.
    pub meta: Option<Meta>,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// One user's use of the machine over a window.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct UserUsage {
    /// The user's name.
    pub user_name: String,
    /// GPU-seconds their jobs held within the window (a shard counts its part of a GPU).
    pub gpu_seconds: u64,
    /// Jobs of theirs that ran within the window.
    pub jobs: u32,
}

/// `GET /slurmlet/v1/usage?days=N`: each user's use over the last `N` days (default 7).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct UsageResponse {
    /// The window's start.
    pub since: i64,
    /// The window's end (now).
    pub until: i64,
    /// One entry per user, the most GPU-seconds first.
    pub users: Vec<UserUsage>,
    /// Standard slurmrestd envelope.
    pub meta: Option<Meta>,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// `GET /slurmlet/v1/changes?after=G&wait=S`: the change counter, answered at once when it is
/// past `G`, else when it moves or after `S` seconds (at most 60).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ChangesResponse {
    /// Moves whenever a job is submitted, changes state or is updated, or the GPUs are looked
    /// at.
    pub generation: u64,
}
