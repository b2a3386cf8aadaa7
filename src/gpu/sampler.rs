//! What runs on the GPUs now: each GPU's memory and utilisation, and the compute processes
//! its driver reports ([`GpuSampler`]), for the daemon's watch on GPU use outside the queue,
//! its record of each job's GPU use, and the views of the GPUs.

use super::GpuError;

/// A process with a compute context on a GPU, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    /// The UUID of the GPU it runs on (`GPU-…`).
    pub gpu_uuid: String,
    /// Its pid, in the host's pid namespace (a daemon in another one may not find it).
    pub pid: u32,
    /// The GPU memory it uses in bytes; `None` when the driver does not say.
    pub used_memory: Option<u64>,
    /// The share of the GPU's streaming multiprocessors it kept busy lately, in percent;
    /// `None` when the driver does not say (nvidia-smi, MIG instances).
    pub sm_util: Option<u32>,
}

/// One whole GPU's own figures, as the driver reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuReading {
    /// The GPU's UUID (`GPU-…`).
    pub uuid: String,
    /// Memory in use, bytes.
    pub memory_used: Option<u64>,
    /// Memory in all, bytes.
    pub memory_total: Option<u64>,
    /// How busy the GPU was lately, in percent.
    pub utilization: Option<u32>,
}

/// What one look at the GPUs saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuSample {
    /// Every GPU's compute processes.
    pub processes: Vec<GpuProcess>,
    /// Every whole GPU's figures (those the driver answered for).
    pub gpus: Vec<GpuReading>,
}

/// One way of seeing the machine's GPUs and the processes that use them.
pub trait GpuSampler: Send + Sync {
    /// A short name for messages (`nvml`).
    fn name(&self) -> &str;
    /// The GPUs' figures and compute processes now.
    fn sample(&self) -> Result<GpuSample, GpuError>;
}

/// The sampler of `gpus`, found by the source named `source` ([`super::GpuSource::name`]):
/// NVML's for NVML's GPUs, nvidia-smi's queries for those `nvidia-smi -L` or the driver's
/// `/proc` files listed; `None` for the others (configured or stand-ins), whose use is not
/// watched.
pub fn sampler_for(
    source: Option<&str>,
    nvml_library: &std::path::Path,
    gpus: &[super::Gpu],
) -> Option<Box<dyn GpuSampler>> {
    match source {
        Some("nvml") => Some(Box::new(super::NvmlProcesses::new(nvml_library.to_path_buf(), gpus))),
        Some("nvidia-smi" | "/proc/driver/nvidia/gpus") => Some(Box::new(super::NvidiaSmiProcesses::default())),
        _ => None,
    }
}
