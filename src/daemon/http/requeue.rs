//! `POST /slurmlet/v1/job/{job_id}/requeue` (`scontrol requeue`): the change itself is the
//! scheduler's ([`crate::daemon::scheduling::requeue`]).

use crate::daemon::http::update;

/// `POST /slurmlet/v1/job/{job_id}/requeue` (slurmrestd has no requeue): requeues the job,
/// or every task of the array the id names.
pub async fn handler(
    axum::extract::State(d): axum::extract::State<std::sync::Arc<crate::daemon::runtime::Daemon>>,
    axum::extract::ConnectInfo(caller): axum::extract::ConnectInfo<crate::daemon::model::caller::Caller>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> axum::response::Response {
    let action = update::JobAction { what: "requeue", failed: "Job requeue failed", source: "slurm_requeue2()" };
    update::change_job(&d, caller, &id, action, |core, job, caller| core.requeue(job, caller)).await
}
