//! `slurmlet cluster probe`: what this machine has, as [`NodeFacts`] JSON on standard
//! output, for the planner on another machine to read. It reads files under `/proc`,
//! `/sys` and `/etc`, asks the package manager and `slurmd -V` (each within a deadline),
//! and finds GPUs with slurmlet's own detection under this machine's slurmlet configuration
//! (so configured GPUs, their types and device files count as the daemon would count them).

use super::facts::{CpuTopology, GpuFact, Ids, NodeFacts, FACTS_VERSION};
use crate::config::Config;
use crate::program::{self, Limits};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The packages whose versions the plan compares across nodes.
pub const PACKAGES: &[&str] = &[
    "slurmd",
    "slurmctld",
    "slurmdbd",
    "slurmrestd",
    "slurm-client",
    "slurm-wlm-basic-plugins",
    "slurm-wlm-nvml-plugin",
    "munge",
];

/// How long one program the probe asks may take.
const PROGRAM_DEADLINE: Duration = Duration::from_secs(10);

/// Where distributions put Slurm's plugins, below which `gpu_nvml.so` is looked for.
const PLUGIN_DIRS: &[&str] =
    &["/usr/lib64/slurm", "/usr/lib/slurm", "/usr/local/lib/slurm", "/usr/local/lib64/slurm", "/opt/slurm/lib/slurm"];

/// What the probe is asked besides the machine itself.
#[derive(Debug, Clone, Default)]
pub struct Questions {
    /// The controller's name, whose addresses the node reports.
    pub controller: Option<String>,
    /// Users whose uids the node reports.
    pub users: Vec<String>,
}

/// This machine's facts; `config` is the slurmlet configuration its GPUs are found under.
pub fn probe(config: &Path, questions: &Questions) -> NodeFacts {
    let (gpus, gpu_source) = gpus(config);
    let (cgroup_version, cgroup_controllers) = cgroup();
    let packages = packages();
    let mut facts = NodeFacts {
        version: FACTS_VERSION,
        hostname: crate::paths::hostname(),
        cpu: cpu_topology(Path::new("/sys/devices/system/cpu")),
        real_memory_mib: real_memory_mib(),
        gpus,
        gpu_source,
        cgroup_version,
        cgroup_controllers,
        slurm_version: slurm_version(),
        packages,
        nvml_plugin: nvml_plugin(),
        slurm_user: ids("slurm"),
        munge_user: ids("munge"),
        users: questions.users.iter().map(|u| (u.clone(), crate::identity::user_uid(u))).collect(),
        local_slurm_conf: Path::new("/etc/slurm/slurm.conf").exists(),
        systemd: Path::new("/run/systemd/system").is_dir(),
        time: 0.0,
        controller_addresses: questions.controller.as_deref().map(resolve).unwrap_or_default(),
        arch: std::env::consts::ARCH.to_string(),
        os: os_name(),
    };
    // Read last, just before the answer goes back: the planner compares it with its own
    // clock when the answer arrives.
    facts.time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    facts
}

/// The GPUs slurmlet's detection finds under `config`, and where it found them.
fn gpus(config: &Path) -> (Vec<GpuFact>, Option<String>) {
    let Ok(mut config) = Config::load(config) else { return (Vec::new(), None) };
    let source = config.discover_gpus();
    let facts = config
        .gpus
        .iter()
        .map(|g| GpuFact {
            index: g.index,
            model: g.model.clone(),
            gres_type: g.gres_type.clone(),
            files: g.devices.clone(),
            vendor: match g.vendor {
                crate::gpu::Vendor::Nvidia => "nvidia".into(),
                crate::gpu::Vendor::Amd => "amd".into(),
            },
            memory_mb: g.memory_mb,
        })
        .collect();
    (facts, source)
}

/// The online CPUs' topology from sysfs, as slurmd counts it: sockets are the distinct
/// packages, cores the distinct (package, core) pairs, threads what is left.
pub fn cpu_topology(sys_cpu: &Path) -> CpuTopology {
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut cpus = 0u32;
    let read_id = |cpu: &Path, file: &str| -> Option<i64> {
        std::fs::read_to_string(cpu.join("topology").join(file)).ok()?.trim().parse().ok()
    };
    let online = std::fs::read_to_string(sys_cpu.join("online")).unwrap_or_default();
    for id in crate::id_set::parse_ranges(&online) {
        let cpu = sys_cpu.join(format!("cpu{id}"));
        let (Some(package), Some(core)) = (read_id(&cpu, "physical_package_id"), read_id(&cpu, "core_id")) else {
            continue;
        };
        cpus += 1;
        packages.insert(package);
        cores.insert((package, core));
    }
    if cpus == 0 {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        return CpuTopology { cpus: n, sockets: 1, cores_per_socket: n, threads_per_core: 1 };
    }
    let sockets = packages.len().max(1) as u32;
    let cores_per_socket = (cores.len() as u32 / sockets).max(1);
    let threads_per_core = (cpus / (sockets * cores_per_socket)).max(1);
    CpuTopology { cpus, sockets, cores_per_socket, threads_per_core }
}

/// `MemTotal` in MiB, as slurmd's `RealMemory`.
fn real_memory_mib() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok());
    kib.unwrap_or(0) / 1024
}

/// The cgroup version mounted at `/sys/fs/cgroup`, and v2's root controllers.
fn cgroup() -> (Option<u8>, Vec<String>) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let fs_at = |point: &str| {
        mounts.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            (left.split_whitespace().nth(4)? == point)
                .then(|| right.split_whitespace().next().unwrap_or("").to_string())
        })
    };
    match fs_at("/sys/fs/cgroup").as_deref() {
        Some("cgroup2") => {
            let controllers = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers").unwrap_or_default();
            (Some(2), controllers.split_whitespace().map(String::from).collect())
        }
        Some(_) => (Some(1), Vec::new()),
        None => (None, Vec::new()),
    }
}

fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let done = program::run(&mut cmd, None, Limits { deadline: PROGRAM_DEADLINE, max_output: 64 * 1024 }).ok()?;
    done.status.success().then(|| done.stdout_text())
}

/// The installed [`PACKAGES`] and their versions, from dpkg or rpm.
fn packages() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    if let Some(text) = output_of(
        "dpkg-query",
        &[&["-W", "-f", "${Package}\t${Version}\t${db:Status-Status}\n"][..], PACKAGES].concat(),
    ) {
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if let [name, version, "installed"] = f[..] {
                found.insert(name.to_string(), version.to_string());
            }
        }
    } else if let Some(text) = output_of(
        "rpm",
        &[
            &["-q", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"][..],
            &["slurm", "slurm-slurmd", "slurm-slurmctld", "slurm-slurmdbd", "munge"],
        ]
        .concat(),
    ) {
        for line in text.lines().filter(|l| !l.contains("not installed")) {
            if let Some((name, version)) = line.split_once('\t') {
                found.insert(name.to_string(), version.to_string());
            }
        }
    }
    found
}

/// `26.05.5` from `slurmd -V`'s `slurm 26.05.5`.
fn slurm_version() -> Option<String> {
    let text = output_of("slurmd", &["-V"]).or_else(|| output_of("/usr/sbin/slurmd", &["-V"]))?;
    text.split_whitespace().nth(1).map(String::from)
}

/// Slurm's NVML GPU plugin, under the distribution's plugin directories.
fn nvml_plugin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = PLUGIN_DIRS.iter().map(PathBuf::from).collect();
    // Debian and Ubuntu: /usr/lib/<multiarch triple>/slurm-wlm.
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        dirs.extend(entries.flatten().map(|e| e.path().join("slurm-wlm")));
    }
    dirs.into_iter().map(|d| d.join("gpu_nvml.so")).find(|p| p.is_file())
}

fn ids(name: &str) -> Option<Ids> {
    crate::identity::user_ids(name).map(|(uid, gid)| Ids { uid, gid })
}

/// The addresses `name` resolves to here (in a thread, given up after a while, since a
/// resolver may hang).
fn resolve(name: &str) -> Vec<String> {
    use std::net::ToSocketAddrs;
    let (tx, rx) = std::sync::mpsc::channel();
    let name = name.to_string();
    std::thread::spawn(move || {
        let found: BTreeSet<String> =
            (name.as_str(), 0).to_socket_addrs().map(|a| a.map(|a| a.ip().to_string()).collect()).unwrap_or_default();
        let _ = tx.send(found.into_iter().collect());
    });
    rx.recv_timeout(PROGRAM_DEADLINE).unwrap_or_default()
}

/// `PRETTY_NAME` of `/etc/os-release`.
fn os_name() -> String {
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').chars().take(128).filter(|c| !c.is_control()).collect())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(dir: &Path, id: u32, package: u32, core: u32) {
        let topo = dir.join(format!("cpu{id}/topology"));
        std::fs::create_dir_all(&topo).unwrap();
        std::fs::write(topo.join("physical_package_id"), format!("{package}\n")).unwrap();
        std::fs::write(topo.join("core_id"), format!("{core}\n")).unwrap();
    }

    #[test]
    fn the_topology_counts_sockets_cores_and_threads_as_slurmd_does() {
        let dir = std::env::temp_dir().join(format!("slurmlet-topology-{}", std::process::id()));
        // Two sockets of two cores with two threads each.
        for id in 0..8 {
            cpu(&dir, id, id / 4, (id % 4) / 2);
        }
        std::fs::write(dir.join("online"), "0-7\n").unwrap();
        let t = cpu_topology(&dir);
        assert_eq!((t.cpus, t.sockets, t.cores_per_socket, t.threads_per_core), (8, 2, 2, 2));
        // An offline CPU is not counted.
        std::fs::write(dir.join("online"), "0-3\n").unwrap();
        let t = cpu_topology(&dir);
        assert_eq!((t.cpus, t.sockets, t.cores_per_socket, t.threads_per_core), (4, 1, 2, 2));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_machines_facts_pass_their_own_checks() {
        let facts = probe(
            Path::new("/nonexistent/slurmlet.toml"),
            &Questions { controller: Some("localhost".into()), users: vec!["root".into()] },
        );
        facts.check().unwrap();
        assert_eq!(facts.users.get("root"), Some(&Some(0)));
        assert!(
            facts.controller_addresses.iter().any(|a| a == "127.0.0.1" || a == "::1"),
            "{:?}",
            facts.controller_addresses
        );
        assert!(facts.real_memory_mib > 0);
    }
}
