//! A submit's way into the daemon's state: checked and numbered under the lock, its paths
//! then checked as its owner without the lock, and its insert queued under the lock again.
//!
//! A look at a path a user names may take any time (a FUSE or NFS mount that never
//! answers); under the one lock it would stop every other user's request. Holding the ids
//! and the user's count from the first step keeps racing submits apart as before.

use super::core::Staged;
use super::submit::explained;
use super::submit_paths::SubmitPaths;
use crate::api::types::{errno, ApiError, JobDescMsg};
use crate::daemon::fault;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use std::sync::Arc;

/// Checks and numbers the job of `desc` (see [`super::core::Core::reserve`]), checks its
/// paths as `caller` (see [`SubmitPaths`]), and queues its insert; `Err` is the refusal.
pub async fn stage(
    d: &Arc<Daemon>,
    desc: &JobDescMsg,
    top_script: Option<&str>,
    caller: Caller,
    interactive: bool,
) -> Result<Staged, ApiError> {
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
