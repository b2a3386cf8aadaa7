//! The node's GPUs and who holds them, as `GET /slurmlet/v1/gpus` lists them for `slurmlet
//! gpus`. slurmrestd has no such call: its node object says only how many GPUs are given out
//! (`gres_used`); this one says which, to whom, and what the last look at the GPUs saw.
//!
//! The shape is stable: fields are added, never renamed or removed. Sizes are in bytes,
//! utilisation in percent; a figure that is not known is `null`.

use super::types::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// A job a GPU is given to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuJob {
    /// Its id as squeue shows it (`12`, or `10_3` for task 3 of array 10); `None` when
    /// `private_data` hides the job from the caller, as squeue would.
    pub job: Option<String>,
    /// Its own job id; `None` when hidden.
    pub job_id: Option<u32>,
    /// Its owner's uid; `None` when hidden.
    pub user_id: Option<u32>,
    /// Its owner's name; `None` when hidden.
    pub user_name: Option<String>,
    /// The GPU memory its processes held on this GPU at the last look, bytes; `None` before
    /// the first look, when the GPUs are not looked at, or when hidden.
    pub used_memory: Option<u64>,
    /// The shards of this GPU it holds; `None` when it holds the GPU whole, or when hidden.
    pub shards: Option<u32>,
    /// Its share of this GPU's memory (its shards' part of the GPU's memory), bytes; `None`
    /// when it holds the GPU whole, when the GPU's size is not known, or when hidden.
    pub share_bytes: Option<u64>,
    /// Since when (UNIX seconds) every GPU of the job has stayed below the `[idle_gpus]`
    /// policy's threshold, while they stay so; `None` when they do not, without the policy,
    /// or when hidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_since: Option<u64>,
}

impl GpuJob {
    /// Whether `private_data` hides the job from the caller.
    pub fn hidden(&self) -> bool {
        self.job.is_none()
    }
}

/// A process outside the queue that uses a GPU, as the last look at the GPUs found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuOutsider {
    /// Its pid, as the driver gave it.
    pub pid: u32,
    /// Its owner's name; `None` when the process is not in the daemon's pid namespace.
    pub user_name: Option<String>,
    /// Its command line, control characters escaped; `None` when unknown.
    pub command: Option<String>,
    /// The GPU memory it uses, bytes; `None` when the driver does not say.
    pub used_memory: Option<u64>,
}

/// One GPU of the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuStatus {
    /// Its device index (`CUDA_VISIBLE_DEVICES=0`).
    pub index: u32,
    /// Its UUID (`GPU-…`), when known.
    pub uuid: Option<String>,
    /// Its model (`NVIDIA A100-SXM4-40GB`), when known.
    pub name: Option<String>,
    /// Its type in the node's gres (`nvidia_a100-sxm4-40gb`), when it has one.
    pub gres_type: Option<String>,
    /// Memory in use, bytes, as the last look saw it.
    pub memory_used: Option<u64>,
    /// Memory in all, bytes.
    pub memory_total: Option<u64>,
    /// How busy it was lately, percent, as the last look saw it.
    pub utilization: Option<u32>,
    /// What the driver reported that cannot be true (`utilisation 400%`), and was set right
    /// to read as above; `None` when all was plausible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The shards it is split into (`shards_per_gpu`); 0 when GPUs are not split.
    pub shards: u32,
    /// The jobs it is given to (one that holds it whole, those that hold its shards, or none
    /// when it is free).
    pub jobs: Vec<GpuJob>,
    /// The processes outside the queue that use it.
    pub outside_queue: Vec<GpuOutsider>,
    /// Why the GPU is out of service (an XID event, memory waiting for a reset, the GPU
    /// lost), until an administrator puts it back; `None` while it serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// Reply of `POST /slurmlet/v1/gpus/{index}/resume`: the GPUs put back in service.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpuResumeResponse {
    /// Their indices.
    pub resumed: Vec<u32>,
    /// slurmrestd's `meta`.
    pub meta: Meta,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// Reply of `GET /slurmlet/v1/gpus`: every GPU of the node by index, and when its figures
/// were taken.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GpusResponse {
    /// The GPUs.
    pub gpus: Vec<GpuStatus>,
    /// When the figures were taken (UNIX seconds); `None` before the first look, or when the
    /// GPUs are not looked at.
    pub sampled_at: Option<u64>,
    /// How often the GPUs are looked at, seconds; 0 when they are not (`gpu_sample_interval
    /// = 0`, or GPUs that no driver reports on, such as configured ones).
    pub sample_interval: u64,
    /// The usual `meta`.
    pub meta: Meta,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}
