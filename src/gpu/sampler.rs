//! What runs on the GPUs now: the compute processes each GPU's driver reports
//! ([`GpuSampler`]), for the daemon's watch on GPU use outside the queue.

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
}

/// One way of seeing the processes that use the machine's GPUs.
pub trait GpuSampler: Send + Sync {
    /// A short name for messages (`nvml`).
    fn name(&self) -> &str;
    /// The compute processes of every GPU now.
    fn compute_processes(&self) -> Result<Vec<GpuProcess>, GpuError>;
}

/// The sampler of `gpus`, found by the source named `source` ([`super::GpuSource::name`]):
/// NVML's for NVML's GPUs, `nvidia-smi --query-compute-apps` for those `nvidia-smi -L` or
/// the driver's `/proc` files listed; `None` for the others (configured or stand-ins), whose
/// use is not watched.
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
