//! Reading what a request asks for: a submit body, a job id in a path, the query of a
//! cancel, the body of a queue listing. Each refusal is an [`ApiError`] in slurmrestd's form,
//! and none of these panics whatever the input (the targets in `fuzz/` feed them arbitrary
//! bytes).

use crate::api::types::{errno, ApiError, JobDescMsg, JobQuery, JobSubmitReq, SignalScope};
use axum::http::StatusCode;

pub use super::body::MAX_BODY;

/// The most `%` codes a queue listing may ask for: every row of the reply holds one cell per
/// code, so the reply grows with their number times the number of jobs.
pub const MAX_QUERY_CODES: usize = 1024;

/// An error pointing at a field slurmlet does not know.
fn unknown_field(at: &str, k: &str) -> ApiError {
    ApiError {
        description: format!("Unknown field \"{k}\" in the job description; it is not applied (fields slurmlet knows: see the OpenAPI job_desc_msg)"),
        error_number: errno::UNKNOWN_FIELD,
        error: "Unknown field".into(),
        source: format!("#/{at}{k}/"),
    }
}

/// slurmrestd's error for a request body it cannot read.
pub fn parse_error(description: String, source: &str) -> ApiError {
    ApiError {
        description,
        error_number: errno::BAD_REQUEST,
        error: "Unable to parse query".into(),
        source: source.into(),
    }
}

/// Reads a submit body (`job_submit_req`): a body that is not JSON is a 400, one that is
/// JSON but not a job description (not an object, unknown fields, values of the wrong type)
/// a 422. Unknown fields are errors, never dropped.
pub fn parse_submit(body: &[u8]) -> Result<JobSubmitReq, (StatusCode, Vec<ApiError>)> {
    let unknown = super::submit_keys::unknown_keys(body, &["script", "job"], JobDescMsg::KNOWN).map_err(|e| match e
        .classify()
    {
        serde_json::error::Category::Data => (
            StatusCode::UNPROCESSABLE_ENTITY,
            vec![parse_error(format!("the request body must be a JSON object, and its \"job\" too: {e}"), "body")],
        ),
        _ => (StatusCode::BAD_REQUEST, vec![parse_error(format!("Failure during parsing: {e}"), "body")]),
    })?;
    let mut errors: Vec<ApiError> =
        unknown.iter().filter(|(at, k)| !(at.is_empty() && k == "jobs")).map(|(at, k)| unknown_field(at, k)).collect();
    if unknown.iter().any(|(at, k)| at.is_empty() && k == "jobs") {
        errors.push(ApiError {
            description: "heterogeneous jobs (\"jobs\") are not supported; submit one job at a time".into(),
            error_number: errno::UNKNOWN_FIELD,
            error: "Unsupported field".into(),
            source: "#/jobs/".into(),
        });
    }
    if !errors.is_empty() {
        return Err((StatusCode::UNPROCESSABLE_ENTITY, errors));
    }
    serde_json::from_slice(body).map_err(|e| {
        (StatusCode::UNPROCESSABLE_ENTITY, vec![parse_error(format!("invalid job description: {e}"), "#/job/")])
    })
}

/// What `DELETE /job/{job_id}` asks for in its query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CancelQuery {
    /// `signal=`: the signal to send instead of cancelling.
    pub signal: Option<i32>,
    /// `flags=BATCH_JOB` (the batch shell) or `FULL_JOB` (everything); none: the steps.
    pub scope: SignalScope,
}

/// Reads the `signal` and `flags` parameters of a cancel; an unknown signal or flag is
/// refused rather than ignored.
pub fn parse_cancel_query<'a>(mut params: impl Iterator<Item = (&'a str, &'a str)>) -> Result<CancelQuery, ApiError> {
    let mut q = CancelQuery::default();
    params.try_for_each(|(key, value)| {
        match key {
            "signal" if value.is_empty() => q.signal = None,
            "signal" => {
                q.signal = Some(crate::options::signal::signal_number(value).ok_or_else(|| ApiError {
                    description: format!("Invalid signal: {value}"),
                    error_number: errno::ERROR,
                    error: "Invalid signal".into(),
                    source: "#/signal/".into(),
                })?)
            }
            "flags" => {
                for flag in value.split(',') {
                    q.scope = q.scope.with_flag(flag).ok_or_else(|| ApiError {
                        description: format!(
                            "Unknown or unsupported flag \"{flag}\" (slurmlet knows BATCH_JOB and FULL_JOB)"
                        ),
                        error_number: errno::DATA_FLAGS_INVALID,
                        error: "Data parser unable to parse invalid flag".into(),
                        source: "#/flags/".into(),
                    })?;
                }
            }
            _ => {}
        }
        Ok::<(), ApiError>(())
    })?;
    Ok(q)
}

/// How long `GET /slurmlet/v1/job/{job_id}/wait` waits for the job's end by default before
/// it answers that the job has not ended yet.
pub const WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// The longest `timeout` a wait may ask for, in seconds.
pub const MAX_WAIT_TIMEOUT: u64 = 3600;

/// Reads the `timeout` (seconds, 1 to [`MAX_WAIT_TIMEOUT`]) of a wait.
pub fn parse_wait_query<'a>(params: impl Iterator<Item = (&'a str, &'a str)>) -> Result<std::time::Duration, ApiError> {
    let mut timeout = WAIT_TIMEOUT;
    for (key, value) in params {
        if key == "timeout" {
            let secs =
                value.parse::<u64>().ok().filter(|s| (1..=MAX_WAIT_TIMEOUT).contains(s)).ok_or_else(|| ApiError {
                    description: format!(
                        "Invalid timeout \"{value}\": a number of seconds from 1 to {MAX_WAIT_TIMEOUT}"
                    ),
                    error_number: errno::INVALID_QUERY,
                    error: "Query empty or not RFC7320 compliant".into(),
                    source: "#/timeout/".into(),
                })?;
            timeout = std::time::Duration::from_secs(secs);
        }
    }
    Ok(timeout)
}

/// Reads the body of a queue listing (`POST /slurmlet/v1/jobs/query`).
pub fn parse_job_query(body: &[u8]) -> Result<JobQuery, ApiError> {
    let q: JobQuery =
        serde_json::from_slice(body).map_err(|e| parse_error(format!("Failure during parsing: {e}"), "body"))?;
    // serde reads a struct from an array too, by position.
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(parse_error("the request body must be a JSON object".into(), "body"));
    }
    let codes = q.codes.chars().count();
    if codes > MAX_QUERY_CODES {
        return Err(parse_error(format!("{codes} codes asked for; at most {MAX_QUERY_CODES} are served"), "#/codes/"));
    }
    if let Some(layout) = &q.layout {
        if !crate::queue::layout_fits(layout) {
            return Err(parse_error(
                format!(
                    "a layout of more than {MAX} items, or with a width or text over {MAX}",
                    MAX = crate::queue::MAX_LAYOUT_WIDTH
                ),
                "#/layout/",
            ));
        }
    }
    if let Some(sort) = &q.sort {
        if sort.len() > MAX_QUERY_CODES {
            return Err(parse_error(
                format!("a sort of {} bytes; at most {MAX_QUERY_CODES} are read", sort.len()),
                "#/sort/",
            ));
        }
        if let Err(bad) = crate::queue::parse_sort(sort) {
            return Err(parse_error(format!("Invalid sort specification: {bad}"), "#/sort/"));
        }
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_queries_refuse_unknown_signals_and_flags() {
        let q = |s: &[(&'static str, &'static str)]| parse_cancel_query(s.iter().copied());
        assert_eq!(q(&[]).unwrap(), CancelQuery::default());
        assert_eq!(q(&[("signal", "USR1"), ("flags", "BATCH_JOB")]).unwrap().signal, Some(libc::SIGUSR1));
        assert_eq!(q(&[("flags", "BATCH_JOB")]).unwrap().scope, SignalScope::Batch);
        assert_eq!(q(&[("flags", "FULL_JOB")]).unwrap().scope, SignalScope::Full);
        assert_eq!(q(&[("flags", "BATCH_JOB,FULL_JOB")]).unwrap().scope, SignalScope::Full);
        assert_eq!(q(&[("flags", "FULL_JOB,BATCH_JOB")]).unwrap().scope, SignalScope::Full);
        assert_eq!(q(&[("signal", "USR1")]).unwrap().scope, SignalScope::Steps);
        assert_eq!(q(&[("signal", "")]).unwrap().signal, None);
        assert_eq!(q(&[("signal", "NOTASIGNAL")]).unwrap_err().source, "#/signal/");
        assert_eq!(q(&[("flags", "HURRY")]).unwrap_err().error_number, errno::DATA_FLAGS_INVALID);
        assert!(q(&[("flags", "")]).is_err() && q(&[("flags", "BATCH_JOB,")]).is_err());
        assert!(q(&[("other", "x")]).is_ok());
    }

    #[test]
    fn a_wait_takes_a_timeout_in_seconds() {
        let q = |s: &[(&'static str, &'static str)]| parse_wait_query(s.iter().copied());
        assert_eq!(q(&[]).unwrap(), WAIT_TIMEOUT);
        assert_eq!(q(&[("timeout", "1")]).unwrap(), std::time::Duration::from_secs(1));
        for bad in ["0", "-1", "3601", "1.5", "", "99999999999999999999999"] {
            assert!(q(&[("timeout", bad)]).unwrap_err().description.contains("from 1 to 3600"), "{bad}");
        }
    }

    #[test]
    fn a_listing_is_an_object() {
        assert_eq!(parse_job_query(br#" {"codes":"i"}"#).unwrap().codes, "i");
        for bad in [&b"[]"[..], b"[\"i\"]", b"null", b"\"i\""] {
            assert!(parse_job_query(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_listing_of_too_many_codes_is_refused() {
        let ok = format!("{{\"codes\":\"{}\"}}", "i".repeat(MAX_QUERY_CODES));
        assert_eq!(parse_job_query(ok.as_bytes()).unwrap().codes.len(), MAX_QUERY_CODES);
        let over = format!("{{\"codes\":\"{}\"}}", "i".repeat(MAX_QUERY_CODES + 1));
        assert!(parse_job_query(over.as_bytes()).unwrap_err().description.contains("at most 1024"));
    }

    #[test]
    fn a_listing_sorts_only_by_what_squeue_sorts_by() {
        assert_eq!(parse_job_query(br#"{"sort":"t,-i"}"#).unwrap().sort.as_deref(), Some("t,-i"));
        assert_eq!(parse_job_query(br#"{}"#).unwrap().sort, None);
        let bad = parse_job_query(br#"{"sort":"i,x"}"#).unwrap_err();
        assert_eq!((bad.description.as_str(), bad.source.as_str()), ("Invalid sort specification: x", "#/sort/"));
        let over = format!("{{\"sort\":\"{}\"}}", "i".repeat(MAX_QUERY_CODES + 1));
        assert!(parse_job_query(over.as_bytes()).unwrap_err().description.contains("at most 1024"));
    }

    #[test]
    fn a_listing_is_laid_out_up_to_a_width() {
        let ok = br#"{"layout":[{"field":{"code":"i","width":18,"right":true}},{"text":" "}]}"#;
        assert_eq!(parse_job_query(ok).unwrap().layout.map(|l| l.len()), Some(2));
        let wide = br#"{"layout":[{"field":{"code":"i","width":4097,"right":true}}]}"#;
        let bad = parse_job_query(wide).unwrap_err();
        assert_eq!(bad.source, "#/layout/");
        assert!(bad.description.contains("4096"), "{}", bad.description);
        assert!(parse_job_query(br#"{"layout":[{"bogus":1}]}"#).is_err());
    }
}
