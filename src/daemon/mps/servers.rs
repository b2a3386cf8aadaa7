//! Which MPS server runs on each GPU and for whom, and when one is started or quit. Each GPU
//! has a lock of its own, held while its server is started or quit: a job's start waits for
//! its GPU's server to be ready, and never for another GPU's.
//!
//! The scheduler's record of who holds each GPU's shards is the truth of who needs a
//! server: a server whose owner no longer holds shards of its GPU is idle, and is quit after
//! a job ends ([`Servers::quit_idle`]), or before the next job on that GPU starts
//! ([`Servers::serve`]: a whole-GPU job never starts while a server runs on its GPU).

use super::control::Control;
use super::place::{Place, Server};
use crate::gpu::Gpu;
use crate::identity::RunAs;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

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

/// The daemon's MPS servers, one lock per GPU.
pub struct Servers {
    control: Control,
    state_dir: PathBuf,
    /// By GPU device index: the server running on it, if any.
    gpus: BTreeMap<u32, Mutex<Option<Server>>>,
}

impl Servers {
    /// No servers yet on `gpus`; servers are started with `control` and kept under
    /// `state_dir`.
    pub fn new(control: Control, state_dir: PathBuf, gpus: &[Gpu]) -> Servers {
        Servers { control, state_dir, gpus: gpus.iter().map(|g| (g.index, Mutex::new(None))).collect() }
    }

    /// The control program used.
    pub fn control(&self) -> &Control {
        &self.control
    }

    /// Takes up the servers an earlier daemon recorded: those whose owner still holds
    /// shards of their GPU (`in_use(gpu, uid)`, from the re-adopted jobs) are kept, the
    /// others quit.
    pub fn adopt(&self, in_use: impl Fn(u32, u32) -> bool) {
        for server in Server::recorded(&self.state_dir) {
            match self.gpus.get(&server.gpu) {
                Some(slot) if in_use(server.gpu, server.owner.uid) => {
                    tracing::info!(gpu = server.gpu, uid = server.owner.uid, "re-adopted MPS server");
                    *lock(slot) = Some(server);
                }
                _ => self.quit(&server),
            }
        }
    }

    /// Makes the GPUs of `tenant` ready for it, before its supervisor starts: on a GPU it
    /// holds in shards, its owner's server runs (started if none does, after quitting
    /// another owner's idle one); on a GPU it holds whole, none runs.
    pub fn serve(&self, tenant: &Tenant) -> std::io::Result<()> {
        for gpu in &tenant.gpus {
            let Some(slot) = self.gpus.get(&gpu.index) else { continue };
            let mut running = lock(slot);
            if let Some(server) = running.as_ref() {
                let usable = tenant.shards && server.owner.uid == tenant.owner.uid && server.place.control_exists();
                if usable {
                    continue;
                }
                self.quit(server);
                *running = None;
            }
            if tenant.shards {
                *running = Some(self.start(gpu, tenant.owner)?);
            }
        }
        Ok(())
    }

    /// Quits each server whose owner no longer holds shards of its GPU (`in_use(gpu, uid)`).
    /// Called after jobs end; the GPU's lock is held while `in_use` is asked and the server
    /// quit, so no job starts on the GPU meanwhile.
    pub fn quit_idle(&self, in_use: impl Fn(u32, u32) -> bool) {
        for slot in self.gpus.values() {
            let mut running = lock(slot);
            if let Some(server) = running.as_ref() {
                if !in_use(server.gpu, server.owner.uid) {
                    self.quit(server);
                    *running = None;
                }
            }
        }
    }

    /// Whether any server runs (or is being started or quit).
    pub fn any_running(&self) -> bool {
        self.gpus.values().any(|slot| slot.try_lock().map_or(true, |s| s.is_some()))
    }

    /// Starts the server of `gpu` for `owner`: its directories made, recorded, then the
    /// control daemon started.
    fn start(&self, gpu: &Gpu, owner: RunAs) -> std::io::Result<Server> {
        let place = Place::of(&self.state_dir, gpu.index, owner.uid);
        let server = Server { gpu: gpu.index, visible: gpu.visible_as(), owner, place };
        server.place.create(RunAs::when_needed(owner.uid, owner.gid))?;
        server.record(&self.state_dir)?;
        match self.control.start(&server) {
            Ok(()) => {
                tracing::info!(gpu = gpu.index, uid = owner.uid, "MPS server started");
                Ok(server)
            }
            Err(e) => {
                // It may have come up after all.
                self.quit(&server);
                Err(e)
            }
        }
    }

    /// Quits `server` and removes its directories and record; a failure is logged.
    fn quit(&self, server: &Server) {
        match self.control.quit(server) {
            Ok(()) => tracing::info!(gpu = server.gpu, uid = server.owner.uid, "MPS server quit"),
            Err(e) => tracing::warn!("{e}"),
        }
        if let Err(e) = server.place.remove() {
            tracing::warn!("cannot remove the MPS server's directory: {e}");
        }
        server.forget(&self.state_dir);
    }
}

/// The GPU's slot, locked (a panic while it was held leaves it usable).
fn lock(slot: &Mutex<Option<Server>>) -> std::sync::MutexGuard<'_, Option<Server>> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
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
        let me = RunAs { uid: crate::paths::uid(), gid: crate::paths::gid() };
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
