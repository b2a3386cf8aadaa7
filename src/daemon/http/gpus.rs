//! `GET /slurmlet/v1/gpus` (`slurmlet gpus`): the node's GPUs and who holds each, as
//! [`crate::daemon::views::gpu_list`] lists them for the caller.

use crate::api::gpus::GpusResponse;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::gpu_list::listing;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The reply for `caller` (owners' names looked up once the lock is let go).
pub async fn handler(State(d): State<Arc<Daemon>>, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let mut reply = {
        let core = d.core.lock();
        GpusResponse { meta: crate::daemon::views::info::meta(&core.config), ..listing(&core, caller) }
    };
    let mut names: HashMap<u32, String> = HashMap::new();
    for job in reply.gpus.iter_mut().flat_map(|g| g.jobs.iter_mut()) {
        if let Some(uid) = job.user_id {
            job.user_name = Some(names.entry(uid).or_insert_with(|| crate::identity::user_name(uid)).clone());
        }
    }
    (StatusCode::OK, Json(reply)).into_response()
}
