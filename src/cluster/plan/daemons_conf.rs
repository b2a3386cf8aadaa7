//! The smaller files: `cgroup.conf` from the box's `[cgroup]` table, `slurmdbd.conf` with
//! the database's password, and the systemd drop-in that lets slurmd start with no
//! slurm.conf of its own (configless), which some distributions' units refuse.

use super::Inputs;
use crate::config::cgroup::PluginChoice;

/// `cgroup.conf` from the box's `[cgroup]` settings.
pub fn cgroup_conf(inputs: &Inputs) -> String {
    let c = &inputs.config.cgroup;
    let yes = |b: bool| if b { "yes" } else { "no" };
    // Slurm's autodetection stops slurmd on a machine with v1 hierarchies beside an empty
    // v2 one ("Hybrid mode is not supported"): where a node has v1, the plan names it.
    let any_v1 = inputs.nodes.iter().any(|(_, f)| f.cgroup_version == Some(1));
    let plugin = match c.plugin {
        PluginChoice::Autodetect if any_v1 => "cgroup/v1",
        PluginChoice::Autodetect => "autodetect",
        PluginChoice::V1 => "cgroup/v1",
        PluginChoice::V2 => "cgroup/v2",
        PluginChoice::Disabled => "disabled",
    };
    let mut out = vec![
        "# cgroup.conf of the cluster, written by `slurmlet cluster plan` from the box's [cgroup] table.".to_string(),
        format!("CgroupPlugin={plugin}"),
        format!("ConstrainCores={}", yes(c.constrain_cores)),
        format!("ConstrainRAMSpace={}", yes(c.constrain_ram_space)),
        format!("ConstrainDevices={}", yes(c.constrain_devices)),
        format!("ConstrainSwapSpace={}", yes(c.constrain_swap_space)),
    ];
    if c.constrain_ram_space {
        out.push(format!("AllowedRAMSpace={}", c.allowed_ram_space));
    }
    if c.constrain_swap_space {
        out.push(format!("AllowedSwapSpace={}", c.allowed_swap_space));
    }
    out.join("\n") + "\n"
}

/// `slurmdbd.conf`: slurmdbd on the controller with MariaDB beside it; `password` is the
/// database user's.
pub fn slurmdbd_conf(inputs: &Inputs, password: &str) -> String {
    [
        "# slurmdbd.conf of the cluster, written by `slurmlet cluster plan`. It holds the database's".to_string(),
        "# password: keep it 0600, owned by slurm, and out of version control.".into(),
        "AuthType=auth/munge".into(),
        format!("DbdHost={}", inputs.controller),
        "SlurmUser=slurm".into(),
        "LogFile=/var/log/slurm/slurmdbd.log".into(),
        "PidFile=/run/slurmdbd/slurmdbd.pid".into(),
        "StorageType=accounting_storage/mysql".into(),
        "StorageHost=localhost".into(),
        "StorageUser=slurm".into(),
        format!("StoragePass={password}"),
        "StorageLoc=slurm_acct_db".into(),
    ]
    .join("\n")
        + "\n"
}

/// The drop-in for `slurmd.service`: no condition on `/etc/slurm/slurm.conf` (older units
/// have one, and a configless node has no such file), and the controller to fetch the
/// configuration from. `/etc/default/slurmd` still wins where it sets `SLURMD_OPTIONS`.
pub fn slurmd_dropin(inputs: &Inputs) -> String {
    format!(
        "# Written by `slurmlet cluster plan`: slurmd fetches its configuration from {ctl} (configless).\n\
         [Unit]\nConditionPathExists=\n\n[Service]\nEnvironment=\"SLURMD_OPTIONS=--conf-server {ctl}\"\n",
        ctl = inputs.controller
    )
}
