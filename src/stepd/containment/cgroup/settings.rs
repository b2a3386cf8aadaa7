//! The `[cgroup]` table of the configuration, named after Slurm's `cgroup.conf`, and what
//! of it this machine can have ([`Settings::effective`]): the keys `scontrol show config`
//! prints under `Cgroup Support Configuration`, and the one warning line for what was asked
//! for and cannot be had.

use super::hierarchy::{Controller, Hierarchies, Version};
use serde::Deserialize;

/// `CgroupPlugin`: which cgroup hierarchies to use.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
pub enum PluginChoice {
    /// Whatever the machine offers, per controller (the default).
    #[default]
    #[serde(rename = "autodetect")]
    Autodetect,
    /// The legacy v1 hierarchies only.
    #[serde(rename = "cgroup/v1")]
    V1,
    /// The unified v2 hierarchy only.
    #[serde(rename = "cgroup/v2")]
    V2,
    /// No cgroups: jobs are held by process groups alone.
    #[serde(rename = "disabled")]
    Disabled,
}

impl PluginChoice {
    /// What of `machine` this choice lets be used.
    pub fn hierarchies(self, machine: &Hierarchies) -> Hierarchies {
        match self {
            PluginChoice::Autodetect => machine.clone(),
            PluginChoice::V1 => machine.restricted_to(Some(Version::V1)),
            PluginChoice::V2 => machine.restricted_to(Some(Version::V2)),
            PluginChoice::Disabled => Hierarchies::default(),
        }
    }
}

/// The `[cgroup]` table as written; absent keys take [`Settings::defaults`].
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CgroupTable {
    /// `CgroupPlugin`: `autodetect` (default), `cgroup/v1`, `cgroup/v2` or `disabled`.
    pub cgroup_plugin: Option<PluginChoice>,
    /// `ConstrainCores`: pin each job to the CPUs it was given.
    pub constrain_cores: Option<bool>,
    /// `ConstrainRAMSpace`: limit each job's memory to what it was given.
    pub constrain_ram_space: Option<bool>,
    /// `AllowedRAMSpace`: the limit, in percent of what the job was given (default 100).
    pub allowed_ram_space: Option<f64>,
    /// `ConstrainSwapSpace`: limit each job's swap too.
    pub constrain_swap_space: Option<bool>,
    /// `AllowedSwapSpace`: swap allowed above the memory limit, in percent of it (default 0).
    pub allowed_swap_space: Option<f64>,
    /// `ConstrainDevices`: let each job open only the GPU device files it was given.
    pub constrain_devices: Option<bool>,
}

/// What the configuration asks of containment, its defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Whether the configuration has a `[cgroup]` table: a user's own daemon contains its
    /// jobs in cgroups only when asked to.
    pub configured: bool,
    /// `CgroupPlugin`.
    pub plugin: PluginChoice,
    /// `ConstrainCores`.
    pub constrain_cores: bool,
    /// `ConstrainRAMSpace`.
    pub constrain_ram_space: bool,
    /// `AllowedRAMSpace`, percent.
    pub allowed_ram_space: f64,
    /// `ConstrainSwapSpace`.
    pub constrain_swap_space: bool,
    /// `AllowedSwapSpace`, percent.
    pub allowed_swap_space: f64,
    /// `ConstrainDevices`.
    pub constrain_devices: bool,
}

impl Settings {
    /// The defaults: a daemon shared by the machine's users (`system` mode) constrains
    /// cores, memory and devices; a user's own daemon asks for none of them (it uses what
    /// it may where the user chooses to). Swap is not constrained, as in Slurm.
    pub fn defaults(system_mode: bool) -> Settings {
        Settings {
            configured: false,
            plugin: PluginChoice::Autodetect,
            constrain_cores: system_mode,
            constrain_ram_space: system_mode,
            allowed_ram_space: 100.0,
            constrain_swap_space: false,
            allowed_swap_space: 0.0,
            constrain_devices: system_mode,
        }
    }

    /// `table` over the defaults of the mode.
    pub fn resolve(table: Option<CgroupTable>, system_mode: bool) -> Settings {
        let d = Settings::defaults(system_mode);
        let t = table.unwrap_or_default();
        Settings {
            configured: table.is_some(),
            plugin: t.cgroup_plugin.unwrap_or(d.plugin),
            constrain_cores: t.constrain_cores.unwrap_or(d.constrain_cores),
            constrain_ram_space: t.constrain_ram_space.unwrap_or(d.constrain_ram_space),
            allowed_ram_space: t.allowed_ram_space.unwrap_or(d.allowed_ram_space),
            constrain_swap_space: t.constrain_swap_space.unwrap_or(d.constrain_swap_space),
            allowed_swap_space: t.allowed_swap_space.unwrap_or(d.allowed_swap_space),
            constrain_devices: t.constrain_devices.unwrap_or(d.constrain_devices),
        }
    }

    /// What of these settings `machine` can have: each constraint stays on only where the
    /// controller it needs is there; and the constraints asked for that cannot be had.
    pub fn effective(&self, machine: &Hierarchies) -> (Settings, Vec<&'static str>) {
        let machine = &self.plugin.hierarchies(machine);
        let mut on = *self;
        let mut lost = Vec::new();
        let mut need = |asked: &mut bool, controller: Controller, name: &'static str| {
            if *asked && machine.choose(controller).is_none() {
                *asked = false;
                lost.push(name);
            }
        };
        need(&mut on.constrain_cores, Controller::Cpuset, "ConstrainCores");
        need(&mut on.constrain_ram_space, Controller::Memory, "ConstrainRAMSpace");
        need(&mut on.constrain_swap_space, Controller::Memory, "ConstrainSwapSpace");
        need(&mut on.constrain_devices, Controller::Devices, "ConstrainDevices");
        (on, lost)
    }

    /// The keys `scontrol show config` prints under `Cgroup Support Configuration`, in
    /// Slurm's order (sorted by name), with these values on `machine`.
    pub fn slurm_keys(&self, machine: &Hierarchies) -> Vec<(&'static str, String)> {
        let machine = &self.plugin.hierarchies(machine);
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
        let percent = |p: f64| format!("{p:.1}%");
        let plugin = machine.plugin().map_or("disabled", Version::plugin).to_string();
        let mountpoint = match machine.plugin() {
            Some(Version::V2) => machine.unified.as_ref().map(|(m, _)| m.display().to_string()),
            _ => machine.legacy.values().next().and_then(|m| m.parent()).map(|p| p.display().to_string()),
        };
        let mut keys = vec![
            ("AllowedRAMSpace", percent(self.allowed_ram_space)),
            ("AllowedSwapSpace", percent(self.allowed_swap_space)),
            ("CgroupMountpoint", mountpoint.unwrap_or_else(|| "/sys/fs/cgroup".into())),
            ("CgroupPlugin", plugin),
            ("ConstrainCores", yes_no(self.constrain_cores)),
            ("ConstrainDevices", yes_no(self.constrain_devices)),
            ("ConstrainRAMSpace", yes_no(self.constrain_ram_space)),
            ("ConstrainSwapSpace", yes_no(self.constrain_swap_space)),
        ];
        keys.sort_by_key(|(k, _)| k.to_ascii_lowercase());
        keys
    }
}

/// The one line that says which constraints asked for cannot be had here, if any
/// (`machine` as the settings' `CgroupPlugin` lets it be used).
pub fn warning(lost: &[&str], machine: &Hierarchies) -> Option<String> {
    if lost.is_empty() {
        return None;
    }
    let what = match machine.plugin() {
        None => "no cgroup hierarchy is mounted".to_string(),
        Some(v) => format!("this machine's {} hierarchy lacks their controllers", v.plugin()),
    };
    Some(format!("{} asked for but not enforced: {what}", lost.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::hierarchy::fixtures::hybrid;

    #[test]
    fn defaults_follow_the_mode_and_the_table_wins() {
        assert!(Settings::defaults(true).constrain_ram_space);
        assert!(!Settings::defaults(false).constrain_ram_space);
        let table: CgroupTable = toml::from_str("constrain_devices = false\nallowed_ram_space = 90.0").unwrap();
        let s = Settings::resolve(Some(table), true);
        assert!(s.constrain_cores && !s.constrain_devices);
        assert_eq!(s.allowed_ram_space, 90.0);
        assert!(toml::from_str::<CgroupTable>("constrain_ram = true").is_err(), "an unknown key is refused");
    }

    #[test]
    fn slurms_keys_in_slurms_order() {
        let keys = Settings::defaults(true).slurm_keys(&hybrid());
        let names: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "AllowedRAMSpace",
                "AllowedSwapSpace",
                "CgroupMountpoint",
                "CgroupPlugin",
                "ConstrainCores",
                "ConstrainDevices",
                "ConstrainRAMSpace",
                "ConstrainSwapSpace"
            ]
        );
        let value = |k: &str| keys.iter().find(|(n, _)| *n == k).unwrap().1.clone();
        assert_eq!(value("AllowedRAMSpace"), "100.0%");
        assert_eq!(value("CgroupPlugin"), "cgroup/v1");
        assert_eq!(value("CgroupMountpoint"), "/sys/fs/cgroup");
        assert_eq!(value("ConstrainSwapSpace"), "no");
    }

    #[test]
    fn what_the_machine_lacks_is_told_in_one_line() {
        let asked = Settings::defaults(true);
        let (on, lost) = asked.effective(&hybrid());
        assert_eq!((on, lost.len()), (asked, 0), "the hybrid machine has every controller");
        let none = Hierarchies::default();
        let (on, lost) = asked.effective(&none);
        assert!(!on.constrain_cores && !on.constrain_ram_space && !on.constrain_devices);
        assert_eq!(
            warning(&lost, &none).unwrap(),
            "ConstrainCores, ConstrainRAMSpace, ConstrainDevices asked for but not enforced: no cgroup hierarchy is mounted"
        );
        assert_eq!(warning(&[], &none), None);
    }
}
