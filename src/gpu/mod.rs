//! The machine's GPUs: what one is ([`Gpu`]), where the list of them comes from
//! ([`GpuSource`], one implementation per file), and what a job's environment says of the
//! ones it was given ([`visible_devices`]); and what runs on them now ([`GpuSampler`]).
//!
//! Only the daemon discovers GPUs, once at its start (and again when its configuration is
//! re-read); client commands ask the daemon.

mod amd_processes;
mod amd_smi;
mod configured;
pub mod deadline;
mod mig_caps;
mod nvidia_smi;
mod nvidia_smi_processes;
mod nvml;
mod nvml_health;
mod nvml_processes;
mod proc_driver;
pub mod process;
mod rocm_smi;
mod rocm_smi_use;
mod sampler;
mod stand_in;
mod tool;

pub use amd_processes::AmdProcesses;
pub use configured::Configured;
pub use mig_caps::{MigCaps, DIR_VARIABLE as NVIDIA_CAPS_VARIABLE};
pub use nvidia_smi::{parse_nvidia_smi_list, NvidiaSmi};
pub use nvidia_smi_processes::{parse_compute_apps, parse_gpu_readings, NvidiaSmiProcesses};
pub use nvml::{Nvml, DEFAULT_LIBRARY as DEFAULT_NVML_LIBRARY};
pub use nvml_processes::NvmlProcesses;
pub use proc_driver::{parse_information, ProcDriver};
pub use rocm_smi::{parse_rocm_smi, RocmSmi};
pub use sampler::{sampler_for, GpuProcess, GpuReading, GpuSample, GpuSampler, GpuTrouble, MAX_PROCESSES};
pub use stand_in::StandIn;
pub use tool::TOOL_DEADLINE;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Who made a GPU, which decides the variable that tells programs which GPUs they may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA (`CUDA_VISIBLE_DEVICES`).
    #[default]
    Nvidia,
    /// AMD (`ROCR_VISIBLE_DEVICES`).
    Amd,
}

/// One GPU of the machine, as found or as configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredGpu")]
pub struct Gpu {
    /// The device index programs use (`CUDA_VISIBLE_DEVICES=0`).
    pub index: u32,
    /// The GPU's UUID (`GPU-…`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Its model (`NVIDIA H100 80GB HBM3`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The device files a job using it needs (`/dev/nvidia0`), when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<PathBuf>,
    /// Who made it.
    #[serde(default)]
    pub vendor: Vendor,
    /// Its PCI bus id (`00000000:07:00.0`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// Its total memory in MB, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Its type as the node's gres names it (`gpu:nvidia_a100-sxm4-40gb:2`), when the source
    /// gives one ([`gres_type_of_model`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gres_type: Option<String>,
    /// The UUID of the GPU this is a MIG instance of; `None` for a whole GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_parent: Option<String>,
    /// What the visible-devices variable names it by when that is not its index: a MIG
    /// instance's UUID (`MIG-…`), or the UUID of a whole GPU whose index on the node is not
    /// the driver's (on a machine with MIG instances, which are numbered with the GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible_id: Option<String>,
}

impl Gpu {
    /// An NVIDIA GPU known only by its index.
    pub fn nvidia(index: u32) -> Gpu {
        Gpu {
            index,
            uuid: None,
            model: None,
            devices: Vec::new(),
            vendor: Vendor::Nvidia,
            pci_bus_id: None,
            memory_mb: None,
            gres_type: None,
            mig_parent: None,
            visible_id: None,
        }
    }

    /// What the visible-devices variable names it by: its [`Gpu::visible_id`], else its
    /// index.
    pub fn visible_as(&self) -> String {
        self.visible_id.clone().unwrap_or_else(|| self.index.to_string())
    }
}

/// The gres type of a GPU whose model is `model`, as Slurm's GPU autodetection makes it:
/// the model in lower case with spaces made underscores (`NVIDIA A100-SXM4-40GB` →
/// `nvidia_a100-sxm4-40gb`).
pub fn gres_type_of_model(model: &str) -> String {
    model.trim().to_lowercase().replace(' ', "_")
}

/// The gres type of a MIG instance named `instance` (`NVIDIA A100-SXM4-40GB MIG 3g.20gb`) of
/// a GPU whose model is `model`, as Slurm's NVML autodetection makes it: the GPU's type up to
/// its first `-`, then `_` and the profile (`nvidia_a100_3g.20gb`). An instance whose name
/// has no `MIG` profile is typed by its whole name.
pub fn gres_type_of_mig(model: &str, instance: &str) -> String {
    let gpu = gres_type_of_model(model);
    let gpu = gpu.split('-').next().unwrap_or_default();
    let instance = gres_type_of_model(instance);
    match instance.find("mig_") {
        Some(at) => format!("{gpu}{}", &instance[at + 3..]),
        None => instance,
    }
}

/// GPU memory in GiB with one decimal, as the GPUs' views and notices show it (`21.3`).
pub fn gib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 30) as f64)
}

/// A GPU's share of memory held by `shards` of its `shards_per_gpu` shards: that part of
/// `total` bytes, rounded down (`shards_per_gpu` 0 counts as 1, a GPU not split).
pub fn share_of(total: u64, shards: u32, shards_per_gpu: u32) -> u64 {
    (total as u128 * shards as u128 / shards_per_gpu.max(1) as u128) as u64
}

/// A GPU as read: a full record, or a bare index (as [`as_indices`] writes it).
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredGpu {
    Index(u32),
    Record {
        index: u32,
        #[serde(default)]
        uuid: Option<String>,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        devices: Vec<PathBuf>,
        #[serde(default)]
        vendor: Vendor,
        #[serde(default)]
        pci_bus_id: Option<String>,
        #[serde(default)]
        memory_mb: Option<u64>,
        #[serde(default)]
        gres_type: Option<String>,
        #[serde(default)]
        mig_parent: Option<String>,
        #[serde(default)]
        visible_id: Option<String>,
    },
}

impl From<StoredGpu> for Gpu {
    fn from(stored: StoredGpu) -> Gpu {
        match stored {
            StoredGpu::Index(index) => Gpu::nvidia(index),
            StoredGpu::Record {
                index,
                uuid,
                model,
                devices,
                vendor,
                pci_bus_id,
                memory_mb,
                gres_type,
                mig_parent,
                visible_id,
            } => Gpu { index, uuid, model, devices, vendor, pci_bus_id, memory_mb, gres_type, mig_parent, visible_id },
        }
    }
}

/// Stores a list of GPUs as their indices (`[0,1]`), the form job records have always had;
/// it reads full records too. Read back, a GPU is known by its index alone.
pub mod as_indices {
    use super::Gpu;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `gpus` as `[0,1]`.
    pub fn serialize<S: Serializer>(gpus: &[Gpu], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(gpus.iter().map(|g| g.index))
    }

    /// Reads `[0,1]` (or full records).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Gpu>, D::Error> {
        Vec::<Gpu>::deserialize(d)
    }
}

/// Why a source could not list GPUs.
#[derive(Debug, Error)]
pub enum GpuError {
    /// A program the source runs could not be started, or ran past its deadline.
    #[error("{0}")]
    Tool(#[from] crate::program::ProgramError),
    /// The program ran and failed.
    #[error("{program} failed: {status}")]
    Failed {
        /// The program.
        program: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// A file or directory the source reads could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A library the source loads is not on this machine.
    #[error("cannot load {library}: {cause}")]
    LibraryMissing {
        /// The library, as configured.
        library: PathBuf,
        /// The loader's message.
        cause: String,
    },
    /// This binary is linked statically (the release tarball's), and a static binary cannot
    /// load a shared library: the next sources (nvidia-smi, the driver's files) are asked.
    #[error(
        "this slurmlet is a static binary, which cannot load {}: the GPUs are found and sampled \
         through nvidia-smi instead, and GPU health events (XIDs) are not watched; install the \
         Debian package or build with cargo for NVML",
        .library.display()
    )]
    StaticBinary {
        /// The library, as configured.
        library: PathBuf,
    },
    /// NVML loaded, and a call into it failed.
    #[error("NVML from {library}: {call} failed: {source}")]
    Nvml {
        /// The library, as configured.
        library: PathBuf,
        /// The NVML function (`nvmlInit`, `nvmlDeviceGetName`).
        call: &'static str,
        /// NVML's answer.
        source: nvml_wrapper::error::NvmlError,
    },
    /// A tool ran and printed what cannot be read (no JSON where JSON was asked for).
    #[error("{program} said what cannot be read: {why}")]
    Unreadable {
        /// The program.
        program: String,
        /// What was wrong.
        why: String,
    },
    /// A tool failed, and the one asked in its place failed too.
    #[error("{first}; and then {then}")]
    Both {
        /// The first tool's error.
        first: Box<GpuError>,
        /// The second's.
        then: Box<GpuError>,
    },
    /// A call into the library did not answer in time (see [`deadline`]).
    #[error("{what} did not answer within {} s; the call is abandoned", .after.as_secs_f64())]
    Hung {
        /// The call.
        what: String,
        /// How long it was waited for.
        after: std::time::Duration,
    },
}

impl GpuError {
    /// Whether the error is worth a warning: NVML that loads and then fails is a broken
    /// driver or library. The other errors most often only mean that the machine has no
    /// such program, directory or library, and are no news.
    pub fn warrants_warning(&self) -> bool {
        // The static binary on a machine with NVIDIA's driver loaded: said, once, at the start.
        let nvidia_machine = || Path::new("/proc/driver/nvidia").exists();
        matches!(self, GpuError::Nvml { .. } | GpuError::Hung { .. })
            || matches!(self, GpuError::StaticBinary { .. } if nvidia_machine())
            || matches!(self, GpuError::Tool(e) if e.timed_out())
    }
}

/// One way of listing the machine's GPUs. It is asked on a thread of its own, which is given
/// up on if it does not answer in time (see [`discover`]).
pub trait GpuSource: Send {
    /// A short name for messages (`nvidia-smi`).
    fn name(&self) -> &str;
    /// The GPUs this source knows of (empty: it knows of none).
    fn discover(&self) -> Result<Vec<Gpu>, GpuError>;
}

/// What the configuration says of GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuSetting {
    /// Nothing: the daemon finds them at its start.
    Detect,
    /// These device indices, whatever the machine has.
    Configured(Vec<u32>),
}

/// The sources to ask, in order, for `setting`: the configured list alone, or NVML (loaded
/// from `nvml_library`), then `nvidia-smi -L`, then `/proc/driver/nvidia/gpus`, then AMD's
/// `rocm-smi`, then `SLURMLET_GPUS=N` stand-ins (for trying things out on a machine without
/// GPUs). The first that finds any GPU wins.
pub fn sources(setting: &GpuSetting, nvml_library: &Path) -> Vec<Box<dyn GpuSource>> {
    match setting {
        GpuSetting::Configured(indices) => vec![Box::new(Configured::new(indices.clone()))],
        GpuSetting::Detect => vec![
            Box::new(Nvml::new(nvml_library.to_path_buf())),
            Box::new(NvidiaSmi::default()),
            Box::new(ProcDriver::default()),
            Box::new(RocmSmi::default()),
            Box::new(StandIn::from_env()),
        ],
    }
}

/// The GPUs a source found, and its name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The GPUs (empty: no source found any).
    pub gpus: Vec<Gpu>,
    /// The [`GpuSource::name`] of the source that found them; `None` when none did.
    pub source: Option<String>,
}

/// The GPUs of this machine as `setting` says: the first source in [`sources`] that finds
/// any (none when no source does). A source that fails is passed over, as one that finds
/// none; its error is logged, as a warning when it [warrants one](GpuError::warrants_warning).
pub fn discover(setting: &GpuSetting, nvml_library: &Path) -> Found {
    for source in sources(setting, nvml_library) {
        let name = source.name().to_string();
        // A tool's own deadline passes first; this one is for a library that hangs.
        let asked =
            deadline::within(&format!("GPU discovery through {name}"), DISCOVER_DEADLINE, move || source.discover());
        match asked {
            Ok(gpus) if !gpus.is_empty() => {
                tracing::debug!(source = name, count = gpus.len(), "GPUs found");
                return Found { gpus, source: Some(name) };
            }
            Ok(_) => tracing::debug!(source = name, "no GPU found"),
            Err(e) if e.warrants_warning() => tracing::warn!(source = name, "no GPU found: {e}"),
            Err(e) => tracing::debug!(source = name, "no GPU found: {e}"),
        }
    }
    Found::default()
}

/// How long one source may take to list the GPUs: a tool's deadline and a little more.
pub const DISCOVER_DEADLINE: std::time::Duration =
    tool::TOOL_DEADLINE.saturating_add(std::time::Duration::from_secs(5));

/// `0,1,3`: the indices of `gpus`, as Slurm's GPU variables list them.
pub fn index_list(gpus: &[Gpu]) -> String {
    gpus.iter().map(|g| g.index.to_string()).collect::<Vec<_>>().join(",")
}

/// The variables that show programs which of the node's GPUs they may use, one per vendor
/// present among `node`'s GPUs: the indices of `given` of that vendor (empty: none), or
/// what else names one ([`Gpu::visible_as`]: a MIG instance's UUID).
/// NVIDIA's is `CUDA_VISIBLE_DEVICES`, AMD's `ROCR_VISIBLE_DEVICES`.
pub fn visible_devices(given: &[Gpu], node: &[Gpu]) -> Vec<(&'static str, String)> {
    let mut vars = Vec::new();
    for vendor in [Vendor::Nvidia, Vendor::Amd] {
        if !given.iter().chain(node).any(|g| g.vendor == vendor) {
            continue;
        }
        let mine: Vec<Gpu> = given.iter().filter(|g| g.vendor == vendor).cloned().collect();
        let names: Vec<String> = mine.iter().map(Gpu::visible_as).collect();
        vars.push((visible_devices_variable(vendor), names.join(",")));
    }
    vars
}

/// The variable that shows programs the GPUs of `vendor` they may use.
pub fn visible_devices_variable(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Nvidia => "CUDA_VISIBLE_DEVICES",
        Vendor::Amd => "ROCR_VISIBLE_DEVICES",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_a_gpus_memory() {
        assert_eq!(share_of(40 << 30, 4, 32), 5 << 30);
        assert_eq!(share_of(40 << 30, 1, 3), (40u64 << 30) / 3);
        assert_eq!(share_of(40 << 30, 1, 0), 40 << 30, "a GPU not split");
        assert_eq!(gib(22_870_700_000), "21.3");
        assert_eq!(gib(10 << 30), "10.0");
    }

    #[test]
    fn a_stored_gpu_is_a_bare_index_or_a_record() {
        let old: Vec<Gpu> = serde_json::from_str("[0,2]").unwrap();
        assert_eq!(old, vec![Gpu::nvidia(0), Gpu::nvidia(2)]);
        let gpu = Gpu {
            index: 1,
            uuid: Some("GPU-5c2b3f8e-0e4a-4f4c-9a5e-2f0c1d8b7a61".into()),
            model: Some("NVIDIA H100 80GB HBM3".into()),
            devices: vec!["/dev/nvidia1".into()],
            vendor: Vendor::Nvidia,
            pci_bus_id: Some("00000000:19:00.0".into()),
            memory_mb: Some(81559),
            gres_type: Some("nvidia_h100_80gb_hbm3".into()),
            mig_parent: None,
            visible_id: None,
        };
        let text = serde_json::to_string(&gpu).unwrap();
        assert_eq!(serde_json::from_str::<Gpu>(&text).unwrap(), gpu);
        assert_eq!(serde_json::to_string(&Gpu::nvidia(3)).unwrap(), r#"{"index":3,"vendor":"nvidia"}"#);
    }

    #[test]
    fn a_job_record_keeps_bare_indices() {
        #[derive(Serialize, Deserialize)]
        struct Record {
            #[serde(rename = "gpu_ids", with = "as_indices")]
            gpus: Vec<Gpu>,
        }
        let gpu = Gpu { uuid: Some("GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93".into()), ..Gpu::nvidia(1) };
        let text = serde_json::to_string(&Record { gpus: vec![Gpu::nvidia(0), gpu] }).unwrap();
        assert_eq!(text, r#"{"gpu_ids":[0,1]}"#);
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back.gpus, vec![Gpu::nvidia(0), Gpu::nvidia(1)]);
    }

    #[test]
    fn configured_gpus_are_the_only_source() {
        let library = Path::new(DEFAULT_NVML_LIBRARY);
        let names: Vec<String> =
            sources(&GpuSetting::Configured(vec![0]), library).iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names, ["configured"]);
        let names: Vec<String> = sources(&GpuSetting::Detect, library).iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names, ["nvml", "nvidia-smi", "/proc/driver/nvidia/gpus", "rocm-smi", "SLURMLET_GPUS"]);
    }

    #[test]
    fn a_gpu_is_typed_as_slurm_types_it_from_its_model() {
        assert_eq!(gres_type_of_model("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
        assert_eq!(gres_type_of_model("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
        assert_eq!(gres_type_of_model("Tesla V100-PCIE-16GB"), "tesla_v100-pcie-16gb");
    }

    #[test]
    fn a_mig_instance_is_typed_by_its_gpu_and_profile() {
        assert_eq!(
            gres_type_of_mig("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB MIG 3g.20gb"),
            "nvidia_a100_3g.20gb"
        );
        assert_eq!(
            gres_type_of_mig("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"),
            "nvidia_a100_1c.3g.20gb"
        );
        assert_eq!(
            gres_type_of_mig("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3 MIG 1g.10gb"),
            "nvidia_h100_80gb_hbm3_1g.10gb"
        );
        assert_eq!(gres_type_of_mig("NVIDIA A100-SXM4-40GB", "Some Instance"), "some_instance");
    }

    #[test]
    fn mig_instances_are_visible_by_uuid() {
        let mig = Gpu { visible_id: Some("MIG-0d8c7b6a-5f4e-3d2c-1b0a-9f8e7d6c5b4a".into()), ..Gpu::nvidia(0) };
        let node = [mig.clone(), Gpu::nvidia(1)];
        let all = format!("{},1", mig.visible_id.as_deref().unwrap());
        assert_eq!(visible_devices(&node, &node), [("CUDA_VISIBLE_DEVICES", all)]);
        assert_eq!(index_list(&node), "0,1", "SLURM_JOB_GPUS keeps the indices");
    }

    #[test]
    fn old_records_read_without_the_new_fields() {
        let gpu: Gpu = serde_json::from_str(r#"{"index":0,"uuid":"GPU-1","vendor":"nvidia"}"#).unwrap();
        assert_eq!(gpu, Gpu { uuid: Some("GPU-1".into()), ..Gpu::nvidia(0) });
    }

    #[test]
    fn each_vendor_has_its_variable() {
        let amd = |index| Gpu { vendor: Vendor::Amd, ..Gpu::nvidia(index) };
        let node = [Gpu::nvidia(0), Gpu::nvidia(1)];
        assert_eq!(visible_devices(&node[1..], &node), [("CUDA_VISIBLE_DEVICES", "1".to_string())]);
        assert_eq!(visible_devices(&[], &node), [("CUDA_VISIBLE_DEVICES", String::new())]);
        let node = [amd(0), amd(1)];
        assert_eq!(visible_devices(&node, &node), [("ROCR_VISIBLE_DEVICES", "0,1".to_string())]);
        assert!(visible_devices(&[], &[]).is_empty());
    }
}
