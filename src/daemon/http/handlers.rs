//! The REST handlers: slurmrestd v0.0.43 paths over a Unix socket, one handler per request.
//!
//! Who is calling comes from the socket's peer credentials (SO_PEERCRED), never from the
//! request; on the TCP address of [`super::tcp`], from the request's verified token.

use crate::api::types::*;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::Job;
use crate::daemon::model::job_ref::parse_job_ref;
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::runtime::submit::{self, SubmitRefused};
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::array;
use crate::daemon::scheduling::submit_paths::SubmitPaths;
use crate::daemon::scheduling::submit_refusals::store_failure;
use crate::daemon::views::info;
use crate::daemon::views::jobs_reply;
use crate::daemon::views::listing;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

type Shared = State<Arc<Daemon>>;

fn reply<T: serde::Serialize>(status: StatusCode, body: T) -> Response {
    (status, Json(body)).into_response()
}

pub(in crate::daemon) async fn ping(State(d): Shared) -> Response {
    let core = d.core.lock();
    reply(
        StatusCode::OK,
        PingResponse {
            pings: vec![Ping {
                hostname: core.config.node_name.clone(),
                pinged: "UP".into(),
                responding: true,
                latency: 0,
                mode: "primary".into(),
                primary: true,
            }],
            meta: info::meta(&core.config),
            ..Default::default()
        },
    )
}

pub(in crate::daemon) async fn test_only(
    State(d): Shared,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let parsed = super::request::parse_submit(&body);
    let (meta, estimate) = {
        let core = d.core.lock();
        let meta = info::meta(&core.config);
        let req = match parsed {
            Ok(r) => r,
            Err((status, errors)) => return reply(status, JobsResponse { meta, errors, ..Default::default() }),
        };
        let estimate = core.test_only(&req.job.unwrap_or_default(), req.script.as_deref(), caller).map(|job| {
            let mut info = info::job_info(&job, &core.config);
            info.nodes = core.config.node_name.clone();
            (info, job.cwd)
        });
        (meta, estimate)
    };
    // Its working directory is checked as the caller sees it, without the lock.
    let checked = match estimate {
        Ok((info, cwd)) => SubmitPaths::of_work_dir(cwd.as_str()).check(&d.path_checks, caller).await.map(|()| info),
        Err(e) => Err(e),
    };
    match checked {
        Ok(info) => reply(StatusCode::OK, JobsResponse { jobs: vec![info], meta, ..Default::default() }),
        Err(e) => {
            reply(super::refusal::status_of(&e), JobsResponse { meta, errors: vec![e.into()], ..Default::default() })
        }
    }
}

/// Answers once job `id` has ended (long poll for `sbatch --wait`), with 200 and the job;
/// or, when it has not ended within the query's `timeout` (seconds, default
/// [`super::request::WAIT_TIMEOUT`]), with 202 and the job as it is, and the client asks
/// again. A bounded wait ends the handler of a client that went away without a word, and
/// lets an HTTP client with a read timeout wait for a long job.
pub(in crate::daemon) async fn wait(
    State(d): Shared,
    Path(id): Path<String>,
    Query(params): Query<Vec<(String, String)>>,
) -> Response {
    let Some(target) = parse_job_ref(&id).filter(|r| r.step.is_none()) else {
        return bad_job_id(&d, &id, "_handle_job_wait");
    };
    let timeout = match super::request::parse_wait_query(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        Ok(t) => t,
        Err(e) => return super::refusal::envelope(&d, StatusCode::UNPROCESSABLE_ENTITY, e),
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let mut rx = d.core.lock().ended.subscribe();
    loop {
        {
            let core = d.core.lock();
            let meta = info::meta(&core.config);
            // An array has ended when every one of its tasks has.
            let named: Vec<&Job> = core.ids_named(target).iter().map(|id| &core.jobs[id]).collect();
            if named.is_empty() {
                return no_such_job(meta, target.job, "_handle_job_wait");
            }
            let ended = named.iter().all(|j| j.state().is_finished());
            if ended || tokio::time::Instant::now() >= deadline {
                let jobs = named.iter().map(|j| info::job_info(j, &core.config)).collect();
                let status = if ended { StatusCode::OK } else { StatusCode::ACCEPTED };
                return reply(status, JobsResponse { jobs, meta, ..Default::default() });
            }
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) | Err(_) => {}
            Ok(Err(_)) => {
                let error = ApiError {
                    description: "the daemon is stopping".into(),
                    error_number: errno::ERROR,
                    error: "Unexpected error".into(),
                    source: "_handle_job_wait".into(),
                };
                return reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    JobsResponse { errors: vec![error], ..Default::default() },
                );
            }
        }
    }
}

pub(in crate::daemon) async fn submit(
    State(d): Shared,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let meta = info::meta(&d.core.lock().config);
    let fail = |status: StatusCode, errors: Vec<ApiError>| {
        reply(status, JobSubmitResponse { meta: meta.clone(), errors, ..Default::default() })
    };
    let req = match super::request::parse_submit(&body) {
        Ok(r) => r,
        Err((status, errors)) => return fail(status, errors),
    };
    let desc = req.job.unwrap_or_default();
    // The client hears the id only once the job is stored.
    match submit::store(&d, &desc, req.script.as_deref(), caller, false).await {
        Ok(stored) => {
            let id = stored.jobs[0].id;
            let effects = d.core.lock().admit(stored.jobs);
            d.apply(effects);
            reply(
                StatusCode::OK,
                JobSubmitResponse {
                    job_id: id,
                    step_id: "batch".into(),
                    meta,
                    warnings: stored
                        .warnings
                        .into_iter()
                        .map(|w| ApiWarning { description: w, source: "slurm_submit_batch_job()".into() })
                        .collect(),
                    ..Default::default()
                },
            )
        }
        Err(SubmitRefused::Invalid(e)) => fail(super::refusal::status_of(&e), vec![e.into()]),
        Err(SubmitRefused::NotStored(e)) => fail(StatusCode::INTERNAL_SERVER_ERROR, vec![store_failure(&e).into()]),
    }
}

/// `GET /slurm/v0.0.43/jobs`: every job in memory. Its reply is a few kilobytes per job,
/// so it is built and written from a copy of the jobs, on a blocking thread, while the
/// daemon goes on (under load, building it under the lock stalled every other request),
/// one such listing at a time.
pub(in crate::daemon) async fn jobs(State(d): Shared, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let turn = d.listings.acquire().await.expect("the listings' semaphore is never closed");
    let now = crate::sys::now();
    let (jobs, config) = {
        let mut core = d.core.lock();
        core.purge(now);
        let visible: Vec<&Job> = core.jobs.values().filter(|j| caller.may_see(j, &core.config)).collect();
        let listed = array::fold_pending(&visible);
        (listed.into_iter().map(array::listed_job).collect::<Vec<_>>(), core.config.clone())
    };
    let bytes = tokio::task::spawn_blocking(move || jobs_reply::compact(&jobs, &config, now))
        .await
        .expect("the reply is written");
    drop(turn);
    (StatusCode::OK, [(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// `POST /slurmlet/v1/jobs/query`: squeue's listing, filtered, sorted and rendered here so
/// that the reply carries only the values it prints.
pub(in crate::daemon) async fn jobs_query(
    State(d): Shared,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let query = match super::request::parse_job_query(&body) {
        Ok(q) => q,
        Err(error) => return super::refusal::envelope(&d, StatusCode::BAD_REQUEST, error),
    };
    let now = crate::sys::now();
    let json = |status: StatusCode, bytes: Vec<u8>| {
        (status, [(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response()
    };
    // The full reply of a long queue is tens of megabytes: it is built and written from a
    // copy of the jobs, on a blocking thread, while the daemon goes on, one at a time.
    let turn = match query.json {
        true => Some(d.listings.acquire().await.expect("the listings' semaphore is never closed")),
        false => None,
    };
    let (jobs, found, config) = {
        let mut core = d.core.lock();
        core.purge(now);
        let visible = core.jobs.values().filter(|j| caller.may_see(j, &core.config));
        // A plain listing is laid out under the lock: copying the jobs out to lay them out
        // without it costs more than laying them out (at 100,000 jobs, about twice the
        // daemon's time per listing, measured).
        if let Some(layout) = &query.layout {
            let Some(text) = listing::laid_out(visible, &core.config, &query, layout, now) else {
                let meta = info::meta(&core.config);
                let errors = vec![jobs_reply::unknown_ids()];
                let envelope = crate::api::types::Envelope { meta, errors, warnings: Vec::new() };
                return (StatusCode::NOT_FOUND, axum::Json(envelope)).into_response();
            };
            return (StatusCode::OK, [(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], text)
                .into_response();
        }
        if !query.json {
            return json(StatusCode::OK, listing::query(visible, &core.config, &query, now));
        }
        let (jobs, found) = listing::select_json(visible, &core.config, &query);
        (jobs, found, core.config.clone())
    };
    let bytes = tokio::task::spawn_blocking(move || jobs_reply::pretty(&jobs, &config, found, now))
        .await
        .expect("the reply is written");
    drop(turn);
    json(if found { StatusCode::OK } else { StatusCode::NOT_FOUND }, bytes)
}

use crate::api::noval::NoVal;

/// The refusal of a `{job_id}` that is no job id (slurmrestd's `job_bad_id`).
fn bad_job_id_error(id: &str, source: &str) -> Refusal {
    Refusal::new(Kind::Invalid, errno::INVALID_JOB_ID, "Invalid job id specified", source)
        .saying(format!("Unable to parse JobId={id}: a job id is a number from 1 to 4294967295, or JOB.STEP"))
}

/// The reply to a `{job_id}` that is no job id.
pub(in crate::daemon) fn bad_job_id(d: &Daemon, id: &str, source: &str) -> Response {
    let meta = info::meta(&d.core.lock().config);
    jobs_refused(meta, bad_job_id_error(id, source))
}

/// The reply for a job the daemon does not know (slurmrestd's `job_unknown`).
pub(in crate::daemon) fn no_such_job(meta: Meta, n: u32, source: &str) -> Response {
    let refusal = Refusal::new(Kind::NotFound, errno::INVALID_JOB_ID, "Invalid job id specified", source);
    jobs_refused(meta, refusal.saying(format!("Unable to query JobId={n}")))
}

/// A jobs reply carrying `refusal`, with its status.
fn jobs_refused(meta: Meta, refusal: Refusal) -> Response {
    let status = super::refusal::status_of(&refusal);
    reply(status, JobsResponse { meta, errors: vec![refusal.into()], ..Default::default() })
}

pub(in crate::daemon) async fn job(
    State(d): Shared,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    let Some(target) = parse_job_ref(&id) else {
        return bad_job_id(&d, &id, "_handle_job_get");
    };
    let mut core = d.core.lock();
    core.purge(crate::sys::now());
    let meta = info::meta(&core.config);
    // A job hidden by `private_data` is answered as one that does not exist, as in Slurm.
    // An array's id names all its tasks, those not yet run listed together.
    let named: Vec<&Job> = core
        .ids_named(crate::daemon::model::job_ref::JobRef { step: None, ..target })
        .iter()
        .map(|id| &core.jobs[id])
        .filter(|j| caller.may_see(j, &core.config))
        .collect();
    if named.is_empty() {
        return no_such_job(meta, target.job, "_handle_job_get");
    }
    let jobs = array::fold_pending(&named)
        .into_iter()
        .map(|entry| info::job_info(&array::listed_job(entry), &core.config))
        .collect();
    reply(StatusCode::OK, JobsResponse { jobs, meta, ..Default::default() })
}

pub(in crate::daemon) async fn cancel(
    State(d): Shared,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
    Query(params): Query<Vec<(String, String)>>,
) -> Response {
    let meta = info::meta(&d.core.lock().config);
    let refuse = |error: ApiError| {
        reply(
            StatusCode::UNPROCESSABLE_ENTITY,
            CancelResponse { meta: meta.clone(), errors: vec![error], ..Default::default() },
        )
    };
    let q = match super::request::parse_cancel_query(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        Ok(q) => q,
        Err(e) => return refuse(e),
    };
    let Some(target) = parse_job_ref(&id) else { return refuse(bad_job_id_error(&id, "_handle_job_delete").into()) };
    let status_of = |code: i32, message: String, job: Option<u32>| KillStatus {
        error: KillError { string: message.clone(), code, message },
        step_id: id.clone(),
        job_id: NoVal::from_option(job),
        ..Default::default()
    };
    let n = target.job;
    let result = match target.step {
        Some(step) => d.core.lock().cancel_step(n, step, q.signal, caller),
        None => d.core.lock().cancel_named(target, q.signal, q.scope, caller),
    };
    match result {
        Ok(effects) => match d.apply_durably(effects).await {
            Ok(()) => reply(StatusCode::OK, CancelResponse { meta, ..Default::default() }),
            Err(e) => reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                CancelResponse { meta, errors: vec![store_failure(&e).into()], ..Default::default() },
            ),
        },
        Err(e) => {
            if e.code == errno::ACCESS_DENIED {
                tracing::warn!(job = n, uid = caller.uid, "cancel denied");
            }
            let known = e.code != errno::INVALID_JOB_ID;
            reply(
                StatusCode::OK,
                CancelResponse {
                    status: vec![status_of(e.code, e.message, known.then_some(n))],
                    meta,
                    ..Default::default()
                },
            )
        }
    }
}

pub(in crate::daemon) async fn nodes(State(d): Shared, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let core = d.core.lock();
    reply(
        StatusCode::OK,
        NodesResponse {
            nodes: vec![info::node(&core, caller)],
            last_update: NoVal::of(crate::sys::now()),
            meta: info::meta(&core.config),
            ..Default::default()
        },
    )
}

pub(in crate::daemon) async fn partitions(State(d): Shared) -> Response {
    let core = d.core.lock();
    reply(
        StatusCode::OK,
        PartitionsResponse {
            partitions: info::partitions(&core.config),
            last_update: NoVal::of(crate::sys::now()),
            meta: info::meta(&core.config),
            ..Default::default()
        },
    )
}

pub(in crate::daemon) async fn config(State(d): Shared) -> Response {
    let core = d.core.lock();
    reply(
        StatusCode::OK,
        ConfigResponse { config: info::config(&core), meta: info::meta(&core.config), ..Default::default() },
    )
}

pub(in crate::daemon) async fn shutdown(State(d): Shared, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let daemon_uid = crate::identity::uid();
    if caller.uid != daemon_uid && caller.uid != 0 {
        tracing::warn!(uid = caller.uid, user = %crate::identity::user_name(caller.uid), "shutdown refused: Access/permission denied");
        return reply(
            StatusCode::FORBIDDEN,
            Envelope {
                errors: vec![ApiError {
                    description: "only the daemon's owner may stop it".into(),
                    error_number: errno::ACCESS_DENIED,
                    error: "Access/permission denied".into(),
                    source: "shutdown".into(),
                }],
                ..Default::default()
            },
        );
    }
    d.shutdown.notify_one();
    reply(StatusCode::OK, Envelope::default())
}
