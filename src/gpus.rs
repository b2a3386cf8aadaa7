//! GPU detection: `nvidia-smi -L`, then `/proc/driver/nvidia/gpus`.

/// The indices of the GPUs on this machine (empty when none are found).
pub fn detect() -> Vec<u32> {
    if let Some(ids) = from_nvidia_smi() {
        return ids;
    }
    from_proc().unwrap_or_default()
}

fn from_nvidia_smi() -> Option<Vec<u32>> {
    let out = std::process::Command::new("nvidia-smi").arg("-L").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let ids = parse_nvidia_smi_list(&String::from_utf8_lossy(&out.stdout));
    (!ids.is_empty()).then_some(ids)
}

/// Parses `nvidia-smi -L` lines (`GPU 0: NVIDIA H100 (UUID: …)`).
pub fn parse_nvidia_smi_list(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.strip_prefix("GPU "))
        .filter_map(|l| l.split(':').next())
        .filter_map(|n| n.trim().parse().ok())
        .collect()
}

fn from_proc() -> Option<Vec<u32>> {
    let n = std::fs::read_dir("/proc/driver/nvidia/gpus").ok()?.count() as u32;
    (n > 0).then(|| (0..n).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_nvidia_smi_output() {
        let text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n";
        assert_eq!(super::parse_nvidia_smi_list(text), vec![0, 1]);
    }
}
