//! `nvidia-smi -L`: NVIDIA's tool lists the GPUs its driver sees, with model and UUID. A GPU
//! is typed by its model as NVML would type it, so that a node shows the same gres whichever
//! source found its GPUs.

use super::{gres_type_of_model, Gpu, GpuError, GpuSource};

/// Runs `program -L` (`nvidia-smi`, looked up in `PATH`).
#[derive(Debug, Clone)]
pub struct NvidiaSmi {
    program: String,
}

impl Default for NvidiaSmi {
    fn default() -> NvidiaSmi {
        NvidiaSmi { program: "nvidia-smi".into() }
    }
}

impl GpuSource for NvidiaSmi {
    fn name(&self) -> &str {
        &self.program
    }

    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        Ok(parse_nvidia_smi_list(&super::tool::output_of(&self.program, &["-L"])?))
    }
}

/// Parses `nvidia-smi -L` lines (`GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)`); the lines of
/// MIG instances under a GPU (indented, `MIG …`) are not GPUs of their own.
pub fn parse_nvidia_smi_list(text: &str) -> Vec<Gpu> {
    text.lines().filter_map(|l| l.strip_prefix("GPU ")).filter_map(parse_line).collect()
}

/// `0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)`.
fn parse_line(line: &str) -> Option<Gpu> {
    let (index, rest) = line.split_once(':').unwrap_or((line, ""));
    let index = index.trim().parse().ok()?;
    let rest = rest.trim();
    let (model, uuid) = match rest.rsplit_once("(UUID:") {
        Some((model, uuid)) => (model.trim(), uuid.trim().trim_end_matches(')').trim()),
        None => (rest, ""),
    };
    let known = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Some(Gpu {
        uuid: known(uuid),
        gres_type: known(model).as_deref().map(gres_type_of_model),
        model: known(model),
        ..Gpu::nvidia(index)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Vendor;

    #[test]
    fn parses_nvidia_smi_output() {
        let text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n";
        let indices: Vec<u32> = parse_nvidia_smi_list(text).iter().map(|g| g.index).collect();
        assert_eq!(indices, vec![0, 1]);
    }

    #[test]
    fn reads_model_and_uuid() {
        let text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93)\n\
                    GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-e2b7d1c0-5a8f-43b6-9e2d-7f1a0c3b8d54)\n";
        let gpus = parse_nvidia_smi_list(text);
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[1].index, 1);
        assert_eq!(gpus[1].model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(gpus[1].uuid.as_deref(), Some("GPU-e2b7d1c0-5a8f-43b6-9e2d-7f1a0c3b8d54"));
        assert_eq!(gpus[1].gres_type.as_deref(), Some("nvidia_h100_80gb_hbm3"));
        assert_eq!(gpus[0].vendor, Vendor::Nvidia);
    }

    #[test]
    fn mig_instances_are_not_gpus() {
        let text = "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-6f3a2e1d-0b9c-4d8e-a7f6-5e4d3c2b1a09)\n  \
                    MIG 1g.5gb      Device  0: (UUID: MIG-0d8c7b6a-5f4e-3d2c-1b0a-9f8e7d6c5b4a)\n  \
                    MIG 1g.5gb      Device  1: (UUID: MIG-1e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b)\n\
                    GPU 1: Tesla V100-PCIE-16GB (UUID: GPU-8b7a6f5e-4d3c-2b1a-0f9e-8d7c6b5a4f3e)\n";
        let gpus = parse_nvidia_smi_list(text);
        let indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
        assert_eq!(indices, vec![0, 1]);
        assert_eq!(gpus[1].model.as_deref(), Some("Tesla V100-PCIE-16GB"));
    }

    #[test]
    fn other_lines_are_skipped() {
        let text = "No devices found.\n";
        assert!(parse_nvidia_smi_list(text).is_empty());
        let gpus = parse_nvidia_smi_list("GPU 3: Some GPU\n");
        assert_eq!((gpus[0].index, gpus[0].uuid.as_deref()), (3, None));
        assert_eq!(parse_nvidia_smi_list("GPU 0: (UUID: GPU-1)\n")[0].gres_type, None, "no model, no type");
    }
}
