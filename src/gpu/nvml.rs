//! NVML, NVIDIA's management library (`libnvidia-ml.so.1`), loaded at run time: the GPUs
//! its driver sees, each with UUID, PCI bus id, model, memory and device file, typed as
//! Slurm's `AutoDetect=nvml` types them. The binary neither links against nor needs the
//! library: on a machine without it this source finds nothing and the next one is asked.

use super::{gres_type_of_model, Gpu, GpuError, GpuSource};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml as Library;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The library loaded when the configuration names none: the system's, found where the
/// dynamic loader looks.
pub const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";

/// The GPUs NVML, loaded from `library`, lists.
#[derive(Debug, Clone)]
pub struct Nvml {
    library: PathBuf,
}

impl Nvml {
    /// NVML as loaded from `library` (a path, or a bare file name the loader looks up).
    pub fn new(library: PathBuf) -> Nvml {
        Nvml { library }
    }
}

impl GpuSource for Nvml {
    fn name(&self) -> &str {
        "nvml"
    }

    /// One GPU per NVML device index. The model, UUID and type are needed; the PCI bus id,
    /// memory and device file are left out of a GPU whose driver does not give them.
    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        let nvml = initialised(&self.library)?;
        let failed = |call: &'static str| move |source| GpuError::Nvml { library: self.library.clone(), call, source };
        let count = nvml.device_count().map_err(failed("nvmlDeviceGetCount"))?;
        let mut gpus = Vec::new();
        for index in 0..count {
            let device = nvml.device_by_index(index).map_err(failed("nvmlDeviceGetHandleByIndex"))?;
            let model = device.name().map_err(failed("nvmlDeviceGetName"))?;
            let uuid = device.uuid().map_err(failed("nvmlDeviceGetUUID"))?;
            let pci_bus_id = optional(index, "nvmlDeviceGetPciInfo", device.pci_info()).map(|p| p.bus_id);
            let memory_mb = optional(index, "nvmlDeviceGetMemoryInfo", device.memory_info()).map(|m| m.total >> 20);
            let minor = optional(index, "nvmlDeviceGetMinorNumber", device.minor_number());
            gpus.push(Gpu {
                uuid: Some(uuid),
                gres_type: Some(gres_type_of_model(&model)),
                model: Some(model),
                devices: minor.map(|m| PathBuf::from(format!("/dev/nvidia{m}"))).into_iter().collect(),
                pci_bus_id,
                memory_mb,
                ..Gpu::nvidia(index)
            });
        }
        Ok(gpus)
    }
}

/// What `call` answered of GPU `index`, or `None` (logged) when it failed.
fn optional<T>(index: u32, call: &str, answer: Result<T, NvmlError>) -> Option<T> {
    answer.map_err(|e| tracing::debug!(gpu = index, "{call} failed: {e}")).ok()
}

/// NVML as loaded from `library`, initialised on its first use and kept for the rest of
/// the process: NVML is meant to be initialised once, not per query, and a re-read
/// configuration asks it again.
fn initialised(library: &Path) -> Result<&'static Library, GpuError> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static Library>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(nvml) = loaded.get(library) {
        return Ok(nvml);
    }
    let nvml = Library::builder().lib_path(library.as_os_str()).init().map_err(|source| match source {
        NvmlError::LibloadingError(e) if is_missing(library) => {
            GpuError::LibraryMissing { library: library.to_path_buf(), cause: e.to_string() }
        }
        source => GpuError::Nvml { library: library.to_path_buf(), call: "nvmlInit", source },
    })?;
    // Never shut down: the process keeps it to its end.
    let nvml: &'static Library = Box::leak(Box::new(nvml));
    loaded.insert(library.to_path_buf(), nvml);
    Ok(nvml)
}

/// Whether a `library` that could not be loaded is simply not on this machine: a path that
/// names no file, or a bare name the loader did not find (a machine without NVIDIA's
/// driver). A file that is there and does not load is an error worth telling.
fn is_missing(library: &Path) -> bool {
    match library.components().count() {
        1 => true,
        _ => !library.exists(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_absence_not_failure() {
        let err = Nvml::new("/nonexistent/libnvidia-ml.so.1".into()).discover().unwrap_err();
        assert!(matches!(err, GpuError::LibraryMissing { .. }), "{err}");
        assert!(!err.warrants_warning());
    }

    #[test]
    fn a_file_that_is_no_library_is_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("libnvidia-ml.so.1");
        std::fs::write(&file, "not a shared object").unwrap();
        let err = Nvml::new(file).discover().unwrap_err();
        assert!(matches!(err, GpuError::Nvml { call: "nvmlInit", .. }), "{err}");
        assert!(err.warrants_warning());
        assert!(err.to_string().contains("libnvidia-ml.so.1"), "{err}");
    }
}
