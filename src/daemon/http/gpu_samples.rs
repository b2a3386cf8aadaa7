//! `GET /slurmlet/v1/gpus/samples` and `GET /slurmlet/v1/job/{job_id}/gpu_samples`: the
//! samples of [`crate::daemon::views::gpu_samples`], read from the store without the lock.

use crate::api::activity::{GpuSamplesResponse, GpuSeries, JobGpuSamplesResponse};
use crate::daemon::gpu_use::share::{reading_of, total_memory};
use crate::daemon::http::handlers::{bad_job_id, no_such_job};
use crate::daemon::http::{params, refusal};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::store::Store;
use crate::daemon::views::gpu_samples::{followed, DEFAULT_SPAN_SECS};
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// `GET /slurmlet/v1/gpus/samples?since=T`: every GPU's samples since `since`.
pub async fn handler(State(d): State<Arc<Daemon>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    let since = match params::number::<i64>(&query, "since") {
        Ok(t) => t.unwrap_or_else(|| crate::sys::now() as i64 - DEFAULT_SPAN_SECS),
        Err(e) => return crate::daemon::http::refusal::envelope(&d, StatusCode::BAD_REQUEST, e),
    };
    let (resolution, gpus, unstored, meta) = {
        let core = d.core.lock();
        let readings = core.gpu_sample().map(|(_, s)| s.gpus.as_slice()).unwrap_or_default();
        let gpus: Vec<(u32, Option<u64>)> = core
            .config
            .gpus
            .iter()
            .filter(|g| g.mig_parent.is_none())
            .map(|g| (g.index, total_memory(g, reading_of(g, readings))))
            .collect();
        let history = core.gpu_history();
        (history.resolution(), gpus, history.unstored(), crate::daemon::views::info::meta(&core.config))
    };
    let daemon = d.clone();
    let stored = match tokio::task::spawn_blocking(move || daemon.history.read(|s: &Store| s.gpu_samples(since))).await
    {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => return unreadable(&d, e.to_string()),
        Err(e) => return unreadable(&d, e.to_string()),
    };
    let gpus = gpus
        .into_iter()
        .map(|(index, total_memory)| {
            let kept = stored.iter().find(|(i, _)| *i == index).map(|(_, s)| s.clone()).unwrap_or_default();
            let samples = followed(kept, &unstored, since, |step| {
                step.gpus.iter().find(|(i, _, _)| *i == index).map(|&(_, m, u)| (m, u))
            });
            GpuSeries { index, total_memory, samples }
        })
        .collect();
    let reply = GpuSamplesResponse { resolution, since, gpus, meta: Some(meta), ..Default::default() };
    (StatusCode::OK, Json(reply)).into_response()
}

/// `GET /slurmlet/v1/job/{job_id}/gpu_samples`: one job's samples over its life. A job the
/// caller may not see (`private_data`) is answered as the job endpoint answers it: as one
/// that does not exist.
pub async fn job_handler(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    const SOURCE: &str = "_handle_job_get";
    let Ok(job) = id.trim().parse::<u32>() else { return bad_job_id(&d, &id, SOURCE) };
    let (in_memory, config, unstored, resolution) = {
        let core = d.core.lock();
        let seen = core.jobs.get(&job).map(|j| caller.may_see(j, &core.config));
        let history = core.gpu_history();
        (seen, core.config.clone(), history.unstored(), history.resolution())
    };
    let meta = crate::daemon::views::info::meta(&config);
    let daemon = d.clone();
    let read = tokio::task::spawn_blocking(move || {
        daemon.history.read(|s: &Store| {
            let visible = match in_memory {
                Some(v) => v,
                None => s.jobs_by_id(&[job])?.first().is_some_and(|j| caller.may_see(j, &config)),
            };
            Ok(if visible { Some(s.job_gpu_samples(job)?) } else { None })
        })
    })
    .await;
    let kept = match read {
        Ok(Ok(Some(kept))) => kept,
        Ok(Ok(None)) => return no_such_job(meta, job, SOURCE),
        Ok(Err(e)) => return unreadable(&d, e.to_string()),
        Err(e) => return unreadable(&d, e.to_string()),
    };
    let samples = followed(kept, &unstored, i64::MIN, |step| {
        step.jobs.iter().find(|(j, _, _)| *j == job).map(|&(_, m, u)| (m, u))
    });
    let reply = JobGpuSamplesResponse { job_id: job, resolution, samples, meta: Some(meta), ..Default::default() };
    (StatusCode::OK, Json(reply)).into_response()
}

/// The reply when the store could not be read (`why`).
fn unreadable(d: &Daemon, why: String) -> Response {
    refusal::unreadable_store(d, "Unable to read the GPU samples", "slurmlet_gpu_samples", why)
}
