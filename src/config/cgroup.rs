//! The `[cgroup]` table of the configuration, named after Slurm's `cgroup.conf`, and what it
//! asks of containment with the mode's defaults filled in ([`Settings`]). What of it a machine
//! can have (`Settings::effective`, `Settings::slurm_keys`) is worked out by the supervisor's
//! cgroup code, beside the hierarchies it reads: reading the configuration probes nothing.

use serde::Deserialize;

/// Seconds between two looks at a running step's memory in its cgroup when the configuration
/// gives no `job_acct_gather_frequency`: Slurm's default `JobAcctGatherFrequency`.
pub const DEFAULT_SAMPLE_SECS: u64 = 30;

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
    /// `CgroupPlugin`: the hierarchies that may be used.
    pub plugin: PluginChoice,
    /// `ConstrainCores`: each job is pinned to the CPUs it was given.
    pub constrain_cores: bool,
    /// `ConstrainRAMSpace`: each job's memory is limited to what it was given.
    pub constrain_ram_space: bool,
    /// `AllowedRAMSpace`: that limit, in percent of what the job was given.
    pub allowed_ram_space: f64,
    /// `ConstrainSwapSpace`: each job's swap is limited too.
    pub constrain_swap_space: bool,
    /// `AllowedSwapSpace`: swap allowed above the memory limit, in percent of it.
    pub allowed_swap_space: f64,
    /// `ConstrainDevices`: each job may open only the GPU device files it was given.
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
