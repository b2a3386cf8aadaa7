//! `POST /slurmlet/v1/job/{job_id}/suspend` and `…/resume` (`scontrol suspend`, `resume`):
//! the change itself is the scheduler's ([`crate::daemon::scheduling::suspend`]).

use crate::daemon::http::update;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::suspend::Op;
use axum::extract::{ConnectInfo, Path, State};
use axum::response::Response;
use std::sync::Arc;

/// The handler of both paths: the job, or every task of the array the id names.
async fn handle(d: Arc<Daemon>, caller: Caller, id: String, op: Op) -> Response {
    let failed = format!("Job {} failed", op.name());
    let action = update::JobAction { what: op.name(), failed: &failed, source: "slurm_suspend2()" };
    update::change_job(&d, caller, &id, action, |core, job, caller| core.suspend(job, op, caller)).await
}

/// `POST /slurmlet/v1/job/{job_id}/suspend`.
pub async fn suspend(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    handle(d, caller, id, Op::Suspend).await
}

/// `POST /slurmlet/v1/job/{job_id}/resume`.
pub async fn resume(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    handle(d, caller, id, Op::Resume).await
}
