//! `GET /slurmlet/v1/gpus` (`slurmlet gpus`): the node's GPUs and who holds each, as
//! [`crate::daemon::views::gpu_list`] lists them for the caller.

use crate::api::gpus::GpusResponse;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::gpu_list::listing;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The reply for `caller` (owners' names looked up once the lock is let go).
pub async fn handler(State(d): State<Arc<Daemon>>, ConnectInfo(caller): ConnectInfo<Caller>) -> Response {
    let mut reply = {
        let core = d.core.lock();
        GpusResponse { meta: crate::daemon::views::info::meta(&core.config), ..listing(&core, caller) }
    };
    let mut names: HashMap<u32, String> = HashMap::new();
    for job in reply.gpus.iter_mut().flat_map(|g| g.jobs.iter_mut()) {
        if let Some(uid) = job.user_id {
            job.user_name = Some(names.entry(uid).or_insert_with(|| crate::identity::user_name(uid)).clone());
        }
    }
    (StatusCode::OK, Json(reply)).into_response()
}

/// `POST /slurmlet/v1/gpus/{index}/resume` (`slurmlet gpus --resume N`; `all` for every
/// failed GPU): puts failed GPUs back in service. Operators and root only; a GPU that is
/// not out of service is refused by name. The reply lists the GPUs put back.
pub async fn resume(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    axum::extract::Path(which): axum::extract::Path<String>,
) -> Response {
    use crate::api::types::errno;
    use crate::daemon::http::refusal::refused;
    use crate::daemon::model::refusal::{Kind, Refusal};
    let source = "slurmlet_gpu_resume()";
    let index = match which.as_str() {
        "all" => None,
        n => match n.parse::<u32>() {
            Ok(i) => Some(i),
            Err(_) => {
                let r = Refusal::new(Kind::Malformed, errno::BAD_REQUEST, "Invalid GPU", source)
                    .saying(format!("'{which}' is no GPU index (a number, or all)"));
                return refused(&d, r);
            }
        },
    };
    let (back, effects) = {
        let mut core = d.core.lock();
        if !caller.privileged(&core.config) {
            drop(core);
            let r = Refusal::new(Kind::Forbidden, errno::ACCESS_DENIED, "Access/permission denied", source)
                .saying("only root and the operators may put a GPU back in service");
            return refused(&d, r);
        }
        core.resume_gpus(index)
    };
    if back.is_empty() {
        let what = index.map_or("no GPU is out of service".to_string(), |i| format!("GPU {i} is not out of service"));
        let r = Refusal::new(Kind::NotFound, errno::ERROR, "Nothing to resume", source).saying(what);
        return refused(&d, r);
    }
    tracing::info!(uid = caller.uid, gpus = ?back, "GPUs put back in service");
    if let Err(e) = d.apply_durably(effects).await {
        return crate::daemon::http::refusal::unreadable_store(&d, "Unable to store the change", source, e.to_string());
    }
    let meta = crate::daemon::views::info::meta(&d.core.lock().config);
    (StatusCode::OK, Json(serde_json::json!({ "resumed": back, "meta": meta, "errors": [], "warnings": [] })))
        .into_response()
}
