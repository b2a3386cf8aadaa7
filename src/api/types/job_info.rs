//! A job as `GET /jobs` and `GET /job/{id}` report it (`job_info`), with its exit codes.

use super::{ApiError, ApiWarning, Meta};
use crate::api::noval::NoVal;
use serde::{Deserialize, Serialize};

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
    pub job_resources: Option<crate::api::job_resources::JobRes>,
    pub job_state: Vec<String>,
    pub last_sched_evaluation: NoVal<u64>,
    pub mail_type: Vec<String>,
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
    pub resv_name: String,
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
