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

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.path
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

#[cfg(test)]
mod tests {
    use super::super::hierarchy::{Controller, Hierarchies};
    use super::*;
    use std::process::Command;

    /// The hierarchy of `controller` where this process may make groups in it, or why not.
    fn writable(controller: Controller) -> Result<Place, String> {
        let place = Hierarchies::of_this_machine()
            .choose(controller)
            .ok_or_else(|| format!("no {} controller is mounted", controller.name()))?;
        let probe = place.mount.join(format!("slurmlet-probe-{}", std::process::id()));
        std::fs::create_dir(&probe).map_err(|e| format!("cannot make a group in {}: {e}", place.mount.display()))?;
        let _ = std::fs::remove_dir(&probe);
        Ok(place)
    }

    #[test]
    fn a_process_over_its_memory_limit_is_killed_and_counted() {
        let place = match writable(Controller::Memory) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("\n*** a_process_over_its_memory_limit_is_killed_and_counted SKIPPED: {why} ***\n");
                return;
            }
        };
        let group = Group::create(&place, Path::new(&format!("slurmlet-test-{}/job_1", std::process::id()))).unwrap();
        group.limit_memory(64 << 20).unwrap();
        // It waits to be moved, then holds 200 MB (tail keeps its whole input, which has no line end).
        let mut child = Command::new("sh")
            .args(["-c", "sleep 0.3; head -c 200000000 /dev/zero | tail > /dev/null"])
            .spawn()
            .unwrap();
        group.add(child.id() as i32).unwrap();
        assert!(group.members().contains(&(child.id() as i32)));
        let status = child.wait().unwrap();
        assert!(!status.success(), "the shell sees its pipeline killed: {status:?}");
        assert!(group.oom_kills() >= 1, "oom_kill counted");
        assert!(group.memory_peak().is_some_and(|p| p <= 64 << 20 && p > 1 << 20), "{:?}", group.memory_peak());
        let top = place.mount.join(format!("slurmlet-test-{}", std::process::id()));
        Group { version: place.version, path: top.clone() }.remove().unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn a_new_cpuset_group_gets_its_parents_cpus_and_can_be_pinned() {
        let place = match writable(Controller::Cpuset) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("\n*** a_new_cpuset_group_gets_its_parents_cpus_and_can_be_pinned SKIPPED: {why} ***\n");
                return;
            }
        };
        let relative = format!("slurmlet-cpus-{}/job_2", std::process::id());
        let group = Group::create(&place, Path::new(&relative)).unwrap();
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        group.pin_cpus("0").unwrap();
        group.add(child.id() as i32).unwrap();
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
        assert_eq!(allowed, "0");
        let _ = child.kill();
        let _ = child.wait();
        let top = place.mount.join(format!("slurmlet-cpus-{}", std::process::id()));
        Group { version: place.version, path: top }.remove().unwrap();
    }
}
