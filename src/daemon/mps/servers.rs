//! Which MPS server runs on each GPU and for whom, and when one is started or quit. Each GPU
//! has a lock of its own, held while its server is started or quit (each within its
//! deadline): a job's start waits for its GPU's server to be ready, and never for another
//! GPU's.
//!
//! The scheduler's record of who holds each GPU's shards is the truth of who needs a
//! server: a server whose owner no longer holds shards of its GPU is idle, and is quit after
//! a job ends ([`Servers::quit_idle`]), or before the next job on that GPU starts
//! ([`Servers::serve`]: a whole-GPU job never starts while a server runs on its GPU).
//!
//! A GPU whose server could not be started, or could not be quit, is in trouble: the daemon
//! keeps new jobs off it ([`Servers::troubles`]). A server that would not quit is tried
//! again at each later pass; after a failed start, the GPU is tried again once
//! [`RETRY_AFTER`] has passed.

use super::control::Control;
use super::place::{Place, Server};
use crate::gpu::Gpu;
use crate::identity::RunAs;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a GPU whose server could not be started is kept from new jobs before the next
/// start is tried; and how often a server that would not quit is tried again while no job
/// ends.
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

/// What a job about to start needs of the servers: its GPUs, given whole or in shards, and
/// its owner.
#[derive(Debug, Clone)]
pub struct Tenant {
    /// Its GPUs (a shard job has one).
    pub gpus: Vec<Gpu>,
    /// Whether it holds them in shards.
    pub shards: bool,
    /// Its owner.
    pub owner: RunAs,
}

/// A GPU whose server could not be made ready for a job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct ServeError {
    /// The GPU's device index.
    pub gpu: u32,
    /// What went wrong.
    pub why: String,
}

/// One GPU's server, if one runs there.
type Slot = Option<Server>;

/// A start or a quit that failed, and when.
struct Trouble {
    why: String,
    at: Instant,
}

/// The daemon's MPS servers, one lock per GPU.
pub struct Servers {
    control: Control,
    state_dir: PathBuf,
    /// By GPU device index.
    gpus: BTreeMap<u32, Mutex<Slot>>,
    /// The GPUs in trouble, by device index: kept apart from the slots, whose locks are held
    /// through a start or a quit, so that they are told at once.
    troubles: Mutex<BTreeMap<u32, Trouble>>,
    /// Moved each time a GPU comes into trouble, for the loop that tries it again.
    troubled: tokio::sync::watch::Sender<u64>,
}

impl Servers {
    /// No servers yet on `gpus`; servers are started with `control` and kept under
    /// `state_dir`.
    pub fn new(control: Control, state_dir: PathBuf, gpus: &[Gpu]) -> Servers {
        Servers {
            control,
            state_dir,
            gpus: gpus.iter().map(|g| (g.index, Mutex::new(None))).collect(),
            troubles: Mutex::new(BTreeMap::new()),
            troubled: tokio::sync::watch::channel(0).0,
        }
    }

    /// The control program used.
    pub fn control(&self) -> &Control {
        &self.control
    }

    /// Takes up the servers an earlier daemon recorded: those whose owner still holds
    /// shards of their GPU (`in_use(gpu, uid)`, from the re-adopted jobs) are kept, the
    /// others quit; the directories of servers an earlier daemon was removing are removed.
    pub fn adopt(&self, in_use: impl Fn(u32, u32) -> bool) {
        for (aside, owner) in super::place::left_aside(&self.state_dir) {
            let _ =
                std::thread::Builder::new().name("mps-sweep".into()).spawn(move || super::place::sweep(&aside, owner));
        }
        for server in Server::recorded(&self.state_dir) {
            match self.gpus.get(&server.gpu) {
                Some(slot) if in_use(server.gpu, server.owner.uid) => {
                    tracing::info!(gpu = server.gpu, uid = server.owner.uid, "re-adopted MPS server");
                    *lock(slot) = Some(server);
                }
                Some(slot) => {
                    let mut slot = lock(slot);
                    *slot = Some(server);
                    self.quit_in(&mut slot);
                }
                None => {
                    self.quit_in(&mut Some(server));
                }
            }
        }
    }

    /// Makes the GPUs of `tenant` ready for it, before its supervisor starts: on a GPU it
    /// holds in shards, its owner's server runs (started if none does, after quitting
    /// another owner's idle one); on a GPU it holds whole, none runs. `Err`: a GPU that
    /// could not be made ready, which is then in trouble.
    pub fn serve(&self, tenant: &Tenant) -> Result<(), ServeError> {
        for gpu in &tenant.gpus {
            let Some(slot) = self.gpus.get(&gpu.index) else { continue };
            let mut slot = lock(slot);
            if let Some(server) = slot.as_ref() {
                let usable = tenant.shards && server.owner.uid == tenant.owner.uid && server.place.control_exists();
                if usable {
                    continue;
                }
                if let Some(why) = self.quit_in(&mut slot) {
                    return Err(ServeError { gpu: gpu.index, why });
                }
            }
            if tenant.shards {
                if let Err(why) = self.start_in(&mut slot, gpu, tenant.owner) {
                    return Err(ServeError { gpu: gpu.index, why });
                }
            }
        }
        Ok(())
    }

    /// Quits each server whose owner no longer holds shards of its GPU (`in_use(gpu, uid)`),
    /// tries again those that would not quit before, and lets GPUs whose start failed
    /// [`RETRY_AFTER`] ago be tried again. Called after jobs end, and every
    /// [`RETRY_AFTER`] while a GPU is in trouble; the GPU's lock is held while `in_use` is
    /// asked and the server quit, so no job starts on the GPU meanwhile.
    pub fn quit_idle(&self, in_use: impl Fn(u32, u32) -> bool) {
        for (&gpu, slot) in &self.gpus {
            let mut slot = lock(slot);
            let troubled = self.troubles().contains_key(&gpu);
            match slot.as_ref() {
                Some(server) if troubled || !in_use(server.gpu, server.owner.uid) => {
                    self.quit_in(&mut slot);
                }
                None if troubled => {
                    lock(&self.troubles).retain(|g, t| *g != gpu || t.at.elapsed() < RETRY_AFTER);
                }
                _ => {}
            }
        }
    }

    /// Whether any server runs (or is being started or quit).
    pub fn any_running(&self) -> bool {
        self.gpus.values().any(|slot| slot.try_lock().map_or(true, |s| s.is_some()))
    }

    /// The GPUs in trouble, by device index, and why.
    pub fn troubles(&self) -> BTreeMap<u32, String> {
        lock(&self.troubles).iter().map(|(&gpu, t)| (gpu, t.why.clone())).collect()
    }

    /// A receiver told each time a GPU comes into trouble.
    pub fn watch_troubles(&self) -> tokio::sync::watch::Receiver<u64> {
        self.troubled.subscribe()
    }

    /// Records that `gpu` is in trouble, for `why`, or (`None`) no longer.
    fn set_trouble(&self, gpu: u32, why: Option<String>) {
        let mut troubles = lock(&self.troubles);
        match why {
            Some(why) => {
                troubles.insert(gpu, Trouble { why, at: Instant::now() });
                self.troubled.send_modify(|n| *n += 1);
            }
            None => {
                troubles.remove(&gpu);
            }
        }
    }

    /// Starts the server of `gpu` for `owner` in `slot`: its directories made, recorded,
    /// then the control daemon started. A failed start is cleaned up and leaves the GPU in
    /// trouble; `Err` says why.
    fn start_in(&self, slot: &mut Slot, gpu: &Gpu, owner: RunAs) -> Result<(), String> {
        let place = Place::of(&self.state_dir, gpu.index, owner.uid);
        let mut server = Server { gpu: gpu.index, visible: gpu.visible_as(), owner, place, control: None };
        let started = server
            .place
            .create(RunAs::when_needed(owner.uid, owner.gid))
            .and_then(|()| server.record(&self.state_dir))
            .and_then(|()| self.control.start(&mut server));
        // Recorded with its control daemon, or not at all when it could not be.
        let started = started.and_then(|()| server.record(&self.state_dir));
        *slot = Some(server);
        match started {
            Ok(()) => {
                tracing::info!(gpu = gpu.index, uid = owner.uid, "MPS server started");
                self.set_trouble(gpu.index, None);
                Ok(())
            }
            Err(e) => {
                let why = e.to_string();
                tracing::error!("{why}");
                // It may have come up after all; what stays in trouble is what is left.
                let left = self.quit_in(slot);
                self.set_trouble(gpu.index, Some(left.unwrap_or_else(|| why.clone())));
                Err(why)
            }
        }
    }

    /// Quits the server in `slot` and removes its directories and record. One that may
    /// still run stays in the slot, in trouble: `Some` says why.
    fn quit_in(&self, slot: &mut Slot) -> Option<String> {
        let server = slot.as_ref()?;
        if let Err(e) = self.control.quit(server) {
            let why = e.to_string();
            tracing::error!("{why}");
            self.set_trouble(server.gpu, Some(why.clone()));
            return Some(why);
        }
        tracing::info!(gpu = server.gpu, uid = server.owner.uid, "MPS server quit");
        if let Err(e) = server.place.remove(RunAs::when_needed(server.owner.uid, server.owner.gid)) {
            tracing::warn!("cannot remove the MPS server's directory: {e}");
        }
        server.forget(&self.state_dir);
        self.set_trouble(server.gpu, None);
        *slot = None;
        None
    }
}

/// `m`, locked (a panic while it was held leaves it usable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A control program that logs each call (`-d` or the lines it reads) and makes or
    /// removes the control pipe, as the real one does.
    fn fake_control(dir: &std::path::Path) -> (Control, PathBuf) {
        let log = dir.join("calls");
        let program = dir.join(super::super::CONTROL_PROGRAM);
        let script = format!(
            "#!/bin/sh\nif [ \"$1\" = -d ]; then echo \"start $CUDA_VISIBLE_DEVICES\" >> {log}; : > \"$CUDA_MPS_PIPE_DIRECTORY/control\"; exit 0; fi\nwhile read line; do echo \"$line $CUDA_VISIBLE_DEVICES\" >> {log}; rm -f \"$CUDA_MPS_PIPE_DIRECTORY/control\"; done\n",
            log = log.display()
        );
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        (Control::new(program), log)
    }

    #[test]
    fn a_gpus_server_is_started_once_kept_for_its_owner_and_quit_when_idle_or_for_a_whole_gpu_job() {
        let dir = tempfile::tempdir().unwrap();
        let (control, log) = fake_control(dir.path());
        let state = dir.path().join("state");
        let gpus = [Gpu::nvidia(0), Gpu::nvidia(1)];
        let servers = Servers::new(control, state.clone(), &gpus);
        let me = RunAs { uid: crate::identity::uid(), gid: crate::identity::gid() };
        let shard_job = Tenant { gpus: vec![gpus[1].clone()], shards: true, owner: me };
        servers.serve(&shard_job).unwrap();
        servers.serve(&shard_job).unwrap();
        let place = Place::of(&state, 1, me.uid);
        assert!(place.control_exists() && Server::record_path(&state, 1).exists());
        servers.quit_idle(|gpu, uid| gpu == 1 && uid == me.uid);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "start 1\n", "one start, no quit while in use");
        // A restarted daemon takes it up while its owner holds shards.
        let again = Servers::new(Control::new(servers.control().program().into()), state.clone(), &gpus);
        again.adopt(|gpu, uid| gpu == 1 && uid == me.uid);
        assert!(again.any_running());
        // A whole-GPU job on it: the idle server is quit first.
        again.serve(&Tenant { shards: false, ..shard_job.clone() }).unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "start 1\nquit 1\n");
        assert!(!place.dir.exists() && !Server::record_path(&state, 1).exists() && !again.any_running());
        // Started again, then quit once idle.
        again.serve(&shard_job).unwrap();
        again.quit_idle(|_, _| false);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "start 1\nquit 1\nstart 1\nquit 1\n");
        assert!(!again.any_running());
    }
}
