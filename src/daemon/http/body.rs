//! Request bodies, read whole up to [`MAX_BODY`]. A larger one is answered `413 Payload Too
//! Large` with a slurmrestd-style error that names the limit, so that one client cannot
//! make the daemon hold an arbitrary amount of memory; one that does not arrive whole within
//! [`BODY_TIMEOUT`] is answered `408 Request Timeout`, so that one client cannot hold a
//! connection open by sending a body a byte at a time.

use crate::api::types::{errno, ApiError};
use axum::body::{Bytes, HttpBody};
use axum::http::{header, StatusCode};
use std::pin::Pin;

/// The largest request body the daemon reads: far above any job description (a batch
/// script may have 4 MiB, Slurm's `max_script_size`, and its environment what is left).
pub const MAX_BODY: usize = 16 << 20;

/// How long a body may take to arrive whole, from the end of its request's head: 16 MiB
/// over the Unix socket take milliseconds, and a client writes its whole request at once.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How much of a body over the limit is read and thrown away before the answer. A client
/// writes its whole request before it reads (as this project's does), so it only hears why
/// once the daemon has taken the request in; past this the connection is dropped instead.
const DRAINED: u64 = 64 << 20;

/// The `Content-Length` of a request, if it has one.
pub fn declared_length(headers: &axum::http::HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
}

/// Reads `body`, whose announced length is `declared`: whole, or, past [`MAX_BODY`], the
/// 413 answer, or, past [`BODY_TIMEOUT`], the 408 answer.
pub async fn read_body(body: axum::body::Body, declared: Option<u64>) -> Result<Bytes, Refusal> {
    read_body_within(body, declared, BODY_TIMEOUT).await
}

/// [`read_body`], with `timeout` for the body to arrive whole.
async fn read_body_within(
    mut body: axum::body::Body,
    declared: Option<u64>,
    timeout: std::time::Duration,
) -> Result<Bytes, Refusal> {
    let deadline = tokio::time::Instant::now() + timeout;
    if let Some(n) = declared.filter(|&n| n > MAX_BODY as u64) {
        // A body announced past what is drained would only be waited for: answer at once.
        if n <= DRAINED {
            let _ = tokio::time::timeout_at(deadline, drain(&mut body)).await;
        }
        return Err(too_large(Some(n)));
    }
    // Most bodies come in one frame, which is kept as it is; more are joined.
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut total = 0;
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        let Ok(next) = tokio::time::timeout_at(deadline, next).await else { return Err(too_slow(total, timeout)) };
        let Some(frame) = next else { break };
        let frame = frame.map_err(|e| unreadable(&e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            total += data.len();
            if total > MAX_BODY {
                let _ = tokio::time::timeout_at(deadline, drain(&mut body)).await;
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

/// The 408 answer to a body not whole within `timeout`, `read` bytes of it in.
fn too_slow(read: usize, timeout: std::time::Duration) -> Refusal {
    let error = ApiError {
        description: format!(
            "the request body did not arrive whole within {} s ({read} bytes of it did): send the whole request at once",
            timeout.as_secs()
        ),
        error_number: errno::BAD_REQUEST,
        error: "Request Timeout".into(),
        source: "body".into(),
    };
    (StatusCode::REQUEST_TIMEOUT, error)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A body whose parts come each after its pause.
    fn trickle(parts: Vec<(&'static [u8], Duration)>) -> axum::body::Body {
        axum::body::Body::from_stream(futures_util::stream::unfold(parts.into_iter(), |mut parts| async move {
            let (bytes, pause) = parts.next()?;
            tokio::time::sleep(pause).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(bytes)), parts))
        }))
    }

    #[tokio::test]
    async fn a_body_that_trickles_in_is_refused_at_the_deadline() {
        let body = trickle(vec![(b"{\"a\":", Duration::ZERO), (b"1}", Duration::from_secs(3600))]);
        let (status, error) =
            read_body_within(body, Some(8), Duration::from_millis(200)).await.expect_err("the body never ends");
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert!(error.description.contains("(5 bytes of it did)"), "{}", error.description);
    }

    #[tokio::test]
    async fn a_body_that_arrives_in_time_is_read_whole() {
        let body = trickle(vec![(b"{\"a\":", Duration::from_millis(20)), (b"1}", Duration::from_millis(20))]);
        let read = read_body_within(body, None, Duration::from_secs(10)).await.unwrap();
        assert_eq!(&read[..], b"{\"a\":1}");
    }
}
