//! slurmlet's own calls beside slurmrestd's: tokens (`scontrol token`), the configuration
//! (`scontrol show config`) and a job's batch script.

use super::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// The longest token lifespan Slurm issues, in seconds (`INT_MAX - 1`; `scontrol token
/// lifespan=infinite` asks for it).
pub const MAX_TOKEN_LIFESPAN: u64 = i32::MAX as u64 - 1;

/// Body of `POST /slurmlet/v1/token` (`scontrol token`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TokenRequest {
    /// Seconds the token is valid; `None`: Slurm's default (1800).
    pub lifespan: Option<u64>,
    /// The user the token is for; `None`: the caller. Only root may name another user.
    pub username: Option<String>,
}

/// Reply of `POST /slurmlet/v1/token`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct TokenResponse {
    /// The token (`SLURM_JWT`); empty on error.
    pub token: String,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// The daemon's configuration as `scontrol show config` reports it (`GET /slurmlet/v1/config`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ConfigInfo {
    /// `ClusterName`.
    pub cluster_name: String,
    /// `SlurmctldHost[0]`: the node the daemon schedules, which is also its controller.
    pub control_host: String,
    /// `BOOT_TIME`: when the daemon started (UNIX time).
    pub boot_time: u64,
    /// When the configuration was last read (UNIX time): `Configuration data as of`.
    pub last_update: u64,
    /// `KillWait` in seconds.
    pub kill_wait: u32,
    /// `MinJobAge` in seconds.
    pub min_job_age: u32,
    /// `MaxArraySize`.
    pub max_array_size: u32,
    /// `DefMemPerCPU` in MB; `None`: `DefMemPerNode = UNLIMITED`.
    pub def_mem_per_cpu: Option<u64>,
    /// `GresTypes` (`gpu`), empty when the node has no GPU.
    pub gres_types: String,
    /// Where the daemon's GPUs came from (`configured`, `nvml`, `nvidia-smi`, …), empty
    /// when it has none; slurmlet's own, shown as `SLURMLET_GPU_SOURCE`.
    pub gpu_source: String,
    /// Whether shard jobs run under MPS servers, when the configuration asks for them
    /// (`mps = true`): the control program the daemon starts them with, or why none runs;
    /// empty when MPS is not asked for. slurmlet's own, shown as `SLURMLET_MPS`.
    pub mps: String,
    /// `PrivateData` (`jobs`), empty for none.
    pub private_data: Vec<String>,
    /// `StateSaveLocation`.
    pub state_save_location: String,
    /// `SlurmUser`: the uid the daemon runs as.
    pub slurm_user_id: u32,
    /// `SlurmUser`: that uid's name.
    pub slurm_user_name: String,
    /// The `Cgroup Support Configuration` keys and their effective values, in Slurm's order
    /// (empty from a server that has none to tell).
    pub cgroup: Vec<(String, String)>,
}

/// Reply of `GET /slurmlet/v1/config`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ConfigResponse {
    pub config: ConfigInfo,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// Reply of `GET /slurmlet/v1/job/{job_id}/script`: the job's batch script, as submitted.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct BatchScriptResponse {
    /// The script (empty when `errors` says why there is none).
    pub script: String,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}
