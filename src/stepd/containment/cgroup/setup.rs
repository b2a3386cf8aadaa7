//! Whether and how the daemon contains its jobs in cgroups, worked out once at its start
//! from the `[cgroup]` settings, its mode, its rights and the machine's hierarchies; and
//! the [`CgroupPlan`] of each job's and step's supervisor, made from it.

use super::hierarchy::{Controller, Hierarchies};
use super::plan::{CgroupPlan, Limits};
use crate::config::cgroup::{PluginChoice, Settings, DEFAULT_SAMPLE_SECS};
use crate::config::mode::{default_state_dir, Mode};
use std::path::PathBuf;

/// The group below each hierarchy's root that holds the jobs' groups of the machine's
/// shared daemon.
pub const BASE: &str = "slurmlet";

/// The group that holds the jobs' groups of a daemon: [`BASE`] for the machine's shared
/// daemon in its usual state directory, and otherwise `slurmlet-UID-HASH`, `HASH` naming its
/// state directory `state_dir` (a user may run several daemons, each with its own job ids,
/// whose `job_N` groups must not meet).
pub fn base_for(system_mode: bool, uid: u32, state_dir: &std::path::Path) -> PathBuf {
    if system_mode && state_dir == default_state_dir(Mode::System) {
        return PathBuf::from(BASE);
    }
    // FNV-1a: stable across builds and machines, unlike the standard library's hasher.
    let hash = state_dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    PathBuf::from(format!("{BASE}-{uid}-{:08x}", hash as u32))
}

/// How the daemon contains its jobs in cgroups.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupSetup {
    /// The hierarchies it may use (as `CgroupPlugin` lets).
    machine: Hierarchies,
    /// What it enforces: the settings asked for, less what the machine cannot have.
    settings: Settings,
    /// The group below each hierarchy's root that holds the jobs' groups ([`base_for`]).
    base: PathBuf,
    /// Seconds between two looks at a running step's memory ([`CgroupPlan::sample_secs`]).
    sample_secs: u64,
    /// Whether the groups are in a subtree delegated to a daemon that is not root.
    delegated: bool,
}

/// Why the daemon does not contain its jobs in cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoCgroups {
    /// `CgroupPlugin=disabled`.
    Disabled,
    /// A user's own daemon run by root without a `[cgroup]` table: it keeps to process
    /// groups.
    NotAsked,
    /// The daemon does not run as root, and no cgroup was delegated to it.
    NotDelegated,
    /// No cgroup hierarchy it could use is mounted.
    NoHierarchy,
    /// Its groups could not be made (a read-only `/sys/fs/cgroup`, as in most containers):
    /// the text says where and why.
    NotWritable(String),
}

impl CgroupSetup {
    /// The setup of a daemon asked for `asked`, in system mode or not, running as `root` or
    /// not, on `machine`, its jobs' groups below `base`.
    pub fn work_out(
        asked: &Settings,
        system_mode: bool,
        root: bool,
        machine: &Hierarchies,
        base: PathBuf,
        delegated: Option<super::delegation::Delegated>,
    ) -> Result<CgroupSetup, NoCgroups> {
        let machine = asked.plugin.hierarchies(machine);
        if asked.plugin == PluginChoice::Disabled {
            return Err(NoCgroups::Disabled);
        }
        if !root {
            let subtree = delegated.filter(|_| machine.unified.is_some()).ok_or(NoCgroups::NotDelegated)?;
            return Ok(CgroupSetup::in_delegated(asked, subtree));
        }
        if !system_mode && !asked.configured {
            return Err(NoCgroups::NotAsked);
        }
        let tracking = [Controller::Freezer, Controller::Pids, Controller::Memory, Controller::CpuAccounting];
        if !tracking.iter().any(|&c| machine.choose(c).is_some()) {
            return Err(NoCgroups::NoHierarchy);
        }
        let (settings, _) = asked.effective(&machine);
        Ok(CgroupSetup { machine, settings, base, sample_secs: DEFAULT_SAMPLE_SECS, delegated: false })
    }

    /// The setup of a daemon that is not root, in the subtree `subtree` delegated to it on
    /// the unified hierarchy: the controllers its own group has, its jobs' groups
    /// below its `jobs` group, and no device filter (loading one needs root).
    fn in_delegated(asked: &Settings, subtree: super::delegation::Delegated) -> CgroupSetup {
        let own = subtree.mount.join(&subtree.own);
        let offered = std::fs::read_to_string(own.join("cgroup.controllers")).unwrap_or_default();
        let machine = Hierarchies {
            unified: Some((subtree.mount.clone(), offered.split_whitespace().map(String::from).collect())),
            legacy: Default::default(),
        };
        let (mut settings, _) = asked.effective(&machine);
        settings.constrain_devices = false;
        CgroupSetup { machine, settings, base: subtree.jobs_base(), sample_secs: DEFAULT_SAMPLE_SECS, delegated: true }
    }

    /// The one warning line of a daemon asked for `asked` whose setup came out as `setup`
    /// on `machine`: the constraints asked for that are not enforced, and why.
    pub fn warning(asked: &Settings, setup: &Result<CgroupSetup, NoCgroups>, machine: &Hierarchies) -> Option<String> {
        let asked_for: Vec<&'static str> = [
            (asked.constrain_cores, "ConstrainCores"),
            (asked.constrain_ram_space, "ConstrainRAMSpace"),
            (asked.constrain_swap_space, "ConstrainSwapSpace"),
            (asked.constrain_devices, "ConstrainDevices"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        let why = match setup {
            Ok(s) if s.delegated => {
                let (_, mut lost) = asked.effective(&s.machine);
                lost.retain(|&name| name != "ConstrainDevices");
                let missing = super::settings::warning(&lost, &s.machine);
                let devices = asked.constrain_devices.then(|| {
                    "ConstrainDevices asked for but not enforced: filtering device files needs root (CAP_BPF)"
                        .to_string()
                });
                let lines: Vec<String> = missing.into_iter().chain(devices).collect();
                return (!lines.is_empty()).then(|| lines.join("; "));
            }
            Ok(_) => {
                let (_, lost) = asked.effective(machine);
                return super::settings::warning(&lost, &asked.plugin.hierarchies(machine));
            }
            Err(NoCgroups::NotAsked) => return None,
            Err(NoCgroups::Disabled) => "CgroupPlugin=disabled".to_string(),
            Err(NoCgroups::NotDelegated) => {
                "the daemon does not run as root and no cgroup was delegated to it".to_string()
            }
            Err(NoCgroups::NoHierarchy) => "no cgroup hierarchy is mounted".to_string(),
            Err(NoCgroups::NotWritable(why)) => why.clone(),
        };
        Some(if asked_for.is_empty() {
            // Nothing asked of the [cgroup] table, but jobs' --mem and GPUs are still limits.
            format!("jobs' memory limits and GPU device files are not enforced: {why}")
        } else {
            format!("{} asked for but not enforced: {why}", asked_for.join(", "))
        })
    }

    /// Makes the group that holds the jobs' groups in each hierarchy used (and, on v2, lets
    /// it hand its children the controllers), so that a machine where groups cannot be made
    /// is known at the daemon's start rather than at each job's.
    pub fn prepare(&self) -> Result<(), NoCgroups> {
        let mounts: std::collections::BTreeSet<(PathBuf, super::hierarchy::Version)> =
            Controller::ALL.iter().filter_map(|&c| self.machine.choose(c)).map(|p| (p.mount, p.version)).collect();
        for (mount, version) in mounts {
            let place = super::hierarchy::Place { version, mount };
            super::group::Group::create(&place, &self.base).map_err(|e| {
                NoCgroups::NotWritable(format!("cannot make cgroup {}: {e}", place.mount.join(&self.base).display()))
            })?;
        }
        Ok(())
    }

    /// This setup with `secs` between two looks at a running step's memory (0: none).
    pub fn sampling_every(self, secs: u64) -> CgroupSetup {
        CgroupSetup { sample_secs: secs, ..self }
    }

    /// Removes the group that holds the jobs' groups, in each hierarchy, where it is empty
    /// (the daemon stops with no job running).
    pub fn remove_base(&self) {
        let mounts: std::collections::BTreeSet<PathBuf> =
            Controller::ALL.iter().filter_map(|&c| self.machine.choose(c)).map(|p| p.mount).collect();
        for mount in mounts {
            let _ = std::fs::remove_dir(mount.join(&self.base));
        }
    }

    /// Whether each job gets a memory group of its own (and so leaves the daemon's): where
    /// the machine has the memory controller, every job's plan uses it.
    pub fn moves_jobs_out_of_memory_group(&self) -> bool {
        self.machine.choose(super::hierarchy::Controller::Memory).is_some()
    }

    /// What is enforced.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The keys `scontrol show config` prints under `Cgroup Support Configuration` for the
    /// daemon asked for `asked` whose setup is `setup`: what it enforces, or
    /// `CgroupPlugin=disabled` and no constraint when it keeps to process groups.
    pub fn slurm_keys(setup: Option<&CgroupSetup>, asked: &Settings) -> Vec<(&'static str, String)> {
        match setup {
            Some(s) => s.settings.slurm_keys(&s.machine),
            None => Settings {
                constrain_cores: false,
                constrain_ram_space: false,
                constrain_swap_space: false,
                constrain_devices: false,
                ..*asked
            }
            .slurm_keys(&Hierarchies::default()),
        }
    }

    /// The limits of a share of `cpu_ids` and `mem_mb` MB, as the settings enforce them.
    pub fn limits(&self, cpu_ids: &[u32], mem_mb: u64) -> Limits {
        let s = &self.settings;
        let memory = (s.constrain_ram_space && mem_mb > 0)
            .then(|| (mem_mb as f64 * 1024.0 * 1024.0 * s.allowed_ram_space / 100.0) as u64);
        let swap =
            // Saturating, as the float conversions are: the percentages are bounded where the
            // configuration is read, the memory a job asks for only by the node's.
            memory.filter(|_| s.constrain_swap_space).map(|m| m.saturating_add((m as f64 * s.allowed_swap_space / 100.0) as u64));
        Limits {
            cpus: if s.constrain_cores { cpu_ids.to_vec() } else { Vec::new() },
            memory_bytes: memory,
            swap_bytes: swap,
        }
    }

    /// The plan of step `step` (`batch`, `interactive`, `0`…) of job `job_id`: the job's
    /// limits `job`, the step's `step_limits`, and the device files `denied` to the job
    /// (applied only where devices are constrained).
    pub fn plan(&self, job_id: u32, step: &str, job: Limits, step_limits: Limits, denied: Vec<PathBuf>) -> CgroupPlan {
        let s = &self.settings;
        // Each hierarchy costs every job a group in it: only those that serve are used (the
        // freezer lists and ends the processes; pids only stands in for a missing freezer).
        let wanted = [
            (Controller::Freezer, true),
            (Controller::Pids, self.machine.choose(Controller::Freezer).is_none()),
            (Controller::Memory, true),
            (Controller::CpuAccounting, true),
            (Controller::Cpuset, s.constrain_cores && !step_limits.cpus.is_empty()),
            (Controller::Devices, s.constrain_devices && !denied.is_empty()),
        ];
        let places = wanted
            .into_iter()
            .filter(|(_, on)| *on)
            .filter_map(|(c, _)| self.machine.choose(c).map(|p| (c, p)))
            .collect();
        CgroupPlan {
            places,
            job_group: self.base.join(format!("job_{job_id}")),
            step: step.to_string(),
            job_limits: job,
            step_limits,
            denied_devices: if s.constrain_devices { denied } else { Vec::new() },
            sample_secs: self.sample_secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> PathBuf {
        PathBuf::from(BASE)
    }

    #[test]
    fn each_users_daemon_has_a_base_of_its_own() {
        assert_eq!(base_for(true, 0, "/var/lib/slurmlet".as_ref()), PathBuf::from("slurmlet"));
        assert_ne!(base_for(true, 0, "/srv/other".as_ref()), PathBuf::from("slurmlet"), "a second system daemon");
        let a = base_for(false, 1000, "/home/a/.local/state/slurmlet".as_ref());
        let b = base_for(false, 1000, "/tmp/other".as_ref());
        assert!(a.to_string_lossy().starts_with("slurmlet-1000-") && a != b, "{a:?} {b:?}");
        assert_eq!(a, base_for(false, 1000, "/home/a/.local/state/slurmlet".as_ref()));
    }

    use super::super::hierarchy::fixtures::hybrid;

    #[test]
    fn a_users_daemon_keeps_to_process_groups_unless_asked() {
        let machine = hybrid();
        let user = Settings::resolve(None, false);
        assert_eq!(CgroupSetup::work_out(&user, false, true, &machine, base(), None), Err(NoCgroups::NotAsked));
        assert_eq!(CgroupSetup::warning(&user, &Err(NoCgroups::NotAsked), &machine), None);
        assert_eq!(
            CgroupSetup::warning(&user, &Err(NoCgroups::NotDelegated), &machine).unwrap(),
            "jobs' memory limits and GPU device files are not enforced: the daemon does not run as root and no cgroup was delegated to it"
        );
        let table = toml::from_str("constrain_ram_space = true").unwrap();
        let asked = Settings::resolve(Some(table), false);
        assert!(
            CgroupSetup::work_out(&asked, false, true, &machine, base(), None).is_ok(),
            "root may use the hierarchies"
        );
        let refused = CgroupSetup::work_out(&asked, false, false, &machine, base(), None);
        assert_eq!(refused, Err(NoCgroups::NotDelegated));
        assert_eq!(
            CgroupSetup::warning(&asked, &refused, &machine).unwrap(),
            "ConstrainRAMSpace asked for but not enforced: the daemon does not run as root and no cgroup was delegated to it"
        );
    }

    #[test]
    fn a_plan_uses_what_is_enforced() {
        let machine = hybrid();
        let system = Settings::resolve(None, true);
        let setup = CgroupSetup::work_out(&system, true, true, &machine, base(), None).unwrap();
        let limits = setup.limits(&[1], 64);
        assert_eq!(limits, Limits { cpus: vec![1], memory_bytes: Some(64 << 20), swap_bytes: None });
        let plan = setup.plan(7, "batch", limits.clone(), limits, vec![PathBuf::from("/dev/nvidia1")]);
        assert_eq!(plan.job_group, PathBuf::from("slurmlet/job_7"));
        let controllers: Vec<Controller> = plan.places.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            controllers,
            [
                Controller::Freezer,
                Controller::Memory,
                Controller::CpuAccounting,
                Controller::Cpuset,
                Controller::Devices
            ]
        );
        // A hybrid machine filters them through its v1 devices hierarchy.
        let devices = plan.place(Controller::Devices).unwrap();
        assert_eq!((devices.version, plan.denied_devices.len()), (super::super::hierarchy::Version::V1, 1));
        // On the v2 mount alone, freezing, CPU time and devices are its core's.
        let v2: Settings = Settings::resolve(Some(toml::from_str("cgroup_plugin = \"cgroup/v2\"").unwrap()), true);
        let setup = CgroupSetup::work_out(&v2, true, true, &machine, base(), None).unwrap();
        assert!(!setup.settings().constrain_ram_space, "the unified mount offers no memory controller here");
        let warning = CgroupSetup::warning(&v2, &Ok(setup), &machine).unwrap();
        assert!(warning.starts_with("ConstrainCores, ConstrainRAMSpace asked for but not enforced"), "{warning}");
    }

    #[test]
    fn a_daemon_that_is_not_root_uses_the_subtree_delegated_to_it() {
        use super::super::delegation::Delegated;
        let mount = tempfile::tempdir().unwrap();
        let own = mount.path().join("app.slice/slurmlet.service");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        let machine =
            Hierarchies { unified: Some((mount.path().to_path_buf(), Default::default())), ..Default::default() };
        let subtree = Delegated { mount: mount.path().to_path_buf(), own: PathBuf::from("app.slice/slurmlet.service") };
        let asked = Settings::resolve(
            Some(toml::from_str("constrain_ram_space = true\nconstrain_devices = true").unwrap()),
            false,
        );
        let setup = CgroupSetup::work_out(&asked, false, false, &machine, base(), Some(subtree.clone()));
        let s = setup.as_ref().expect("contained in the delegated subtree");
        assert!(s.settings().constrain_ram_space, "its own group has memory");
        assert!(!s.settings().constrain_devices, "device filters need root");
        let plan = s.plan(3, "batch", Limits::default(), Limits::default(), Vec::new());
        assert_eq!(plan.job_group, PathBuf::from("app.slice/slurmlet.service/jobs/job_3"));
        assert_eq!(
            CgroupSetup::warning(&asked, &setup, &machine).unwrap(),
            "ConstrainDevices asked for but not enforced: filtering device files needs root (CAP_BPF)"
        );
        // Without a subtree, it says so.
        assert_eq!(CgroupSetup::work_out(&asked, false, false, &machine, base(), None), Err(NoCgroups::NotDelegated));
    }
}
