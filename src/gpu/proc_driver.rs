//! `/proc/driver/nvidia/gpus`: one directory per GPU the NVIDIA driver has loaded, named by
//! its PCI address, each with an `information` file (model, UUID, device minor).

use super::{gres_type_of_model, Gpu, GpuError, GpuSource};
use std::path::PathBuf;

/// Reads the driver's GPU directories under `dir`.
#[derive(Debug, Clone)]
pub struct ProcDriver {
    dir: PathBuf,
    name: String,
}

impl Default for ProcDriver {
    fn default() -> ProcDriver {
        ProcDriver::new("/proc/driver/nvidia/gpus".into())
    }
}

impl ProcDriver {
    /// The GPUs listed under `dir`.
    pub fn new(dir: PathBuf) -> ProcDriver {
        ProcDriver { name: dir.display().to_string(), dir }
    }
}

impl GpuSource for ProcDriver {
    fn name(&self) -> &str {
        &self.name
    }

    /// One GPU per directory, indexed in PCI address order (the order `CUDA_DEVICE_ORDER=
    /// PCI_BUS_ID` gives); a GPU whose `information` cannot be read is still one.
    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        let read = |source| GpuError::Read { path: self.dir.clone(), source };
        let mut addresses: Vec<PathBuf> =
            std::fs::read_dir(&self.dir).map_err(read)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        addresses.sort();
        Ok(addresses
            .iter()
            .zip(0u32..)
            .map(|(dir, index)| match std::fs::read_to_string(dir.join("information")) {
                Ok(text) => parse_information(index, &text),
                Err(_) => Gpu::nvidia(index),
            })
            .collect())
    }
}

/// The GPU with index `index` whose driver `information` file reads `text` (`Model: …`,
/// `GPU UUID: …`, `Device Minor: N`), typed by its model as NVML would type it.
pub fn parse_information(index: u32, text: &str) -> Gpu {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string()).filter(|v| !v.is_empty())
        })
    };
    let minor: Option<u32> = field("Device Minor").and_then(|m| m.parse().ok());
    let model = field("Model");
    Gpu {
        uuid: field("GPU UUID"),
        gres_type: model.as_deref().map(gres_type_of_model),
        model,
        devices: minor.map(|m| PathBuf::from(format!("/dev/nvidia{m}"))).into_iter().collect(),
        ..Gpu::nvidia(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Vendor;

    const H100: &str = "Model: \t\t NVIDIA H100 80GB HBM3\n\
IRQ:   \t\t 463\n\
GPU UUID: \t GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93\n\
Video BIOS: \t 96.00.99.00.01\n\
Bus Type: \t PCIe\n\
DMA Size: \t 52 bits\n\
DMA Mask: \t 0xfffffffffffff\n\
Bus Location: \t 0000:19:00.0\n\
Device Minor: \t 2\n\
GPU Firmware: \t 550.90.07\n\
GPU Excluded:\t No\n";

    #[test]
    fn reads_model_uuid_and_device_file() {
        let gpu = parse_information(0, H100);
        assert_eq!(gpu.index, 0);
        assert_eq!(gpu.model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(gpu.uuid.as_deref(), Some("GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93"));
        assert_eq!(gpu.devices, vec![PathBuf::from("/dev/nvidia2")]);
        assert_eq!(gpu.gres_type.as_deref(), Some("nvidia_h100_80gb_hbm3"));
        assert_eq!(gpu.vendor, Vendor::Nvidia);
    }

    #[test]
    fn an_unreadable_information_still_counts() {
        assert_eq!(parse_information(1, ""), Gpu::nvidia(1));
    }

    #[test]
    fn one_gpu_per_directory_in_address_order() {
        let root = std::env::temp_dir().join(format!("slurmlet-proc-gpus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (address, minor) in [("0000:9a:00.0", 1), ("0000:19:00.0", 0)] {
            std::fs::create_dir_all(root.join(address)).unwrap();
            let text = H100.replace("Device Minor: \t 2", &format!("Device Minor: \t {minor}"));
            std::fs::write(root.join(address).join("information"), text).unwrap();
        }
        std::fs::create_dir_all(root.join("0000:c1:00.0")).unwrap();
        let gpus = ProcDriver::new(root.clone()).discover().unwrap();
        let _ = std::fs::remove_dir_all(&root);
        let found: Vec<(u32, Vec<PathBuf>)> = gpus.iter().map(|g| (g.index, g.devices.clone())).collect();
        assert_eq!(
            found,
            vec![(0, vec![PathBuf::from("/dev/nvidia0")]), (1, vec![PathBuf::from("/dev/nvidia1")]), (2, vec![])]
        );
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let err = ProcDriver::new("/nonexistent/gpus".into()).discover().unwrap_err();
        assert!(err.to_string().contains("/nonexistent/gpus"), "{err}");
    }
}
