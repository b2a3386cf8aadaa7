//! The reservation endpoints: slurmrestd's (`GET /slurm/v0.0.43/reservations`,
//! `GET|DELETE /slurm/v0.0.43/reservation/{name}`, `POST /slurm/v0.0.43/reservation`, which
//! creates or updates) and slurmlet's create-only and update-only forms that `scontrol
//! create` and `scontrol update` use (`POST /slurmlet/v1/reservation/{create,update}`), so
//! that a create of a name taken and an update of a name unknown are refused as Slurm's are.
//! The changes themselves are the scheduler's.

use crate::api::noval::NoVal;
use crate::api::reservations::{ReservationDesc, ReservationModResponse, ReservationsResponse};
use crate::api::types::{errno, Envelope};
use crate::daemon::http::refusal::{refused, unreadable_store};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Effects;
use crate::daemon::views::{info, reservations};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// `GET /slurm/v0.0.43/reservations`: every reservation, by start.
pub async fn list(State(d): State<Arc<Daemon>>) -> Response {
    listing(&d, None)
}

/// `GET /slurm/v0.0.43/reservation/{name}`: one; an unknown name is refused, as slurmrestd
/// refuses it.
pub async fn one(State(d): State<Arc<Daemon>>, Path(name): Path<String>) -> Response {
    listing(&d, Some(&name))
}

fn listing(d: &Daemon, name: Option<&str>) -> Response {
    let core = d.core.lock();
    let list: Vec<_> = core
        .reservations()
        .into_iter()
        .filter(|r| name.is_none_or(|n| r.name == n))
        .map(|r| reservations::info(r, &core.config))
        .collect();
    if let (Some(n), true) = (name, list.is_empty()) {
        drop(core);
        return refused(
            d,
            Refusal::new(
                Kind::NotFound,
                errno::RESERVATION_INVALID,
                "Requested reservation is invalid",
                "_get_reservation()",
            )
            .saying(format!("there is no reservation named {n}")),
        );
    }
    let reply = ReservationsResponse {
        reservations: list,
        last_update: NoVal::of(core.reservations_changed_at()),
        meta: info::meta(&core.config),
        ..Default::default()
    };
    (StatusCode::OK, Json(reply)).into_response()
}

/// How a post is taken.
#[derive(Clone, Copy)]
enum Mode {
    /// slurmrestd's: create, or update one of that name.
    Upsert,
    /// `scontrol create reservation`.
    Create,
    /// `scontrol update reservation`.
    Update,
}

/// `POST /slurm/v0.0.43/reservation`: creates the reservation, or updates the one of its name.
pub async fn upsert(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    post(&d, caller, &body, Mode::Upsert).await
}

/// `POST /slurmlet/v1/reservation/create`: creates it; a name taken is refused.
pub async fn create(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    post(&d, caller, &body, Mode::Create).await
}

/// `POST /slurmlet/v1/reservation/update`: updates the one it names; an unknown name is
/// refused.
pub async fn update(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    post(&d, caller, &body, Mode::Update).await
}

async fn post(d: &Arc<Daemon>, caller: Caller, body: &[u8], mode: Mode) -> Response {
    let desc: ReservationDesc = match serde_json::from_slice(body) {
        Ok(desc) => desc,
        Err(e) => {
            let r = Refusal::new(Kind::Malformed, errno::BAD_REQUEST, "Unable to parse query", "_post_reservation()")
                .saying(format!("the reservation description does not read: {e}"));
            return refused(d, r);
        }
    };
    let outcome = {
        let mut core = d.core.lock();
        let done = match mode {
            Mode::Upsert => core.create_reservation(&desc, caller, true),
            Mode::Create => core.create_reservation(&desc, caller, false),
            Mode::Update => match desc.name.as_deref() {
                Some(name) if !name.is_empty() => core.update_reservation(name, &desc, caller),
                _ => Err(Refusal::new(
                    Kind::Malformed,
                    errno::RESERVATION_INVALID,
                    "Requested reservation is invalid",
                    "_post_reservation()",
                )
                .saying("name the reservation to update (ReservationName=)")),
            },
        };
        done.map(|(r, effects)| (reservations::desc(&r, &core.config), effects))
    };
    match outcome {
        Ok((made, effects)) => {
            if let Some(reply) = store(d, effects).await {
                return reply;
            }
            let meta = info::meta(&d.core.lock().config);
            (StatusCode::OK, Json(ReservationModResponse { reservations: vec![made], meta, ..Default::default() }))
                .into_response()
        }
        Err(r) => refused(d, r),
    }
}

/// `DELETE /slurm/v0.0.43/reservation/{name}` (`scontrol delete reservation`).
pub async fn delete(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(name): Path<String>,
) -> Response {
    let outcome = d.core.lock().delete_reservation(&name, caller);
    match outcome {
        Ok(effects) => {
            if let Some(reply) = store(&d, effects).await {
                return reply;
            }
            let meta = info::meta(&d.core.lock().config);
            (StatusCode::OK, Json(Envelope { meta, ..Default::default() })).into_response()
        }
        Err(r) => refused(&d, r),
    }
}

/// Waits for the change to be stored; the error reply when it could not be.
async fn store(d: &Arc<Daemon>, effects: Effects) -> Option<Response> {
    match d.apply_durably(effects).await {
        Ok(()) => None,
        Err(e) => Some(unreadable_store(d, "Unable to store the change", "_post_reservation()", e.to_string())),
    }
}
