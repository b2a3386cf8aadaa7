//! The daemon's side of the MPS servers: taking up the servers an earlier daemon left, what
//! a job needs of them before its supervisor starts, and quitting the servers left idle each
//! time jobs end.

use crate::daemon::mps::servers::RETRY_AFTER;
use crate::daemon::mps::{Control, Servers, Tenant};
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Core;
use std::sync::Arc;

/// The daemon's servers, when it runs them, with those of an earlier daemon taken up
/// against the re-adopted jobs of `core`.
pub fn servers(core: &Core) -> Option<Servers> {
    let program = core.machine.mps_control.clone()?;
    let servers = Servers::new(Control::new(program), core.config.state_dir.clone(), &core.config.gpus);
    servers.adopt(|gpu, uid| core.shard_user(gpu) == Some(uid));
    Some(servers)
}

/// What job `id` needs of the servers, when it has GPUs.
pub fn tenant(core: &Core, id: u32) -> Option<Tenant> {
    let job = core.jobs.get(&id).filter(|j| !j.gpus.is_empty())?;
    Some(Tenant {
        gpus: job.gpus.clone(),
        shards: job.req.shards > 0,
        owner: crate::identity::RunAs { uid: job.uid, gid: job.gid },
    })
}

/// Quits the servers left idle each time jobs end, for the daemon's life: once at first
/// (jobs may have ended since the servers were taken up), then after each end, and every
/// [`RETRY_AFTER`] while a GPU is in trouble; the GPUs in trouble are drained, and those no
/// longer in trouble given back. The ends are listened for from the call on, not from the
/// first poll.
pub fn quit_idle(daemon: Arc<Daemon>) -> impl std::future::Future<Output = ()> {
    let mut ended = daemon.core.lock().ended.subscribe();
    ended.mark_changed();
    async move {
        let Some(servers) = daemon.mps.as_ref() else { return };
        let mut troubled = servers.watch_troubles();
        loop {
            let in_trouble = !servers.troubles().is_empty();
            tokio::select! {
                changed = ended.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(RETRY_AFTER), if in_trouble => {}
                // A GPU came into trouble: its retry is timed from now.
                _ = troubled.changed(), if !in_trouble => continue,
            }
            let d = daemon.clone();
            let _ = tokio::task::spawn_blocking(move || {
                let Some(servers) = d.mps.as_ref() else { return };
                if servers.any_running() || !servers.troubles().is_empty() {
                    servers.quit_idle(|gpu, uid| d.core.lock().shard_user(gpu) == Some(uid));
                }
                let effects = d.core.lock().set_gpu_drains(servers.troubles());
                d.apply(effects);
            })
            .await;
        }
    }
}
