//! The configuration file as written: its keys and tables, each optional, as TOML gives
//! them, before [`super::Config::resolve`] fills in defaults and checks ranges; and the
//! defaults themselves.

use super::cgroup;
use super::Mode;
use serde::Deserialize;
use std::path::PathBuf;

/// `gpus = 4` or `gpus = { type = "tesla", ids = [0, 1, 2, 3] }`. Numbers are read as TOML
/// writes them (signed 64-bit) and checked against [`super::bounds::GPUS`] and [`super::bounds::GPU_ID`].
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum GpuConfig {
    /// That many GPUs, ids 0..n.
    Count(i64),
    /// Explicit ids with an optional type.
    List {
        /// GPU type name shown in `gres` (`gpu:tesla:4`).
        #[serde(rename = "type")]
        kind: Option<String>,
        /// Device indices.
        ids: Vec<i64>,
        /// The device file of each, in the same order (gres.conf's `File=`): what a job
        /// given that GPU may open where devices are constrained.
        #[serde(default)]
        files: Option<Vec<PathBuf>>,
    },
}

/// One `[[partitions]]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartitionConfig {
    /// Partition name.
    pub name: String,
    /// Whether jobs without `-p` go here.
    #[serde(default)]
    pub default: bool,
    /// Longest time limit allowed (Slurm time format; absent or `UNLIMITED` means none).
    pub max_time: Option<String>,
    /// Time limit of jobs that give none.
    pub default_time: Option<String>,
    /// Slurm's `PriorityJobFactor`: the partition factor of its jobs' priority is this over
    /// the largest of any partition (default 1).
    pub priority_job_factor: Option<i64>,
}

/// The configuration file as written. Numbers are kept as TOML writes them (`i64`, `f64`), so
/// that a negative or oversized one is refused by [`super::Config::resolve`] with its key, its
/// value and its range ([`super::bounds`]), as any other out of range.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Cluster name (`SLURM_CLUSTER_NAME`).
    pub cluster_name: Option<String>,
    /// Node name (default: the host name).
    pub node_name: Option<String>,
    /// CPUs to schedule (default: detected).
    pub cpus: Option<i64>,
    /// Memory in MB to schedule (default: detected).
    pub memory: Option<i64>,
    /// GPUs (default: detected by the daemon at its start).
    pub gpus: Option<GpuConfig>,
    /// The NVML library the daemon loads to detect GPUs (default: the system's
    /// `libnvidia-ml.so.1`).
    pub nvml_library: Option<PathBuf>,
    /// Seconds between two looks at the processes on the GPUs (default
    /// [`DEFAULT_GPU_SAMPLE_INTERVAL`]; 0 turns the look off).
    pub gpu_sample_interval: Option<i64>,
    /// Seconds between two looks at a running job's memory in its cgroup, for its average
    /// (Slurm's `JobAcctGatherFrequency`; default 30, 0: none).
    pub job_acct_gather_frequency: Option<i64>,
    /// Seconds each kept GPU sample stands for: the looks at the GPUs within one step are
    /// averaged into one sample per GPU and per job (default
    /// [`DEFAULT_GPU_HISTORY_RESOLUTION`]).
    pub gpu_history_resolution: Option<i64>,
    /// Days the GPU samples are kept in the store (default [`DEFAULT_GPU_HISTORY_DAYS`]; 0:
    /// none are kept).
    pub gpu_history_days: Option<i64>,
    /// GPU memory in MiB above which a process outside the queue counts as using its GPU
    /// (default [`DEFAULT_FOREIGN_GPU_MEMORY_MIB`]).
    pub foreign_gpu_memory: Option<i64>,
    /// What a GPU in use outside the queue means to the scheduler (default `avoid`).
    pub foreign_gpu_processes: Option<ForeignGpuProcesses>,
    /// Memory per CPU for jobs that ask for none, in MB (default: none, memory not reserved).
    pub def_mem_per_cpu: Option<i64>,
    /// Partitions (default: one partition `gpu`).
    pub partitions: Option<Vec<PartitionConfig>>,
    /// Seconds between SIGTERM and SIGKILL (default 30).
    pub kill_wait: Option<i64>,
    /// Seconds a finished job stays visible in squeue (default 300).
    pub min_job_age: Option<i64>,
    /// Days a finished job stays in the accounting history (sacct); 0 or absent: forever.
    pub history_days: Option<i64>,
    /// Slurm's `MaxArraySize`: array indices run from 0 to one less than this (default
    /// 1001; 0 turns job arrays off).
    pub max_array_size: Option<i64>,
    /// Where the store and job files live.
    pub state_dir: Option<PathBuf>,
    /// The Unix socket to listen on.
    pub socket: Option<PathBuf>,
    /// Whether jobs without GPUs get an empty `CUDA_VISIBLE_DEVICES` (default true).
    pub hide_gpus_from_cpu_jobs: Option<bool>,
    /// Per-user limits (default: only [`super::DEFAULT_MAX_SUBMITTED_JOBS_PER_USER`]).
    pub limits: Option<LimitsTable>,
    /// `user` (the default: one daemon per user, started by the first command) or `system`
    /// (one root daemon for every user of the machine).
    pub mode: Option<Mode>,
    /// Users who may act on every job (cancel, signal, hold, release, update, attach), as
    /// Slurm's operators may.
    pub operators: Option<Vec<String>>,
    /// What users may not see of other users' jobs, as Slurm's `PrivateData`: `["jobs"]`
    /// hides other users' jobs from listings and lookups, `["usage"]` other users' usage
    /// (operators and root see all).
    pub private_data: Option<Vec<PrivateData>>,
    /// A TCP address (`127.0.0.1:6820`) to serve the REST API on as well, to token holders
    /// (default: none, the Unix socket only).
    pub listen: Option<std::net::SocketAddr>,
    /// The account of jobs that name none (default [`DEFAULT_ACCOUNT`]).
    pub default_account: Option<String>,
    /// The tree of accounts, their shares and users (`[accounts.NAME]`, see
    /// [`super::accounts`]), or the older list of accounts per user; a user not listed
    /// charges `default_account` only. Absent: any account is accepted.
    pub accounts: Option<toml::Table>,
    /// Settings of each user (`[users.NAME]`: `default_account`).
    pub users: Option<std::collections::BTreeMap<String, super::accounts::UserTable>>,
    /// slurm.conf's `PriorityWeightAge` (see [`super::priority`]).
    pub priority_weight_age: Option<i64>,
    /// slurm.conf's `PriorityWeightFairshare`.
    pub priority_weight_fairshare: Option<i64>,
    /// slurm.conf's `PriorityWeightJobSize`.
    pub priority_weight_job_size: Option<i64>,
    /// slurm.conf's `PriorityWeightPartition`.
    pub priority_weight_partition: Option<i64>,
    /// slurm.conf's `PriorityWeightQOS`.
    pub priority_weight_qos: Option<i64>,
    /// slurm.conf's `PriorityWeightTRES` (`CPU=1000,GRES/gpu=3000`).
    pub priority_weight_tres: Option<String>,
    /// slurm.conf's `PriorityMaxAge` (a Slurm time, or minutes; default 7-0).
    pub priority_max_age: Option<super::priority::SlurmDuration>,
    /// slurm.conf's `PriorityFavorSmall`.
    pub priority_favor_small: Option<bool>,
    /// slurm.conf's `PriorityCalcPeriod` (minutes, or a Slurm time; default 5).
    pub priority_calc_period: Option<super::priority::SlurmDuration>,
    /// slurm.conf's `PriorityDecayHalfLife` (a Slurm time, or minutes; default 7-0).
    pub priority_decay_half_life: Option<super::priority::SlurmDuration>,
    /// slurm.conf's `PriorityUsageResetPeriod` (NONE, NOW, DAILY, WEEKLY, MONTHLY,
    /// QUARTERLY, YEARLY).
    pub priority_usage_reset_period: Option<String>,
    /// slurm.conf's `TRESBillingWeights` (`CPU=1.0,Mem=0.25G,GRES/gpu=10`).
    pub tres_billing_weights: Option<String>,
    /// The QOS (`[qos.NAME]`, see [`super::qos`]); `normal` always exists.
    pub qos: Option<toml::Table>,
    /// slurm.conf's `PreemptType`: `preempt/none` (the default) or `preempt/qos`.
    pub preempt_type: Option<String>,
    /// slurm.conf's `PreemptMode`: `OFF`, `REQUEUE` or `CANCEL` (default `OFF`; with
    /// `preempt/qos`, `REQUEUE`).
    pub preempt_mode: Option<String>,
    /// Seconds a preempted and requeued job waits before it may start again (Slurm's
    /// `SchedulerParameters=requeue_delay`; default 120, its credential lifetime).
    pub requeue_delay: Option<i64>,
    /// Shards each GPU is split into for jobs that ask for `--gres=shard:N` (gres.conf's
    /// `Name=shard`, spread evenly over the GPUs; default 0: GPUs are given whole only).
    pub shards_per_gpu: Option<i64>,
    /// What happens to a shard job that uses more of its GPU's memory than its share
    /// (default `warn`).
    pub shard_memory: Option<ShardMemory>,
    /// Whether shard jobs run under an MPS server per GPU and owner, started by the daemon
    /// when `nvidia-cuda-mps-control` is on its `PATH` at its start (default false; without
    /// the program, shard jobs run without MPS and the daemon's log says so).
    pub mps: Option<bool>,
    /// slurm.conf's `MailProg`: the program run for each `--mail-type` notice, as
    /// `PROGRAM -s SUBJECT ADDRESS` (default: none, no mail is sent).
    pub mail_program: Option<PathBuf>,
    /// slurm.conf's `MailDomain`: appended to the owner's name of a job that names no
    /// `--mail-user`.
    pub mail_domain: Option<String>,
    /// A URL every notice is posted to as JSON (ntfy, Slack and Matrix bridges take it).
    pub webhook: Option<String>,
    /// What happens to jobs whose GPUs stay idle (`[idle_gpus]`; absent: nothing).
    pub idle_gpus: Option<super::idle_gpus::IdleGpusTable>,
    /// How jobs are confined, with cgroup.conf's names (`constrain_cores`,
    /// `constrain_ram_space`, `allowed_ram_space`, `constrain_swap_space`,
    /// `allowed_swap_space`, `constrain_devices`).
    pub cgroup: Option<cgroup::CgroupTable>,
}

/// Seconds between two looks at the GPUs' processes when the configuration gives none.
pub const DEFAULT_GPU_SAMPLE_INTERVAL: u64 = 10;

/// Seconds each kept GPU sample stands for when the configuration gives none.
pub const DEFAULT_GPU_HISTORY_RESOLUTION: u64 = 60;

/// Days the GPU samples are kept when the configuration gives none.
pub const DEFAULT_GPU_HISTORY_DAYS: u32 = 7;

/// GPU memory (MiB) above which a process outside the queue counts, when the configuration
/// gives none.
pub const DEFAULT_FOREIGN_GPU_MEMORY_MIB: u64 = 256;

/// What the scheduler does with a GPU that a process outside the queue uses.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ForeignGpuProcesses {
    /// New jobs are not given it while the process runs.
    #[default]
    Avoid,
    /// It is given out as if it were free (the process is still reported).
    Ignore,
}

/// What the daemon does when a shard job uses more GPU memory than its share.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ShardMemory {
    /// One line in the job's error output; the job goes on.
    #[default]
    Warn,
    /// The line, then the job ends `OUT_OF_MEMORY`, so that the jobs sharing its GPU go on.
    Enforce,
}

impl ShardMemory {
    /// The configuration's word for it.
    pub fn name(self) -> &'static str {
        match self {
            ShardMemory::Warn => "warn",
            ShardMemory::Enforce => "enforce",
        }
    }
}

/// The account of jobs that name none when the configuration names no `default_account`.
pub const DEFAULT_ACCOUNT: &str = "default";

/// One `private_data` item.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PrivateData {
    /// Other users' jobs are hidden.
    Jobs,
    /// Other users' usage is hidden: the board's per-user figures show a caller only their
    /// own (operators and root see all), as Slurm's `PrivateData=usage` does for sshare and
    /// sreport.
    Usage,
}

/// The `[limits]` table as written (TOML integers, checked by [`super::Config::resolve`]).
#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LimitsTable {
    /// [`super::UserLimits::max_running_jobs_per_user`].
    pub max_running_jobs_per_user: Option<i64>,
    /// [`super::UserLimits::max_submitted_jobs_per_user`].
    pub max_submitted_jobs_per_user: Option<i64>,
    /// [`super::UserLimits::max_gpus_per_user`].
    pub max_gpus_per_user: Option<i64>,
}
