//! Stand-ins and readings shared by the GPU detection tests.

use super::{stderr, stdout, Cluster};
use std::path::Path;

/// Puts an `nvidia-smi` on the cluster's `bin` that notes each run in `probes` and lists two
/// H100s as the real one does (the machine's own `nvidia-smi` would list its GPUs, or none).
pub fn stand_in_nvidia_smi(c: &Cluster, probes: &Path) {
    let script = c.bin.join("nvidia-smi");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n\
             echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93)'\n\
             echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-e2b7d1c0-5a8f-43b6-9e2d-7f1a0c3b8d54)'\n",
            probes.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A `PATH` with the cluster's `bin` (its commands and stand-ins) first.
pub fn path_with_bin(c: &Cluster) -> String {
    format!("{}:{}", c.bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// The `Gres=` line of `scontrol show node`.
pub fn show_node_gres(c: &Cluster) -> String {
    let out = c.run("scontrol", &["show", "node"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().find(|l| l.trim_start().starts_with("Gres=")).unwrap_or_default().trim().to_string()
}
