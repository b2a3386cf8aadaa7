//! What changes a job: a cancel or signal (`DELETE /job/{id}`) and an update
//! (`POST /job/{id}`), and their replies.

use super::{ApiError, ApiWarning, Meta};
use crate::api::noval::NoVal;
use serde::{Deserialize, Serialize};

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
