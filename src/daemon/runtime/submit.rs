//! A submit's way into the daemon's state, one for batch jobs and interactive allocations
//! alike: checked and numbered under the lock, its paths then checked as its owner without
//! the lock, its insert queued under the lock again, and the jobs durable in the store
//! before anyone hears of them (or given back when the store failed).
//!
//! A look at a path a user names may take any time (a FUSE or NFS mount that never
//! answers); under the one lock it would stop every other user's request. Holding the ids
//! and the user's count from the first step keeps racing submits apart as before.

use crate::api::types::{errno, JobDescMsg};
use crate::daemon::fault;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::Job;
use crate::daemon::model::refusal::Refusal;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Staged;
use crate::daemon::scheduling::submit_paths::SubmitPaths;
use crate::daemon::scheduling::submit_refusals::explained;
use crate::daemon::store::writer::WriteFailed;
use std::sync::Arc;

/// Checks and numbers the job of `desc` (see [`crate::daemon::scheduling::core::Core::reserve`]), checks its
/// paths as `caller` (see [`SubmitPaths`]), and queues its insert; `Err` is the refusal.
async fn stage(
    d: &Arc<Daemon>,
    desc: &JobDescMsg,
    top_script: Option<&str>,
    caller: Caller,
    interactive: bool,
) -> Result<Staged, Refusal> {
    let (reserved, paths) = {
        let mut core = d.core.lock();
        if !interactive {
            // A panic under the lock, for the tests of what a failing submit leaves.
            fault::inject("submit", desc.name.as_deref().unwrap_or_default());
        }
        let reserved = core.reserve(desc, top_script, caller, interactive)?;
        let umask = crate::daemon::supervision::launch::umask_of(&reserved.payload.environment);
        let paths = SubmitPaths::of_jobs(&reserved.jobs, &core.config.node_name, umask);
        (reserved, paths)
    };
    // The rest is a task of its own: a client that leaves midway leaves no job reserved
    // (its ids and its count against its user given back, or its insert queued).
    let d = d.clone();
    tokio::spawn(async move {
        match paths.check(&d.path_checks, caller).await {
            Ok(()) => Ok(d.core.lock().stage(reserved)),
            Err(refusal) => {
                d.core.lock().give_back(reserved);
                Err(refusal)
            }
        }
    })
    .await
    .unwrap_or_else(|e| {
        Err(explained(errno::ERROR, "Unexpected error", format!("the check of the job's paths failed: {e}")))
    })
}

/// The jobs of a submit, stored, not yet admitted to the queue.
pub struct Stored {
    /// The job, or an array's jobs, in id order.
    pub jobs: Vec<Job>,
    /// What the submit's client is told besides the id.
    pub warnings: Vec<String>,
}

/// Why a submit was not taken.
pub enum SubmitRefused {
    /// The request was refused as Slurm refuses it (bad options, paths, limits).
    Invalid(Refusal),
    /// The store could not keep the jobs; nothing of them is left in memory.
    NotStored(WriteFailed),
}

/// Takes the job of `desc` into the daemon as `caller` submits it (staged as above) and waits
/// until it is durable; on a failed write the jobs are given back, so that nothing a client
/// was not told of stays. The caller admits the stored jobs to the queue.
pub async fn store(
    d: &Arc<Daemon>,
    desc: &JobDescMsg,
    top_script: Option<&str>,
    caller: Caller,
    interactive: bool,
) -> Result<Stored, SubmitRefused> {
    let staged = stage(d, desc, top_script, caller, interactive).await.map_err(SubmitRefused::Invalid)?;
    let stored = staged.durable.await;
    match stored {
        Ok(()) => Ok(Stored { jobs: staged.jobs, warnings: staged.warnings }),
        Err(e) => {
            d.core.lock().unstage(&staged.jobs);
            Err(SubmitRefused::NotStored(e))
        }
    }
}
