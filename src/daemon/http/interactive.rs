//! The two requests that become streams (see [`crate::api::stream`]):
//!
//! * `POST /slurmlet/v1/allocation`: an interactive allocation (srun or salloc outside a
//!   job). The job is stored, then the connection is held here, with the job pending, until
//!   the scheduler gives it resources; a client that goes away meanwhile cancels it. Once it
//!   runs, the job's supervisor takes the connection over and holds the allocation for the
//!   client.
//! * `POST /slurmlet/v1/job/{id}/steps`: a job step. Once the step has its share of the job
//!   (waiting for other steps if it must), its supervisor takes the connection over and runs
//!   the tasks, and the step's I/O no longer passes through the daemon.

use crate::api::step::StepRequest;
use crate::api::stream::{self};
use crate::api::types::*;
use crate::daemon::http::accept;
use crate::daemon::http::body;
use crate::daemon::http::request;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::runtime::interactive;
use crate::daemon::runtime::submit::{self, SubmitRefused};
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::steps::StepRefusal;
use crate::daemon::scheduling::submit_refusals::store_failure;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// The upgrade a stream request must ask for, taken from the request, and its body.
async fn stream_request(request: Request) -> Result<(hyper::upgrade::OnUpgrade, axum::body::Bytes), Response> {
    let (mut parts, body) = request.into_parts();
    let asks = parts.headers.get(header::UPGRADE).and_then(|v| v.to_str().ok()) == Some(stream::PROTOCOL);
    let on_upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let Some(on_upgrade) = on_upgrade.filter(|_| asks) else {
        return Err(super::refusal::bare(
            Refusal::new(Kind::Malformed, errno::BAD_REQUEST, "Unable to parse query", "upgrade").saying(format!(
                "this endpoint runs over a stream: send `Connection: Upgrade` and `Upgrade: {}`",
                stream::PROTOCOL
            )),
        ));
    };
    let body = body::read_body(body, body::declared_length(&parts.headers)).await.map_err(|(status, error)| {
        (status, axum::Json(crate::api::types::Envelope { errors: vec![error], ..Default::default() })).into_response()
    })?;
    Ok((on_upgrade, body))
}

/// The `101 Switching Protocols` reply.
fn switching() -> Response {
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, stream::PROTOCOL)
        .body(axum::body::Body::empty())
        .expect("a valid response")
}

/// The connection of an upgraded request and a watchable copy of it.
async fn held_connection(
    on_upgrade: hyper::upgrade::OnUpgrade,
) -> std::io::Result<(UnixStream, interactive::Readable)> {
    let gone = || std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "the upgrade failed");
    let conn = accept::upgraded_socket(on_upgrade).await.ok_or_else(gone)?;
    let readable = interactive::watchable(&conn)?;
    Ok((conn, readable))
}

/// `POST /slurmlet/v1/allocation`: stores an interactive job and, once upgraded, holds its
/// client until the job runs.
pub async fn allocation(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    request: Request,
) -> Response {
    let (on_upgrade, body) = match stream_request(request).await {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let fail = |status: StatusCode, errors: Vec<ApiError>| {
        (status, axum::Json(JobSubmitResponse { errors, ..Default::default() })).into_response()
    };
    let req = match request::parse_submit(&body) {
        Ok(r) => r,
        Err((status, errors)) => return fail(status, errors),
    };
    let desc = req.job.unwrap_or_default();
    let stored = match submit::store(&d, &desc, req.script.as_deref(), caller, true).await {
        Ok(stored) => stored,
        Err(SubmitRefused::Invalid(e)) => return fail(super::refusal::status_of(&e), vec![e.into()]),
        Err(SubmitRefused::NotStored(e)) => {
            return fail(StatusCode::INTERNAL_SERVER_ERROR, vec![store_failure(&e).into()])
        }
    };
    let job = stored.jobs.into_iter().next().expect("an interactive job is one job");
    tokio::spawn(async move {
        let held = held_connection(on_upgrade).await;
        d.hold_or_cancel(job, held);
    });
    switching()
}

/// The reply for a step that can never start.
fn refused(id: u32, why: &str) -> Response {
    let kind = if why == "Access/permission denied" { Kind::Forbidden } else { Kind::Invalid };
    let refusal = Refusal::new(kind, errno::ERROR, why, "_step_create");
    super::refusal::bare(refusal.saying(format!("Unable to create step for job {id}: {why}")))
}

/// `POST /slurmlet/v1/job/{id}/steps`: once upgraded, gives the step its share of the job
/// (waiting for other steps if it must) and starts its supervisor.
pub async fn step(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let Some(id) = crate::daemon::model::job_ref::parse_job_ref(&id).filter(|r| r.step.is_none()).map(|r| r.job) else {
        return refused(0, "Invalid job id specified");
    };
    let (on_upgrade, body) = match stream_request(request).await {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let req: StepRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            let refusal = Refusal::new(Kind::Malformed, errno::BAD_REQUEST, "Unable to parse query", "body");
            return super::refusal::bare(refusal.saying(format!("invalid step request: {e}")));
        }
    };
    // What can never start is refused before the upgrade; what must wait waits after it.
    let first = d.core.lock().create_step(id, &req, caller);
    if let Err(StepRefusal::Fatal(why)) = &first {
        return refused(id, why);
    }
    tokio::spawn(async move {
        match accept::upgraded_socket(on_upgrade).await {
            Some(conn) => d.run_step(id, req, caller, first, conn).await,
            None => d.step_abandoned(id, first),
        }
    });
    switching()
}
