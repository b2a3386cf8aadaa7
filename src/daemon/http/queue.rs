//! `GET /slurmlet/v1/queue?pending=N`, the board's queue: the query read, the listing taken
//! under the lock ([`crate::daemon::views::queue`]), the owners' names looked up after.

use crate::api::activity::QueueResponse;
use crate::daemon::http::params;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::queue::{listing, DEFAULT_PENDING};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The reply for `caller` (owners' names looked up once the lock is let go).
pub async fn handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let pending = match params::number::<u32>(&query, "pending") {
        Ok(n) => n.unwrap_or(DEFAULT_PENDING),
        Err(e) => return crate::daemon::http::refusal::envelope(&d, StatusCode::BAD_REQUEST, e),
    };
    let now = crate::sys::now();
    let mut reply = {
        let mut core = d.core.lock();
        core.purge(now);
        let generation = *d.changes.borrow();
        QueueResponse {
            generation,
            now: now as i64,
            meta: Some(crate::daemon::views::info::meta(&core.config)),
            ..listing(&core, caller, pending as usize)
        }
    };
    let mut names: HashMap<u32, String> = HashMap::new();
    for job in reply.running.iter_mut().chain(reply.pending.iter_mut()) {
        job.user_name = names.entry(job.user_id).or_insert_with(|| crate::identity::user_name(job.user_id)).clone();
    }
    (StatusCode::OK, Json(reply)).into_response()
}
