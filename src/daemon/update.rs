//! `POST /slurm/v0.0.43/job/{job_id}`: slurmrestd's job update, as far as slurmlet carries
//! it out: `hold` and `priority` (see [`super::hold`]). Any other field is refused, never
//! dropped: a client must not believe a change was made that was not.

use super::hold::{QueueChange, UpdateError};
use super::server::{Daemon, Peer};
use super::submit::Caller;
use crate::api::noval::NoVal;
use crate::api::types::{errno, ApiError, JobDescMsg, JobPostResponse};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// Slurm's `INFINITE` priority: release.
const INFINITE: u32 = u32::MAX;
/// Slurm's `NO_VAL`: no change.
const NO_VAL: u32 = u32::MAX - 1;

/// The fields of a job update body that slurmlet carries out.
const UPDATABLE: &[&str] = &["hold", "priority"];

fn body_error(description: String, source: String) -> ApiError {
    ApiError { description, error_number: errno::UNKNOWN_FIELD, error: "Unsupported field".into(), source }
}

/// The queue changes a job update body asks for, `hold` before `priority`; errors for a body
/// that is not an object, has a field of the wrong type, or one slurmlet does not update.
pub fn parse_changes(body: &[u8]) -> Result<Vec<QueueChange>, Vec<ApiError>> {
    let parse_failure = |e: String| {
        vec![ApiError {
            description: format!("Failure during parsing: {e}"),
            error_number: errno::BAD_REQUEST,
            error: "Unable to parse query".into(),
            source: "body".into(),
        }]
    };
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).map_err(|e| parse_failure(e.to_string()))?;
    let errors: Vec<ApiError> = fields
        .keys()
        .filter(|k| !UPDATABLE.contains(&k.as_str()))
        .map(|k| {
            let description = if JobDescMsg::KNOWN.contains(&k.as_str()) {
                format!("slurmlet cannot update \"{k}\" of a job (only hold and priority); nothing was changed")
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
    if let Some(hold) = fields.get("hold") {
        let hold = hold.as_bool().ok_or_else(|| parse_failure("\"hold\" must be true or false".into()))?;
        changes.push(if hold { QueueChange::Hold } else { QueueChange::Release });
    }
    if let Some(priority) = fields.get("priority") {
        let p: NoVal<u32> =
            serde_json::from_value(priority.clone()).map_err(|e| parse_failure(format!("\"priority\": {e}")))?;
        match (p.infinite, p.get()) {
            (true, _) | (_, Some(INFINITE)) => changes.push(QueueChange::Release),
            (_, Some(0)) => changes.push(QueueChange::Hold),
            (_, Some(NO_VAL)) | (_, None) => {}
            (_, Some(n)) => changes.push(QueueChange::Priority(n)),
        }
    }
    Ok(changes)
}

fn reply(status: StatusCode, body: JobPostResponse) -> Response {
    (status, Json(body)).into_response()
}

/// slurmrestd's error for a refused update.
fn update_failed(code: i32, error: &str) -> ApiError {
    ApiError {
        description: "Job update requested failed".into(),
        error_number: code,
        error: error.into(),
        source: "slurm_update_job2()".into(),
    }
}

/// The handler: parses the body, applies it for the caller, waits until it is stored.
pub async fn update(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let changes = match parse_changes(&body) {
        Ok(c) => c,
        Err(errors) => {
            let meta = super::info::meta(&d.core.lock().expect("core lock").config);
            return reply(StatusCode::UNPROCESSABLE_ENTITY, JobPostResponse { meta, errors, ..Default::default() });
        }
    };
    let what = format!("{changes:?}");
    change_job(&d, peer, &id, &what, |core, job, caller| core.update_queue(job, &changes, caller)).await
}

/// Applies `change` to the job (or every task of the array) path id `id` names, for the
/// caller `peer`; answers once it is stored, or with Slurm's error. `what` names the
/// change in the log of a refusal.
pub async fn change_job(
    d: &Arc<Daemon>,
    peer: Peer,
    id: &str,
    what: &str,
    mut change: impl FnMut(&mut super::core::Core, u32, Caller) -> Result<super::core::Effects, UpdateError>,
) -> Response {
    let meta = super::info::meta(&d.core.lock().expect("core lock").config);
    let fail = |status, errors| reply(status, JobPostResponse { meta: meta.clone(), errors, ..Default::default() });
    let Some(target) = super::request::parse_job_ref(id).filter(|r| r.step.is_none()) else {
        return fail(
            StatusCode::UNPROCESSABLE_ENTITY,
            vec![update_failed(errno::INVALID_JOB_ID, "Invalid job id specified")],
        );
    };
    let caller = Caller { uid: peer.uid, gid: peer.gid };
    let result = d.core.lock().expect("core lock").update_named(target, |core, job| change(core, job, caller));
    match result {
        Ok(effects) => match d.apply_durably(effects).await {
            Ok(()) => reply(StatusCode::OK, JobPostResponse { meta, ..Default::default() }),
            Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, vec![super::submit::store_failure(&e)]),
        },
        Err(UpdateError { code, message }) => {
            if matches!(code, errno::USER_ID_MISSING | errno::ACCESS_DENIED) {
                tracing::warn!(job = id, uid = peer.uid, what, "job change denied: {message}");
            }
            let status =
                if code == errno::INVALID_JOB_ID { StatusCode::NOT_FOUND } else { StatusCode::UNPROCESSABLE_ENTITY };
            fail(status, vec![update_failed(code, message)])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_and_priority_become_queue_changes() {
        assert_eq!(parse_changes(br#"{"hold": true}"#).unwrap(), vec![QueueChange::Hold]);
        assert_eq!(parse_changes(br#"{"hold": false}"#).unwrap(), vec![QueueChange::Release]);
        assert_eq!(parse_changes(br#"{"priority": 0}"#).unwrap(), vec![QueueChange::Hold]);
        assert_eq!(parse_changes(br#"{"priority": {"infinite": true}}"#).unwrap(), vec![QueueChange::Release]);
        assert_eq!(
            parse_changes(br#"{"priority": {"set": true, "number": 50}, "hold": false}"#).unwrap(),
            vec![QueueChange::Release, QueueChange::Priority(50)]
        );
        assert_eq!(parse_changes(b"{}").unwrap(), vec![]);
    }

    #[test]
    fn other_fields_are_refused_not_dropped() {
        let errors = parse_changes(br#"{"hold": true, "time_limit": 20, "bogus": 1}"#).unwrap_err();
        let mut sources: Vec<&str> = errors.iter().map(|e| e.source.as_str()).collect();
        sources.sort();
        assert_eq!(sources, vec!["#/bogus/", "#/time_limit/"]);
        assert!(errors.iter().any(|e| e.description.contains("cannot update \"time_limit\"")), "{errors:?}");
        assert_eq!(parse_changes(b"[1]").unwrap_err()[0].error, "Unable to parse query");
        assert_eq!(parse_changes(br#"{"hold": "yes"}"#).unwrap_err()[0].error, "Unable to parse query");
    }
}
