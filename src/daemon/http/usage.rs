//! `GET /slurmlet/v1/usage?days=N`: each user's use of the GPUs, tallied by
//! [`crate::daemon::views::usage`] from records read without the daemon's lock.

use crate::api::activity::{UsageResponse, UserUsage};
use crate::daemon::http::{params, refusal};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::store::Store;
use crate::daemon::views::usage::{tally, Run, DEFAULT_DAYS, MAX_DAYS};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The reply for `caller`.
pub async fn handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let days = match params::number::<u32>(&query, "days") {
        Ok(n) => n.unwrap_or(DEFAULT_DAYS).min(MAX_DAYS),
        Err(e) => return crate::daemon::http::refusal::envelope(&d, StatusCode::BAD_REQUEST, e),
    };
    let until = crate::sys::now();
    let since = until.saturating_sub(days as u64 * 86_400);
    let (mut runs, in_memory, only, meta, shards_per_gpu) = {
        let core = d.core.lock();
        let spg = core.config.shards_per_gpu;
        let runs: Vec<Run> = core.jobs.values().filter_map(|j| Run::of(j, spg)).collect();
        let ids: Vec<u32> = core.jobs.keys().copied().collect();
        let only = (core.config.private_usage && !caller.privileged(&core.config)).then_some(caller.uid);
        (runs, ids, only, crate::daemon::views::info::meta(&core.config), spg)
    };
    let daemon = d.clone();
    let stored = tokio::task::spawn_blocking(move || {
        daemon.history.read(|s: &Store| {
            let jobs = s.history(Some(since), |id| in_memory.binary_search(&id).is_err())?;
            Ok(jobs
                .iter()
                .filter(|j| only.is_none_or(|uid| j.uid == uid))
                .filter_map(|j| Run::of(j, shards_per_gpu))
                .collect::<Vec<_>>())
        })
    })
    .await;
    match stored {
        Ok(Ok(more)) => runs.extend(more),
        Ok(Err(e)) => return unreadable(&d, e.to_string()),
        Err(e) => return unreadable(&d, e.to_string()),
    }
    runs.retain(|r| only.is_none_or(|uid| r.uid == uid));
    let mut users: Vec<UserUsage> = tally(&runs, since, until)
        .into_iter()
        .map(|(uid, (seconds, jobs))| UserUsage {
            user_name: crate::identity::user_name(uid),
            gpu_seconds: seconds.round() as u64,
            jobs,
        })
        .collect();
    users.sort_by(|a, b| b.gpu_seconds.cmp(&a.gpu_seconds).then_with(|| a.user_name.cmp(&b.user_name)));
    let reply =
        UsageResponse { since: since as i64, until: until as i64, users, meta: Some(meta), ..Default::default() };
    (StatusCode::OK, Json(reply)).into_response()
}

/// The reply when the store could not be read (`why`).
fn unreadable(d: &Daemon, why: String) -> Response {
    refusal::unreadable_store(d, "Unable to read the job history", "slurmlet_usage", why)
}
