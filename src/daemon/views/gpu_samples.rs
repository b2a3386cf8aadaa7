//! `GET /slurmlet/v1/gpus/samples` and `GET /slurmlet/v1/job/{job_id}/gpu_samples`: the GPU
//! samples the daemon keeps for the board, read from the store on a connection of its own
//! (without the daemon's lock), followed by those the store may not have yet: the step
//! closed last, and the open one's means so far.

use crate::api::activity::{GpuSamplesResponse, GpuSeries, JobGpuSamplesResponse, Sample};
use crate::daemon::gpu_use::share::{reading_of, total_memory};
use crate::daemon::http::handlers::{bad_job_id, no_such_job};
use crate::daemon::http::{params, refusal};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::store::gpu_samples::StepSamples;
use crate::daemon::store::Store;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// How far back the GPU samples go when the caller gives no `since`: an hour.
pub const DEFAULT_SPAN_SECS: i64 = 3600;

/// `GET /slurmlet/v1/gpus/samples?since=T`: every GPU's samples since `since`.
pub async fn handler(State(d): State<Arc<Daemon>>, Query(query): Query<Vec<(String, String)>>) -> Response {
    let since = match params::number::<i64>(&query, "since") {
        Ok(t) => t.unwrap_or_else(|| crate::options::now() as i64 - DEFAULT_SPAN_SECS),
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
        (history.resolution(), gpus, history.unstored(), super::info::meta(&core.config))
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
    ConnectInfo(peer): ConnectInfo<Caller>,
    Path(id): Path<String>,
) -> Response {
    const SOURCE: &str = "_handle_job_get";
    let caller = peer;
    let Ok(job) = id.trim().parse::<u32>() else { return bad_job_id(&d, &id, SOURCE) };
    let (in_memory, config, unstored, resolution) = {
        let core = d.core.lock();
        let seen = core.jobs.get(&job).map(|j| caller.may_see(j, &core.config));
        let history = core.gpu_history();
        (seen, core.config.clone(), history.unstored(), history.resolution())
    };
    let meta = super::info::meta(&config);
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

/// `kept` (the store's samples, oldest first) followed by the samples `pick` finds in the
/// `unstored` steps that start at or after `since` and after the last kept one.
fn followed(
    mut kept: Vec<Sample>,
    unstored: &[StepSamples],
    since: i64,
    pick: impl Fn(&StepSamples) -> Option<(u64, u32)>,
) -> Vec<Sample> {
    for step in unstored {
        let later = kept.last().is_none_or(|(t, _, _)| step.time > *t);
        if step.time >= since && later {
            if let Some((memory, util)) = pick(step) {
                kept.push((step.time, memory, util));
            }
        }
    }
    kept
}

/// The reply when the store could not be read (`why`).
fn unreadable(d: &Daemon, why: String) -> Response {
    refusal::unreadable_store(d, "Unable to read the GPU samples", "slurmlet_gpu_samples", why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unstored_steps_follow_the_kept_samples_once() {
        let step = |time: i64, util: u32| StepSamples { time, gpus: vec![(0, 5, util)], jobs: vec![] };
        let pick = |s: &StepSamples| s.gpus.first().map(|&(_, m, u)| (m, u));
        // The last closed step is in the store already: only the open one follows.
        let kept = vec![(60, 5, 1), (120, 5, 2)];
        assert_eq!(
            followed(kept.clone(), &[step(120, 2), step(180, 3)], 0, pick),
            [(60, 5, 1), (120, 5, 2), (180, 5, 3)]
        );
        // Not yet stored: both follow.
        assert_eq!(followed(vec![(60, 5, 1)], &[step(120, 2), step(180, 3)], 0, pick).len(), 3);
        // Before `since`: left out.
        assert_eq!(followed(Vec::new(), &[step(120, 2), step(180, 3)], 150, pick), [(180, 5, 3)]);
        // A step without the GPU adds nothing.
        assert_eq!(followed(kept.clone(), &[StepSamples { time: 180, ..Default::default() }], 0, pick), kept);
    }
}
