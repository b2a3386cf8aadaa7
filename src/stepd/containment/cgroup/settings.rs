//! What of the configuration's `[cgroup]` settings ([`crate::config::cgroup`]) this machine
//! can have ([`Settings::effective`]): the keys `scontrol show config` prints under `Cgroup
//! Support Configuration`, and the one warning line for what was asked for and cannot be had.
//! The configuration reads the table without knowing the machine; the hierarchies it is
//! matched against are this module's neighbours', so the matching lives here.

use super::hierarchy::{Controller, Hierarchies, Version};
use crate::config::cgroup::{PluginChoice, Settings};

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

impl Settings {
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
