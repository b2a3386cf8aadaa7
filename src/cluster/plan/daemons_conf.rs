//! The smaller files: `cgroup.conf` from the box's `[cgroup]` table, `slurmdbd.conf` with
//! the database's password, and the systemd drop-in that lets slurmd start with no
//! slurm.conf of its own (configless), which some distributions' units refuse.

use super::model::Inputs;
use crate::config::cgroup::PluginChoice;

/// `cgroup.conf` from the box's `[cgroup]` settings (a shared daemon's where it has none).
pub fn cgroup_conf(inputs: &Inputs) -> String {
    // A cluster is shared: a box that said nothing of cgroups (a user's own daemon, which
    // confines nothing unless asked) gets what a shared daemon does, its jobs confined to
    // their cores, memory and GPUs.
    let config = inputs.config;
    let c = &if config.cgroup.configured || config.mode == crate::config::Mode::System {
        config.cgroup
    } else {
        crate::config::cgroup::Settings::defaults(true)
    };
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
    let [jwt_types, jwt_parameters] = super::jwt_lines();
    [
        "# slurmdbd.conf of the cluster, written by `slurmlet cluster plan`. It holds the database's".to_string(),
        "# password: keep it 0600, owned by slurm, and out of version control.".into(),
        "AuthType=auth/munge".into(),
        jwt_types,
        jwt_parameters,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::facts::sample;
    use crate::config::Config;

    fn inputs(config: &Config, cgroup_version: u8) -> Inputs<'_> {
        let mut node = sample("n1");
        node.cgroup_version = Some(cgroup_version);
        Inputs {
            config,
            cluster: "lab".into(),
            controller: "ctl".into(),
            nodes: vec![("n1".into(), node)],
            accounting: true,
            transport: "ssh".into(),
        }
    }

    #[test]
    fn a_box_that_said_nothing_of_cgroups_gets_a_shared_machines_confinement() {
        let config = Config::load(std::path::Path::new("/nonexistent/slurmlet.toml")).unwrap();
        let text = cgroup_conf(&inputs(&config, 2));
        for line in ["CgroupPlugin=autodetect", "ConstrainCores=yes", "ConstrainRAMSpace=yes", "ConstrainDevices=yes"] {
            assert!(text.lines().any(|l| l == line), "{line} not in {text}");
        }
        assert!(cgroup_conf(&inputs(&config, 1)).contains("CgroupPlugin=cgroup/v1\n"));
    }

    #[test]
    fn the_boxs_own_table_is_carried() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.toml");
        std::fs::write(&path, "[cgroup]\nconstrain_cores = true\nconstrain_devices = false\n").unwrap();
        let config = Config::load(&path).unwrap();
        let text = cgroup_conf(&inputs(&config, 2));
        assert!(text.contains("ConstrainCores=yes\n") && text.contains("ConstrainDevices=no\n"), "{text}");
    }
}
