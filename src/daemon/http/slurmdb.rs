//! The accounting endpoints: slurmrestd's `GET /slurmdb/v0.0.43/jobs` and
//! `GET /slurmdb/v0.0.43/job/{id}`, and sacct's `POST /slurmlet/v1/history`.
//!
//! Each query copies what it needs of the in-memory jobs under the daemon's lock, then reads
//! the store and builds its reply on a blocking thread (see [`crate::daemon::accounting::history`]).

use crate::api::acct::{self, AcctJob, HistoryQuery, HistoryReply};
use crate::api::slurmdb::DbJobsResponse;
use crate::api::types::{errno, ApiError, ApiWarning, Meta};
use crate::config::Config;
use crate::daemon::accounting::history::Snapshot;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::info;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The query parameters of `GET /slurmdb/v0.0.43/jobs` that slurmrestd knows and slurmlet
/// does not filter on: each one given is answered with a warning.
const NOT_FILTERED: &[&str] = &[
    "association",
    "scheduler_unset",
    "scheduled_on_submit",
    "scheduled_by_main",
    "scheduled_by_backfill",
    "job_started",
    "exit_code",
    "disable_truncate_usage_time",
    "whole_hetjob",
    "disable_whole_hetjob",
    "disable_wait_for_result",
    "usage_time_as_submit_time",
    "show_batch_script",
    "show_job_environment",
    "format",
    "qos",
    "reason",
    "reservation",
    "reservation_id",
];

/// The `meta` of an accounting reply: slurmrestd's (`openapi/slurmdbd`), or with `cli`,
/// that of `sacct --json` run by `caller` as `command`.
fn meta(config: &Config, cli: Option<(Caller, &[String])>) -> Meta {
    let mut meta = info::meta(config);
    match cli {
        None => {
            meta.plugin.kind = "openapi/slurmdbd".into();
            meta.plugin.name = "Slurm OpenAPI slurmdbd".into();
        }
        Some((caller, command)) => {
            meta.plugin.kind = String::new();
            meta.plugin.name = String::new();
            meta.client.user = crate::identity::user_name(caller.uid);
            meta.client.group = crate::identity::group_name(caller.gid);
            meta.command = command.to_vec();
        }
    }
    meta
}

/// The records of `jobs` at `now` as slurmrestd's reply.
fn db_reply(jobs: &[AcctJob], now: u64, meta: Meta, warnings: Vec<ApiWarning>) -> DbJobsResponse {
    let mut reply = DbJobsResponse {
        jobs: jobs.iter().map(|j| crate::daemon::accounting::dbjson::job(j, now)).collect(),
        meta,
        warnings,
        ..Default::default()
    };
    if reply.jobs.is_empty() {
        reply
            .warnings
            .push(ApiWarning { description: "slurmdb_jobs_get() found nothing".into(), source: "_dump_jobs".into() });
    }
    reply
}

/// Answers `q` for `caller`: the jobs (with the configuration and the time of the answer),
/// or why the store could not be read.
async fn answer(d: &Arc<Daemon>, q: HistoryQuery, caller: Caller) -> Result<(Vec<AcctJob>, Config, u64), String> {
    let (snapshot, config, stored) = {
        let core = d.core.lock();
        (Snapshot::take(&core, &q, caller), core.config.clone(), core.stored())
    };
    // What the daemon knew when the snapshot was taken (a step's end, say) is read from the
    // store once it is there.
    stored.await.map_err(|e| e.to_string())?;
    let daemon = d.clone();
    let now = crate::sys::now();
    let jobs = tokio::task::spawn_blocking(move || daemon.history.query(&q, snapshot))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok((jobs, config, now))
}

fn store_error(why: String) -> ApiError {
    ApiError {
        description: why,
        error_number: errno::ERROR,
        error: "Unable to read the job history".into(),
        source: "slurmdb_jobs_get()".into(),
    }
}

/// `POST /slurmlet/v1/history`: sacct's query.
pub async fn history(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let q: HistoryQuery = match serde_json::from_slice(&body) {
        Ok(q) => q,
        Err(e) => {
            let error = ApiError {
                description: format!("Failure during parsing: {e}"),
                error_number: errno::BAD_REQUEST,
                error: "Unable to parse query".into(),
                source: "body".into(),
            };
            return (StatusCode::BAD_REQUEST, Json(HistoryReply { errors: vec![error], ..Default::default() }))
                .into_response();
        }
    };
    let (json, command) = (q.json, q.command.clone());
    let (jobs, config, now) = match answer(&d, q, caller).await {
        Ok(a) => a,
        Err(why) => {
            let reply = HistoryReply { errors: vec![store_error(why)], ..Default::default() };
            return (StatusCode::INTERNAL_SERVER_ERROR, Json(reply)).into_response();
        }
    };
    if !json {
        return Json(HistoryReply { jobs, now, errors: Vec::new() }).into_response();
    }
    // The reply is written on a blocking thread: it may be long.
    let bytes = tokio::task::spawn_blocking(move || {
        let reply = db_reply(&jobs, now, meta(&config, Some((caller, &command))), Vec::new());
        let mut out = serde_json::to_vec_pretty(&reply).expect("a reply serializes");
        out.push(b'\n');
        out
    })
    .await
    .unwrap_or_default();
    ([(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// A refused query, as slurmrestd answers it.
fn refused(status: StatusCode, config: &Config, mut errors: Vec<ApiError>) -> Response {
    errors.push(ApiError {
        description: "Rejecting request. Failure parsing query parameters".into(),
        error_number: errno::INVALID_QUERY,
        error: "Query empty or not RFC7320 compliant".into(),
        source: "op_handler_jobs".into(),
    });
    (status, Json(DbJobsResponse { meta: meta(config, None), errors, ..Default::default() })).into_response()
}

/// A value slurmrestd reads as true.
fn truthy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "")
}

/// `GET /slurmdb/v0.0.43/jobs`: the jobs of the history that the query parameters select,
/// as slurmrestd reads them (`users`, `groups`, `job_name`, `state`, `start_time`,
/// `end_time`, `step`, `partition`, `account`, `cluster`, `constraints`, `wckey`, `node`, `skip_steps`, `show_duplicates`). Without parameters, every job.
pub async fn jobs(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Query(params): Query<Vec<(String, String)>>,
) -> Response {
    let config = d.core.lock().config.clone();
    let ReadQuery { mut q, warnings, start, end } = match read_jobs_query(&params) {
        Ok(read) => read,
        Err(QueryRefused::UnknownState(error)) => {
            let reply = DbJobsResponse { meta: meta(&config, None), errors: vec![error], ..Default::default() };
            // slurmrestd answers 500; a bad request is the client's, and says so.
            return (StatusCode::BAD_REQUEST, Json(reply)).into_response();
        }
        Err(QueryRefused::Invalid(errors)) => return refused(StatusCode::UNPROCESSABLE_ENTITY, &config, errors),
    };
    if !params.is_empty() {
        let now = crate::sys::now();
        let midnight = crate::sys::local_midnight(now);
        q.window = Some(acct::default_window(start, end, q.states.is_some(), !q.selections.is_empty(), now, midnight));
    }
    db_answer(&d, q, caller, warnings).await
}

/// A `/slurmdb/…/jobs` query, read: what it selects, what it said that is not used, and the
/// times it gave (0: none).
struct ReadQuery {
    q: HistoryQuery,
    warnings: Vec<ApiWarning>,
    start: u64,
    end: u64,
}

/// Why a `/slurmdb/…/jobs` query is refused.
enum QueryRefused {
    /// A state slurmrestd does not know: refused alone, as slurmrestd refuses it.
    UnknownState(ApiError),
    /// Users, groups, times or steps that cannot be read.
    Invalid(Vec<ApiError>),
}

/// Reads the query parameters of `GET /slurmdb/v0.0.43/jobs`.
fn read_jobs_query(params: &[(String, String)]) -> Result<ReadQuery, QueryRefused> {
    let mut q = HistoryQuery::default();
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let (mut start, mut end) = (0u64, 0u64);
    let csv = |v: &str| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect::<Vec<_>>();
    for (key, value) in params {
        match key.as_str() {
            "users" => {
                let users = q.users.get_or_insert_with(Vec::new);
                let at = users.len();
                match crate::identity::user_uid(value).or_else(|| value.parse().ok().filter(|_| !value.is_empty())) {
                    Some(uid) => users.push(uid),
                    None => errors.push(ApiError {
                        description: format!("Unable to resolve user: {value}"),
                        error_number: errno::USER_ID_UNKNOWN,
                        error: "Unable to resolve user ID to user name".into(),
                        source: format!("#/users[{at}]/"),
                    }),
                }
            }
            "job_name" => q.names.get_or_insert_with(Vec::new).extend(csv(value)),
            "account" => q.accounts.get_or_insert_with(Vec::new).extend(csv(value)),
            "cluster" => q.clusters.get_or_insert_with(Vec::new).extend(csv(value)),
            "constraints" => q.constraints.get_or_insert_with(Vec::new).extend(csv(value)),
            "wckey" => q.wckeys.get_or_insert_with(Vec::new).extend(csv(value)),
            "node" => q
                .nodes
                .get_or_insert_with(Vec::new)
                .extend(crate::options::hostlist::expand(value).unwrap_or_else(|_| vec![value.clone()])),
            "groups" => {
                let gids = q.gids.get_or_insert_with(Vec::new);
                for group in csv(value) {
                    match crate::identity::group_gid(&group).or_else(|| group.parse().ok()) {
                        Some(gid) => gids.push(gid),
                        None => errors.push(ApiError {
                            description: format!("Unable to resolve group: {group}"),
                            error_number: errno::INVALID_QUERY,
                            error: "Unable to parse query".into(),
                            source: "#/groups/".into(),
                        }),
                    }
                }
            }
            "partition" => q.partitions.get_or_insert_with(Vec::new).extend(csv(value)),
            "state" => {
                let states = q.states.get_or_insert_with(Vec::new);
                let at = states.len();
                match acct::ACCOUNTED_STATES.iter().find(|(long, _)| long.eq_ignore_ascii_case(value)) {
                    Some((long, _)) => states.push(long.to_string()),
                    None => {
                        let error = ApiError {
                            description: format!("Unknown flag \"{value}\""),
                            error_number: errno::DATA_FLAGS_INVALID,
                            error: "Data parser unable to parse invalid flag".into(),
                            source: format!("#/state[{at}][0]/"),
                        };
                        return Err(QueryRefused::UnknownState(error));
                    }
                }
            }
            "start_time" | "end_time" => match value.trim().parse::<u64>() {
                Ok(t) if key == "start_time" => start = t,
                Ok(t) => end = t,
                Err(_) => errors.push(ApiError {
                    description: format!("Unable to parse {key}: {value}"),
                    error_number: errno::INVALID_QUERY,
                    error: "Unable to parse query".into(),
                    source: format!("#/{key}/"),
                }),
            },
            "step" => {
                for id in csv(value) {
                    match acct::parse_selection(&id) {
                        Ok(s) => q.selections.push(s),
                        Err(why) => errors.push(ApiError {
                            description: why,
                            error_number: errno::INVALID_JOB_ID,
                            error: "Invalid job id specified".into(),
                            source: "#/step/".into(),
                        }),
                    }
                }
            }
            "skip_steps" => q.skip_steps = truthy(value),
            "show_duplicates" => q.duplicates = truthy(value),
            k if NOT_FILTERED.contains(&k) => warnings.push(ApiWarning {
                description: format!("slurmlet does not select jobs by \"{k}\"; it is ignored"),
                source: format!("#/{k}/"),
            }),
            k => warnings.push(ApiWarning {
                description: format!("Ignoring unknown field \"{k}\" of type string in DATA_PARSER_JOB_CONDITION"),
                source: format!("#/{k}/"),
            }),
        }
    }
    if !errors.is_empty() {
        return Err(QueryRefused::Invalid(errors));
    }
    Ok(ReadQuery { q, warnings, start, end })
}

/// `GET /slurmdb/v0.0.43/job/{id}`: one job (`N`), or some of its steps (`N.batch`).
pub async fn job(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    let selection = match acct::parse_selection(&id) {
        Ok(s) => s,
        Err(why) => {
            let config = d.core.lock().config.clone();
            let error = ApiError {
                description: why,
                error_number: errno::INVALID_JOB_ID,
                error: "Invalid job id specified".into(),
                source: "#/job_id/".into(),
            };
            return refused(StatusCode::UNPROCESSABLE_ENTITY, &config, vec![error]);
        }
    };
    let now = crate::sys::now();
    let q = HistoryQuery {
        selections: vec![selection],
        window: Some(acct::default_window(0, 0, false, true, now, 0)),
        ..Default::default()
    };
    db_answer(&d, q, caller, Vec::new()).await
}

/// Answers `q` with slurmrestd's reply.
async fn db_answer(d: &Arc<Daemon>, q: HistoryQuery, caller: Caller, warnings: Vec<ApiWarning>) -> Response {
    match answer(d, q, caller).await {
        Ok((jobs, config, now)) => Json(db_reply(&jobs, now, meta(&config, None), warnings)).into_response(),
        Err(why) => {
            let config = d.core.lock().config.clone();
            let reply =
                DbJobsResponse { meta: meta(&config, None), errors: vec![store_error(why)], ..Default::default() };
            (StatusCode::INTERNAL_SERVER_ERROR, Json(reply)).into_response()
        }
    }
}
