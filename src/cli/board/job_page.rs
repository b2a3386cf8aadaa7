//! One job on the board: `scontrol show job`'s fields (the v0.0.43 job object), its GPU use
//! over its life, and, to its owner only, the tail of its output file (read as
//! [`super::output_tail`] says); and the actions the page offers on a job (cancel, hold,
//! release), sent to the daemon as scancel and scontrol send them, so that the daemon's
//! checks are the same.

use super::state;
use crate::api::client::Client;
use crate::api::types::{JobInfo, SignalScope};
use serde::Serialize;
use std::path::PathBuf;

/// What the job's page shows.
#[derive(Debug, Serialize)]
pub struct JobPage {
    /// The job as `GET /slurm/v0.0.43/job/{id}` gives it.
    pub job: JobInfo,
    /// Whether the caller owns it.
    pub mine: bool,
    /// Its GPU use over its life, `[time, memory, utilisation]`; `None` when not available.
    pub samples: Option<Vec<crate::api::activity::Sample>>,
    /// Seconds between those samples.
    pub resolution: u64,
    /// The end of its output file, to its owner only; `None` when not shown.
    pub output_tail: Option<String>,
    /// Why some part is not shown.
    pub missing: Vec<state::Missing>,
}

/// Reads job `id`'s page; `Err` when the daemon does not show the job.
pub fn read(client: &Client, id: &str) -> Result<JobPage, String> {
    let reply = client.job(id).map_err(|e| state::why(&e))?;
    if let Some(e) = state::first_error(&reply.errors) {
        return Err(e);
    }
    let job = reply.jobs.into_iter().next().ok_or_else(|| format!("job {id} is not known"))?;
    let mut missing = Vec::new();
    let (samples, resolution) = match client.job_gpu_samples(job.job_id).map_err(|e| state::why(&e)).and_then(|r| {
        match state::first_error(&r.errors) {
            None => Ok(r),
            Some(e) => Err(e),
        }
    }) {
        Ok(r) => (Some(r.samples), r.resolution),
        Err(e) => {
            missing.push(state::Missing { part: "samples", why: e });
            (None, 0)
        }
    };
    let mine = match client.remote_user() {
        Some(user) => job.user_name == user,
        None => job.user_id == crate::identity::uid(),
    };
    let output_tail = if !mine {
        None
    } else if client.profile().is_some() {
        missing.push(state::Missing { part: "output", why: "the output of a cluster's job is on the cluster".into() });
        None
    } else {
        match super::output_tail::read(&output_path(&job), crate::identity::uid()) {
            Ok(text) => Some(text),
            Err(e) => {
                missing.push(state::Missing { part: "output", why: e.to_string() });
                None
            }
        }
    };
    Ok(JobPage { job, mine, samples, resolution, output_tail, missing })
}

/// The job's output file (its working directory's when the path is relative).
fn output_path(job: &JobInfo) -> PathBuf {
    let path = if job.stdout_expanded.is_empty() { &job.standard_output } else { &job.stdout_expanded };
    PathBuf::from(&job.current_working_directory).join(path)
}

/// What the page may do to a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `scancel ID`.
    Cancel,
    /// `scontrol hold ID`.
    Hold,
    /// `scontrol release ID`.
    Release,
}

impl Action {
    /// The action a path names.
    pub fn named(name: &str) -> Option<Action> {
        match name {
            "cancel" => Some(Action::Cancel),
            "hold" => Some(Action::Hold),
            "release" => Some(Action::Release),
            _ => None,
        }
    }
}

/// Does `action` to job `id` as the caller; `Err` holds the daemon's refusal.
pub fn act(client: &Client, id: &str, action: Action) -> Result<(), String> {
    match action {
        Action::Cancel => {
            let reply = client.cancel(id, None, SignalScope::Steps).map_err(|e| state::why(&e))?;
            if let Some(e) = state::first_error(&reply.errors) {
                return Err(e);
            }
            // 2021: the job had already finished, which scancel does not call an error.
            match reply.status.iter().find(|s| s.error.code != 0 && s.error.code != 2021) {
                Some(s) => Err(s.error.message.clone()),
                None => Ok(()),
            }
        }
        Action::Hold | Action::Release => {
            let body = serde_json::json!({ "hold": action == Action::Hold });
            let reply = client.update_job(id, &body).map_err(|e| state::why(&e))?;
            match state::first_error(&reply.errors) {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_actions_are_offered() {
        assert_eq!(Action::named("cancel"), Some(Action::Cancel));
        assert_eq!(Action::named("release"), Some(Action::Release));
        assert_eq!(Action::named("requeue"), None);
    }
}
