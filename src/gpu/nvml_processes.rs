//! The compute processes NVML reports on each of the node's GPUs
//! (`nvmlDeviceGetComputeRunningProcesses`), as NVML's [`GpuSampler`].

use super::nvml::initialised;
use super::sampler::{GpuProcess, GpuSampler};
use super::{Gpu, GpuError};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use std::path::PathBuf;

/// The compute processes of the node's whole GPUs, as NVML loaded from `library` lists
/// them; each GPU is found by its UUID.
#[derive(Debug, Clone)]
pub struct NvmlProcesses {
    library: PathBuf,
    uuids: Vec<String>,
}

impl NvmlProcesses {
    /// The sampler of the whole GPUs among `gpus` (MIG instances are left out), through NVML
    /// loaded from `library`.
    pub fn new(library: PathBuf, gpus: &[Gpu]) -> NvmlProcesses {
        let uuids = gpus.iter().filter(|g| g.mig_parent.is_none()).filter_map(|g| g.uuid.clone()).collect();
        NvmlProcesses { library, uuids }
    }

    /// The error of NVML function `call`.
    fn failed(&self, call: &'static str) -> impl Fn(NvmlError) -> GpuError + '_ {
        move |source| GpuError::Nvml { library: self.library.clone(), call, source }
    }
}

impl GpuSampler for NvmlProcesses {
    fn name(&self) -> &str {
        "nvml"
    }

    /// A GPU that cannot tell (`NVML_ERROR_NOT_SUPPORTED`) has none.
    fn compute_processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        let nvml = initialised(&self.library)?;
        let mut processes = Vec::new();
        for uuid in &self.uuids {
            let device = nvml.device_by_uuid(uuid.as_str()).map_err(self.failed("nvmlDeviceGetHandleByUUID"))?;
            let running = match device.running_compute_processes() {
                Ok(running) => running,
                Err(NvmlError::NotSupported) => continue,
                Err(e) => return Err(self.failed("nvmlDeviceGetComputeRunningProcesses")(e)),
            };
            processes.extend(running.into_iter().map(|p| GpuProcess {
                gpu_uuid: uuid.clone(),
                pid: p.pid,
                used_memory: match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(bytes),
                    UsedGpuMemory::Unavailable => None,
                },
            }));
        }
        Ok(processes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_to_tell() {
        let gpu = Gpu { uuid: Some("GPU-1".into()), ..Gpu::nvidia(0) };
        let sampler = NvmlProcesses::new("/nonexistent/libnvidia-ml.so.1".into(), &[gpu]);
        let err = sampler.compute_processes().unwrap_err();
        assert!(err.to_string().contains("/nonexistent/libnvidia-ml.so.1"), "{err}");
    }
}
