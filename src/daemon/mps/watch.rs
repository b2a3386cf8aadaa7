//! The daemon's side of the MPS servers: finding the control program at start, taking up
//! the servers an earlier daemon left, readying a job's GPUs before its supervisor starts,
//! and quitting the servers left idle each time jobs end.

use super::servers::RETRY_AFTER;
use super::{Control, Servers, Tenant};
use crate::config::Config;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Core;
use std::sync::Arc;

/// At the daemon's start: with `mps = true`, looks for the control program on the daemon's
/// `PATH` and records it in `config` (`mps_control`). Says in one warning line when it is
/// not there (shard jobs then run without MPS), and names each GPU whose memory is unknown
/// (its shard jobs get no memory limit).
pub fn find(config: &mut Config) {
    if !config.mps {
        return;
    }
    config.mps_control = super::find_control(std::env::var_os("PATH").as_deref());
    match &config.mps_control {
        None => tracing::warn!(
            "mps = true, but {} is not on the daemon's PATH: shard jobs run without MPS",
            super::CONTROL_PROGRAM
        ),
        Some(program) => {
            tracing::info!("shard jobs run under MPS servers started with {}", program.display());
            for gpu in config.gpus.iter().filter(|g| g.memory_mb.is_none()) {
                tracing::warn!(
                    "the memory of GPU {} is unknown: its shard jobs get no CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                    gpu.index
                );
            }
        }
    }
}

/// What `scontrol show config` says of MPS (`SLURMLET_MPS`): the control program servers
/// are started with, or why shard jobs run without MPS; nothing when MPS is not asked for.
pub fn describe(config: &Config) -> String {
    match (&config.mps_control, config.mps) {
        (_, false) => String::new(),
        (Some(program), true) => program.display().to_string(),
        (None, true) => {
            format!("none: {} is not on the daemon's PATH; shard jobs run without MPS", super::CONTROL_PROGRAM)
        }
    }
}

/// The daemon's servers, when it runs them, with those of an earlier daemon taken up
/// against the re-adopted jobs of `core`.
pub fn servers(core: &Core) -> Option<Servers> {
    let program = core.config.mps_control.clone()?;
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
