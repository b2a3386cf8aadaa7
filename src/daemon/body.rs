//! Request bodies, read whole up to [`MAX_BODY`]. A larger one is answered `413 Payload Too
//! Large` with a slurmrestd-style error that names the limit, so that one client cannot
//! make the daemon hold an arbitrary amount of memory.

use crate::api::types::{errno, ApiError, Envelope};
use axum::body::{Bytes, HttpBody};
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::pin::Pin;

/// The largest request body the daemon reads: far above any job description (a batch
/// script may have 4 MiB, Slurm's `max_script_size`, and its environment what is left).
pub const MAX_BODY: usize = 16 << 20;

/// How much of a body over the limit is read and thrown away before the answer. A client
/// writes its whole request before it reads (as this project's does), so it only hears why
/// once the daemon has taken the request in; past this the connection is dropped instead.
const DRAINED: u64 = 64 << 20;

/// A request body read whole; the handler's rejection is the 413 answer.
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = Response;

    async fn from_request(req: Request, _: &S) -> Result<Body, Response> {
        read(req).await.map(Body)
    }
}

/// Reads the body of `req` (see [`Body`]).
pub async fn read(req: Request) -> Result<Bytes, Response> {
    let declared = declared_length(req.headers());
    read_body(req.into_body(), declared).await
}

/// The `Content-Length` of a request, if it has one.
pub fn declared_length(headers: &axum::http::HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
}

/// Reads `body`, whose announced length is `declared` (see [`Body`]).
pub async fn read_body(mut body: axum::body::Body, declared: Option<u64>) -> Result<Bytes, Response> {
    if let Some(n) = declared.filter(|&n| n > MAX_BODY as u64) {
        drain(&mut body).await;
        return Err(too_large(Some(n)));
    }
    let mut bytes = Vec::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| unreadable(&e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_BODY {
                drain(&mut body).await;
                return Err(too_large(None));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes.into())
}

/// Reads and drops what is left of a body, up to [`DRAINED`] bytes.
async fn drain(body: &mut axum::body::Body) {
    let mut read = 0u64;
    while read < DRAINED {
        match std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
            Some(Ok(frame)) => read += frame.data_ref().map_or(0, |d| d.len() as u64),
            _ => return,
        }
    }
}

/// The 413 answer; `declared` is the body's announced length, when it had one.
fn too_large(declared: Option<u64>) -> Response {
    let size = declared.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
    let error = ApiError {
        description: format!(
            "the request body{size} is larger than the daemon's limit of {MAX_BODY} bytes ({} MiB)",
            MAX_BODY >> 20
        ),
        error_number: errno::BAD_REQUEST,
        error: "Request body too large".into(),
        source: "body".into(),
    };
    (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(Envelope { errors: vec![error], ..Default::default() })).into_response()
}

/// The answer to a body that broke off or could not be read.
fn unreadable(why: &str) -> Response {
    let error = ApiError {
        description: format!("cannot read the request body: {why}"),
        error_number: errno::BAD_REQUEST,
        error: "Unable to parse query".into(),
        source: "body".into(),
    };
    (StatusCode::BAD_REQUEST, axum::Json(Envelope { errors: vec![error], ..Default::default() })).into_response()
}
