//! `GET /slurmdb/v0.0.43/associations`, `…/users`, `…/accounts` and `…/qos` (sacctmgr):
//! the configuration's accounts, users and QOS, as [`crate::daemon::views::associations`]
//! gives them.

use crate::daemon::runtime::Daemon;
use crate::daemon::views::associations;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// The reply holding `list` under `key`, with the envelope.
fn reply(d: &Daemon, key: &str, list: impl FnOnce(&crate::daemon::scheduling::core::Core) -> Vec<Value>) -> Response {
    let body = {
        let core = d.core.lock();
        let meta = crate::daemon::views::info::meta(&core.config);
        json!({ key: list(&core), "meta": meta, "errors": [], "warnings": [] })
    };
    (StatusCode::OK, Json(body)).into_response()
}

/// The associations.
pub async fn associations(State(d): State<Arc<Daemon>>) -> Response {
    reply(&d, "associations", |core| associations::associations(&core.config, &core.fair_shares(crate::sys::now())))
}

/// The users.
pub async fn users(State(d): State<Arc<Daemon>>) -> Response {
    reply(&d, "users", |core| associations::users(&core.config, &core.fair_shares(crate::sys::now())))
}

/// The accounts.
pub async fn accounts(State(d): State<Arc<Daemon>>) -> Response {
    reply(&d, "accounts", |core| associations::accounts(&core.config, &core.fair_shares(crate::sys::now())))
}

/// The QOS.
pub async fn qos(State(d): State<Arc<Daemon>>) -> Response {
    reply(&d, "qos", |core| associations::qos(&core.config))
}
