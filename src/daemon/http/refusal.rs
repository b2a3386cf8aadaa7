//! Refusals made around the handlers: a path or a method the daemon does not serve, a body
//! that is not JSON, and any error reply that is not JSON yet (a body over the size limit,
//! a path or query that cannot be decoded), rewritten into slurmrestd's envelope. Every error
//! a client gets is JSON with `meta`, `errors` and `warnings`.

use crate::api::types::{errno, ApiError, Envelope};
use crate::daemon::model::refusal::Refusal;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::info;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The most bytes of a plain-text error read to rewrite it.
const MAX_PLAIN_ERROR: usize = 64 << 10;

/// The HTTP status a refusal of the daemon's is sent with.
pub fn status_of(refusal: &Refusal) -> StatusCode {
    StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A refusal of the daemon's, as slurmrestd's error envelope with its status.
pub fn refused(d: &Daemon, refusal: Refusal) -> Response {
    envelope(d, status_of(&refusal), refusal.into())
}

/// A refusal alone in slurmrestd's envelope, with its status, where no `meta` is sent (the
/// replies of the stream endpoints before their upgrade).
pub fn bare(refusal: Refusal) -> Response {
    let status = status_of(&refusal);
    (status, axum::Json(Envelope { errors: vec![refusal.into()], ..Default::default() })).into_response()
}

/// An error reply: the envelope with one error.
pub fn envelope(d: &Daemon, status: StatusCode, error: ApiError) -> Response {
    let meta = info::meta(&d.core.lock().config);
    (status, axum::Json(Envelope { meta, errors: vec![error], warnings: Vec::new() })).into_response()
}

/// The reply when the store could not be read: `what` failed (`Unable to read the job
/// history`) for `why`, in the handler named `source`.
pub fn unreadable_store(d: &Daemon, what: &str, source: &str, why: String) -> Response {
    let error = ApiError { description: why, error_number: errno::ERROR, error: what.into(), source: source.into() };
    envelope(d, StatusCode::INTERNAL_SERVER_ERROR, error)
}

/// The reply to a path the daemon does not serve (slurmrestd's words, as JSON).
pub async fn unknown_path(State(d): State<Arc<Daemon>>, uri: Uri) -> Response {
    envelope(
        &d,
        StatusCode::NOT_FOUND,
        ApiError {
            description: format!(
                "Unable to find requested URL endpoint {}. Please query the '/openapi/v3' endpoint for the OpenAPI specification, which lists every endpoint this daemon serves.",
                uri.path()
            ),
            error_number: errno::INVALID_QUERY,
            error: "Unable to find requested URL endpoint".into(),
            source: uri.path().into(),
        },
    )
}

/// The reply to a method a served path does not take (the router adds `Allow`).
pub async fn method_not_allowed(State(d): State<Arc<Daemon>>, method: Method, uri: Uri) -> Response {
    envelope(
        &d,
        StatusCode::METHOD_NOT_ALLOWED,
        ApiError {
            description: format!(
                "{} does not take {method}; the Allow header lists the methods it takes (see '/openapi/v3')",
                uri.path()
            ),
            error_number: errno::INVALID_QUERY,
            error: "Method not allowed".into(),
            source: uri.path().into(),
        },
    )
}

/// Whether a `Content-Type` names JSON (`application/json`, with parameters or not, or a
/// `+json` type).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else { return false };
    let mime = value.to_str().unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Runs around every request: reads its body, refuses a body in another media type than
/// JSON (415), and rewrites an error reply that is not JSON into the envelope.
pub async fn guard(State(d): State<Arc<Daemon>>, request: Request, next: Next) -> Response {
    // Every body is read whole (see [`super::body`]), so that every reply, refusals
    // included, leaves the connection ready for the next request: a handler that does not
    // read the body would otherwise leave it unread, and the connection would be closed
    // under a client that means to reuse it.
    let (parts, body) = request.into_parts();
    let request = match super::body::read_body(body, super::body::declared_length(&parts.headers)).await {
        Ok(bytes) => Request::from_parts(parts, axum::body::Body::from(bytes)),
        Err((status, error)) => {
            let mut reply = envelope(&d, status, error);
            // What is left of an oversized body is not read: the connection cannot carry
            // another request.
            reply.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            return reply;
        }
    };
    let sends_body = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if sends_body && request.headers().contains_key(header::CONTENT_TYPE) && !is_json(request.headers()) {
        let given =
            request.headers().get(header::CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        return envelope(
            &d,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError {
                description: format!(
                    "the body is {}; this daemon reads application/json only",
                    given.unwrap_or_default()
                ),
                error_number: errno::DATA_UNKNOWN_MIME_TYPE,
                error: "MIME type is unknown to any loaded plugins".into(),
                source: "Content-Type".into(),
            },
        );
    }
    let reply = next.run(request).await;
    let status = reply.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(reply.headers()) {
        return reply;
    }
    let text = match axum::body::to_bytes(reply.into_body(), MAX_PLAIN_ERROR).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let text = if text.is_empty() { status.canonical_reason().unwrap_or("error").to_string() } else { text };
    let error_number = if status == StatusCode::PAYLOAD_TOO_LARGE { errno::DATA_TOO_LARGE } else { errno::BAD_REQUEST };
    let error = status.canonical_reason().unwrap_or("Unable to parse query").to_string();
    envelope(&d, status, ApiError { description: text, error_number, error, source: "request".into() })
}
