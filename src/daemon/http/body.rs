//! Request bodies, read whole up to [`MAX_BODY`]. A larger one is answered `413 Payload Too
//! Large` with a slurmrestd-style error that names the limit, so that one client cannot
//! make the daemon hold an arbitrary amount of memory.

use crate::api::types::{errno, ApiError};
use axum::body::{Bytes, HttpBody};
use axum::http::{header, StatusCode};
use std::pin::Pin;

/// The largest request body the daemon reads: far above any job description (a batch
/// script may have 4 MiB, Slurm's `max_script_size`, and its environment what is left).
pub const MAX_BODY: usize = 16 << 20;

/// How much of a body over the limit is read and thrown away before the answer. A client
/// writes its whole request before it reads (as this project's does), so it only hears why
/// once the daemon has taken the request in; past this the connection is dropped instead.
const DRAINED: u64 = 64 << 20;

/// The `Content-Length` of a request, if it has one.
pub fn declared_length(headers: &axum::http::HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
}

/// Reads `body`, whose announced length is `declared`: whole, or, past [`MAX_BODY`], the
/// 413 answer.
pub async fn read_body(mut body: axum::body::Body, declared: Option<u64>) -> Result<Bytes, Refusal> {
    if let Some(n) = declared.filter(|&n| n > MAX_BODY as u64) {
        // A body announced past what is drained would only be waited for: answer at once.
        if n <= DRAINED {
            drain(&mut body).await;
        }
        return Err(too_large(Some(n)));
    }
    // Most bodies come in one frame, which is kept as it is; more are joined.
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut total = 0;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| unreadable(&e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            total += data.len();
            if total > MAX_BODY {
                drain(&mut body).await;
                return Err(too_large(None));
            }
            chunks.push(data);
        }
    }
    Ok(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.pop().expect("one chunk"),
        _ => chunks.concat().into(),
    })
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

/// A body not read: the status to answer and the error to say.
pub type Refusal = (StatusCode, ApiError);

/// The 413 answer; `declared` is the body's announced length, when it had one.
fn too_large(declared: Option<u64>) -> Refusal {
    let size = declared.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
    let error = ApiError {
        description: format!(
            "the request body{size} is larger than the daemon's limit of {MAX_BODY} bytes ({} MiB): at most {MAX_BODY} are read",
            MAX_BODY >> 20
        ),
        error_number: errno::DATA_TOO_LARGE,
        error: "Payload Too Large".into(),
        source: "body".into(),
    };
    (StatusCode::PAYLOAD_TOO_LARGE, error)
}

/// The answer to a body that broke off or could not be read.
fn unreadable(why: &str) -> Refusal {
    let error = ApiError {
        description: format!("cannot read the request body: {why}"),
        error_number: errno::BAD_REQUEST,
        error: "Unable to parse query".into(),
        source: "body".into(),
    };
    (StatusCode::BAD_REQUEST, error)
}
