//! `GET /slurmlet/v1/job/{job_id}/script` (`scontrol write batch_script`): the job's batch
//! script as it was submitted, or slurmctld's refusal (see [`crate::daemon::views::batch_script`]).

use crate::api::types::{errno, ApiError, BatchScriptResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job_ref::parse_job_ref;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::batch_script::ScriptRefused;
use crate::daemon::views::info;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// Where Slurm's errors for it come from.
const SOURCE: &str = "slurm_job_batch_script()";

/// Slurm's refusal for `why`, and the HTTP status it is sent with.
fn refused(why: ScriptRefused) -> (StatusCode, ApiError) {
    match why {
        ScriptRefused::UnknownJob => refusal(StatusCode::NOT_FOUND, errno::INVALID_JOB_ID, "Invalid job id specified"),
        ScriptRefused::NotPermitted => refusal(StatusCode::FORBIDDEN, errno::USER_ID_MISSING, "Invalid user id"),
        ScriptRefused::NoScript => missing(),
    }
}

/// A refusal with Slurm's number and text, and the HTTP status it is sent with.
fn refusal(status: StatusCode, number: i32, error: &str) -> (StatusCode, ApiError) {
    (status, ApiError { description: error.into(), error_number: number, error: error.into(), source: SOURCE.into() })
}

/// The refusal of a job that has no batch script to give.
fn missing() -> (StatusCode, ApiError) {
    refusal(StatusCode::NOT_FOUND, errno::JOB_SCRIPT_MISSING, "Job script not specified")
}

/// `GET /slurmlet/v1/job/{job_id}/script`.
pub async fn handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    let (meta, found) = {
        let mut core = d.core.lock();
        core.purge(crate::sys::now());
        let found = match parse_job_ref(&id) {
            Some(target) => core.script_for(target, caller).map_err(refused),
            None => Err(refusal(StatusCode::UNPROCESSABLE_ENTITY, errno::INVALID_JOB_ID, "Invalid job id specified")),
        };
        (info::meta(&core.config), found)
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
