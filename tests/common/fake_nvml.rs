//! The stand-in NVML library of `tests/fake_nvml/` (see its `src/lib.rs` for the JSON file
//! it reads), built for the tests that load it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The variable that names the JSON file describing the fake machine.
pub const MACHINE_VARIABLE: &str = "SLURMLET_FAKE_NVML";

/// The fake `libnvidia-ml.so`, built once per test process.
///
/// It is built by cargo into a target directory of its own under `CARGO_TARGET_TMPDIR`:
/// the `cargo test` that runs this test holds its own target directory locked until it
/// ends, so a build there would wait for ever, whether the tests run alone (`cargo test
/// --test gpu_nvml`) or all at once (`cargo test --all-targets`). Up to date, the build
/// takes a fraction of a second; the first one compiles only the fake and serde_json.
pub fn library() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_nvml/Cargo.toml");
            let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-nvml");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
            let out = Command::new(cargo)
                .args(["build", "--quiet", "--locked", "--manifest-path"])
                .arg(&manifest)
                .env("CARGO_TARGET_DIR", &target)
                .output()
                .expect("run cargo to build the fake NVML library");
            assert!(
                out.status.success(),
                "building the fake NVML library failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let library = target.join("debug").join("libfake_nvml.so");
            assert!(library.exists(), "{} was not built", library.display());
            library
        })
        .clone()
}

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
