//! Request and response bodies of slurmrestd's data_parser v0.0.43, as far as slurmlet uses them.
//!
//! Field names and nesting follow the OpenAPI document of slurmrestd 26.05 (`v0.0.43_*` schemas).
//! Every response type defaults missing fields so that replies of a real slurmrestd parse too.

use super::noval::NoVal;
use serde::{Deserialize, Serialize};

/// The data_parser version this crate speaks.
pub const DATA_PARSER: &str = "v0.0.43";

/// `meta.plugin` of a response.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaPlugin {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub data_parser: String,
    pub accounting_storage: String,
}

/// `meta.client` of a response.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaClient {
    pub source: String,
    pub user: String,
    pub group: String,
}

/// `meta.slurm.version`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Version {
    pub major: String,
    pub micro: String,
    pub minor: String,
}

/// `meta.slurm`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaSlurm {
    pub version: Version,
    pub release: String,
    pub cluster: String,
}

/// The `meta` object every response carries.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Meta {
    pub plugin: MetaPlugin,
    pub client: MetaClient,
    pub command: Vec<String>,
    pub slurm: MetaSlurm,
}

/// One entry of `errors[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ApiError {
    pub description: String,
    pub error_number: i32,
    pub error: String,
    pub source: String,
}

/// One entry of `warnings[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ApiWarning {
    pub description: String,
    pub source: String,
}

/// The `meta`/`errors`/`warnings` envelope shared by all responses.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Envelope {
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// `POST /slurm/v0.0.43/job/submit` body (`job_submit_req`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct JobSubmitReq {
    /// Script at the top level (older clients); `job.script` wins when both are present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    pub job: Option<JobDescMsg>,
}

/// The job description (`job_desc_msg`) fields that slurmlet understands.
///
/// A field of a submit body that is not one of these is refused by name, never dropped (see
/// the daemon's `submit_keys`).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobDescMsg {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_time: Option<NoVal<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus_per_task: Option<u32>,
    /// CPUs per GPU (`--cpus-per-gpu`): `gres/gpu:N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus_per_tres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_working_directory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependency: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_nodes: Option<Vec<String>>,
    /// Job flags; slurmlet reads `KILL_INVALID_DEPENDENCY` and `NO_KILL_INVALID_DEPENDENCY`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_warning_delay: Option<NoVal<u16>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_warning_flags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_warning_signal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum_nodes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_per_cpu: Option<NoVal<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_per_node: Option<NoVal<u64>>,
    /// Memory per GPU in MiB (`--mem-per-gpu`): `gres/gpu:N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_per_tres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_cpus: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_nodes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_mode: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requeue: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_nodes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks_per_node: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<NoVal<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tres_per_job: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tres_per_node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tres_per_task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wckey: Option<String>,
}

impl JobDescMsg {
    /// Every field name slurmlet reads from a `job_desc_msg`.
    pub const KNOWN: &'static [&'static str] = &[
        "account",
        "argv",
        "array",
        "begin_time",
        "comment",
        "constraints",
        "cpus_per_task",
        "cpus_per_tres",
        "current_working_directory",
        "dependency",
        "environment",
        "excluded_nodes",
        "flags",
        "hold",
        "kill_warning_delay",
        "kill_warning_flags",
        "kill_warning_signal",
        "maximum_nodes",
        "memory_per_cpu",
        "memory_per_node",
        "memory_per_tres",
        "minimum_cpus",
        "minimum_nodes",
        "name",
        "nice",
        "nodes",
        "open_mode",
        "partition",
        "qos",
        "requeue",
        "required_nodes",
        "script",
        "standard_error",
        "standard_input",
        "standard_output",
        "tasks",
        "tasks_per_node",
        "time_limit",
        "tres_per_job",
        "tres_per_node",
        "tres_per_task",
        "wckey",
    ];
}

/// Reply to a submit (`openapi_job_submit_response`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobSubmitResponse {
    pub job_id: u32,
    pub step_id: String,
    pub job_submit_user_msg: String,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// `process_exit_code_verbose`: an exit status as slurmrestd reports it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ExitCode {
    /// `SUCCESS`, `ERROR`, `SIGNALED`, `CORE_DUMPED`, `PENDING` or `INVALID`.
    pub status: Vec<String>,
    pub return_code: NoVal<u32>,
    pub signal: ExitSignal,
}

/// The signal part of [`ExitCode`].
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ExitSignal {
    pub id: NoVal<u16>,
    pub name: String,
}

/// `job_info`: one job as `GET /jobs` and `GET /job/{id}` report it.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobInfo {
    pub account: String,
    pub accrue_time: NoVal<u64>,
    pub admin_comment: String,
    pub allocating_node: String,
    pub array_job_id: NoVal<u32>,
    pub array_task_id: NoVal<u32>,
    pub array_max_tasks: NoVal<u32>,
    pub array_task_string: String,
    pub batch_flag: bool,
    pub batch_host: String,
    pub flags: Vec<String>,
    pub cluster: String,
    pub command: String,
    pub comment: String,
    pub contiguous: bool,
    pub cpus_per_task: NoVal<u16>,
    pub dependency: String,
    pub derived_exit_code: ExitCode,
    pub eligible_time: NoVal<u64>,
    pub end_time: NoVal<u64>,
    pub excluded_nodes: String,
    pub exit_code: ExitCode,
    pub features: String,
    pub gres_detail: Vec<String>,
    pub group_id: u32,
    pub group_name: String,
    pub job_id: u32,
    /// What the job holds on its node: its CPUs by id (`null` until it is given them).
    pub job_resources: Option<super::job_resources::JobRes>,
    pub job_state: Vec<String>,
    pub last_sched_evaluation: NoVal<u64>,
    pub mail_user: String,
    pub max_cpus: NoVal<u32>,
    pub max_nodes: NoVal<u32>,
    pub name: String,
    pub nodes: String,
    pub nice: i32,
    pub tasks_per_node: NoVal<u16>,
    pub cpus: NoVal<u32>,
    pub node_count: NoVal<u32>,
    pub tasks: NoVal<u32>,
    pub partition: String,
    pub memory_per_cpu: NoVal<u64>,
    pub memory_per_node: NoVal<u64>,
    pub minimum_cpus_per_node: NoVal<u16>,
    pub hold: bool,
    pub priority: NoVal<u32>,
    pub qos: String,
    pub required_nodes: String,
    pub requeue: bool,
    pub restart_cnt: u32,
    pub scheduled_nodes: String,
    pub standard_input: String,
    pub standard_output: String,
    pub standard_error: String,
    pub stdin_expanded: String,
    pub stdout_expanded: String,
    pub stderr_expanded: String,
    pub start_time: NoVal<u64>,
    pub state_description: String,
    pub state_reason: String,
    pub submit_time: NoVal<u64>,
    pub suspend_time: NoVal<u64>,
    pub time_limit: NoVal<u32>,
    pub time_minimum: NoVal<u32>,
    pub tres_per_job: String,
    pub tres_per_node: String,
    pub tres_per_task: String,
    pub tres_req_str: String,
    pub tres_alloc_str: String,
    pub user_id: u32,
    pub user_name: String,
    pub wckey: String,
    pub current_working_directory: String,
}

/// `GET /slurm/v0.0.43/jobs` and `/job/{id}` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobsResponse {
    pub jobs: Vec<JobInfo>,
    pub last_backfill: NoVal<u64>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// One entry of a cancel reply's `status[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct KillStatus {
    pub error: KillError,
    pub step_id: String,
    pub job_id: NoVal<u32>,
    pub federation: KillFederation,
}

/// The federation of a [`KillStatus`]: slurmlet is never federated (`sibling` is empty).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct KillFederation {
    pub sibling: String,
}

/// The error of a [`KillStatus`].
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct KillError {
    pub string: String,
    pub code: i32,
    pub message: String,
}

/// Which processes of a running job a signal reaches: `DELETE /slurm/v0.0.43/job/{id}`'s
/// `flags`, scancel's `-b`/`-f`. As in Slurm, a signal other than SIGKILL reaches the job's
/// steps only unless a flag says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignalScope {
    /// No flag: every step's tasks, never the batch shell.
    #[default]
    Steps,
    /// `BATCH_JOB` (`scancel -b`): the batch shell alone, not its children nor the steps.
    Batch,
    /// `FULL_JOB` (`scancel -f`): the batch shell, its children and every step.
    Full,
}

impl SignalScope {
    /// The `flags` value that asks for this scope, if any.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            SignalScope::Steps => None,
            SignalScope::Batch => Some("BATCH_JOB"),
            SignalScope::Full => Some("FULL_JOB"),
        }
    }

    /// The scope a `flags` value names; `FULL_JOB` wins over `BATCH_JOB`, as `-f` over `-b`.
    pub fn with_flag(self, flag: &str) -> Option<SignalScope> {
        match (self, flag) {
            (_, "FULL_JOB") | (SignalScope::Full, "BATCH_JOB") => Some(SignalScope::Full),
            (_, "BATCH_JOB") => Some(SignalScope::Batch),
            _ => None,
        }
    }
}

/// `DELETE /slurm/v0.0.43/job/{id}` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct CancelResponse {
    pub status: Vec<KillStatus>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// One entry of a job update's `results` (`job_array_response_msg_entry`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobUpdateResult {
    pub job_id: u32,
    pub step_id: String,
    pub error: String,
    pub error_code: i32,
    pub why: String,
}

/// `POST /slurm/v0.0.43/job/{id}` reply (`openapi_job_post_response`); slurmrestd sends
/// `"results": null` for a job that is not an array.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobPostResponse {
    pub results: Option<Vec<JobUpdateResult>>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

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

/// `node`: the machine as `GET /nodes` reports it.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Node {
    pub architecture: String,
    pub boards: u32,
    pub boot_time: NoVal<u64>,
    pub cluster_name: String,
    pub cores: u32,
    pub cpu_load: u32,
    pub free_mem: NoVal<u64>,
    pub cpus: u32,
    pub effective_cpus: u32,
    pub features: Vec<String>,
    pub active_features: Vec<String>,
    pub gres: String,
    pub gres_drained: String,
    pub gres_used: String,
    pub last_busy: NoVal<u64>,
    pub name: String,
    pub address: String,
    pub hostname: String,
    pub state: Vec<String>,
    pub operating_system: String,
    pub owner: String,
    pub partitions: Vec<String>,
    pub real_memory: u64,
    pub comment: String,
    pub reason: String,
    /// When the reason changed.
    pub reason_changed_at: NoVal<u64>,
    /// Who set the reason (the daemon's user for the reasons it finds itself).
    pub reason_set_by_user: String,
    pub alloc_memory: u64,
    pub alloc_cpus: u32,
    pub alloc_idle_cpus: u32,
    pub tres_used: String,
    pub slurmd_start_time: NoVal<u64>,
    pub sockets: u32,
    pub threads: u32,
    pub temporary_disk: u32,
    pub weight: u32,
    pub tres: String,
    pub version: String,
}

/// `GET /slurm/v0.0.43/nodes` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct NodesResponse {
    pub nodes: Vec<Node>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// `partition_info.nodes`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionNodes {
    pub allowed_allocation: String,
    pub configured: String,
    pub total: u32,
}

/// `partition_info.cpus`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionCpus {
    pub task_binding: u32,
    pub total: u32,
}

/// `partition_info.defaults`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionDefaults {
    pub memory_per_cpu: u64,
    pub partition_memory_per_cpu: NoVal<u64>,
    pub partition_memory_per_node: NoVal<u64>,
    pub time: NoVal<u32>,
    pub job: String,
}

/// `partition_info.maximums` (the part slurmlet fills).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionMaximums {
    pub cpus_per_node: NoVal<u32>,
    pub memory_per_cpu: u64,
    pub partition_memory_per_node: NoVal<u64>,
    pub nodes: NoVal<u32>,
    pub shares: u32,
    pub time: NoVal<u32>,
}

/// `partition_info.partition`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionState {
    pub state: Vec<String>,
}

/// `partition_info.tres`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionTres {
    pub billing_weights: String,
    pub configured: String,
}

/// `partition_info.priority`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionPriority {
    pub job_factor: u32,
    pub tier: u32,
}

/// `partition_info`: one partition as `GET /partitions` reports it.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionInfo {
    pub nodes: PartitionNodes,
    pub tres: PartitionTres,
    pub cluster: String,
    pub cpus: PartitionCpus,
    pub defaults: PartitionDefaults,
    pub grace_time: u32,
    pub maximums: PartitionMaximums,
    pub name: String,
    pub node_sets: String,
    pub priority: PartitionPriority,
    pub partition: PartitionState,
    /// Partition flags as data_parser v0.0.45 reports them; slurmlet sets `DEFAULT` on the
    /// default partition (v0.0.43 has no field for it).
    pub flags: Vec<String>,
}

/// `GET /slurm/v0.0.43/partitions` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionsResponse {
    pub partitions: Vec<PartitionInfo>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// One entry of `pings[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Ping {
    pub hostname: String,
    pub pinged: String,
    pub responding: bool,
    pub latency: u64,
    pub mode: String,
    pub primary: bool,
}

/// `GET /slurm/v0.0.43/ping` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PingResponse {
    pub pings: Vec<Ping>,
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

/// Slurm error numbers used in `errors[].error_number`.
pub mod errno {
    /// `ESLURM_INVALID_PARTITION_NAME`
    pub const INVALID_PARTITION_NAME: i32 = 2000;
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`
    pub const REQUESTED_NODE_CONFIG_UNAVAILABLE: i32 = 2014;
    /// `ESLURM_INVALID_JOB_ID`
    pub const INVALID_JOB_ID: i32 = 2017;
    /// `ESLURM_ALREADY_DONE`
    pub const ALREADY_DONE: i32 = 2021;
    /// `ESLURM_ACCESS_DENIED`
    pub const ACCESS_DENIED: i32 = 2002;
    /// `ESLURM_JOB_SCRIPT_MISSING` ("Job script not specified"): the script asked for of a
    /// job that has none (an interactive allocation).
    pub const JOB_SCRIPT_MISSING: i32 = 2009;
    /// `ESLURM_USER_ID_MISSING` ("Invalid user id"): what Slurm answers a user who changes
    /// another user's job or asks for another user's token.
    pub const USER_ID_MISSING: i32 = 2010;
    /// `ESLURM_JOB_HELD`
    pub const JOB_HELD: i32 = 2042;
    /// `ESLURM_JOB_NOT_PENDING`
    pub const JOB_NOT_PENDING: i32 = 2073;
    /// `ESLURM_JOB_FINISHED`
    pub const JOB_FINISHED: i32 = 2084;
    /// `SLURM_PROTOCOL_AUTHENTICATION_ERROR`: a REST request whose token is refused.
    pub const AUTHENTICATION: i32 = 1007;
    /// ESLURM_ACCOUNTING_POLICY: the job breaks a limit.
    pub const ACCOUNTING_POLICY: i32 = 2050;
    /// ESLURM_INVALID_ACCOUNT.
    pub const INVALID_ACCOUNT: i32 = 2045;
    /// `ESLURM_INVALID_TIME_LIMIT`
    pub const INVALID_TIME_LIMIT: i32 = 2051;
    /// `ESLURM_INVALID_GRES`
    pub const INVALID_GRES: i32 = 2072;
    /// `ESLURM_PATHNAME_TOO_LONG`, also Slurm's answer to a batch script over its
    /// `max_script_size`.
    pub const PATHNAME_TOO_LONG: i32 = 2012;
    /// `ESLURM_DEPENDENCY`: "Job dependency problem".
    pub const INVALID_DEPENDENCY: i32 = 2038;
    /// `ESLURM_CIRCULAR_DEPENDENCY`: "Circular job dependency".
    pub const CIRCULAR_DEPENDENCY: i32 = 2071;
    /// `ESLURM_TRANSITION_STATE_NO_UPDATE`: "Job can not be altered now, try again later".
    pub const TRANSITION_STATE_NO_UPDATE: i32 = 2020;
    /// `ESLURM_JOB_PENDING`: "Job is pending execution".
    pub const JOB_PENDING: i32 = 2024;
    /// `ESLURM_BATCH_ONLY`: "Only batch jobs are accepted or processed".
    pub const BATCH_ONLY: i32 = 2039;
    /// `ESLURM_JOB_NOT_RUNNING`: "Job is not running".
    pub const JOB_NOT_RUNNING: i32 = 2085;
    /// `ESLURM_JOB_NOT_SUSPENDED`: "Job is not suspended".
    pub const JOB_NOT_SUSPENDED: i32 = 2087;
    /// ESLURM_INVALID_ARRAY: "Invalid job array specification".
    pub const INVALID_ARRAY: i32 = 2081;
    /// ESLURM_JOB_NOT_FINISHED: "Job is not finished" (a requeue of a job that may not be).
    pub const JOB_NOT_FINISHED: i32 = 2088;
    /// ESLURM_DISABLED: "Requested operation is presently disabled" (requeue of a
    /// `--no-requeue` job).
    pub const DISABLED: i32 = 2037;
    /// `ESLURM_PATHNAME_TOO_LONG`-like: a job's output path cannot be used.
    pub const INVALID_OUTPUT_PATH: i32 = 9001;
    /// A field slurmlet does not know.
    pub const UNKNOWN_FIELD: i32 = 9002;
    /// The request body could not be parsed.
    pub const BAD_REQUEST: i32 = 9003;
    /// Generic error.
    pub const ERROR: i32 = 1;
    /// `SLURMCTLD_COMMUNICATIONS_BACKOFF` ("Rate limit exceeded, please retry momentarily"):
    /// a connection past the daemon's limits, refused at once.
    pub const BACKOFF: i32 = 1804;
    /// `ESLURM_REST_INVALID_QUERY`: the request cannot be served as asked (no such path, a
    /// method the path does not take).
    pub const INVALID_QUERY: i32 = 9000;
    /// `ESLURM_DATA_UNKNOWN_MIME_TYPE`: a body in a media type other than JSON.
    pub const DATA_UNKNOWN_MIME_TYPE: i32 = 9204;
    /// `ESLURM_DATA_TOO_LARGE`: a body over the size the daemon reads.
    pub const DATA_TOO_LARGE: i32 = 9205;
    /// `ESLURM_DATA_FLAGS_INVALID`: a flag the parser does not know.
    pub const DATA_FLAGS_INVALID: i32 = 9207;
    /// `ESLURM_USER_ID_UNKNOWN`: "Unable to resolve user ID to user name" (a user the
    /// accounting query names that nobody knows).
    pub const USER_ID_UNKNOWN: i32 = 2166;
}

/// Body of `POST /slurmlet/v1/jobs/query`: which jobs squeue lists and which `%` codes of
/// each it prints. The daemon filters, sorts and renders; the reply carries only the values.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct JobQuery {
    /// The `%` codes to render, one character each, in the order of the row's cells.
    pub codes: String,
    /// `-j`: only these job ids (an array's id selects its tasks).
    pub job_ids: Option<Vec<u32>>,
    /// `-j A_T`: only these array tasks, `[A, T]` (with `job_ids`: either).
    pub array_tasks: Option<Vec<[u32; 2]>>,
    /// `-u`/`--me`: only jobs of these uids.
    pub users: Option<Vec<u32>>,
    /// `-p`: only jobs in one of these partitions.
    pub partitions: Option<Vec<String>>,
    /// `-n`: only jobs with one of these names.
    pub names: Option<Vec<String>>,
    /// `-t`: only jobs in these long states (`ALL`: any); none given: pending and active.
    pub states: Option<Vec<String>>,
    /// `--start`: only pending jobs.
    pub pending_only: bool,
    /// `-r`/`--array`: one line per array task; otherwise the pending tasks of an array
    /// that have not run are listed together, as `A_[3-15%2]`.
    pub array_per_line: bool,
    /// `-S`: the order, as squeue's sort specification (`P,t,-p`, `-j`, `t,-i`); none:
    /// squeue's default, `P,t,-p`. Left out when none, so an older daemon still reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
    /// `--json`: answer with the jobs listed as a whole v0.0.43 jobs reply, pretty-printed
    /// as `squeue --json` prints it, instead of rows (`codes` is then unused). When no job has
    /// one of `job_ids`, the reply is a 404 with the error in `errors`.
    pub json: bool,
    /// squeue's format: answer with the listing laid out as squeue prints it (`text/plain`,
    /// one line per job, control characters shown as `?`) instead of rows (`codes` is then
    /// unused). When no job has one of `job_ids`, the reply is a 404 with the error in
    /// `errors`. Left out when none, so an older daemon still reads the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Vec<LayoutItem>>,
}

/// One piece of a [`JobQuery::layout`], in the order printed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LayoutItem {
    /// Text copied as it is.
    Text(String),
    /// The value of a `%` code, cut or padded to a width.
    Field(LayoutField),
}

/// A field of a [`LayoutItem`]: which value, and how wide.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LayoutField {
    /// The `%` code.
    pub code: char,
    /// The width; 0: as wide as the value.
    pub width: usize,
    /// Padded on the left (`%.N`).
    pub right: bool,
}

/// One rendered value of a [`JobRows`] row; borrowed from the reply when it can be.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct Cell<'a>(#[serde(borrow)] pub std::borrow::Cow<'a, str>);

/// Reply of `POST /slurmlet/v1/jobs/query`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobRows<'a> {
    /// One row per job that matched, in squeue's order; one cell per code asked for.
    #[serde(borrow)]
    pub rows: Vec<Vec<Cell<'a>>>,
    /// Whether any job in the store has one of the ids asked for (`-j`), whatever the other
    /// filters say; true when no ids were given.
    pub ids_found: bool,
    /// Errors.
    pub errors: Vec<ApiError>,
}
