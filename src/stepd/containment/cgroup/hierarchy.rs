//! What cgroup hierarchies the machine offers, found from the kernel's own lists: the
//! unified v2 hierarchy (current distributions), the legacy v1 hierarchies, or a hybrid of
//! both (v1 controllers beside a v2 mount that has none, or only some, of them). For each
//! controller slurmlet uses it picks v2 where the unified hierarchy has it and v1 where a v1
//! hierarchy has it, as [`Hierarchies::choose`] says.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The controllers a job's containment uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Controller {
    /// CPU pinning (`cpuset.cpus`).
    Cpuset,
    /// Memory limits, peaks and OOM counts.
    Memory,
    /// CPU time (v2 `cpu.stat`; v1 `cpuacct`).
    CpuAccounting,
    /// The process count, and the list of a job's processes on v1.
    Pids,
    /// Which device files a job may open (v1 `devices`; v2 a BPF program, always there).
    Devices,
    /// Stopping and restarting all of a job's processes (v1 `freezer`; v2 `cgroup.freeze`).
    Freezer,
}

impl Controller {
    /// Every controller, in the order they are told.
    pub const ALL: [Controller; 6] = [
        Controller::Cpuset,
        Controller::Memory,
        Controller::CpuAccounting,
        Controller::Pids,
        Controller::Devices,
        Controller::Freezer,
    ];

    /// Its name in messages (`cpuset`, `memory`, `cpu`…).
    pub fn name(self) -> &'static str {
        match self {
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
            Controller::CpuAccounting => "cpu",
            Controller::Pids => "pids",
            Controller::Devices => "devices",
            Controller::Freezer => "freezer",
        }
    }

    /// The v1 hierarchy's controller name (`cpuacct` for CPU time).
    fn v1_name(self) -> &'static str {
        match self {
            Controller::CpuAccounting => "cpuacct",
            other => other.name(),
        }
    }

    /// Whether the unified hierarchy has it whatever `cgroup.controllers` lists: freezing
    /// (`cgroup.freeze`), device filtering (a BPF program) and CPU time (`cpu.stat`'s
    /// `user_usec` and `system_usec`) are in its core.
    fn in_v2_core(self) -> bool {
        matches!(self, Controller::Devices | Controller::Freezer | Controller::CpuAccounting)
    }

    /// The name `cgroup.controllers` lists it by on v2.
    fn v2_name(self) -> &'static str {
        self.name()
    }
}

/// A cgroup version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Version {
    /// The legacy hierarchies, one per controller.
    V1,
    /// The unified hierarchy.
    V2,
}

impl Version {
    /// Slurm's `CgroupPlugin` name (`cgroup/v1`, `cgroup/v2`).
    pub fn plugin(self) -> &'static str {
        match self {
            Version::V1 => "cgroup/v1",
            Version::V2 => "cgroup/v2",
        }
    }
}

/// Where one controller is: its version and the mount of its hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// v1 or v2.
    pub version: Version,
    /// The hierarchy's mount point (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup`).
    pub mount: PathBuf,
}

/// The cgroup hierarchies mounted on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hierarchies {
    /// The unified hierarchy's mount and the controllers its root offers, if it is mounted.
    pub unified: Option<(PathBuf, BTreeSet<String>)>,
    /// Each v1 controller's hierarchy mount (`memory` → `/sys/fs/cgroup/memory`).
    pub legacy: BTreeMap<String, PathBuf>,
}

impl Hierarchies {
    /// The hierarchies of this machine: `/proc/self/mountinfo`, and the unified root's
    /// `cgroup.controllers`.
    pub fn of_this_machine() -> Hierarchies {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Hierarchies::from_mountinfo(&mountinfo, |root| std::fs::read_to_string(root.join("cgroup.controllers")).ok())
    }

    /// The hierarchies `mountinfo` (the text of `/proc/self/mountinfo`) lists; `controllers`
    /// reads the unified root's `cgroup.controllers` (`None`: unreadable, taken as empty).
    pub fn from_mountinfo(mountinfo: &str, controllers: impl Fn(&Path) -> Option<String>) -> Hierarchies {
        let mut found = Hierarchies::default();
        for line in mountinfo.lines() {
            // `ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER_OPTIONS`
            let Some((before, after)) = line.split_once(" - ") else { continue };
            let fields: Vec<&str> = before.split(' ').collect();
            let mut rest = after.split(' ');
            let (Some(fstype), Some(_source), Some(super_options)) = (rest.next(), rest.next(), rest.next()) else {
                continue;
            };
            let Some(mount) = fields.get(4).map(|m| PathBuf::from(unescape(m))) else { continue };
            match fstype {
                "cgroup2" if found.unified.is_none() => {
                    let offered = controllers(&mount).unwrap_or_default();
                    found.unified = Some((mount, offered.split_whitespace().map(String::from).collect()));
                }
                "cgroup" => {
                    for option in super_options.split(',') {
                        if Controller::ALL.iter().any(|c| c.v1_name() == option) {
                            found.legacy.entry(option.to_string()).or_insert_with(|| mount.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        found
    }

    /// Where `controller` is to be used: the unified hierarchy when it offers it (or has it in
    /// its core and no v1 hierarchy holds it), else its v1 hierarchy; `None` where neither
    /// has it. A controller bound to a v1 hierarchy cannot be used on v2, which is why a v1
    /// hierarchy wins for the core ones.
    pub fn choose(&self, controller: Controller) -> Option<Place> {
        let legacy = self.legacy.get(controller.v1_name());
        if let Some((mount, offered)) = &self.unified {
            let offered_here = offered.contains(controller.v2_name());
            if offered_here || (controller.in_v2_core() && legacy.is_none()) {
                return Some(Place { version: Version::V2, mount: mount.clone() });
            }
        }
        legacy.map(|mount| Place { version: Version::V1, mount: mount.clone() })
    }

    /// The memory limit of this process's own memory group, bytes (the limit a unit's
    /// `MemoryMax` sets); `None` when it has none or it cannot be read.
    pub fn own_memory_limit(&self) -> Option<u64> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let Place { version, mount } = self.choose(Controller::Memory)?;
        let (file, wanted) = match version {
            Version::V2 => ("memory.max", ""),
            Version::V1 => ("memory.limit_in_bytes", "memory"),
        };
        // `ID:CONTROLLERS:PATH`: the unified hierarchy's line has no controllers.
        let path = own.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let matches =
                if wanted.is_empty() { controllers.is_empty() } else { controllers.split(',').any(|c| c == wanted) };
            matches.then(|| path.trim_start_matches('/').to_string())
        })?;
        let text = std::fs::read_to_string(mount.join(path).join(file)).ok()?;
        // v1 writes "no limit" as a page-rounded i64::MAX.
        text.trim().parse::<u64>().ok().filter(|&bytes| bytes < (1 << 60))
    }

    /// These hierarchies with only those of `version` kept (`None`: all of them), as
    /// `CgroupPlugin=cgroup/v1` or `cgroup/v2` asks.
    pub fn restricted_to(&self, version: Option<Version>) -> Hierarchies {
        match version {
            None => self.clone(),
            Some(Version::V1) => Hierarchies { unified: None, legacy: self.legacy.clone() },
            Some(Version::V2) => Hierarchies { unified: self.unified.clone(), legacy: BTreeMap::new() },
        }
    }

    /// Slurm's `CgroupPlugin` for this machine, as its autodetection picks it: `cgroup/v2`
    /// on a machine with only the unified hierarchy (or whose unified hierarchy offers
    /// memory), else `cgroup/v1` where a v1 hierarchy is mounted.
    pub fn plugin(&self) -> Option<Version> {
        match (&self.unified, self.legacy.is_empty()) {
            (Some(_), true) => Some(Version::V2),
            (Some((_, offered)), false) if offered.contains("memory") => Some(Version::V2),
            (_, false) => Some(Version::V1),
            (None, true) => None,
        }
    }
}

/// A mount point as mountinfo writes it, its `\040`-style escapes (space, tab, newline,
/// backslash) undone.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4).and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(byte) => {
                out.push(byte as char);
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Machines for the tests of this folder.
#[cfg(test)]
pub(crate) mod fixtures {
    /// This kind of machine: v1 controllers beside a v2 mount that offers only hugetlb.
    pub fn hybrid() -> super::Hierarchies {
        super::Hierarchies::from_mountinfo(super::tests::HYBRID, |_| Some("hugetlb\n".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This kind of machine: v1 controllers beside a v2 mount that offers only hugetlb.
    pub(super) const HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    /// A current distribution: the unified hierarchy alone.
    const UNIFIED: &str = "25 19 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

    #[test]
    fn a_hybrid_machine_uses_its_v1_hierarchies() {
        let h = Hierarchies::from_mountinfo(HYBRID, |_| Some("hugetlb\n".into()));
        assert_eq!(h.unified.as_ref().map(|(m, _)| m.as_path()), Some(Path::new("/sys/fs/cgroup/unified")));
        for c in Controller::ALL {
            let place = h.choose(c).unwrap_or_else(|| panic!("{c:?}"));
            assert_eq!(place.version, Version::V1, "{c:?}");
        }
        assert_eq!(h.choose(Controller::CpuAccounting).unwrap().mount, Path::new("/sys/fs/cgroup/cpuacct"));
        assert_eq!(h.plugin(), Some(Version::V1), "Slurm picks v1 on such a layout");
    }

    #[test]
    fn a_unified_machine_uses_v2_for_what_its_root_offers() {
        let h = Hierarchies::from_mountinfo(UNIFIED, |root| {
            assert_eq!(root, Path::new("/sys/fs/cgroup"));
            Some("cpuset cpu io memory pids\n".into())
        });
        for c in Controller::ALL {
            assert_eq!(h.choose(c).map(|p| p.version), Some(Version::V2), "{c:?}");
        }
        assert_eq!(h.plugin(), Some(Version::V2));
        // A root that does not offer memory (not delegated) leaves memory unconfined.
        let bare = Hierarchies::from_mountinfo(UNIFIED, |_| Some("cpu pids\n".into()));
        assert_eq!(bare.choose(Controller::Memory), None);
        assert_eq!(bare.choose(Controller::Freezer).map(|p| p.version), Some(Version::V2));
        assert_eq!(bare.choose(Controller::CpuAccounting).map(|p| p.version), Some(Version::V2), "cpu.stat is core");
    }

    #[test]
    fn a_hybrid_machine_restricted_to_v2_uses_the_unified_core() {
        let h = Hierarchies::from_mountinfo(HYBRID, |_| Some("hugetlb\n".into())).restricted_to(Some(Version::V2));
        assert_eq!(h.choose(Controller::Devices).map(|p| p.version), Some(Version::V2));
        assert_eq!(h.choose(Controller::Freezer).map(|p| p.mount), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(h.choose(Controller::Memory), None, "the unified mount offers no memory controller here");
        assert_eq!(h.plugin(), Some(Version::V2));
        let v1 = Hierarchies::from_mountinfo(HYBRID, |_| None).restricted_to(Some(Version::V1));
        assert_eq!((v1.unified, v1.legacy.len()), (None, 6));
    }

    #[test]
    fn no_cgroup_mount_offers_nothing() {
        let h = Hierarchies::from_mountinfo("22 1 0:5 / /proc rw - proc proc rw\n", |_| None);
        assert!(Controller::ALL.iter().all(|&c| h.choose(c).is_none()));
        assert_eq!(h.plugin(), None);
    }

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape("/a\\040b\\134c"), "/a b\\c");
        assert_eq!(unescape("/plain"), "/plain");
    }

    #[test]
    fn this_machine_is_read() {
        let h = Hierarchies::of_this_machine();
        // Whatever it has, each chosen place is a mounted directory.
        for c in Controller::ALL {
            if let Some(place) = h.choose(c) {
                assert!(place.mount.is_dir(), "{c:?} at {}", place.mount.display());
            }
        }
    }
}
