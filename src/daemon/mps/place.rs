//! Where the MPS server of one GPU and owner keeps its pipes (`CUDA_MPS_PIPE_DIRECTORY`) and
//! logs (`CUDA_MPS_LOG_DIRECTORY`): `mps/gpu<index>-uid<uid>/{pipe,log}` under the daemon's
//! state directory, owned by the owner; and the record of a server the daemon started
//! (`mps/gpu<index>.json`: owner, directories and control daemon), which a restarted daemon
//! reads to find the servers still running.
//!
//! The system daemon is root and the pipe and log directories belong to a user, who may put
//! anything in them at any time. So their parent, `gpu<index>-uid<uid>`, stays root's and is
//! never handed over: the user cannot rename, replace or link the two directories, and root
//! gives them over through open descriptors (`fchown`, `fchmod`), never by path. Inside the
//! pipe directory root only looks whether the control pipe is there (without following a
//! link) and reads the control daemon's pid file through the directory's descriptor, if it
//! is a small regular file of the owner's; a FIFO, a link or a huge file there is not read.

use crate::fs_at::{Dir, OpenError, SmallFileError};
use crate::identity::RunAs;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The name of the pipe the control daemon makes in its pipe directory once it runs.
pub const CONTROL_PIPE: &str = "control";

/// The file in which the control daemon writes its pid.
pub const CONTROL_PID_FILE: &str = "nvidia-cuda-mps-control.pid";

/// The most a pid file may hold: a pid and a newline, with room to spare.
const PID_FILE_MAX: u64 = 32;

/// The names of the directories handed to the owner, inside the server's own directory.
const PIPE: &str = "pipe";
const LOG: &str = "log";

/// The directory of the daemon's MPS servers under its state directory `state_dir`.
pub fn base(state_dir: &Path) -> PathBuf {
    state_dir.join("mps")
}

/// The steps of [`Place::create`], after each of which [`Place::create_stepping`] lets a
/// test play the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateStep {
    /// Whatever an earlier server left is gone.
    Cleared,
    /// The server's own directory is made (root's, for good).
    TopMade,
    /// The named directory is made inside it, still root's.
    Made(&'static str),
    /// The named directory is the owner's.
    HandedOver(&'static str),
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
        Place { pipe_dir: dir.join(PIPE), log_dir: dir.join(LOG), dir }
    }

    /// Makes the directories afresh (whatever an earlier server left there is removed, so
    /// that the control pipe appears only once the new server runs), the pipe and log
    /// directories owned by `owner` when the daemon acts for another user.
    pub fn create(&self, owner: Option<RunAs>) -> std::io::Result<()> {
        self.create_stepping(owner, &mut |_| {})
    }

    /// [`Place::create`], calling `between` after each step.
    pub fn create_stepping(&self, owner: Option<RunAs>, between: &mut dyn FnMut(CreateStep)) -> std::io::Result<()> {
        let context = |what: &Path| {
            let what = what.display().to_string();
            move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what}: {e}"))
        };
        self.remove(owner)?;
        between(CreateStep::Cleared);
        if let Some(base) = self.dir.parent() {
            std::fs::create_dir_all(base).map_err(context(base))?;
            std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o711)).map_err(context(base))?;
        }
        std::fs::create_dir(&self.dir).map_err(context(&self.dir))?;
        let top = Dir::open(&self.dir).map_err(context(&self.dir))?;
        // Users pass through it to their directories; nobody but root changes it.
        top.chmod(0o711).map_err(context(&self.dir))?;
        between(CreateStep::TopMade);
        for (name, path) in [(PIPE, &self.pipe_dir), (LOG, &self.log_dir)] {
            top.make_child(name, 0o700).map_err(context(path))?;
            let dir = top.open_child(name).map_err(context(path))?;
            between(CreateStep::Made(name));
            if let Some(o) = owner {
                dir.chown(o.uid, o.gid).map_err(context(path))?;
            }
            dir.chmod(0o700).map_err(context(path))?;
            between(CreateStep::HandedOver(name));
        }
        Ok(())
    }

    /// Whether the control daemon's pipe is there (it runs, or has not cleaned up).
    pub fn control_exists(&self) -> bool {
        Dir::open(&self.pipe_dir).is_ok_and(|d| d.has_entry(CONTROL_PIPE))
    }

    /// The control daemon, from the pid file it writes in its pipe directory
    /// (`nvidia-cuda-mps-control.pid`): when that is a small regular file of `owner`'s
    /// holding the pid of a process of `owner`'s.
    pub fn control_process(&self, owner: u32) -> Option<ControlProcess> {
        let dir = Dir::open(&self.pipe_dir).ok()?;
        let text = match dir.read_small_file(CONTROL_PID_FILE, Some(owner), PID_FILE_MAX) {
            Ok(text) => text,
            Err(SmallFileError::Open(OpenError::Io(e))) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!("not reading {}: {e}", self.pipe_dir.join(CONTROL_PID_FILE).display());
                return None;
            }
        };
        let pid: i32 = std::str::from_utf8(&text).ok()?.trim().parse().ok().filter(|&pid| pid > 1)?;
        ControlProcess::of(pid, owner)
    }

    /// Removes the directories, if they are there, of a server of `owner` (`None`: the
    /// daemon's own user). The place is free at once: its directory is renamed aside in the
    /// root-owned base, then emptied and removed on a thread of its own ([`sweep`]).
    pub fn remove(&self, owner: Option<RunAs>) -> std::io::Result<()> {
        let Some((base, name)) = self.dir.parent().zip(self.dir.file_name()) else { return Ok(()) };
        let aside = base.join(format!("{REMOVED_PREFIX}{}-{}", name.to_string_lossy(), unique_suffix()));
        match std::fs::rename(&self.dir, &aside) {
            Ok(()) => {
                let spawned = std::thread::Builder::new().name("mps-sweep".into()).spawn(move || sweep(&aside, owner));
                if let Err(e) = spawned {
                    tracing::warn!("cannot start removing an MPS server's directory: {e}");
                }
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(std::io::Error::new(e.kind(), format!("{}: {e}", self.dir.display()))),
        }
    }
}

/// What a server's directory is renamed to, in the base, when it is removed: `.removed-` and
/// its name and a number.
const REMOVED_PREFIX: &str = ".removed-";

/// How long the owner's emptying of a removed server's directories may take.
const SWEEP_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A number no other removal of this daemon's life shares: the time and a count.
fn unique_suffix() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{}-{n}", std::process::id(), crate::sys::now())
}

/// Empties and removes `aside`, a server's directory renamed aside (root's, with the owner's
/// `pipe` and `log` in it). What is in those two is the owner's: a tree of any depth, links,
/// FIFOs, a file system mounted on one of its directories. So it is emptied by the owner
/// themselves (`find -delete`, which walks a tree of any depth without recursing), in a child
/// process with a deadline, never on root's behalf nor on one of the daemon's threads; root
/// then removes the emptied directories one by one, following nothing. What cannot be
/// removed is left, said once in the log, and tried again at the next start.
pub fn sweep(aside: &Path, owner: Option<RunAs>) {
    // From inside the owner's two directories: root's, around them, is not theirs to list.
    let theirs: Vec<PathBuf> =
        [PIPE, LOG].iter().map(|sub| aside.join(sub)).filter(|sub| std::fs::symlink_metadata(sub).is_ok()).collect();
    if let Err(why) = empty_as(&theirs, owner) {
        tracing::warn!("emptying {}: {why}", aside.display());
    }
    let removed = theirs
        .iter()
        .try_for_each(|sub| std::fs::remove_dir(sub).map_err(|e| format!("{}: {e}", sub.display())))
        .and_then(|()| std::fs::remove_dir(aside).map_err(|e| format!("{}: {e}", aside.display())));
    if let Err(why) = removed {
        tracing::warn!("an MPS server's directory is left, to be removed at the next start: {why}");
    }
}

/// Empties the directories `dirs` (absolute paths; none: nothing is done), as `owner`, with
/// `find -delete` to [`SWEEP_WAIT`].
fn empty_as(dirs: &[PathBuf], owner: Option<RunAs>) -> Result<(), String> {
    // find with no starting point would start from its working directory.
    if dirs.is_empty() || dirs.iter().any(|d| !d.is_absolute()) {
        return Ok(());
    }
    let mut find = std::process::Command::new("find");
    find.args(dirs).args(["-xdev", "-mindepth", "1", "-delete"]).current_dir("/");
    if let Some(owner) = owner {
        crate::identity::Identity::run_command_as(&mut find, owner).map_err(|e| e.to_string())?;
    }
    let limits = crate::program::Limits { deadline: SWEEP_WAIT, max_output: 4096 };
    match crate::program::run(&mut find, None, limits) {
        Ok(done) if done.status.success() => Ok(()),
        Ok(done) => Err(format!("find: {}", done.stderr_text())),
        Err(e) => Err(e.to_string()),
    }
}

/// The servers' directories that a removal left under `state_dir` (renamed aside but not
/// emptied: the daemon stopped meanwhile, or the owner's tree resisted), each with the
/// owner of its `pipe` directory.
pub fn left_aside(state_dir: &Path) -> Vec<(PathBuf, Option<RunAs>)> {
    let Ok(entries) = std::fs::read_dir(base(state_dir)) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(REMOVED_PREFIX))
        .map(|e| {
            let path = e.path();
            let owner =
                std::fs::symlink_metadata(path.join(PIPE)).ok().and_then(|m| RunAs::when_needed(m.uid(), m.gid()));
            (path, owner)
        })
        .collect()
}

/// A control daemon: its pid and its start time, which tell it from a later process that
/// reuses the pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlProcess {
    /// Its pid.
    pub pid: i32,
    /// Its start, in clock ticks since boot.
    pub start_ticks: u64,
}

impl ControlProcess {
    /// Process `pid`, if it runs as `owner` (a pid file may name anyone's process).
    pub fn of(pid: i32, owner: u32) -> Option<ControlProcess> {
        let meta = std::fs::metadata(format!("/proc/{pid}")).ok()?;
        if meta.uid() != owner {
            tracing::warn!("the MPS control daemon's pid file names pid {pid}, which is not uid {owner}'s; ignored");
            return None;
        }
        Some(ControlProcess { pid, start_ticks: crate::sys::process_start_ticks(pid)? })
    }

    /// Whether it still runs (an unreaped zombie has ended).
    pub fn running(&self) -> bool {
        crate::sys::process_start_ticks(self.pid) == Some(self.start_ticks) && !crate::sys::is_zombie(self.pid)
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
    /// Its control daemon, once it was found running.
    #[serde(default)]
    pub control: Option<ControlProcess>,
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
        let owner = RunAs { uid: crate::identity::uid(), gid: crate::identity::gid() };
        let place = Place::of(state.path(), 1, owner.uid);
        assert!(place.pipe_dir.ends_with(format!("mps/gpu1-uid{}/pipe", owner.uid)), "{place:?}");
        place.create(None).unwrap();
        std::fs::write(place.pipe_dir.join(CONTROL_PIPE), "").unwrap();
        assert!(place.control_exists());
        // Made afresh: what an earlier server left is gone.
        place.create(None).unwrap();
        assert!(!place.control_exists() && place.log_dir.is_dir());
        let server = Server { gpu: 1, visible: "1".into(), owner, place: place.clone(), control: None };
        server.record(state.path()).unwrap();
        std::fs::write(base(state.path()).join("gpu7.json"), "not json").unwrap();
        assert_eq!(Server::recorded(state.path()), vec![server.clone()]);
        assert!(!base(state.path()).join("gpu7.json").exists(), "an unreadable record is removed");
        server.forget(state.path());
        place.remove(None).unwrap();
        assert!(Server::recorded(state.path()).is_empty() && !place.dir.exists());
    }

    #[test]
    fn a_removed_place_is_free_at_once_and_its_tree_goes_whatever_its_depth() {
        let state = tempfile::tempdir().unwrap();
        let place = Place::of(state.path(), 0, crate::identity::uid());
        place.create(None).unwrap();
        let mut deep = place.log_dir.clone();
        // As deep as a path can name (the system test goes deeper, from inside).
        for _ in 0..1000 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink("/", place.pipe_dir.join("root")).unwrap();
        place.remove(None).unwrap();
        assert!(!place.dir.exists(), "the place is free at once");
        place.create(None).unwrap();
        let gone = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !left_aside(state.path()).is_empty() && std::time::Instant::now() < gone {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(left_aside(state.path()).is_empty(), "{:?}", left_aside(state.path()));
        assert!(place.pipe_dir.is_dir() && std::path::Path::new("/etc").exists(), "nothing through the link went");
        assert_eq!(empty_as(&[], None), Ok(()), "no starting point: nothing is run");
    }
}
