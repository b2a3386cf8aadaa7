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

use super::steps::StepRefusal;
use crate::api::step::StepRequest;
use crate::api::stream::{self, Frame};
use crate::api::types::*;
use crate::daemon::http::accept;
use crate::daemon::http::body;
use crate::daemon::http::request;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::submit;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// The client of a pending interactive job, held until the job gets its resources.
pub struct PendingClient {
    conn: UnixStream,
    /// Cancels the job if the client goes away first.
    watcher: tokio::task::AbortHandle,
}

fn error_reply(status: StatusCode, description: String, error_number: i32, error: &str, source: &str) -> Response {
    let e = ApiError { description, error_number, error: error.into(), source: source.into() };
    (status, axum::Json(Envelope { errors: vec![e], ..Default::default() })).into_response()
}

/// The upgrade a stream request must ask for, taken from the request, and its body.
async fn stream_request(request: Request) -> Result<(hyper::upgrade::OnUpgrade, axum::body::Bytes), Response> {
    let (mut parts, body) = request.into_parts();
    let asks = parts.headers.get(header::UPGRADE).and_then(|v| v.to_str().ok()) == Some(stream::PROTOCOL);
    let on_upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let Some(on_upgrade) = on_upgrade.filter(|_| asks) else {
        return Err(error_reply(
            StatusCode::BAD_REQUEST,
            format!("this endpoint runs over a stream: send `Connection: Upgrade` and `Upgrade: {}`", stream::PROTOCOL),
            errno::BAD_REQUEST,
            "Unable to parse query",
            "upgrade",
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

/// Sends one frame on a connection the daemon still holds (a short write on an idle socket).
fn send(conn: &UnixStream, frame: Frame) {
    if let Err(e) = frame.write_to(&mut &*conn) {
        tracing::debug!("cannot write to a stream client: {e}");
    }
}

impl Daemon {
    /// Takes the connection of interactive job `id`'s client, to hand it to the job's
    /// supervisor. `None`: the client is gone.
    pub fn take_client(&self, id: u32) -> Option<UnixStream> {
        let client = self.clients.lock().expect("clients lock").remove(&id)?;
        client.watcher.abort();
        Some(client.conn)
    }

    /// Holds the connection of pending interactive job `id` and makes the job schedulable.
    /// Tells the client when the job must wait, before anyone else may write to it.
    fn hold_client(self: &Arc<Self>, job: job::Job, conn: UnixStream, readable: Readable) {
        let id = job.id;
        let daemon = self.clone();
        let mut clients = self.clients.lock().expect("clients lock");
        let watcher = tokio::spawn(async move {
            // A pending job's client says nothing until it is granted: anything readable
            // (its end, most likely) means that it gave up.
            let _ = readable.readable().await;
            if daemon.clients.lock().expect("clients lock").remove(&id).is_some() {
                tracing::info!(job = id, "the client of a pending interactive job went away; cancelling it");
                let cancelled = daemon.core.lock().cancel_abandoned(id);
                if let Some(effects) = cancelled {
                    daemon.apply(effects);
                }
            }
        })
        .abort_handle();
        let (started, reason, effects) = {
            let mut core = self.core.lock();
            let mut effects = core.admit(vec![job]);
            effects.merge(core.schedule());
            let job = &core.jobs[&id];
            (job.state() != job::JobState::Pending, job.reason.to_string(), effects)
        };
        if !started {
            send(&conn, Frame::Queued { job_id: id, reason });
        }
        clients.insert(id, PendingClient { conn, watcher });
        drop(clients);
        self.apply(effects);
    }

    /// Starts the supervisor of a step given its share, handing it the client's connection.
    fn start_step(self: &Arc<Self>, id: u32, new: super::step_spec::NewStep, conn: UnixStream) {
        let daemon = self.clone();
        tokio::task::spawn_blocking(move || {
            let step = new.spec.step_id;
            let exe = daemon.core.lock().exe().to_path_buf();
            let started = super::step_spec::write_spec(&new.dir, &new)
                .and_then(|()| super::launch::start_supervisor(crate::stepd::Kind::Step, &exe, &new.dir, Some(&conn)));
            if let Err(e) = &started {
                send(&conn, Frame::Error(format!("cannot start step {id}.{step}: {e}")));
            }
            let failed = started.is_err();
            let effects = daemon.core.lock().step_started(id, step, started);
            daemon.apply(effects);
            if failed {
                // Its share is free again.
                daemon.steps_changed.notify_waiters();
            }
        });
    }
}

/// A second descriptor of a client's connection, watched for readability by the runtime
/// (the connection itself stays in blocking mode for the supervisor it goes to).
type Readable = tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>;

/// The connection of an upgraded request and a watchable copy of it.
async fn held_connection(on_upgrade: hyper::upgrade::OnUpgrade) -> std::io::Result<(UnixStream, Readable)> {
    let gone = || std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "the upgrade failed");
    let conn = accept::upgraded_socket(on_upgrade).await.ok_or_else(gone)?;
    let copy = std::os::fd::OwnedFd::from(conn.try_clone()?);
    // SAFETY: the AsyncFd owns this descriptor, so it stays open while it is registered and
    // is closed only after it is deregistered, when the AsyncFd drops.
    let readable = unsafe { tokio::io::unix::AsyncFd::register_with_interest(copy, tokio::io::Interest::READABLE)? };
    Ok((conn, readable))
}

/// `POST /slurmlet/v1/allocation`: stores an interactive job and, once upgraded, holds its
/// client until the job runs.
pub async fn allocation(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(peer): ConnectInfo<Caller>,
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
    let caller = peer;
    let staged = crate::daemon::scheduling::staging::stage(&d, &desc, req.script.as_deref(), caller, true).await;
    let staged = match staged {
        Ok(s) => s,
        Err(e) => return fail(StatusCode::UNPROCESSABLE_ENTITY, vec![e]),
    };
    if let Err(e) = staged.durable.await.unwrap_or_else(|_| Err("the store writer has stopped".into())) {
        d.core.lock().unstage(&staged.jobs);
        return fail(StatusCode::INTERNAL_SERVER_ERROR, vec![submit::store_failure(&e)]);
    }
    let job = staged.jobs.into_iter().next().expect("an interactive job is one job");
    tokio::spawn(async move {
        let id = job.id;
        match held_connection(on_upgrade).await {
            Ok((conn, readable)) => d.hold_client(job, conn, readable),
            Err(e) => {
                tracing::info!(
                    job = id,
                    "the client of an interactive job left before it was held ({e}); cancelling it"
                );
                let mut core = d.core.lock();
                let _queued_then_cancelled = core.admit(vec![job]);
                let cancelled = core.cancel_abandoned(id);
                drop(core);
                if let Some(effects) = cancelled {
                    d.apply(effects);
                }
            }
        }
    });
    switching()
}

/// The reply for a step that can never start.
fn refused(id: u32, why: &str) -> Response {
    let status =
        if why == "Access/permission denied" { StatusCode::FORBIDDEN } else { StatusCode::UNPROCESSABLE_ENTITY };
    error_reply(status, format!("Unable to create step for job {id}: {why}"), errno::ERROR, why, "_step_create")
}

/// `POST /slurmlet/v1/job/{id}/steps`: once upgraded, gives the step its share of the job
/// (waiting for other steps if it must) and starts its supervisor.
pub async fn step(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(peer): ConnectInfo<Caller>,
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
            return error_reply(
                StatusCode::BAD_REQUEST,
                format!("invalid step request: {e}"),
                errno::BAD_REQUEST,
                "Unable to parse query",
                "body",
            )
        }
    };
    let caller = peer;
    // What can never start is refused before the upgrade; what must wait waits after it.
    let first = d.core.lock().create_step(id, &req, caller);
    if let Err(StepRefusal::Fatal(why)) = &first {
        return refused(id, why);
    }
    tokio::spawn(async move {
        let Some(conn) = accept::upgraded_socket(on_upgrade).await else {
            if let Ok(new) = first {
                d.core.lock().step_ended(id, new.spec.step_id);
            }
            return;
        };
        let mut attempt = first;
        let mut told = false;
        loop {
            match attempt {
                Ok(new) => return d.start_step(id, new, conn),
                Err(StepRefusal::Fatal(why)) => {
                    return send(&conn, Frame::Error(format!("Unable to create step for job {id}: {why}")))
                }
                Err(StepRefusal::Busy(why)) => {
                    if !told {
                        send(&conn, Frame::StepWaiting(why));
                        told = true;
                    }
                }
            }
            let freed = d.steps_changed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            attempt = d.core.lock().create_step(id, &req, caller);
            if matches!(attempt, Err(StepRefusal::Busy(_))) {
                freed.await;
                attempt = d.core.lock().create_step(id, &req, caller);
            }
        }
    });
    switching()
}
