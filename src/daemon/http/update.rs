//! `POST /slurm/v0.0.43/job/{job_id}`: slurmrestd's job update, as far as slurmlet carries
//! it out: `hold` and `priority` (see [`crate::daemon::scheduling::hold`]) and the fields of
//! [`crate::daemon::scheduling::job_edit::FIELDS`]. Any other field is refused, never
//! dropped: a client must not believe a change was made that was not.

use crate::api::noval::NoVal;
use crate::api::types::{errno, ApiError, JobDescMsg, JobPostResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::hold;
use crate::daemon::scheduling::job_edit::{Changes, FIELDS};
use crate::daemon::scheduling::submit_refusals;
use crate::daemon::views::info;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use hold::{QueueChange, UpdateError};
use std::sync::Arc;

/// Slurm's `INFINITE` priority: release.
const INFINITE: u32 = u32::MAX;
/// Slurm's `NO_VAL`: no change.
const NO_VAL: u32 = u32::MAX - 1;

/// The queue fields of a job update body; [`FIELDS`] are the others slurmlet carries out.
const QUEUE_FIELDS: &[&str] = &["hold", "priority"];

fn body_error(description: String, source: String) -> ApiError {
    ApiError { description, error_number: errno::UNKNOWN_FIELD, error: "Unsupported field".into(), source }
}

/// The changes a job update body asks for (`hold` before `priority`); errors for a body that
/// is not an object, has a field of the wrong type, or one slurmlet does not update.
pub fn parse_changes(body: &[u8]) -> Result<Changes, Vec<ApiError>> {
    let parse_failure = |e: String| {
        vec![ApiError {
            description: format!("Failure during parsing: {e}"),
            error_number: errno::BAD_REQUEST,
            error: "Unable to parse query".into(),
            source: "body".into(),
        }]
    };
    let mut fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).map_err(|e| parse_failure(e.to_string()))?;
    let errors: Vec<ApiError> = fields
        .keys()
        .filter(|k| !QUEUE_FIELDS.contains(&k.as_str()) && !FIELDS.contains(&k.as_str()))
        .map(|k| {
            let description = if JobDescMsg::KNOWN.contains(&k.as_str()) {
                format!(
                    "slurmlet cannot update \"{k}\" of a job (only {} and {}); nothing was changed",
                    QUEUE_FIELDS.join(", "),
                    FIELDS.join(", ")
                )
            } else {
                format!("Unknown field \"{k}\" in the job description; nothing was changed")
            };
            body_error(description, format!("#/{k}/"))
        })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut changes = Vec::new();
    let hold = fields.remove("hold");
    let priority = fields.remove("priority");
    let desc: JobDescMsg = serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(|e| parse_failure(format!("job description: {e}")))?;
    if let Some(hold) = hold {
        let hold = hold.as_bool().ok_or_else(|| parse_failure("\"hold\" must be true or false".into()))?;
        changes.push(if hold { QueueChange::Hold } else { QueueChange::Release });
    }
    if let Some(priority) = priority {
        let p: NoVal<u32> =
            serde_json::from_value(priority).map_err(|e| parse_failure(format!("\"priority\": {e}")))?;
        match (p.infinite, p.get()) {
            (true, _) | (_, Some(INFINITE)) => changes.push(QueueChange::Release),
            (_, Some(0)) => changes.push(QueueChange::Hold),
            (_, Some(NO_VAL)) | (_, None) => {}
            (_, Some(n)) => changes.push(QueueChange::Priority(n)),
        }
    }
    Ok(Changes { queue: changes, fields: desc })
}

fn reply(status: StatusCode, body: JobPostResponse) -> Response {
    (status, Json(body)).into_response()
}

/// A change to a job, as its refusals and log name it.
#[derive(Debug, Clone, Copy)]
pub struct JobAction<'a> {
    /// What the log calls it (`suspend`, the update's fields).
    pub what: &'a str,
    /// The description of its refusal (`Job update requested failed`).
    pub failed: &'a str,
    /// Slurm's function that refuses it (`slurm_update_job2()`).
    pub source: &'a str,
}

impl JobAction<'_> {
    /// The error of a refusal with Slurm's number and text.
    fn error(&self, code: i32, error: &str) -> ApiError {
        ApiError {
            description: self.failed.into(),
            error_number: code,
            error: error.into(),
            source: self.source.into(),
        }
    }
}

/// The handler: parses the body, applies it for the caller, waits until it is stored.
pub async fn update(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let changes = match parse_changes(&body) {
        Ok(c) => c,
        Err(errors) => {
            let meta = info::meta(&d.core.lock().config);
            return reply(StatusCode::UNPROCESSABLE_ENTITY, JobPostResponse { meta, errors, ..Default::default() });
        }
    };
    let what = format!("{changes:?}");
    let action = JobAction { what: &what, failed: "Job update requested failed", source: "slurm_update_job2()" };
    change_job(&d, caller, &id, action, |core, job, caller| core.update_job(job, &changes, caller)).await
}

/// Applies `change` to the job (or every task of the array) path id `id` names, for the
/// `caller`; answers once it is stored, or with Slurm's error for `action`.
pub async fn change_job(
    d: &Arc<Daemon>,
    caller: Caller,
    id: &str,
    action: JobAction<'_>,
    mut change: impl FnMut(
        &mut crate::daemon::scheduling::core::Core,
        u32,
        Caller,
    ) -> Result<crate::daemon::scheduling::core::Effects, UpdateError>,
) -> Response {
    let meta = info::meta(&d.core.lock().config);
    let fail = |status, errors| reply(status, JobPostResponse { meta: meta.clone(), errors, ..Default::default() });
    let Some(target) = crate::daemon::model::job_ref::parse_job_ref(id).filter(|r| r.step.is_none()) else {
        return fail(
            StatusCode::UNPROCESSABLE_ENTITY,
            vec![action.error(errno::INVALID_JOB_ID, "Invalid job id specified")],
        );
    };
    let unknown = hold::refused(errno::INVALID_JOB_ID, "Invalid job id specified");
    let result = d.core.lock().for_each_named(target, unknown, |core, job| change(core, job, caller));
    match result {
        Ok(effects) => match d.apply_durably(effects).await {
            Ok(()) => reply(StatusCode::OK, JobPostResponse { meta, ..Default::default() }),
            Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, vec![submit_refusals::store_failure(&e).into()]),
        },
        Err(UpdateError { code, message }) => {
            if matches!(code, errno::USER_ID_MISSING | errno::ACCESS_DENIED) {
                tracing::warn!(job = id, uid = caller.uid, what = action.what, "job change denied: {message}");
            }
            let status =
                if code == errno::INVALID_JOB_ID { StatusCode::NOT_FOUND } else { StatusCode::UNPROCESSABLE_ENTITY };
            fail(status, vec![action.error(code, &message)])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_and_priority_become_queue_changes() {
        let queue = |body: &[u8]| parse_changes(body).unwrap().queue;
        assert_eq!(queue(br#"{"hold": true}"#), vec![QueueChange::Hold]);
        assert_eq!(queue(br#"{"hold": false}"#), vec![QueueChange::Release]);
        assert_eq!(queue(br#"{"priority": 0}"#), vec![QueueChange::Hold]);
        assert_eq!(queue(br#"{"priority": {"infinite": true}}"#), vec![QueueChange::Release]);
        assert_eq!(
            queue(br#"{"priority": {"set": true, "number": 50}, "hold": false}"#),
            vec![QueueChange::Release, QueueChange::Priority(50)]
        );
        assert!(parse_changes(b"{}").unwrap().is_empty());
    }

    #[test]
    fn job_fields_are_read_as_a_job_description() {
        let c = parse_changes(br#"{"time_limit": {"set": true, "number": 8}, "name": "x", "hold": true}"#).unwrap();
        assert_eq!(c.queue, vec![QueueChange::Hold]);
        assert_eq!((c.fields.time_limit.and_then(|t| t.get()), c.fields.name.as_deref()), (Some(8), Some("x")));
        assert_eq!(parse_changes(br#"{"time_limit": 20}"#).unwrap().fields.time_limit.and_then(|t| t.get()), Some(20));
        assert_eq!(parse_changes(br#"{"nice": "high"}"#).unwrap_err()[0].error, "Unable to parse query");
    }

    #[test]
    fn other_fields_are_refused_not_dropped() {
        let errors = parse_changes(br#"{"hold": true, "qos": "high", "bogus": 1}"#).unwrap_err();
        let mut sources: Vec<&str> = errors.iter().map(|e| e.source.as_str()).collect();
        sources.sort();
        assert_eq!(sources, vec!["#/bogus/", "#/qos/"]);
        assert!(errors.iter().any(|e| e.description.contains("cannot update \"qos\"")), "{errors:?}");
        assert_eq!(parse_changes(b"[1]").unwrap_err()[0].error, "Unable to parse query");
        assert_eq!(parse_changes(br#"{"hold": "yes"}"#).unwrap_err()[0].error, "Unable to parse query");
    }
}
