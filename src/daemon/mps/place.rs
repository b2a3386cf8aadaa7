//! Where the MPS server of one GPU and owner keeps its pipes (`CUDA_MPS_PIPE_DIRECTORY`) and
//! logs (`CUDA_MPS_LOG_DIRECTORY`): `mps/gpu<index>-uid<uid>/{pipe,log}` under the daemon's
//! state directory, owned by the owner; and the record of a server the daemon started
//! (`mps/gpu<index>.json`: owner and directories), which a restarted daemon reads to find
//! the servers still running.

use crate::identity::RunAs;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The name of the pipe the control daemon makes in its pipe directory once it runs.
pub const CONTROL_PIPE: &str = "control";

/// The file in which the control daemon writes its pid.
const CONTROL_PID_FILE: &str = "nvidia-cuda-mps-control.pid";

/// The directory of the daemon's MPS servers under its state directory `state_dir`.
pub fn base(state_dir: &Path) -> PathBuf {
    state_dir.join("mps")
}

/// The directories of the server of GPU `gpu` (its device index on the node) for user `uid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The directory holding both (removed whole when the server is quit).
    pub dir: PathBuf,
    /// `CUDA_MPS_PIPE_DIRECTORY`.
    pub pipe_dir: PathBuf,
    /// `CUDA_MPS_LOG_DIRECTORY`.
    pub log_dir: PathBuf,
}

impl Place {
    /// The place of the server of GPU `gpu` for user `uid` under `state_dir`.
    pub fn of(state_dir: &Path, gpu: u32, uid: u32) -> Place {
        let dir = base(state_dir).join(format!("gpu{gpu}-uid{uid}"));
        Place { pipe_dir: dir.join("pipe"), log_dir: dir.join("log"), dir }
    }

    /// Makes the directories afresh (whatever an earlier server left there is removed, so
    /// that the control pipe appears only once the new server runs), owned by `owner` when
    /// the daemon acts for another user; the base directory lets users pass through it.
    pub fn create(&self, owner: Option<RunAs>) -> std::io::Result<()> {
        let context = |what: &Path| {
            let what = what.display().to_string();
            move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what}: {e}"))
        };
        self.remove()?;
        if let Some(base) = self.dir.parent() {
            std::fs::create_dir_all(base).map_err(context(base))?;
            std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o711)).map_err(context(base))?;
        }
        for dir in [&self.dir, &self.pipe_dir, &self.log_dir] {
            std::fs::create_dir(dir).map_err(context(dir))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(context(dir))?;
            if let Some(o) = owner {
                std::os::unix::fs::chown(dir, Some(o.uid), Some(o.gid)).map_err(context(dir))?;
            }
        }
        Ok(())
    }

    /// Whether the control daemon's pipe is there (it runs, or has not cleaned up).
    pub fn control_exists(&self) -> bool {
        self.pipe_dir.join(CONTROL_PIPE).exists()
    }

    /// The pid of the control daemon, from the file it writes in its pipe directory
    /// (`nvidia-cuda-mps-control.pid`), when it wrote one.
    pub fn control_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.pipe_dir.join(CONTROL_PID_FILE)).ok()?;
        text.trim().parse().ok().filter(|&pid| pid > 0)
    }

    /// Removes the directories, if they are there.
    pub fn remove(&self) -> std::io::Result<()> {
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(std::io::Error::new(e.kind(), format!("{}: {e}", self.dir.display())))
            }
            _ => Ok(()),
        }
    }
}

/// A server the daemon started: on which GPU, for whom, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    /// The GPU's device index on the node.
    pub gpu: u32,
    /// What `CUDA_VISIBLE_DEVICES` names the GPU by for the control daemon.
    pub visible: String,
    /// The user it serves.
    pub owner: RunAs,
    /// Its directories.
    pub place: Place,
}

impl Server {
    /// The file recording the server of GPU `gpu` under `state_dir`.
    pub fn record_path(state_dir: &Path, gpu: u32) -> PathBuf {
        base(state_dir).join(format!("gpu{gpu}.json"))
    }

    /// Records the server (before it is started: a daemon that stops meanwhile finds it and
    /// quits it, if it came up).
    pub fn record(&self, state_dir: &Path) -> std::io::Result<()> {
        let path = Self::record_path(state_dir, self.gpu);
        let text = serde_json::to_vec(self).expect("a server record serializes");
        crate::sys::write_atomically(&path, &text, || {})
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    /// Removes the record of the server.
    pub fn forget(&self, state_dir: &Path) {
        let _ = std::fs::remove_file(Self::record_path(state_dir, self.gpu));
    }

    /// The servers recorded under `state_dir`; a record that cannot be read is named in the
    /// log and removed.
    pub fn recorded(state_dir: &Path) -> Vec<Server> {
        let Ok(entries) = std::fs::read_dir(base(state_dir)) else { return Vec::new() };
        let mut found = Vec::new();
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match std::fs::read(&path).ok().and_then(|t| serde_json::from_slice::<Server>(&t).ok()) {
                Some(server) => found.push(server),
                None => {
                    tracing::warn!("unreadable MPS server record {}; removing it", path.display());
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        found.sort_by_key(|s| s.gpu);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_recorded_read_back_and_forgotten() {
        let state = tempfile::tempdir().unwrap();
        let owner = RunAs { uid: crate::paths::uid(), gid: crate::paths::gid() };
        let place = Place::of(state.path(), 1, owner.uid);
        assert!(place.pipe_dir.ends_with(format!("mps/gpu1-uid{}/pipe", owner.uid)), "{place:?}");
        place.create(None).unwrap();
        std::fs::write(place.pipe_dir.join(CONTROL_PIPE), "").unwrap();
        assert!(place.control_exists());
        // Made afresh: what an earlier server left is gone.
        place.create(None).unwrap();
        assert!(!place.control_exists() && place.log_dir.is_dir());
        let server = Server { gpu: 1, visible: "1".into(), owner, place: place.clone() };
        server.record(state.path()).unwrap();
        std::fs::write(base(state.path()).join("gpu7.json"), "not json").unwrap();
        assert_eq!(Server::recorded(state.path()), vec![server.clone()]);
        assert!(!base(state.path()).join("gpu7.json").exists(), "an unreadable record is removed");
        server.forget(state.path());
        place.remove().unwrap();
        assert!(Server::recorded(state.path()).is_empty() && !place.dir.exists());
    }
}
