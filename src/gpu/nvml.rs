//! NVML, NVIDIA's management library (`libnvidia-ml.so.1`), loaded at run time: the GPUs
//! its driver sees, each with UUID, PCI bus id, model, memory and device file, and the MIG
//! instances of those in MIG mode in their place, typed as Slurm's `AutoDetect=nvml` types
//! them. The binary neither links against nor needs the library: on a machine without it
//! this source finds nothing and the next one is asked.

use super::{gres_type_of_mig, gres_type_of_model, Gpu, GpuError, GpuSource, MigCaps};
use nvml_wrapper::error::{nvml_try, NvmlError};
use nvml_wrapper::{Device, Nvml as Library};
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

    /// One GPU per NVML device, or, for a GPU in MIG mode, one per MIG instance in its
    /// place, numbered one after the other as Slurm numbers them. The model, UUID and type
    /// are needed; the PCI bus id, memory and device file are left out of a GPU whose
    /// driver does not give them.
    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        let nvml = initialised(&self.library)?;
        let count = nvml.device_count().map_err(self.failed("nvmlDeviceGetCount"))?;
        let mut gpus = Vec::new();
        // Read once, when a GPU in MIG mode needs it.
        let mut caps: Option<MigCaps> = None;
        for driver_index in 0..count {
            let device = nvml.device_by_index(driver_index).map_err(self.failed("nvmlDeviceGetHandleByIndex"))?;
            let gpu = self.whole_gpu(driver_index, &device)?;
            let instances = self.mig_instances(&device, &gpu, &mut caps)?;
            if instances.is_empty() {
                gpus.push(gpu);
            } else {
                gpus.extend(instances);
            }
        }
        for (index, gpu) in (0u32..).zip(gpus.iter_mut()) {
            // Numbered after MIG instances, a whole GPU is named by its UUID: the driver's
            // number for it is not its index here.
            if gpu.mig_parent.is_none() && gpu.index != index {
                gpu.visible_id = gpu.uuid.clone();
            }
            gpu.index = index;
        }
        Ok(gpus)
    }
}

impl Nvml {
    /// The error of NVML function `call`.
    fn failed(&self, call: &'static str) -> impl Fn(NvmlError) -> GpuError + '_ {
        move |source| GpuError::Nvml { library: self.library.clone(), call, source }
    }

    /// The GPU `device` is, the driver's `index`.
    fn whole_gpu(&self, index: u32, device: &Device) -> Result<Gpu, GpuError> {
        let model = device.name().map_err(self.failed("nvmlDeviceGetName"))?;
        let uuid = device.uuid().map_err(self.failed("nvmlDeviceGetUUID"))?;
        let pci_bus_id = optional(index, "nvmlDeviceGetPciInfo", device.pci_info()).map(|p| p.bus_id);
        let memory_mb = optional(index, "nvmlDeviceGetMemoryInfo", device.memory_info()).map(|m| m.total >> 20);
        let minor = optional(index, "nvmlDeviceGetMinorNumber", device.minor_number());
        Ok(Gpu {
            uuid: Some(uuid),
            gres_type: Some(gres_type_of_model(&model)),
            model: Some(model),
            devices: minor.map(|m| PathBuf::from(format!("/dev/nvidia{m}"))).into_iter().collect(),
            pci_bus_id,
            memory_mb,
            ..Gpu::nvidia(index)
        })
    }

    /// The MIG instances of `gpu` (`device`), each typed by the GPU and its profile, visible
    /// by its UUID, and with its capability device files beside its GPU's (from `caps`,
    /// read on first need); none when the GPU is not in MIG mode (or cannot be).
    fn mig_instances(&self, device: &Device, gpu: &Gpu, caps: &mut Option<MigCaps>) -> Result<Vec<Gpu>, GpuError> {
        match device.mig_mode() {
            Ok(mode) if mode.current == MIG_ENABLED => {}
            Ok(_) => return Ok(Vec::new()),
            Err(e) => {
                tracing::debug!(gpu = gpu.index, "no MIG mode: {e}");
                return Ok(Vec::new());
            }
        }
        let slots = device.mig_device_count().map_err(self.failed("nvmlDeviceGetMaxMigDeviceCount"))?;
        let mut instances = Vec::new();
        for slot in 0..slots {
            let instance = match device.mig_device_by_index(slot) {
                Ok(instance) => instance,
                // An empty slot: instances need not fill them in order.
                Err(NvmlError::NotFound) => continue,
                Err(e) => return Err(self.failed("nvmlDeviceGetMigDeviceHandleByIndex")(e)),
            };
            let name = instance.name().map_err(self.failed("nvmlDeviceGetName"))?;
            let uuid = instance.uuid().map_err(self.failed("nvmlDeviceGetUUID"))?;
            let memory = optional(gpu.index, "nvmlDeviceGetMemoryInfo", instance.memory_info());
            let caps = caps.get_or_insert_with(MigCaps::read);
            let cap_files = match (device.minor_number(), instance_ids(&instance)) {
                (Ok(minor), Some((gi, ci))) => caps.device_files(minor, gi, ci),
                _ => None,
            };
            if cap_files.is_none() {
                tracing::warn!(gpu = gpu.index, %uuid, "the MIG instance's capability device files are not known");
            }
            let mut devices = gpu.devices.clone();
            devices.extend(cap_files.into_iter().flatten());
            instances.push(Gpu {
                devices,
                gres_type: Some(gres_type_of_mig(gpu.model.as_deref().unwrap_or_default(), &name)),
                model: Some(name),
                memory_mb: memory.map(|m| m.total >> 20),
                mig_parent: gpu.uuid.clone(),
                visible_id: Some(uuid.clone()),
                uuid: Some(uuid),
                ..gpu.clone()
            });
        }
        if instances.is_empty() {
            tracing::warn!(gpu = gpu.index, "MIG mode is on but the GPU has no MIG instance: it is scheduled whole");
        }
        Ok(instances)
    }
}

/// The GPU instance and compute instance a MIG instance is (`nvmlDeviceGetGpuInstanceId`,
/// `nvmlDeviceGetComputeInstanceId`); `None` when the library lacks either function (a
/// driver older than MIG) or they fail.
fn instance_ids(instance: &Device) -> Option<(u32, u32)> {
    let lib = instance.nvml().lib();
    if lib.nvmlDeviceGetGpuInstanceId.is_err() || lib.nvmlDeviceGetComputeInstanceId.is_err() {
        return None;
    }
    let (mut gi, mut ci) = (0, 0);
    // SAFETY: the handle is a live MIG device of a library that stays loaded for the rest of
    // the process, both functions were found in it (checked above), and each writes one
    // c_uint through the pointer it is given.
    let answered = unsafe {
        nvml_try(lib.nvmlDeviceGetGpuInstanceId(instance.handle(), &mut gi))
            .and_then(|()| nvml_try(lib.nvmlDeviceGetComputeInstanceId(instance.handle(), &mut ci)))
    };
    answered.map_err(|e| tracing::debug!("a MIG instance's ids: {e}")).ok().map(|()| (gi, ci))
}

/// `NVML_DEVICE_MIG_ENABLE`: a GPU's MIG mode when it is on.
const MIG_ENABLED: u32 = 1;

/// What `call` answered of GPU `index`, or `None` (logged) when it failed.
fn optional<T>(index: u32, call: &str, answer: Result<T, NvmlError>) -> Option<T> {
    answer.map_err(|e| tracing::debug!(gpu = index, "{call} failed: {e}")).ok()
}

/// NVML as loaded from `library`, initialised on its first use and kept for the rest of
/// the process: NVML is meant to be initialised once, not per query, and a re-read
/// configuration asks it again.
pub(super) fn initialised(library: &Path) -> Result<&'static Library, GpuError> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static Library>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(nvml) = loaded.get(library) {
        return Ok(nvml);
    }
    if cfg!(target_feature = "crt-static") {
        return Err(GpuError::StaticBinary { library: library.to_path_buf() });
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
