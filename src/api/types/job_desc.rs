//! What a submit sends and gets back: the job description (`job_desc_msg`) and the reply.

use super::{ApiError, ApiWarning, Meta};
use crate::api::noval::NoVal;
use serde::{Deserialize, Serialize};

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
    pub reservation: Option<String>,
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
    /// The events to notify of, as slurmrestd's flags (`["BEGIN", "TIME=80%"]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail_type: Option<Vec<String>>,
    /// Who is told (default: the job's user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail_user: Option<String>,
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
        "mail_type",
        "mail_user",
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
        "reservation",
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
