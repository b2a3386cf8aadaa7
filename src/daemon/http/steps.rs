//! `GET /slurmlet/v1/steps` (`squeue -s`, `scontrol show step`): the running jobs' steps as
//! [`crate::daemon::views::step_list`] lists them, with their usage when asked for.

use crate::api::step_info::StepsResponse;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::step_list::{running, StepsQuery};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The reply: the steps `caller` may see (owners' names looked up, and their processes read,
/// once the lock is let go).
pub async fn handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Query(query): Query<StepsQuery>,
) -> Response {
    let (mut steps, meta, sources) = {
        let core = d.core.lock();
        let steps = running(&core, caller);
        let sources =
            if query.stats { crate::daemon::views::step_stats::sources(&core, &steps, caller) } else { Vec::new() };
        (steps, crate::daemon::views::info::meta(&core.config), sources)
    };
    if !sources.is_empty() {
        // Reading `/proc` blocks: off the runtime's threads.
        let listed = steps.clone();
        steps = tokio::task::spawn_blocking(move || {
            let mut steps = listed;
            crate::daemon::views::step_stats::fill(&mut steps, &sources);
            steps
        })
        .await
        .unwrap_or(steps);
    }
    let mut names: HashMap<u32, String> = HashMap::new();
    for s in &mut steps {
        s.user_name = names.entry(s.user_id).or_insert_with(|| crate::identity::user_name(s.user_id)).clone();
    }
    (StatusCode::OK, Json(StepsResponse { steps, meta, ..Default::default() })).into_response()
}
