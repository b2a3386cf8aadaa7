//! One cgroup directory in one hierarchy: made, given processes and limits, read, emptied
//! and removed. The v1 and v2 names of the same setting differ; [`Group`]'s methods take the
//! version into account, so that callers speak of what they mean (a memory limit, a peak).

use super::hierarchy::{Place, Version};
use std::io;
use std::path::{Path, PathBuf};

/// A cgroup: its hierarchy and its path below the hierarchy's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    version: Version,
    path: PathBuf,
}

impl Group {
    /// The group at `relative` (`slurmlet/job_7/step_batch`) in the hierarchy at `place`,
    /// made with its missing parents. On v1 a new `cpuset` group starts with no CPUs and no
    /// memory nodes, so each new level is given its parent's first.
    pub fn create(place: &Place, relative: &Path) -> io::Result<Group> {
        let mut path = place.mount.clone();
        for part in relative.components() {
            let parent = path.clone();
            path.push(part);
            if !path.is_dir() {
                std::fs::create_dir(&path).or_else(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })?;
                if place.version == Version::V1 {
                    for file in ["cpuset.cpus", "cpuset.mems"] {
                        if let Ok(value) = std::fs::read_to_string(parent.join(file)) {
                            std::fs::write(path.join(file), value.trim())?;
                        }
                    }
                }
            }
        }
        Ok(Group { version: place.version, path })
    }

    /// The group at `relative` in the hierarchy at `place`, as it is (made or not).
    pub fn at(place: &Place, relative: &Path) -> Group {
        Group { version: place.version, path: place.mount.join(relative) }
    }

    /// The group of directory `path`, in a hierarchy of `version`.
    pub fn of_dir(version: Version, path: PathBuf) -> Group {
        Group { version, path }
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The version of its hierarchy.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The group `name` below this one (made or not).
    pub fn child(&self, name: &str) -> Group {
        Group { version: self.version, path: self.path.join(name) }
    }

    /// On v2, lets this group's children use those of `controllers` (`memory`, `pids`…)
    /// that the group itself has: each is asked for on its own, so that one the group
    /// lacks does not keep the others off. Nothing to do on v1.
    pub fn delegate_controllers(&self, controllers: &[&str]) {
        if self.version == Version::V1 {
            return;
        }
        let offered = std::fs::read_to_string(self.path.join("cgroup.controllers")).unwrap_or_default();
        let enabled = std::fs::read_to_string(self.path.join("cgroup.subtree_control")).unwrap_or_default();
        for c in controllers {
            let has = |text: &str| text.split_whitespace().any(|o| o == *c);
            if has(&offered) && !has(&enabled) {
                let _ = std::fs::write(self.path.join("cgroup.subtree_control"), format!("+{c}"));
            }
        }
    }

    /// The processes of the group and of the groups below it.
    pub fn all_members(&self) -> Vec<i32> {
        let mut pids = self.members();
        for entry in std::fs::read_dir(&self.path).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pids.extend(Group { version: self.version, path: entry.path() }.all_members());
            }
        }
        pids
    }

    /// Kills every process of the group and of the groups below it at once (`cgroup.kill`,
    /// v2 only); `false` where the kernel has no such file (v1, or a kernel before 5.14).
    pub fn kill_all(&self) -> bool {
        self.version == Version::V2 && std::fs::write(self.path.join("cgroup.kill"), "1").is_ok()
    }

    /// Freezes (`true`) or thaws the group and the groups below it (`freezer.state` on v1,
    /// `cgroup.freeze` on v2).
    pub fn set_frozen(&self, frozen: bool) -> io::Result<()> {
        match self.version {
            Version::V1 => std::fs::write(self.path.join("freezer.state"), if frozen { "FROZEN" } else { "THAWED" }),
            Version::V2 => std::fs::write(self.path.join("cgroup.freeze"), if frozen { "1" } else { "0" }),
        }
    }

    /// Whether the group is frozen through and through (v1 `freezer.state` reads `FROZEN`,
    /// v2 `cgroup.events` has `frozen 1`).
    pub fn is_frozen(&self) -> bool {
        match self.version {
            Version::V1 => std::fs::read_to_string(self.path.join("freezer.state")).is_ok_and(|s| s.trim() == "FROZEN"),
            Version::V2 => std::fs::read_to_string(self.path.join("cgroup.events"))
                .is_ok_and(|s| s.lines().any(|l| l.trim() == "frozen 1")),
        }
    }

    /// Limits the group's memory and swap together to `bytes` (v1
    /// `memory.memsw.limit_in_bytes`, only where the kernel accounts swap) or its swap alone
    /// to `bytes` (v2 `memory.swap.max`).
    pub fn limit_swap(&self, bytes: u64) -> io::Result<()> {
        let file = match self.version {
            Version::V1 => "memory.memsw.limit_in_bytes",
            Version::V2 => "memory.swap.max",
        };
        std::fs::write(self.path.join(file), bytes.to_string())
    }

    /// The memory the group holds now (`memory.usage_in_bytes` on v1, `memory.current` on
    /// v2), bytes.
    pub fn memory_now(&self) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.usage_in_bytes",
            Version::V2 => "memory.current",
        };
        std::fs::read_to_string(self.path.join(file)).ok()?.trim().parse().ok()
    }

    /// The CPU time the group's processes used, user and system, microseconds (v1
    /// `cpuacct.usage_user`/`cpuacct.usage_sys` in nanoseconds, v2 `cpu.stat`'s `user_usec`
    /// and `system_usec`).
    pub fn cpu_times(&self) -> Option<(u64, u64)> {
        let read = |file: &str| std::fs::read_to_string(self.path.join(file)).ok();
        match self.version {
            Version::V1 => {
                let ns = |file: &str| read(file)?.trim().parse::<u64>().ok();
                Some((ns("cpuacct.usage_user")? / 1000, ns("cpuacct.usage_sys")? / 1000))
            }
            Version::V2 => {
                let text = read("cpu.stat")?;
                let field = |name: &str| {
                    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<u64>().ok())
                };
                Some((field("user_usec")?, field("system_usec")?))
            }
        }
    }

    /// Moves process `pid` (and, on v2, its threads) into the group.
    pub fn add(&self, pid: i32) -> io::Result<()> {
        std::fs::write(self.path.join("cgroup.procs"), pid.to_string())
    }

    /// The processes in the group (not in its children).
    pub fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Limits the group's memory to `bytes` (`memory.limit_in_bytes` on v1, `memory.max` on
    /// v2).
    pub fn limit_memory(&self, bytes: u64) -> io::Result<()> {
        let file = match self.version {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        };
        std::fs::write(self.path.join(file), bytes.to_string())
    }

    /// The most memory the group held (`memory.max_usage_in_bytes` on v1, `memory.peak` on
    /// v2), bytes.
    pub fn memory_peak(&self) -> Option<u64> {
        let file = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        std::fs::read_to_string(self.path.join(file)).ok()?.trim().parse().ok()
    }

    /// How many of the group's processes the kernel killed for want of memory (`oom_kill`
    /// in `memory.oom_control` on v1, in `memory.events` on v2).
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        let text = std::fs::read_to_string(self.path.join(file)).unwrap_or_default();
        text.lines().find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok()).unwrap_or(0)
    }

    /// Pins the group to CPUs `cpus` (`0-1,4`).
    pub fn pin_cpus(&self, cpus: &str) -> io::Result<()> {
        std::fs::write(self.path.join("cpuset.cpus"), cpus)
    }

    /// Removes the group, and the empty groups below it first.
    pub fn remove(&self) -> io::Result<()> {
        remove_tree(&self.path)
    }
}

/// Removes cgroup directory `dir` after its child groups (a cgroup's files cannot be
/// removed, only its directory, once empty).
fn remove_tree(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&entry.path())?;
        }
    }
    std::fs::remove_dir(dir)
}
