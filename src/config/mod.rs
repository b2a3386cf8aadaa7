//! The daemon's TOML configuration: the file as written ([`ConfigFile`]) and the
//! configuration the daemon runs with ([`Config`]), every numeric value checked against its
//! range ([`bounds`]) on the way. How the daemon is shared, and the defaults that follow from
//! it, are [`mode`]'s; which daemon the commands talk to is [`target`]'s.

pub mod bounds;
pub mod cgroup;
mod file;
pub mod mode;
pub mod reload;
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
    /// GPU type, if any: the configured one, or the one the found GPUs share.
    pub gpu_type: Option<String>,
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

    /// Fills in defaults and checks values: a number outside its key's range
    /// ([`bounds`]) is refused, naming the key, the value and the range.
    // Longer than clippy.toml's bound: split in the daemon's refactor.
    #[allow(clippy::too_many_lines)]
    pub fn resolve(file: ConfigFile, path: &Path) -> Result<Config, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { path: path.to_path_buf(), message };
        let out_of_range =
            |which: bounds::OutOfRange| ConfigError::OutOfRange { path: path.to_path_buf(), which: Box::new(which) };
        let (gpu_setting, gpu_type, gpu_files) = match file.gpus {
            Some(GpuConfig::Count(n)) => {
                let n: u32 = bounds::GPUS.read("gpus", n).map_err(out_of_range)?;
                (GpuSetting::Configured((0..n).collect()), None, None)
            }
            Some(GpuConfig::List { kind, ids, files }) => {
                if files.as_ref().is_some_and(|f| f.len() != ids.len()) {
                    return Err(invalid(format!(
                        "gpus: {} files for {} ids: give one device file per GPU, in the order of ids",
                        files.as_ref().map_or(0, Vec::len),
                        ids.len()
                    )));
                }
                (GpuSetting::Configured(gpu_ids(&ids).map_err(out_of_range)?), kind, files)
            }
            None => (GpuSetting::Detect, None, None),
        };
        if let GpuSetting::Configured(ids) = &gpu_setting {
            let mut seen = std::collections::BTreeSet::new();
            if let Some(twice) = ids.iter().find(|&&id| !seen.insert(id)) {
                return Err(invalid(format!(
                    "gpus: id {twice} is listed twice: each GPU may be given to one job at a time"
                )));
            }
        }
        let nvml_library = file.nvml_library.unwrap_or_else(|| crate::gpu::DEFAULT_NVML_LIBRARY.into());
        let mut found = match &gpu_setting {
            GpuSetting::Configured(_) => crate::gpu::discover(&gpu_setting, &nvml_library),
            GpuSetting::Detect => crate::gpu::Found::default(),
        };
        for (gpu, file) in found.gpus.iter_mut().zip(gpu_files.into_iter().flatten()) {
            gpu.devices = vec![file];
        }
        let parse_time = |field: &str, part: &str, v: &Option<String>| -> Result<Option<u32>, ConfigError> {
            let Some(t) = v else { return Ok(None) };
            let secs = crate::options::time::parse_time_secs(t, "time")
                .map_err(|_| invalid(format!("partition {part}: invalid {field} '{t}'")))?;
            // Checked before the limit is read, which would hold a longer one to the longest.
            if let Some(minutes) = secs.map(|s| s.div_ceil(60)) {
                let key = format!("partition {part}: {field}");
                bounds::PARTITION_MINUTES.check(&key, minutes).map_err(|e| out_of_range(quoted(e, t)))?;
            }
            crate::options::time::parse_time_limit(t)
                .map_err(|_| invalid(format!("partition {part}: invalid {field} '{t}'")))
        };
        let mut partitions = Vec::new();
        for p in file.partitions.unwrap_or_else(|| {
            vec![PartitionConfig { name: "gpu".into(), default: true, max_time: None, default_time: None }]
        }) {
            if p.name.is_empty() || p.name.contains([',', ' ']) {
                return Err(invalid(format!("invalid partition name '{}'", p.name)));
            }
            partitions.push(Partition {
                max_time: parse_time("max_time", &p.name, &p.max_time)?,
                default_time: parse_time("default_time", &p.name, &p.default_time)?,
                name: p.name,
                default: p.default,
            });
        }
        if partitions.is_empty() {
            return Err(invalid("at least one partition is needed".into()));
        }
        if partitions.iter().filter(|p| p.default).count() > 1 {
            return Err(invalid("more than one partition has default = true".into()));
        }
        if !partitions.iter().any(|p| p.default) {
            partitions[0].default = true;
        }
        let mut operators = Vec::new();
        for name in file.operators.unwrap_or_default() {
            match crate::identity::user_uid(&name) {
                Some(uid) => operators.push(uid),
                None => return Err(invalid(format!("operators: no such user '{name}'"))),
            }
        }
        let default_account = file.default_account.unwrap_or_else(|| DEFAULT_ACCOUNT.into());
        if default_account.is_empty() || default_account.contains([',', ' ']) {
            return Err(invalid(format!("default_account: '{default_account}' is no account name")));
        }
        let accounts = match file.accounts {
            None => None,
            Some(table) => {
                let mut by_uid = std::collections::BTreeMap::new();
                for (name, list) in table {
                    let uid = crate::identity::user_uid(&name)
                        .ok_or_else(|| invalid(format!("accounts: no such user '{name}'")))?;
                    if list.is_empty() || list.iter().any(|a| a.is_empty() || a.contains([',', ' '])) {
                        return Err(invalid(format!("accounts.{name}: give one or more account names")));
                    }
                    by_uid.insert(uid, list);
                }
                Some(by_uid)
            }
        };
        let mode = file.mode.unwrap_or_default();
        let cpus = bounds::CPUS
            .read_opt("cpus", file.cpus)
            .map_err(out_of_range)?
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1));
        let limits = file.limits.unwrap_or_default();
        let limits = UserLimits {
            max_running_jobs_per_user: bounds::JOBS_PER_USER
                .read_opt("limits.max_running_jobs_per_user", limits.max_running_jobs_per_user)
                .map_err(out_of_range)?,
            max_submitted_jobs_per_user: Some(
                bounds::JOBS_PER_USER
                    .read_opt("limits.max_submitted_jobs_per_user", limits.max_submitted_jobs_per_user)
                    .map_err(out_of_range)?
                    .unwrap_or(DEFAULT_MAX_SUBMITTED_JOBS_PER_USER),
            ),
            max_gpus_per_user: bounds::GPUS
                .read_opt("limits.max_gpus_per_user", limits.max_gpus_per_user)
                .map_err(out_of_range)?,
        };
        let cgroup = file.cgroup.unwrap_or_default();
        for (key, bounds, value) in [
            ("cgroup.allowed_ram_space", bounds::ALLOWED_RAM_SPACE, cgroup.allowed_ram_space),
            ("cgroup.allowed_swap_space", bounds::ALLOWED_SWAP_SPACE, cgroup.allowed_swap_space),
        ] {
            value.map(|v| bounds.check(key, v)).transpose().map_err(out_of_range)?;
        }
        if let Some(addr) = file.listen {
            bounds::PORT.check("listen port", addr.port()).map_err(out_of_range)?;
        }
        Ok(Config {
            shards_per_gpu: bounds::SHARDS_PER_GPU
                .read_opt("shards_per_gpu", file.shards_per_gpu)
                .map_err(out_of_range)?
                .unwrap_or(0),
            shard_memory: file.shard_memory.unwrap_or_default(),
            mps: file.mps.unwrap_or(false),
            cluster_name: file.cluster_name.unwrap_or_else(|| "slurmlet".into()),
            node_name: file.node_name.unwrap_or_else(crate::paths::hostname),
            cpus,
            memory: bounds::MEMORY_MB
                .read_opt("memory", file.memory)
                .map_err(out_of_range)?
                .unwrap_or_else(detect_memory_mb),
            gpu_setting,
            gpus: found.gpus,
            gpu_type,
            nvml_library,
            gpu_sample_interval: bounds::GPU_SAMPLE_INTERVAL
                .read_opt("gpu_sample_interval", file.gpu_sample_interval)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_SAMPLE_INTERVAL),
            job_acct_gather_frequency: bounds::JOB_ACCT_GATHER_FREQUENCY
                .read_opt("job_acct_gather_frequency", file.job_acct_gather_frequency)
                .map_err(out_of_range)?
                .unwrap_or(cgroup::DEFAULT_SAMPLE_SECS),
            gpu_history_resolution: bounds::GPU_HISTORY_RESOLUTION
                .read_opt("gpu_history_resolution", file.gpu_history_resolution)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_HISTORY_RESOLUTION),
            gpu_history_days: bounds::GPU_HISTORY_DAYS
                .read_opt("gpu_history_days", file.gpu_history_days)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_HISTORY_DAYS),
            foreign_gpu_memory_mib: bounds::FOREIGN_GPU_MEMORY_MIB
                .read_opt("foreign_gpu_memory", file.foreign_gpu_memory)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_FOREIGN_GPU_MEMORY_MIB),
            foreign_gpu_processes: file.foreign_gpu_processes.unwrap_or_default(),
            def_mem_per_cpu: bounds::MEM_PER_CPU_MB
                .read_opt("def_mem_per_cpu", file.def_mem_per_cpu)
                .map_err(out_of_range)?,
            partitions,
            kill_wait: bounds::KILL_WAIT.read_opt("kill_wait", file.kill_wait).map_err(out_of_range)?.unwrap_or(30),
            min_job_age: bounds::MIN_JOB_AGE
                .read_opt("min_job_age", file.min_job_age)
                .map_err(out_of_range)?
                .unwrap_or(300),
            history_days: bounds::HISTORY_DAYS
                .read_opt("history_days", file.history_days)
                .map_err(out_of_range)?
                .filter(|&d: &u32| d > 0),
            max_array_size: bounds::MAX_ARRAY_SIZE
                .read_opt("max_array_size", file.max_array_size)
                .map_err(out_of_range)?
                .unwrap_or(crate::options::array::DEFAULT_MAX_ARRAY_SIZE),
            state_dir: file.state_dir.unwrap_or_else(|| default_state_dir(mode)),
            socket: file.socket.unwrap_or_else(|| default_socket(mode)),
            hide_gpus_from_cpu_jobs: file.hide_gpus_from_cpu_jobs.unwrap_or(true),
            limits,
            cgroup: cgroup::Settings::resolve(file.cgroup, mode == Mode::System),
            mode,
            operators,
            private_jobs: file.private_data.as_deref().unwrap_or_default().contains(&PrivateData::Jobs),
            private_usage: file.private_data.unwrap_or_default().contains(&PrivateData::Usage),
            listen: file.listen,
            path: path.to_path_buf(),
            default_account,
            accounts,
        })
    }

    /// Finds the machine's GPUs when the file lists none (see [`crate::gpu::sources`]), and
    /// types them when they share a type; the daemon does this once at its start and again
    /// when it re-reads the file, and logs what it found and where. Returns the name of the
    /// source they came from (`configured` for those the file lists).
    pub fn discover_gpus(&mut self) -> Option<String> {
        let found = crate::gpu::discover(&self.gpu_setting, &self.nvml_library);
        if self.gpu_setting != GpuSetting::Detect {
            // Listed in the file: read as the file was, with no hardware probed.
            return found.source;
        }
        self.gpu_type = crate::gpu::common_gres_type(&found.gpus);
        let types: std::collections::BTreeSet<&str> =
            found.gpus.iter().filter_map(|g| g.gres_type.as_deref()).collect();
        if types.len() > 1 {
            tracing::info!("GPUs of several types ({types:?}): the node's GPUs are untyped");
        }
        self.gpus = found.gpus;
        match &found.source {
            Some(source) => tracing::info!("GPUs found by {source}: {}", self.gres()),
            None => tracing::info!("no GPU found"),
        }
        found.source
    }

    /// The `gres` string of the node (`gpu:4`, `gpu:tesla:4`, `gpu:4,shard:32`, or `(null)`).
    pub fn gres(&self) -> String {
        let gpus = match (self.gpus.len(), &self.gpu_type) {
            (0, _) => return "(null)".into(),
            (n, Some(t)) => format!("gpu:{t}:{n}"),
            (n, None) => format!("gpu:{n}"),
        };
        // Shards take their GPUs' type, as Slurm's do.
        match (self.shards(), &self.gpu_type) {
            (0, _) => gpus,
            (shards, Some(t)) => format!("{gpus},shard:{t}:{shards}"),
            (shards, None) => format!("{gpus},shard:{shards}"),
        }
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

/// The configured GPU ids, each within [`bounds::GPU_ID`], at most [`bounds::GPUS`] of them.
fn gpu_ids(ids: &[i64]) -> Result<Vec<u32>, bounds::OutOfRange> {
    bounds::GPUS.check("the number of gpus.ids", ids.len() as i64)?;
    ids.iter().map(|&id| bounds::GPU_ID.read("gpus.ids", id)).collect()
}

/// `refusal` with its value as the file wrote it, quoted (a partition's time, an address).
fn quoted(refusal: bounds::OutOfRange, written: &str) -> bounds::OutOfRange {
    bounds::OutOfRange { value: format!("\"{written}\""), ..refusal }
}

/// Total memory in MB from /proc/meminfo.
fn detect_memory_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(1024)
}

#[cfg(test)]
mod tests;
