//! The board's HTTP routes (axum, already the daemon's server): the page and its assets, the
//! JSON the page reads, the actions it posts, the event stream's tickets, and `/events`, the
//! server-sent events of [`super::updates`]. Every request passes one guard first
//! ([`super::guard`]), and every answer carries headers that keep the page to itself.

use super::auth::AccessToken;
use super::guard::Gate;
use super::hosts::{self, Names};
use super::updates::Hub;
use super::{assets, job_page, state};
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The board: what its guard checks, and its hub.
pub struct Board {
    gate: Gate,
    hub: Arc<Hub>,
}

impl Board {
    /// A board with `token`, answering to the names of `bound`, showing `profile` (`None`:
    /// this machine); starts its watcher, so it must be made on the runtime that serves it.
    pub fn new(token: AccessToken, bound: SocketAddr, profile: Option<String>) -> Arc<Board> {
        Arc::new(Board { gate: Gate::new(token, Names::of(bound.ip())), hub: Hub::start(profile) })
    }

    /// The URL to open: the board at `addr`, named so that a browser can open it, with the
    /// access token in the fragment, which the browser keeps to the page.
    pub fn url(&self, addr: SocketAddr) -> String {
        format!("http://{}:{}/#token={}", hosts::url_host(addr.ip()), addr.port(), self.gate.token.as_str())
    }

    /// What the board shows, in words.
    pub fn source_name(&self) -> String {
        match self.hub.profile() {
            Some(p) => format!("profile {p}"),
            None => "this machine".into(),
        }
    }
}

/// The routes, all behind the guard.
pub fn router(board: Arc<Board>) -> Router {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", assets::INDEX_HTML) }))
        .route("/board.js", get(|| async { asset("text/javascript; charset=utf-8", assets::BOARD_JS) }))
        .route("/reservations.js", get(|| async { asset("text/javascript; charset=utf-8", assets::RESERVATIONS_JS) }))
        .route("/board.css", get(|| async { asset("text/css; charset=utf-8", assets::BOARD_CSS) }))
        .route("/api/ticket", post(ticket))
        .route("/api/live", get(live))
        .route("/api/samples", get(samples))
        .route("/api/usage", get(usage))
        .route("/api/job/{id}", get(job))
        .route("/api/job/{id}/{action}", post(action))
        .route("/events", get(events))
        .layer(axum::middleware::from_fn_with_state(board.clone(), guard))
        .with_state(board)
}

/// A plain-text refusal.
fn refuse(status: StatusCode, text: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{text}\n")).into_response()
}

/// Lets through the requests [`Gate::admit`] admits, refuses the rest, and marks every
/// answer as one to keep to the board's page.
async fn guard(State(board): State<Arc<Board>>, req: Request, next: Next) -> Response {
    let mut resp = match board.gate.admit(req.uri(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(refusal) => refuse(refusal.status(), &refusal.to_string()),
    };
    keep_to_the_page(resp.headers_mut());
    resp
}

/// Headers that keep an answer to the board's own page: not stored, not read as another type,
/// not framed by another site, loading nothing from elsewhere, and naming no page it came
/// from to another.
fn keep_to_the_page(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    );
}

/// An embedded asset.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// `POST /api/ticket`: a one-time ticket for `/events` (see [`super::auth::Tickets`]).
async fn ticket(State(board): State<Arc<Board>>) -> Response {
    match board.gate.tickets.issue() {
        Ok(ticket) => Json(serde_json::json!({ "ticket": ticket })).into_response(),
        Err(e) => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({ "error": e.to_string() }))).into_response()
        }
    }
}

/// A reply as JSON, or 502 with the reason when the daemon could not be read.
fn json_or_502<T: Serialize>(value: Result<T, String>) -> Response {
    match value {
        Ok(v) => Json(v).into_response(),
        Err(why) => (StatusCode::BAD_GATEWAY, Json(serde_json::json!({ "error": why }))).into_response(),
    }
}

/// Runs `read` with a client for the board's daemon, off the async threads.
async fn with_client<T: Send + 'static>(
    board: &Arc<Board>,
    read: impl FnOnce(&crate::api::client::Client) -> T + Send + 'static,
) -> Result<T, String> {
    let hub = board.hub.clone();
    tokio::task::spawn_blocking(move || hub.client().map(|c| read(&c)))
        .await
        .unwrap_or_else(|e| Err(format!("the board's reader failed: {e}")))
}

/// `GET /api/live`: the state as `/events` sends it.
async fn live(State(board): State<Arc<Board>>) -> Response {
    let now = crate::sys::now();
    json_or_502(with_client(&board, state::live).await.map(|live| serde_json::json!({ "now": now, "live": live })))
}

/// `GET /api/samples`: the GPUs' samples of the last hour.
async fn samples(State(board): State<Arc<Board>>) -> Response {
    let since = crate::sys::now() as i64 - 3600;
    json_or_502(with_client(&board, move |c| state::samples(c, since)).await)
}

/// `GET /api/usage`: each user's use over the week and the caller's recent jobs.
async fn usage(State(board): State<Arc<Board>>) -> Response {
    json_or_502(with_client(&board, state::usage).await)
}

/// Whether `id` is a job id as the daemon's paths take it (`12`, `10_3`).
fn job_id_ok(id: &str) -> bool {
    !id.is_empty() && id.len() <= 24 && id.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// `GET /api/job/{id}`: the job's page.
async fn job(State(board): State<Arc<Board>>, Path(id): Path<String>) -> Response {
    if !job_id_ok(&id) {
        return refuse(StatusCode::BAD_REQUEST, "not a job id");
    }
    match with_client(&board, move |c| job_page::read(c, &id)).await {
        Ok(Ok(page)) => Json(page).into_response(),
        Ok(Err(why)) => (StatusCode::NOT_FOUND, Json(serde_json::json!({ "error": why }))).into_response(),
        Err(why) => json_or_502::<()>(Err(why)),
    }
}

/// `POST /api/job/{id}/{cancel|hold|release}`: the action, with the commands' checks (the
/// daemon's); `{"ok":true}`, or 409 with the daemon's refusal.
async fn action(State(board): State<Arc<Board>>, Path((id, action)): Path<(String, String)>) -> Response {
    let Some(action) = job_page::Action::named(&action) else {
        return refuse(StatusCode::NOT_FOUND, "no such action");
    };
    if !job_id_ok(&id) {
        return refuse(StatusCode::BAD_REQUEST, "not a job id");
    }
    match with_client(&board, move |c| job_page::act(c, &id, action)).await {
        Ok(Ok(())) => Json(serde_json::json!({ "ok": true })).into_response(),
        Ok(Err(why)) => (StatusCode::CONFLICT, Json(serde_json::json!({ "ok": false, "error": why }))).into_response(),
        Err(why) => json_or_502::<()>(Err(why)),
    }
}

/// `GET /events`: the state each time it changes, as server-sent events named `live`.
async fn events(State(board): State<Arc<Board>>) -> Response {
    let viewer = board.hub.join();
    let stream = futures_util::stream::unfold((viewer, true), |(mut viewer, first)| async move {
        if !first && viewer.updates.changed().await.is_err() {
            return None;
        }
        loop {
            let update = viewer.updates.borrow_and_update().clone();
            match update {
                Some(u) => {
                    let event = Event::default().event("live").data(u.json.as_str());
                    return Some((Ok::<_, Infallible>(event), (viewer, false)));
                }
                // Nothing read yet: wait for the first state.
                None => viewer.updates.changed().await.ok()?,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(5))).into_response()
}
