//! `GET /slurm/v0.0.43/shares` (`sshare`) and `GET /slurmlet/v1/priorities` (`sprio`): the
//! fair-share tree and the pending jobs' priority factors, as
//! [`crate::daemon::views::shares`] and [`crate::daemon::views::priorities`] give them.

use crate::api::types::{PrioritiesResponse, SharesResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::{priorities, shares};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The most names an `accounts` or `users` list may hold.
const MAX_NAMES: usize = 1024;

/// A comma-separated list parameter (`accounts=a,b`), its repeats joined.
fn names(query: &[(String, String)], key: &str) -> Vec<String> {
    query
        .iter()
        .filter(|(k, _)| k == key)
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .take(MAX_NAMES)
        .map(str::to_string)
        .collect()
}

/// The fair-share tree for `caller`, kept to the `accounts` and `users` asked for.
pub async fn shares(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let users: Vec<u32> = names(&query, "users").iter().filter_map(|n| crate::identity::user_uid(n)).collect();
    let asked_users = !names(&query, "users").is_empty();
    let reply = {
        let core = d.core.lock();
        let only = (core.config.private_usage && !caller.privileged(&core.config)).then_some(caller.uid);
        let query = shares::SharesQuery { accounts: names(&query, "accounts"), users, only };
        let now = crate::sys::now();
        let tree = core.fair_shares(now);
        let running: Vec<_> = core.holding().map(|j| (j, core.billing_of(j))).collect();
        let run = shares::run_seconds(&tree, &running, core.config.shards_per_gpu, now);
        let mut msg = shares::rows(&tree, &run, &core.config.cluster_name, &query);
        if asked_users && query.users.is_empty() {
            // Users that do not exist have no rows: only the accounts are left.
            msg.shares.retain(|s| !s.is_user());
        }
        SharesResponse { shares: msg, meta: crate::daemon::views::info::meta(&core.config), ..Default::default() }
    };
    (StatusCode::OK, Json(reply)).into_response()
}

/// The pending jobs' priority factors for `caller`.
pub async fn priorities(State(d): State<Arc<Daemon>>, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let reply = {
        let core = d.core.lock();
        let only = (core.config.private_jobs && !caller.privileged(&core.config)).then_some(caller.uid);
        PrioritiesResponse {
            weights: priorities::weights(&core),
            jobs: priorities::jobs(&core, only),
            meta: crate::daemon::views::info::meta(&core.config),
            ..Default::default()
        }
    };
    (StatusCode::OK, Json(reply)).into_response()
}
