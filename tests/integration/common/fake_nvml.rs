//! The stand-in NVML library of `tests/fake_nvml/` (see its `src/lib.rs` for the JSON file
//! it reads), built for the tests that load it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable that names the JSON file describing the fake machine.
pub const MACHINE_VARIABLE: &str = "SLURMLET_FAKE_NVML";

// The library's build, shared with the tests of other targets (tests/real_cluster.rs).
#[path = "../../fake_nvml/built.rs"]
mod built;
pub use built::library;

/// One GPU of the fake machine: `name` as NVML gives it, with `uuid`, PCI bus id, minor
/// number `index` and 40 GiB of memory.
pub fn gpu(index: u32, name: &str, uuid: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "uuid": uuid,
        "pci_bus_id": format!("00000000:{:02X}:00.0", 7 + index * 8),
        "memory_total": 40u64 << 30,
        "minor": index,
    })
}

/// A GPU's compute processes as the fake machine lists them, from `(pid, bytes, SM %)`.
pub fn processes(on: &[(u32, u64, u32)]) -> serde_json::Value {
    on.iter()
        .map(|(pid, bytes, util)| serde_json::json!({ "pid": pid, "used_memory": bytes, "sm_util": util }))
        .collect()
}

/// The UUIDs of the two A100s of [`start_watching`]'s machine.
pub const UUID0: &str = "GPU-6f3a2e1d-0b9c-4d8e-a7f6-5e4d3c2b1a09";
/// The second one's.
pub const UUID1: &str = "GPU-8b7a6f5e-4d3c-2b1a-0f9e-8d7c6b5a4f3e";
/// Their model, as NVML names it.
pub const A100_MODEL: &str = "NVIDIA A100-SXM4-40GB";

/// A daemon on a fake machine of two idle A100s that looks at them every second, with the
/// configuration lines `extra`; and the file that describes the machine, for the test to
/// rewrite ([`write_machine`]).
pub fn start_watching(extra: &str) -> (super::Cluster, PathBuf) {
    let (mut c, machine) = configure(extra, vec![gpu(0, A100_MODEL, UUID0), gpu(1, A100_MODEL, UUID1)]);
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    (c, machine)
}

/// A cluster on a fake machine of `gpus` ([`gpu`]) that looks at them every second, with the
/// configuration lines `extra`, its daemon not started (start it with [`MACHINE_VARIABLE`]
/// naming the machine's file); and that file.
pub fn configure(extra: &str, gpus: Vec<serde_json::Value>) -> (super::Cluster, PathBuf) {
    let c = super::Cluster::configure("0", "");
    let text = super::read(&c.config);
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("gpus =")).map(String::from).collect();
    lines.push(format!("nvml_library = \"{}\"", library().display()));
    lines.push("gpu_sample_interval = 1".into());
    lines.push(extra.into());
    std::fs::write(&c.config, lines.join("\n") + "\n").unwrap();
    let machine = c.dir.path().join("nvml.json");
    write_machine(&machine, serde_json::json!({ "gpus": gpus }));
    (c, machine)
}

/// Writes the machine's description whole and renames it into place: the fake reads it on
/// every call, and never half of it.
pub fn write_machine(machine: &Path, description: serde_json::Value) {
    let next = machine.with_extension("next");
    std::fs::write(&next, description.to_string()).unwrap();
    std::fs::rename(&next, machine).unwrap();
}

/// A process of no job to list on a fake GPU: `sleep SECONDS`, killed when dropped.
pub struct Outsider(pub std::process::Child);

impl Outsider {
    /// Starts `sleep SECONDS`.
    pub fn start(seconds: &str) -> Outsider {
        Outsider(Command::new("sleep").arg(seconds).spawn().expect("start sleep"))
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The user running the tests, by name.
pub fn me() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
