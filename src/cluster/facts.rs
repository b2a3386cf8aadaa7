//! What one machine has, as `slurmlet cluster probe` reports it on that machine: CPUs and
//! memory as `slurmd -C` counts them, GPUs as slurmlet's own detection finds them, the
//! cgroup version, Slurm's packages and GPU plugin, the ids of the `slurm` and `munge`
//! users, the users the plan names, its clock, and how it resolves the controller's name.
//! The planner reads it as JSON; every value is bounded on the way in ([`NodeFacts::check`]),
//! since it comes from another machine.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The facts format's version: a planner refuses facts of another version rather than
/// misreading them.
pub const FACTS_VERSION: u32 = 1;

/// CPUs as `slurmd -C` prints them (`CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4
/// ThreadsPerCore=2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTopology {
    /// Logical CPUs.
    pub cpus: u32,
    /// Sockets.
    pub sockets: u32,
    /// Cores in each socket.
    pub cores_per_socket: u32,
    /// Hardware threads in each core.
    pub threads_per_core: u32,
}

/// One GPU the node's own detection found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuFact {
    /// The device index (`/dev/nvidiaN`'s N for NVIDIA's).
    pub index: u32,
    /// Its model, when the source gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its gres type (`nvidia_a100-sxm4-40gb`, or the configured one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gres_type: Option<String>,
    /// The device files a job using it opens (gres.conf's `File=`).
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// `nvidia` or `amd`.
    pub vendor: String,
    /// Its memory in MB, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
}

/// A user's or group's numeric ids on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ids {
    /// The uid.
    pub uid: u32,
    /// The primary gid.
    pub gid: u32,
}

/// What one machine has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    /// [`FACTS_VERSION`].
    pub version: u32,
    /// The short host name (`uname -n` up to its first dot), which slurmd takes for its
    /// node name.
    pub hostname: String,
    /// The CPUs.
    pub cpu: CpuTopology,
    /// Memory in MiB as slurmd counts it (`RealMemory`).
    pub real_memory_mib: u64,
    /// The GPUs.
    pub gpus: Vec<GpuFact>,
    /// Where they were found (`nvml`, `nvidia-smi`, `configured`, …); `None`: none found.
    #[serde(default)]
    pub gpu_source: Option<String>,
    /// `2`, `1`, or `None` when no cgroup hierarchy is mounted.
    pub cgroup_version: Option<u8>,
    /// The controllers cgroup v2 offers at its root (`cpuset cpu io memory pids`).
    #[serde(default)]
    pub cgroup_controllers: Vec<String>,
    /// Installed Slurm and munge packages and their versions (`slurmd` → `26.05.5-1`).
    pub packages: BTreeMap<String, String>,
    /// Slurm's version as its daemon reports it (`slurmd -V`), when installed.
    #[serde(default)]
    pub slurm_version: Option<String>,
    /// The path of Slurm's NVML GPU plugin (`gpu_nvml.so`) when it is installed.
    #[serde(default)]
    pub nvml_plugin: Option<PathBuf>,
    /// `slurm`'s ids, when the user exists.
    pub slurm_user: Option<Ids>,
    /// `munge`'s ids, when the user exists.
    pub munge_user: Option<Ids>,
    /// The uid of each user the plan asked about (`None`: no such user on the node).
    #[serde(default)]
    pub users: BTreeMap<String, Option<u32>>,
    /// Whether `/etc/slurm/slurm.conf` exists (a configless node should have none).
    pub local_slurm_conf: bool,
    /// Whether systemd runs the machine (the drop-ins matter only then).
    pub systemd: bool,
    /// The node's clock, seconds since the epoch, when it answered.
    pub time: f64,
    /// The addresses the controller's name resolves to on the node; empty: it does not.
    #[serde(default)]
    pub controller_addresses: Vec<String>,
    /// The machine's architecture (`x86_64`).
    pub arch: String,
    /// The operating system's name and version (`Debian GNU/Linux forky/sid`).
    pub os: String,
}

/// Limits on what a node may report, so that a hostile or broken node cannot make the
/// planner write a huge or malformed file.
pub mod bounds {
    /// The most GPUs one node may report.
    pub const GPUS: usize = 64;
    /// The most CPUs one node may report.
    pub const CPUS: u32 = 65_536;
    /// The longest name or text.
    pub const TEXT: usize = 256;
    /// The most packages or users.
    pub const ENTRIES: usize = 512;
}

/// Facts that cannot be planned from.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FactsError {
    /// Not the JSON of [`NodeFacts`].
    #[error("not a node's facts: {0}")]
    Malformed(String),
    /// Another version of the format.
    #[error("facts of version {0}, this slurmlet reads version {FACTS_VERSION}: run the same slurmlet on the node")]
    Version(u32),
    /// A value out of range or with characters a Slurm configuration file cannot hold.
    #[error("{what}: {value:?} {why}")]
    Bad {
        /// Which value.
        what: String,
        /// The value, cut short.
        value: String,
        /// Why it is refused.
        why: &'static str,
    },
}

/// Whether `text` can stand in a Slurm configuration line unquoted: letters, digits and
/// `-_.:/+@` only (a node's name, a GPU type, a path).
pub fn plain_word(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= bounds::TEXT
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/+@".contains(c))
}

fn bad(what: impl Into<String>, value: &str, why: &'static str) -> FactsError {
    FactsError::Bad { what: what.into(), value: value.chars().take(64).collect(), why }
}

impl NodeFacts {
    /// Reads a node's answer.
    pub fn from_json(text: &str) -> Result<NodeFacts, FactsError> {
        let version = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("version").and_then(|v| v.as_u64()));
        match version {
            Some(v) if v != u64::from(FACTS_VERSION) => return Err(FactsError::Version(v as u32)),
            _ => {}
        }
        let facts: NodeFacts = serde_json::from_str(text).map_err(|e| FactsError::Malformed(e.to_string()))?;
        facts.check()?;
        Ok(facts)
    }

    /// Refuses values a configuration file could be broken by, or that no machine has.
    pub fn check(&self) -> Result<(), FactsError> {
        if !plain_word(&self.hostname) || self.hostname.contains(['/', ':', '@']) {
            return Err(bad("hostname", &self.hostname, "is not a host name"));
        }
        let c = &self.cpu;
        let product = u64::from(c.sockets) * u64::from(c.cores_per_socket) * u64::from(c.threads_per_core);
        if c.cpus == 0 || c.cpus > bounds::CPUS || product == 0 || product > u64::from(bounds::CPUS) {
            return Err(bad("CPUs", &format!("{c:?}"), "is not a machine's CPUs"));
        }
        if self.gpus.len() > bounds::GPUS {
            return Err(bad("GPUs", &self.gpus.len().to_string(), "are more than a node may report"));
        }
        for gpu in &self.gpus {
            if let Some(t) = &gpu.gres_type {
                if !plain_word(t) || t.contains(['/', ':']) {
                    return Err(bad("GPU type", t, "cannot stand in gres.conf"));
                }
            }
            for file in &gpu.files {
                let text = file.to_string_lossy();
                if !plain_word(&text) || !text.starts_with("/dev/") {
                    return Err(bad("GPU device file", &text, "is not a device file's path"));
                }
            }
            if gpu.model.as_ref().is_some_and(|m| m.len() > bounds::TEXT) {
                return Err(bad("GPU model", gpu.model.as_deref().unwrap_or(""), "is too long"));
            }
        }
        if self.packages.len() > bounds::ENTRIES || self.users.len() > bounds::ENTRIES {
            return Err(bad("packages or users", "", "are too many"));
        }
        let texts = self.packages.iter().flat_map(|(k, v)| [k, v]).chain(self.users.keys());
        for text in texts.chain([&self.arch, &self.os]).chain(self.slurm_version.iter()) {
            if text.len() > bounds::TEXT || text.chars().any(char::is_control) {
                return Err(bad("text", text, "is too long or holds control characters"));
            }
        }
        if !self.time.is_finite() || self.time < 0.0 {
            return Err(bad("clock", &self.time.to_string(), "is not a time"));
        }
        Ok(())
    }

    /// The gres type of this node's GPUs when they share one.
    pub fn common_gpu_type(&self) -> Option<&str> {
        let first = self.gpus.first()?.gres_type.as_deref()?;
        self.gpus.iter().all(|g| g.gres_type.as_deref() == Some(first)).then_some(first)
    }
}

#[cfg(test)]
pub(crate) use tests::sample;

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(host: &str) -> NodeFacts {
        NodeFacts {
            version: FACTS_VERSION,
            hostname: host.into(),
            cpu: CpuTopology { cpus: 8, sockets: 1, cores_per_socket: 4, threads_per_core: 2 },
            real_memory_mib: 15_000,
            gpus: (0..2)
                .map(|i| GpuFact {
                    index: i,
                    model: Some("Tesla V100-SXM2-32GB".into()),
                    gres_type: Some("tesla_v100-sxm2-32gb".into()),
                    files: vec![PathBuf::from(format!("/dev/nvidia{i}"))],
                    vendor: "nvidia".into(),
                    memory_mb: Some(32_768),
                })
                .collect(),
            gpu_source: Some("nvml".into()),
            cgroup_version: Some(2),
            cgroup_controllers: vec!["cpuset".into(), "memory".into()],
            packages: BTreeMap::from([("slurmd".into(), "26.05.5-1".into())]),
            slurm_version: Some("26.05.5".into()),
            nvml_plugin: None,
            slurm_user: Some(Ids { uid: 64030, gid: 64030 }),
            munge_user: Some(Ids { uid: 100, gid: 101 }),
            users: BTreeMap::new(),
            local_slurm_conf: false,
            systemd: true,
            time: 1.0e9,
            controller_addresses: vec!["10.0.0.1".into()],
            arch: "x86_64".into(),
            os: "Debian".into(),
        }
    }

    #[test]
    fn facts_read_back_as_written() {
        let facts = sample("n1");
        let text = serde_json::to_string(&facts).unwrap();
        assert_eq!(NodeFacts::from_json(&text).unwrap(), facts);
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let mut facts = serde_json::to_value(sample("n1")).unwrap();
        facts["version"] = 7.into();
        assert_eq!(NodeFacts::from_json(&facts.to_string()), Err(FactsError::Version(7)));
    }

    #[test]
    fn a_node_cannot_break_a_configuration_line() {
        let mut facts = sample("n1");
        facts.hostname = "n1 Gres=gpu:99".into();
        assert!(matches!(facts.check(), Err(FactsError::Bad { what, .. }) if what == "hostname"));
        let mut facts = sample("n1");
        facts.gpus[0].gres_type = Some("v100\nNodeName=evil".into());
        assert!(matches!(facts.check(), Err(FactsError::Bad { what, .. }) if what == "GPU type"));
        let mut facts = sample("n1");
        facts.gpus[0].files = vec![PathBuf::from("/etc/shadow")];
        assert!(matches!(facts.check(), Err(FactsError::Bad { what, .. }) if what == "GPU device file"));
        let mut facts = sample("n1");
        facts.cpu.cpus = 0;
        assert!(facts.check().is_err());
        let mut facts = sample("n1");
        facts.gpus = (0..65).map(|_| sample("n1").gpus[0].clone()).collect();
        assert!(facts.check().is_err());
    }

    #[test]
    fn gpus_of_one_type_share_it_and_mixed_ones_do_not() {
        let mut facts = sample("n1");
        assert_eq!(facts.common_gpu_type(), Some("tesla_v100-sxm2-32gb"));
        facts.gpus[1].gres_type = Some("tesla_t4".into());
        assert_eq!(facts.common_gpu_type(), None);
    }
}
