//! The stand-in NVML library built for the tests that load it, by the test targets that
//! include this file (`tests/integration/common/fake_nvml.rs`, `tests/real_cluster.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The fake `libnvidia-ml.so`, built once per test process.
///
/// It is built by cargo into a target directory of its own under `CARGO_TARGET_TMPDIR`:
/// the `cargo test` that runs this test holds its own target directory locked until it
/// ends, so a build there would wait for ever, whether some tests run alone (`cargo test
/// --test integration gpu_nvml::`) or all at once (`cargo test --all-targets`). Up to date,
/// the build takes a fraction of a second; the first one compiles only the fake and
/// serde_json.
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
