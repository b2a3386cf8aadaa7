//! `GET /slurmlet/v1/job/{job_id}/script` (`scontrol write batch_script`): the job's batch
//! script as it was submitted, or slurmctld's refusal (see [`crate::daemon::views::batch_script`]).

use crate::api::types::{errno, BatchScriptResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job_ref::parse_job_ref;
use crate::daemon::model::refusal::{Kind, Refusal};
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

/// Slurm's refusal for `why`.
fn refused(why: ScriptRefused) -> Refusal {
    match why {
        ScriptRefused::UnknownJob => {
            Refusal::new(Kind::NotFound, errno::INVALID_JOB_ID, "Invalid job id specified", SOURCE)
        }
        ScriptRefused::NotPermitted => Refusal::new(Kind::Forbidden, errno::USER_ID_MISSING, "Invalid user id", SOURCE),
        ScriptRefused::NoScript => missing(),
    }
}

/// The refusal of a job that has no batch script to give.
fn missing() -> Refusal {
    Refusal::new(Kind::NotFound, errno::JOB_SCRIPT_MISSING, "Job script not specified", SOURCE)
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
            None => Err(Refusal::new(Kind::Invalid, errno::INVALID_JOB_ID, "Invalid job id specified", SOURCE)),
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
        Err(refusal) => (
            super::refusal::status_of(&refusal),
            Json(BatchScriptResponse { meta, errors: vec![refusal.into()], ..Default::default() }),
        ),
    }
    .into_response()
}
