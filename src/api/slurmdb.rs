//! slurmrestd's accounting replies (`GET /slurmdb/v0.0.43/jobs` and `/job/{id}`, and
//! `sacct --json`): the v0.0.43 `job` record with its `steps`, field for field in the order
//! slurmrestd 26.05 writes them.

use super::noval::NoVal;
use super::types::{ApiError, ApiWarning, ExitCode, Meta};
use serde::{Deserialize, Serialize};

/// `job.comment`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbComment {
    pub administrator: String,
    pub job: String,
    pub system: String,
}

/// `job.array.limits.max.running`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbArrayRunning {
    pub tasks: u32,
}

/// `job.array.limits.max`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbArrayMax {
    pub running: DbArrayRunning,
}

/// `job.array.limits`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbArrayLimits {
    pub max: DbArrayMax,
}

/// `job.array`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbArray {
    pub job_id: u32,
    pub limits: DbArrayLimits,
    pub task_id: NoVal<u32>,
    pub task: String,
}

/// `job.association`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbAssociation {
    pub account: String,
    pub cluster: String,
    pub partition: String,
    pub user: String,
    pub id: u32,
}

/// A CPU time: `seconds` and `microseconds`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbCpuTime {
    pub seconds: u64,
    pub microseconds: u64,
}

impl DbCpuTime {
    /// `usec` microseconds.
    pub fn of(usec: u64) -> DbCpuTime {
        DbCpuTime { seconds: usec / 1_000_000, microseconds: usec % 1_000_000 }
    }
}

/// `job.time`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbJobTime {
    pub elapsed: u64,
    pub eligible: u64,
    pub end: u64,
    pub planned: NoVal<u64>,
    pub start: u64,
    pub submission: u64,
    pub suspended: u64,
    pub system: DbCpuTime,
    pub limit: NoVal<u32>,
    pub total: DbCpuTime,
    pub user: DbCpuTime,
}

/// `job.het`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbHet {
    pub job_id: u32,
    pub job_offset: NoVal<u32>,
}

/// `job.mcs`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbMcs {
    pub label: String,
}

/// `job.required`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbRequired {
    #[serde(rename = "CPUs")]
    pub cpus: u32,
    pub memory_per_cpu: NoVal<u64>,
    pub memory_per_node: NoVal<u64>,
}

/// `job.reservation`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbReservation {
    pub id: u32,
    pub name: String,
    pub requested: String,
}

/// `job.state`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbState {
    pub current: Vec<String>,
    pub reason: String,
}

/// One TRES count (`tres` entries).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbTres {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub id: u32,
    pub count: i64,
}

/// One TRES usage extreme: which task on which node.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbTresAt {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub id: u32,
    pub count: i64,
    pub task: u32,
    pub node: String,
}

/// `job.tres`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbJobTres {
    pub allocated: Vec<DbTres>,
    pub requested: Vec<DbTres>,
}

/// `job.wckey`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbWckey {
    pub wckey: String,
    pub flags: Vec<String>,
}

/// `step.time`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepTime {
    pub elapsed: u64,
    pub end: NoVal<u64>,
    pub start: NoVal<u64>,
    pub suspended: u64,
    pub system: DbCpuTime,
    pub limit: NoVal<u32>,
    pub total: DbCpuTime,
    pub user: DbCpuTime,
}

/// `step.nodes`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepNodes {
    pub count: u32,
    pub range: String,
    pub list: Vec<String>,
}

/// `step.tasks`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepTasks {
    pub count: u32,
}

/// `step.CPU.requested_frequency`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbCpuFrequency {
    pub min: NoVal<u32>,
    pub max: NoVal<u32>,
}

/// `step.CPU`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepCpu {
    pub requested_frequency: DbCpuFrequency,
    pub governor: String,
}

/// `step.statistics.CPU`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStatsCpu {
    pub actual_frequency: u64,
}

/// `step.statistics.energy`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStatsEnergy {
    pub consumed: NoVal<u64>,
}

/// `step.statistics`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepStatistics {
    #[serde(rename = "CPU")]
    pub cpu: DbStatsCpu,
    pub energy: DbStatsEnergy,
}

/// `step.step`: its id, name and files.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepId {
    pub id: String,
    pub name: String,
    pub stderr: String,
    pub stdin: String,
    pub stdout: String,
    pub stderr_expanded: String,
    pub stdin_expanded: String,
    pub stdout_expanded: String,
}

/// `step.task`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepTask {
    pub distribution: String,
}

/// A step's TRES usage (`requested` is what its tasks used, `consumed` what they wrote).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbTresUsage {
    pub max: Vec<DbTresAt>,
    pub min: Vec<DbTresAt>,
    pub average: Vec<DbTres>,
    pub total: Vec<DbTres>,
}

/// `step.tres`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStepTres {
    pub requested: DbTresUsage,
    pub consumed: DbTresUsage,
    pub allocated: Vec<DbTres>,
}

/// One `step` of a job.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbStep {
    pub time: DbStepTime,
    pub exit_code: ExitCode,
    pub nodes: DbStepNodes,
    pub tasks: DbStepTasks,
    pub pid: String,
    #[serde(rename = "CPU")]
    pub cpu: DbStepCpu,
    pub kill_request_user: String,
    pub state: Vec<String>,
    pub statistics: DbStepStatistics,
    pub step: DbStepId,
    pub task: DbStepTask,
    pub tres: DbStepTres,
}

/// One `job` of the accounting records.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct DbJob {
    pub account: String,
    pub comment: DbComment,
    pub allocation_nodes: u32,
    pub array: DbArray,
    pub association: DbAssociation,
    pub block: String,
    pub cluster: String,
    pub constraints: String,
    pub container: String,
    pub derived_exit_code: ExitCode,
    pub time: DbJobTime,
    pub exit_code: ExitCode,
    pub extra: String,
    pub failed_node: String,
    pub flags: Vec<String>,
    pub group: String,
    pub het: DbHet,
    pub job_id: u32,
    pub name: String,
    pub licenses: String,
    pub mcs: DbMcs,
    pub nodes: String,
    pub partition: String,
    pub hold: bool,
    pub priority: NoVal<u32>,
    pub qos: String,
    pub qosreq: String,
    pub required: DbRequired,
    pub kill_request_user: String,
    pub restart_cnt: u32,
    pub reservation: DbReservation,
    pub script: String,
    pub segment_size: u32,
    pub stdin_expanded: String,
    pub stdout_expanded: String,
    pub stderr_expanded: String,
    pub stdout: String,
    pub stderr: String,
    pub stdin: String,
    pub state: DbState,
    pub steps: Vec<DbStep>,
    pub submit_line: String,
    pub tres: DbJobTres,
    pub used_gres: String,
    pub user: String,
    pub wckey: DbWckey,
    pub working_directory: String,
}

/// `GET /slurmdb/v0.0.43/jobs` and `/job/{id}` reply (`openapi_slurmdbd_jobs_resp`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct DbJobsResponse {
    pub jobs: Vec<DbJob>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}
