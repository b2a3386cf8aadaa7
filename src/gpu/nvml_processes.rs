//! What NVML reports of each of the node's whole GPUs: its memory and utilisation
//! (`nvmlDeviceGetMemoryInfo_v2`, `nvmlDeviceGetUtilizationRates`), its compute processes
//! (`nvmlDeviceGetComputeRunningProcesses`) and their SM utilisation
//! (`nvmlDeviceGetProcessUtilization`), as NVML's [`GpuSampler`].

use super::nvml::initialised;
use super::sampler::{GpuProcess, GpuReading, GpuSample, GpuSampler, GpuTrouble};
use super::{Gpu, GpuError};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Device;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// The figures and compute processes of the node's whole GPUs, as NVML loaded from
/// `library` reports them; each GPU is found by its UUID.
#[derive(Debug)]
pub struct NvmlProcesses {
    library: PathBuf,
    uuids: Vec<String>,
    /// By GPU, the time stamp (µs) of the newest utilisation sample seen, from which the
    /// next look asks for newer ones.
    last_seen: Mutex<HashMap<String, u64>>,
    /// The GPUs' health: their XID events and the state of their memory.
    health: super::nvml_health::Health,
}

impl NvmlProcesses {
    /// The sampler of the whole GPUs among `gpus` (MIG instances are left out), through NVML
    /// loaded from `library`.
    pub fn new(library: PathBuf, gpus: &[Gpu]) -> NvmlProcesses {
        let uuids = gpus.iter().filter(|g| g.mig_parent.is_none()).filter_map(|g| g.uuid.clone()).collect();
        NvmlProcesses { library, uuids, last_seen: Mutex::new(HashMap::new()), health: Default::default() }
    }

    /// The error of NVML function `call`.
    fn failed(&self, call: &'static str) -> impl Fn(NvmlError) -> GpuError + '_ {
        move |source| GpuError::Nvml { library: self.library.clone(), call, source }
    }

    /// The SM utilisation of each process on `device` (GPU `uuid`) since the last look: the
    /// newest sample of each pid. A GPU that cannot tell (`NVML_ERROR_NOT_SUPPORTED`) or
    /// has no sample since (`NVML_ERROR_NOT_FOUND`) has none.
    fn process_utilization(&self, device: &Device, uuid: &str) -> Result<HashMap<u32, u32>, GpuError> {
        let since = self.last_seen.lock().unwrap_or_else(|e| e.into_inner()).get(uuid).copied().unwrap_or(0);
        let samples = match device.process_utilization_stats(since) {
            Ok(samples) => samples,
            Err(NvmlError::NotSupported | NvmlError::NotFound) => return Ok(HashMap::new()),
            Err(e) => return Err(self.failed("nvmlDeviceGetProcessUtilization")(e)),
        };
        let mut newest: HashMap<u32, (u64, u32)> = HashMap::new();
        for s in &samples {
            let entry = newest.entry(s.pid).or_insert((s.timestamp, s.sm_util));
            if s.timestamp >= entry.0 {
                *entry = (s.timestamp, s.sm_util);
            }
        }
        if let Some(latest) = samples.iter().map(|s| s.timestamp).max() {
            self.last_seen.lock().unwrap_or_else(|e| e.into_inner()).insert(uuid.to_string(), latest);
        }
        Ok(newest.into_iter().map(|(pid, (_, util))| (pid, util)).collect())
    }

    /// GPU `uuid`'s own figures; one the driver cannot tell is left out.
    fn reading(&self, device: &Device, uuid: &str) -> Result<GpuReading, GpuError> {
        let memory = match device.memory_info() {
            Ok(m) => Some(m),
            Err(NvmlError::NotSupported) => None,
            Err(e) => return Err(self.failed("nvmlDeviceGetMemoryInfo_v2")(e)),
        };
        let utilization = match device.utilization_rates() {
            Ok(u) => Some(u.gpu),
            Err(NvmlError::NotSupported) => None,
            Err(e) => return Err(self.failed("nvmlDeviceGetUtilizationRates")(e)),
        };
        Ok(GpuReading {
            uuid: uuid.to_string(),
            memory_used: memory.as_ref().map(|m| m.used),
            memory_total: memory.as_ref().map(|m| m.total),
            utilization,
            note: None,
        })
    }
}

impl GpuSampler for NvmlProcesses {
    fn name(&self) -> &str {
        "nvml"
    }

    /// A GPU that cannot list its processes (`NVML_ERROR_NOT_SUPPORTED`) has none; one that
    /// is lost (`NVML_ERROR_GPU_IS_LOST`) is a trouble of the look, not its failure.
    fn sample(&self) -> Result<GpuSample, GpuError> {
        let nvml = initialised(&self.library)?;
        let mut sample = GpuSample::default();
        let mut devices = Vec::new();
        for uuid in &self.uuids {
            let lost = || GpuTrouble { uuid: uuid.clone(), why: super::nvml_health::LOST.into() };
            let device = match nvml.device_by_uuid(uuid.as_str()) {
                Err(NvmlError::GpuLost) => {
                    sample.troubles.push(lost());
                    continue;
                }
                found => found.map_err(self.failed("nvmlDeviceGetHandleByUUID"))?,
            };
            match self.reading(&device, uuid) {
                Err(GpuError::Nvml { source: NvmlError::GpuLost, .. }) => {
                    sample.troubles.push(lost());
                    continue;
                }
                reading => sample.gpus.push(reading?),
            }
            let running = match device.running_compute_processes() {
                Ok(running) => running,
                Err(NvmlError::NotSupported) => Vec::new(),
                Err(e) => return Err(self.failed("nvmlDeviceGetComputeRunningProcesses")(e)),
            };
            let utilization =
                if running.is_empty() { HashMap::new() } else { self.process_utilization(&device, uuid)? };
            sample.processes.extend(running.into_iter().map(|p| GpuProcess {
                gpu_uuid: uuid.clone(),
                pid: p.pid,
                used_memory: match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(bytes),
                    UsedGpuMemory::Unavailable => None,
                },
                sm_util: utilization.get(&p.pid).copied(),
            }));
            devices.push((uuid.clone(), device));
        }
        sample.troubles.extend(self.health.troubles(nvml, &devices));
        Ok(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_to_tell() {
        let gpu = Gpu { uuid: Some("GPU-1".into()), ..Gpu::nvidia(0) };
        let sampler = NvmlProcesses::new("/nonexistent/libnvidia-ml.so.1".into(), &[gpu]);
        let err = sampler.sample().unwrap_err();
        assert!(err.to_string().contains("/nonexistent/libnvidia-ml.so.1"), "{err}");
    }
}
