//! The daemon's TOML configuration: the file as written ([`ConfigFile`]) and the
//! configuration the daemon runs with ([`Config`]), every numeric value checked against its
//! range ([`bounds`]) on the way. How the daemon is shared, and the defaults that follow from
//! it, are [`mode`]'s; which daemon the commands talk to is [`target`]'s.

pub mod accounts;
pub mod bounds;
pub mod cgroup;
mod file;
pub mod idle_gpus;
pub mod mode;
pub mod notify;
pub mod priority;
pub mod qos;
pub mod reload;
mod resolve;
pub mod target;

pub use file::*;
pub use mode::Mode;

use crate::gpu::GpuSetting;
use mode::{default_socket, default_state_dir};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A configuration that cannot be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown or mistyped keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// toml's message, with line and column.
        message: String,
    },
    /// A value that parses but makes no sense.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A number outside the range of its key ([`bounds`]).
    #[error("{path}: {which}")]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// The key, its value and its range.
        which: Box<bounds::OutOfRange>,
    },
}

/// What one user may hold at once (like a Slurm QOS's `MaxJobsPU`, `MaxSubmitPU` and
/// `MaxTRESPU=gres/gpu=N`), from the `[limits]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UserLimits {
    /// Running jobs per user; more wait with `QOSMaxJobsPerUserLimit`.
    pub max_running_jobs_per_user: Option<u32>,
    /// Pending and running jobs per user; a submit past it is refused.
    pub max_submitted_jobs_per_user: Option<u32>,
    /// GPUs in use per user; jobs that would pass it wait with `QOSMaxGRESPerUser`.
    pub max_gpus_per_user: Option<u32>,
}

/// Pending and running jobs one user may have when the configuration sets no
/// `max_submitted_jobs_per_user`: Slurm's default `MaxJobCount`, so that one user cannot
/// fill the daemon's memory and store.
pub const DEFAULT_MAX_SUBMITTED_JOBS_PER_USER: u32 = 10_000;

impl UserLimits {
    /// Whether a limit holds jobs back from starting (running jobs or GPUs per user).
    pub fn limits_starts(&self) -> bool {
        self.max_running_jobs_per_user.is_some() || self.max_gpus_per_user.is_some()
    }
}

/// A partition with its limits resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// Name.
    pub name: String,
    /// Default partition.
    pub default: bool,
    /// Max time in minutes; `None` is unlimited.
    pub max_time: Option<u32>,
    /// Default time in minutes; `None` means the max time.
    pub default_time: Option<u32>,
    /// Slurm's `PriorityJobFactor` (1 unless the file says otherwise).
    pub priority_job_factor: u32,
}

/// The resolved configuration the daemon runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The cluster's name (`SLURM_CLUSTER_NAME`, sacct's `Cluster`); `slurmlet` by default.
    pub cluster_name: String,
    /// The one node's name, as jobs and listings give it; the host's name by default.
    pub node_name: String,
    /// How many CPUs the scheduler hands out: the file's, or the machine's.
    pub cpus: u32,
    /// Memory in MB.
    pub memory: u64,
    /// What the file says of GPUs: a list, or nothing (the daemon detects them).
    pub gpu_setting: crate::gpu::GpuSetting,
    /// The GPUs scheduled: the configured ones, or those the daemon found at its start
    /// ([`Config::discover_gpus`]). Reading the configuration probes no hardware, so a
    /// client's copy has none when the file lists none: clients ask the daemon.
    pub gpus: Vec<crate::gpu::Gpu>,
    /// The NVML library loaded to detect GPUs.
    pub nvml_library: PathBuf,
    /// Seconds between two looks at the GPUs' processes; 0: never.
    pub gpu_sample_interval: u64,
    /// Seconds between two looks at a running job's memory ([`ConfigFile`]'s
    /// `job_acct_gather_frequency`).
    pub job_acct_gather_frequency: u64,
    /// Seconds each kept GPU sample stands for (at least 1).
    pub gpu_history_resolution: u64,
    /// Days the GPU samples are kept; 0: none are kept.
    pub gpu_history_days: u32,
    /// GPU memory in MiB above which a process outside the queue counts.
    pub foreign_gpu_memory_mib: u64,
    /// What a GPU in use outside the queue means to the scheduler.
    pub foreign_gpu_processes: ForeignGpuProcesses,
    /// Default memory per CPU.
    pub def_mem_per_cpu: Option<u64>,
    /// Partitions, the default one flagged.
    pub partitions: Vec<Partition>,
    /// KillWait seconds.
    pub kill_wait: u32,
    /// MinJobAge seconds.
    pub min_job_age: u32,
    /// Days finished jobs stay in the accounting history; `None`: forever.
    pub history_days: Option<u32>,
    /// Slurm's `MaxArraySize`: array indices must be below it.
    pub max_array_size: u32,
    /// Where the daemon keeps its store, its key and the jobs' directories.
    pub state_dir: PathBuf,
    /// The Unix socket the daemon serves its REST API on.
    pub socket: PathBuf,
    /// Hide GPUs from jobs that asked for none.
    pub hide_gpus_from_cpu_jobs: bool,
    /// The `[limits]` table: how many jobs and GPUs each user may hold.
    pub limits: UserLimits,
    /// How the daemon is shared.
    pub mode: Mode,
    /// Shards per GPU; 0: GPUs are given whole only.
    pub shards_per_gpu: u32,
    /// What happens to a shard job over its share of GPU memory.
    pub shard_memory: ShardMemory,
    /// Whether shard jobs run under a per-GPU MPS server.
    pub mps: bool,
    /// How jobs are to be confined (what the machine lets them be is worked out at start).
    pub cgroup: cgroup::Settings,
    /// The uids of the operators.
    pub operators: Vec<u32>,
    /// Whether other users' jobs are hidden from non-operators.
    pub private_jobs: bool,
    /// Whether other users' usage is hidden from non-operators (`private_data = ["usage"]`).
    pub private_usage: bool,
    /// The TCP address the REST API is also served on, if any.
    pub listen: Option<std::net::SocketAddr>,
    /// The configuration file this was read from (jobs' `SLURM_CONF`; it need not exist).
    pub path: PathBuf,
    /// The account of jobs that name none.
    pub default_account: String,
    /// The accounts each listed user (by uid) may charge, their default first; `None`: any
    /// account is accepted.
    pub accounts: Option<std::collections::BTreeMap<u32, Vec<String>>>,
    /// The tree of accounts with their shares and users (empty when the file has none).
    pub account_tree: accounts::AccountTree,
    /// The multifactor priority's weights and periods.
    pub priority: priority::PrioritySettings,
    /// The QOS, `normal` among them.
    pub qos: qos::QosList,
    /// What a preempted job undergoes by default (`Off`: nothing is preempted,
    /// `preempt_type = "preempt/none"`).
    pub preempt_mode: qos::PreemptMode,
    /// Seconds a preempted and requeued job waits before it may start again.
    pub requeue_delay: u32,
    /// Where the notices of `--mail-type` go.
    pub notify: notify::Notify,
    /// What happens to jobs whose GPUs stay idle (`None`: nothing).
    pub idle_gpus: Option<idle_gpus::IdleGpus>,
}

impl Config {
    /// The account a job of `uid` is charged to: the one it `asked` for, else the user's
    /// default. `Err` holds the accounts the user may charge when it asked for another.
    pub fn account_for(&self, uid: u32, asked: Option<&str>) -> Result<String, Vec<String>> {
        let fallback = std::slice::from_ref(&self.default_account);
        let allowed: Option<&[String]> = self.accounts.as_ref().map(|table| table.get(&uid).map_or(fallback, |a| a));
        match (asked.filter(|a| !a.is_empty()), allowed) {
            (Some(a), Some(allowed)) if !allowed.iter().any(|x| x == a) => Err(allowed.to_vec()),
            (Some(a), _) => Ok(a.to_string()),
            (None, Some(allowed)) => Ok(allowed[0].clone()),
            (None, None) => Ok(self.default_account.clone()),
        }
    }

    /// Loads `path` (a missing file means all defaults).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Self::resolve(Self::read(path)?, path)
    }

    /// Loads `path` for a daemon run in `mode` whatever the file says (`slurmletd --system`).
    pub fn load_as(path: &Path, mode: Mode) -> Result<Config, ConfigError> {
        let mut file = Self::read(path)?;
        file.mode = Some(mode);
        Self::resolve(file, path)
    }

    fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        Ok(match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str::<ConfigFile>(&text)
                .map_err(|e| ConfigError::Parse { path: path.to_path_buf(), message: e.to_string() })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ConfigFile::default(),
            Err(source) => return Err(ConfigError::Read { path: path.to_path_buf(), source }),
        })
    }

    /// Finds the machine's GPUs when the file lists none (see [`crate::gpu::sources`]), each
    /// typed by its model; the daemon does this once at its start and again when it re-reads
    /// the file, and logs what it found and where. Returns the name of the source they came
    /// from (`configured` for those the file lists).
    pub fn discover_gpus(&mut self) -> Option<String> {
        if self.gpu_setting != GpuSetting::Detect {
            // Listed in the file: read when the file was, with no hardware probed.
            return (!self.gpus.is_empty()).then(|| crate::gpu::Configured::NAME.to_string());
        }
        let found = crate::gpu::discover(&self.gpu_setting, &self.nvml_library);
        self.gpus = found.gpus;
        match &found.source {
            Some(source) => tracing::info!("GPUs found by {source}: {}", self.gres()),
            None => tracing::info!("no GPU found"),
        }
        found.source
    }

    /// The `gres` string of the node (`gpu:4`, `gpu:tesla:4`, `gpu:4,shard:32`, or `(null)`);
    /// GPUs of several types make a group each, in the order of their indices
    /// (`gpu:nvidia_a100:2,gpu:tesla_t4:1`).
    pub fn gres(&self) -> String {
        let groups = self.gpu_groups();
        if groups.is_empty() {
            return "(null)".into();
        }
        let typed = |name: &str, kind: Option<&str>, n: u32| match kind {
            Some(t) => format!("{name}:{t}:{n}"),
            None => format!("{name}:{n}"),
        };
        let mut items: Vec<String> = groups.iter().map(|&(kind, n)| typed("gpu", kind, n)).collect();
        // Shards take their GPUs' type, as Slurm's do.
        if self.shards_per_gpu > 0 {
            items.extend(groups.iter().map(|&(kind, n)| typed("shard", kind, n.saturating_mul(self.shards_per_gpu))));
        }
        items.join(",")
    }

    /// The node's GPU types, each with how many GPUs have it, in the order in which the
    /// GPUs (by index) first show them; `None` for GPUs of no known type.
    pub fn gpu_groups(&self) -> Vec<(Option<&str>, u32)> {
        let mut gpus: Vec<&crate::gpu::Gpu> = self.gpus.iter().collect();
        gpus.sort_by_key(|g| g.index);
        let mut groups: Vec<(Option<&str>, u32)> = Vec::new();
        for gpu in gpus {
            let kind = gpu.gres_type.as_deref();
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => groups.push((kind, 1)),
            }
        }
        groups
    }

    /// The node's shards in all (0 when GPUs are not split).
    pub fn shards(&self) -> u32 {
        self.shards_per_gpu.saturating_mul(self.gpus.len() as u32)
    }

    /// How many units of a GPU the scheduler counts: its shards, or 1 when GPUs are not
    /// split (a GPU given whole holds them all).
    pub fn gpu_units(&self) -> u32 {
        self.shards_per_gpu.max(1)
    }
}

#[cfg(test)]
mod tests;
