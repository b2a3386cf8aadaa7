//! `scontrol write batch_script`: `GET /slurmlet/v1/job/{job_id}/script` answers a job's batch
//! script, as it was submitted (slurmrestd has no endpoint for it; slurmctld's
//! `REQUEST_BATCH_SCRIPT` does this).
//!
//! As slurmctld, it answers the job's owner, root and operators (anyone else: `Invalid user
//! id`), and for a job without a script, an interactive allocation, `Job script not
//! specified`. An array's id, or one of its tasks', names the array's one script.

use crate::api::types::{errno, ApiError, BatchScriptResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job_ref::{parse_job_ref, JobRef};
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Core;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// Where Slurm's errors for it come from.
const SOURCE: &str = "slurm_job_batch_script()";

/// A refusal with Slurm's number and text, and the HTTP status it is sent with.
fn refusal(status: StatusCode, number: i32, error: &str) -> (StatusCode, ApiError) {
    (status, ApiError { description: error.into(), error_number: number, error: error.into(), source: SOURCE.into() })
}

impl Core {
    /// The id the batch script of the job `target` names is stored under, for `caller`; or
    /// why there is none to give.
    pub fn script_for(&self, target: JobRef, caller: Caller) -> Result<u32, (StatusCode, ApiError)> {
        let unknown = || refusal(StatusCode::NOT_FOUND, errno::INVALID_JOB_ID, "Invalid job id specified");
        let ids = self.ids_named(JobRef { step: None, ..target });
        let job = ids.first().and_then(|id| self.jobs.get(id)).ok_or_else(unknown)?;
        if !caller.may_manage(job, &self.config, "reading the batch script") {
            return Err(refusal(StatusCode::FORBIDDEN, errno::USER_ID_MISSING, "Invalid user id"));
        }
        if job.interactive {
            return Err(missing());
        }
        Ok(self.payload_id(job.id))
    }
}

/// The refusal of a job that has no batch script to give.
fn missing() -> (StatusCode, ApiError) {
    refusal(StatusCode::NOT_FOUND, errno::JOB_SCRIPT_MISSING, "Job script not specified")
}

/// `GET /slurmlet/v1/job/{job_id}/script`.
pub async fn handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(peer): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    let caller = peer;
    let (meta, found) = {
        let mut core = d.core.lock();
        core.purge(crate::options::now());
        let found = match parse_job_ref(&id) {
            Some(target) => core.script_for(target, caller),
            None => Err(refusal(StatusCode::UNPROCESSABLE_ENTITY, errno::INVALID_JOB_ID, "Invalid job id specified")),
        };
        (super::info::meta(&core.config), found)
    };
    // The store is read on a connection of its own, without the lock.
    let found = found.and_then(|stored| {
        d.history.payload(stored).map(|p| p.script).map_err(|e| {
            tracing::warn!(job = stored, "cannot read the batch script: {e}");
            missing()
        })
    });
    match found {
        Ok(script) => (StatusCode::OK, Json(BatchScriptResponse { script, meta, ..Default::default() })),
        Err((status, error)) => (status, Json(BatchScriptResponse { meta, errors: vec![error], ..Default::default() })),
    }
    .into_response()
}
