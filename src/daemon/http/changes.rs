//! `GET /slurmlet/v1/changes?after=G&wait=S`: the board's long poll on the change counter
//! ([`crate::daemon::runtime::Daemon::changes`]). The answer comes at once when the counter
//! is past `after`, else when it moves or after `wait` seconds (at most [`MAX_WAIT_SECS`]);
//! a waiting caller costs the daemon a parked task, and none calling costs it nothing. A
//! daemon told to stop answers its waiting callers at once.

use crate::api::activity::ChangesResponse;
use crate::daemon::http::params;
use crate::daemon::runtime::Daemon;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;
use std::time::Duration;

/// The longest a caller is kept waiting, seconds.
pub const MAX_WAIT_SECS: u64 = 60;

/// The wait when the caller gives none, seconds: none, the counter is answered at once.
pub const DEFAULT_WAIT_SECS: u64 = 0;

/// Answers with the counter once it is past `after` or `wait` seconds have passed.
pub async fn handler(State(d): State<Arc<Daemon>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    let (after, wait) = match (params::number::<u64>(&query, "after"), params::number::<u64>(&query, "wait")) {
        (Ok(after), Ok(wait)) => (after.unwrap_or(0), wait.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS)),
        (Err(e), _) | (_, Err(e)) => return crate::daemon::http::refusal::envelope(&d, StatusCode::BAD_REQUEST, e),
    };
    let mut changes = d.changes.subscribe();
    let mut stopping = d.stopping.clone();
    // Past `after`, the wait ran out or the daemon stops: the counter as it is then.
    let moved = async {
        tokio::select! {
            _ = changes.wait_for(|g| *g > after) => {},
            _ = stopping.wait_for(|stop| *stop) => {},
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(wait), moved).await;
    let generation = *changes.borrow();
    (StatusCode::OK, Json(ChangesResponse { generation })).into_response()
}
