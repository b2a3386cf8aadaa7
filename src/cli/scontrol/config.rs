//! `scontrol show config`: the daemon's configuration in Slurm's layout, from
//! `GET /slurmlet/v1/config`.
//!
//! `Configuration data as of TIME`, then one `Key = Value` line per setting with the key
//! padded to 23 columns, in Slurm's order; then a blank line and the controller's ping line,
//! as Slurm ends it. Only settings that mean something here are listed; the ones that name
//! Slurm plugins name the behaviour slurmlet has (backfill scheduling, consumable TRES
//! selection, process-group tracking). slurmlet's daemon adds its own version and where its
//! GPUs came from (`SLURMLET_VERSION`, `SLURMLET_GPU_SOURCE`), and, when MPS is asked for,
//! what runs shard jobs' MPS servers (`SLURMLET_MPS`).

use crate::api::types::{ConfigInfo, Version};

/// The version of Slurm whose interfaces the daemon speaks: `26.05.0`.
pub fn slurm_version(v: &Version) -> String {
    format!("{}.{}.{}", v.major, v.minor, v.micro)
}

/// The `Key = Value` pairs, in Slurm's order.
fn pairs(c: &ConfigInfo, version: &str, own: Option<&str>) -> Vec<(&'static str, String)> {
    let secs = |n: u32| format!("{n} sec");
    let or_null = |s: &str| if s.is_empty() { "(null)".to_string() } else { s.to_string() };
    let (def_mem_key, def_mem) = match c.def_mem_per_cpu {
        Some(mb) => ("DefMemPerCPU", mb.to_string()),
        None => ("DefMemPerNode", "UNLIMITED".to_string()),
    };
    let mut pairs = vec![
        ("AccountingStorageType", "accounting_storage/slurmlet".into()),
        ("AuthAltTypes", "auth/jwt".into()),
        ("BOOT_TIME", crate::sys::format_local_time(c.boot_time)),
        ("ClusterName", c.cluster_name.clone()),
        (def_mem_key, def_mem),
        ("EnforcePartLimits", "NO".into()),
        ("FirstJobId", "1".into()),
        ("GresTypes", or_null(&c.gres_types)),
        ("InactiveLimit", secs(0)),
        ("JobAcctGatherType", "jobacct_gather/none".into()),
        ("KillWait", secs(c.kill_wait)),
        ("MaxArraySize", c.max_array_size.to_string()),
        ("MessageTimeout", secs(10)),
        ("MinJobAge", secs(c.min_job_age)),
        ("MpiDefault", "none".into()),
        ("OverTimeLimit", "0 min".into()),
        ("PreemptMode", "OFF".into()),
        ("PreemptType", "preempt/none".into()),
        ("PriorityType", "priority/basic".into()),
        ("PrivateData", if c.private_data.is_empty() { "none".into() } else { c.private_data.join(",") }),
        ("ProctrackType", "proctrack/pgid".into()),
        ("SchedulerParameters", "(null)".into()),
        ("SchedulerType", "sched/backfill".into()),
        ("SelectType", "select/cons_tres".into()),
        ("SelectTypeParameters", "CR_CORE_MEMORY".into()),
        ("SlurmUser", format!("{}({})", c.slurm_user_name, c.slurm_user_id)),
        ("SlurmctldHost[0]", c.control_host.clone()),
        ("SLURM_VERSION", version.to_string()),
        ("StateSaveLocation", c.state_save_location.clone()),
        ("TaskPlugin", "task/none".into()),
    ];
    if let Some(own) = own {
        let at = pairs.iter().position(|(k, _)| *k == "SLURM_VERSION").map_or(pairs.len(), |i| i + 1);
        pairs.insert(at, ("SLURMLET_VERSION", own.to_string()));
        pairs.insert(at + 1, ("SLURMLET_GPU_SOURCE", or_null(&c.gpu_source)));
        if !c.mps.is_empty() {
            pairs.insert(at + 2, ("SLURMLET_MPS", c.mps.clone()));
        }
    }
    pairs
}

/// The whole `show config` text: `version` is the Slurm release followed, `release` the
/// server's (`slurmlet X.Y.Z` for slurmlet's daemon, whose version is then shown too), `ping`
/// the controller's ping line that ends it.
pub fn render(c: &ConfigInfo, version: &str, release: &str, ping: &str) -> String {
    let mut out = format!("Configuration data as of {}\n", crate::sys::format_local_time(c.last_update));
    for (key, value) in pairs(c, version, release.strip_prefix("slurmlet ")) {
        out.push_str(&format!("{key:<23} = {value}\n"));
    }
    if !c.cgroup.is_empty() {
        out.push_str("\nCgroup Support Configuration:\n");
        for (key, value) in &c.cgroup {
            out.push_str(&format!("{key:<23} = {value}\n"));
        }
    }
    out.push('\n');
    out.push_str(ping);
    out.push('\n');
    out
}

/// Runs `scontrol show config`.
pub fn run() -> i32 {
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.config() {
        Ok(reply) => {
            let ping = super::ping::line(&reply.config.control_host, true);
            let text =
                render(&reply.config, &slurm_version(&reply.meta.slurm.version), &reply.meta.slurm.release, &ping);
            crate::cli::format::emit_text(&text);
            0
        }
        Err(e @ crate::api::client_error::ClientError::Unsupported(_)) => {
            crate::cli::error("scontrol", &e.to_string());
            1
        }
        Err(e) => {
            crate::cli::error("scontrol", &format!("slurm_load_ctl_conf error: {e}"));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ConfigInfo {
        ConfigInfo {
            cluster_name: "refalt".into(),
            control_host: "vm".into(),
            boot_time: 1_795_311_632,
            last_update: 1_795_311_632,
            kill_wait: 5,
            min_job_age: 300,
            max_array_size: 1001,
            def_mem_per_cpu: Some(1000),
            gres_types: "gpu".into(),
            gpu_source: "nvml".into(),
            mps: String::new(),
            private_data: Vec::new(),
            state_save_location: "/var/lib/slurmlet".into(),
            slurm_user_id: 1000,
            slurm_user_name: "alice".into(),
            cgroup: Vec::new(),
        }
    }

    /// The keys the slurm-22.05 transcript greps for, where slurmlet has the same value.
    #[test]
    fn the_transcript_keys() {
        let text = render(&config(), "26.05.0", "slurmlet 0.1.0", "Slurmctld(primary) at vm is UP");
        let line = |key: &str| text.lines().find(|l| l.starts_with(&format!("{key} "))).map(str::to_string);
        assert_eq!(line("ClusterName").as_deref(), Some("ClusterName             = refalt"));
        assert_eq!(line("DefMemPerCPU").as_deref(), Some("DefMemPerCPU            = 1000"));
        assert_eq!(line("EnforcePartLimits").as_deref(), Some("EnforcePartLimits       = NO"));
        assert_eq!(line("FirstJobId").as_deref(), Some("FirstJobId              = 1"));
        assert_eq!(line("GresTypes").as_deref(), Some("GresTypes               = gpu"));
        assert_eq!(line("KillWait").as_deref(), Some("KillWait                = 5 sec"));
        assert_eq!(line("MaxArraySize").as_deref(), Some("MaxArraySize            = 1001"));
        assert_eq!(line("MessageTimeout").as_deref(), Some("MessageTimeout          = 10 sec"));
        assert_eq!(line("MinJobAge").as_deref(), Some("MinJobAge               = 300 sec"));
        assert_eq!(line("PriorityType").as_deref(), Some("PriorityType            = priority/basic"));
        assert_eq!(line("SchedulerParameters").as_deref(), Some("SchedulerParameters     = (null)"));
        assert_eq!(line("SchedulerType").as_deref(), Some("SchedulerType           = sched/backfill"));
        assert_eq!(line("SelectType").as_deref(), Some("SelectType              = select/cons_tres"));
        assert_eq!(line("SLURM_VERSION").as_deref(), Some("SLURM_VERSION           = 26.05.0"));
        assert_eq!(line("SLURMLET_VERSION").as_deref(), Some("SLURMLET_VERSION        = 0.1.0"));
        assert_eq!(line("SLURMLET_GPU_SOURCE").as_deref(), Some("SLURMLET_GPU_SOURCE     = nvml"));
        assert_eq!(line("SlurmctldHost[0]").as_deref(), Some("SlurmctldHost[0]        = vm"));
        assert_eq!(line("SLURMLET_MPS"), None, "no line when MPS is not asked for");
        assert!(text.starts_with("Configuration data as of 20"), "{text}");
        assert!(text.ends_with("TaskPlugin              = task/none\n\nSlurmctld(primary) at vm is UP\n"), "{text}");
    }

    #[test]
    fn mps_is_named_after_the_gpu_source_when_asked_for() {
        let c = ConfigInfo { mps: "/usr/bin/nvidia-cuda-mps-control".into(), ..config() };
        let text = render(&c, "26.05.0", "slurmlet 0.1.0", "Slurmctld(primary) at vm is UP");
        assert!(
            text.contains(
                "SLURMLET_GPU_SOURCE     = nvml\nSLURMLET_MPS            = /usr/bin/nvidia-cuda-mps-control\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn unset_values_read_as_slurm_writes_them() {
        let c = ConfigInfo { def_mem_per_cpu: None, gres_types: String::new(), ..config() };
        let text = render(&c, "26.05.0", "slurmlet 0.1.0", "x");
        assert!(text.contains("\nDefMemPerNode           = UNLIMITED\n"), "{text}");
        assert!(text.contains("\nGresTypes               = (null)\n"), "{text}");
        assert!(text.contains("\nPrivateData             = none\n"), "{text}");
        let keys: Vec<&str> = text.lines().skip(1).take_while(|l| !l.is_empty()).map(|l| l[..23].trim_end()).collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap_or_else(|| panic!("{k} missing: {keys:?}"));
        assert!(at("SlurmUser") < at("SlurmctldHost[0]") && at("SlurmctldHost[0]") < at("SLURM_VERSION"));
        assert!(at("SLURM_VERSION") < at("StateSaveLocation") && at("ClusterName") < at("KillWait"));
    }

    #[test]
    fn the_cgroup_section_follows_the_settings() {
        let cgroup =
            vec![("CgroupPlugin".to_string(), "cgroup/v1".to_string()), ("ConstrainCores".into(), "yes".into())];
        let text = render(&ConfigInfo { cgroup, ..config() }, "26.05.0", "slurmlet 0.1.0", "ping");
        assert!(
            text.ends_with(
                "TaskPlugin              = task/none\n\nCgroup Support Configuration:\n\
                 CgroupPlugin            = cgroup/v1\nConstrainCores          = yes\n\nping\n"
            ),
            "{text}"
        );
    }
}
