//! The compute processes NVML reports on each GPU (`nvmlDeviceGetComputeRunningProcesses`),
//! as NVML's [`GpuSampler`].

use super::nvml::initialised;
use super::sampler::{GpuProcess, GpuSampler};
use super::{GpuError, Nvml};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

impl GpuSampler for Nvml {
    fn name(&self) -> &str {
        "nvml"
    }

    /// The compute processes of each whole GPU NVML lists; a GPU that cannot tell
    /// (`NVML_ERROR_NOT_SUPPORTED`) has none.
    fn compute_processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        let failed =
            |call: &'static str| move |source| GpuError::Nvml { library: self.library().to_path_buf(), call, source };
        let nvml = initialised(self.library())?;
        let count = nvml.device_count().map_err(failed("nvmlDeviceGetCount"))?;
        let mut processes = Vec::new();
        for index in 0..count {
            let device = nvml.device_by_index(index).map_err(failed("nvmlDeviceGetHandleByIndex"))?;
            let uuid = device.uuid().map_err(failed("nvmlDeviceGetUUID"))?;
            let running = match device.running_compute_processes() {
                Ok(running) => running,
                Err(NvmlError::NotSupported) => continue,
                Err(e) => return Err(failed("nvmlDeviceGetComputeRunningProcesses")(e)),
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
