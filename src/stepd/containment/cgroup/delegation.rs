//! A cgroup v2 subtree delegated to the daemon's user, as a systemd user manager gives its
//! services (`Delegate=yes`) and as an administrator may prepare one: the daemon's own
//! group, owned by its user, whose `cgroup.procs` and `cgroup.subtree_control` the user may
//! write. A daemon that is not root contains its jobs there.
//!
//! v2 keeps processes out of a group whose children have controllers, and lets a user move
//! a process only between groups below one it may write: the daemon moves itself (and its
//! other processes) into a leaf, `daemon`, hands the controllers to its own group's children,
//! and makes the jobs' groups beside the leaf, below `jobs`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The leaf the daemon's own processes move into.
pub const DAEMON_LEAF: &str = "daemon";

/// The group, beside the leaf, that holds the jobs' groups.
pub const JOBS: &str = "jobs";

/// A subtree delegated to this daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegated {
    /// The unified hierarchy's mount.
    pub mount: PathBuf,
    /// The daemon's own group, below the mount (`user.slice/…/slurmlet.service`).
    pub own: PathBuf,
}

impl Delegated {
    /// The subtree delegated to user `uid` in which the process of `/proc/self/cgroup` text
    /// `self_cgroup` lives, on the unified hierarchy mounted at `mount`: its own group, when
    /// that group and the two files that delegation hands over are the user's.
    pub fn find(mount: &Path, self_cgroup: &str, uid: u32) -> Option<Delegated> {
        let own = own_group(self_cgroup)?;
        let dir = mount.join(&own);
        let owned = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.uid() == uid);
        let handed = [dir.as_path(), &dir.join("cgroup.procs"), &dir.join("cgroup.subtree_control")];
        handed.iter().all(|p| owned(p)).then(|| Delegated { mount: mount.to_path_buf(), own })
    }

    /// The group the jobs' groups go below, relative to the mount.
    pub fn jobs_base(&self) -> PathBuf {
        self.own.join(JOBS)
    }

    /// Takes the subtree over: makes the leaf, moves every process of the daemon's own group
    /// into it, and lets the own group's children have `controllers` (those it has).
    pub fn take_over(&self, controllers: &[&str]) -> std::io::Result<()> {
        let own = self.mount.join(&self.own);
        let leaf = own.join(DAEMON_LEAF);
        match std::fs::create_dir(&leaf) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let procs = std::fs::read_to_string(own.join("cgroup.procs"))?;
        for pid in procs.lines().filter(|l| !l.trim().is_empty()) {
            // A process that ended meanwhile is not an error.
            if let Err(e) = std::fs::write(leaf.join("cgroup.procs"), pid.trim()) {
                if e.raw_os_error() != Some(libc::ESRCH) {
                    return Err(e);
                }
            }
        }
        super::group::Group::of_dir(super::hierarchy::Version::V2, own).delegate_controllers(controllers);
        Ok(())
    }
}

/// The process's group on the unified hierarchy, from the text of `/proc/self/cgroup`: the
/// path of its `0::` line, relative (`None` when there is none, or it is the root).
pub fn own_group(self_cgroup: &str) -> Option<PathBuf> {
    let path = self_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let relative = path.trim_start_matches('/');
    (!relative.is_empty()).then(|| PathBuf::from(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unified_line_names_the_own_group() {
        let text =
            "12:memory:/user.slice\n0::/user.slice/user-1000.slice/user@1000.service/app.slice/slurmlet.service\n";
        assert_eq!(
            own_group(text),
            Some(PathBuf::from("user.slice/user-1000.slice/user@1000.service/app.slice/slurmlet.service"))
        );
        assert_eq!(own_group("0::/\n"), None, "the root is nobody's to take");
        assert_eq!(own_group("4:cpuset:/\n"), None, "v1 alone");
    }

    #[test]
    fn a_group_is_delegated_when_it_and_its_two_files_are_the_users() {
        // A directory standing in for a mount: its files are this process's user's.
        let mount = tempfile::tempdir().unwrap();
        let own = mount.path().join("app.slice/slurmlet.service");
        std::fs::create_dir_all(&own).unwrap();
        let text = "0::/app.slice/slurmlet.service\n";
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        assert_eq!(Delegated::find(mount.path(), text, me), None, "no cgroup.procs handed over");
        for file in ["cgroup.procs", "cgroup.subtree_control"] {
            std::fs::write(own.join(file), "").unwrap();
        }
        let found = Delegated::find(mount.path(), text, me).expect("delegated");
        assert_eq!(found.own, PathBuf::from("app.slice/slurmlet.service"));
        assert_eq!(found.jobs_base(), PathBuf::from("app.slice/slurmlet.service/jobs"));
        assert_eq!(Delegated::find(mount.path(), text, me + 1), None, "another user's");
    }
}
