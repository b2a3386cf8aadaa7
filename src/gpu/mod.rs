//! The machine's GPUs: what one is ([`Gpu`]), where the list of them comes from
//! ([`GpuSource`], one implementation per file), and what a job's environment says of the
//! ones it was given ([`visible_devices`]).
//!
//! Only the daemon discovers GPUs, once at its start (and again when its configuration is
//! re-read); client commands ask the daemon.

mod configured;
mod nvidia_smi;
mod proc_driver;
mod stand_in;

pub use configured::Configured;
pub use nvidia_smi::{parse_nvidia_smi_list, NvidiaSmi};
pub use proc_driver::{parse_information, ProcDriver};
pub use stand_in::StandIn;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
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
}

impl Gpu {
    /// An NVIDIA GPU known only by its index.
    pub fn nvidia(index: u32) -> Gpu {
        Gpu { index, uuid: None, model: None, devices: Vec::new(), vendor: Vendor::Nvidia }
    }
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
    },
}

impl From<StoredGpu> for Gpu {
    fn from(stored: StoredGpu) -> Gpu {
        match stored {
            StoredGpu::Index(index) => Gpu::nvidia(index),
            StoredGpu::Record { index, uuid, model, devices, vendor } => Gpu { index, uuid, model, devices, vendor },
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
    /// A program the source runs could not be started.
    #[error("cannot run {program}: {source}")]
    Run {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
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
}

/// One way of listing the machine's GPUs.
pub trait GpuSource {
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

/// The sources to ask, in order, for `setting`: the configured list alone, or `nvidia-smi
/// -L`, then `/proc/driver/nvidia/gpus`, then `SLURMLET_GPUS=N` stand-ins (for trying
/// things out on a machine without GPUs). The first that finds any GPU wins.
pub fn sources(setting: &GpuSetting) -> Vec<Box<dyn GpuSource>> {
    match setting {
        GpuSetting::Configured(indices) => vec![Box::new(Configured::new(indices.clone()))],
        GpuSetting::Detect => {
            vec![Box::new(NvidiaSmi::default()), Box::new(ProcDriver::default()), Box::new(StandIn::from_env())]
        }
    }
}

/// The GPUs of this machine as `setting` says: the first source in [`sources`] that finds
/// any (empty when none does). A source that fails is passed over, as one that finds none.
pub fn discover(setting: &GpuSetting) -> Vec<Gpu> {
    for source in sources(setting) {
        match source.discover() {
            Ok(gpus) if !gpus.is_empty() => {
                tracing::debug!(source = source.name(), count = gpus.len(), "GPUs found");
                return gpus;
            }
            Ok(_) => tracing::debug!(source = source.name(), "no GPU found"),
            Err(e) => tracing::debug!(source = source.name(), "no GPU found: {e}"),
        }
    }
    Vec::new()
}

/// `0,1,3`: the indices of `gpus`, as Slurm's GPU variables list them.
pub fn index_list(gpus: &[Gpu]) -> String {
    gpus.iter().map(|g| g.index.to_string()).collect::<Vec<_>>().join(",")
}

/// The variables that show programs which of the node's GPUs they may use, one per vendor
/// present among `node`'s GPUs: the indices of `given` of that vendor (empty: none).
/// NVIDIA's is `CUDA_VISIBLE_DEVICES`, AMD's `ROCR_VISIBLE_DEVICES`.
pub fn visible_devices(given: &[Gpu], node: &[Gpu]) -> Vec<(&'static str, String)> {
    let mut vars = Vec::new();
    for vendor in [Vendor::Nvidia, Vendor::Amd] {
        if !given.iter().chain(node).any(|g| g.vendor == vendor) {
            continue;
        }
        let mine: Vec<Gpu> = given.iter().filter(|g| g.vendor == vendor).cloned().collect();
        vars.push((visible_devices_variable(vendor), index_list(&mine)));
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
    fn a_stored_gpu_is_a_bare_index_or_a_record() {
        let old: Vec<Gpu> = serde_json::from_str("[0,2]").unwrap();
        assert_eq!(old, vec![Gpu::nvidia(0), Gpu::nvidia(2)]);
        let gpu = Gpu {
            index: 1,
            uuid: Some("GPU-5c2b3f8e-0e4a-4f4c-9a5e-2f0c1d8b7a61".into()),
            model: Some("NVIDIA H100 80GB HBM3".into()),
            devices: vec!["/dev/nvidia1".into()],
            vendor: Vendor::Nvidia,
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
        let names: Vec<String> =
            sources(&GpuSetting::Configured(vec![0])).iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names, ["configured"]);
        let names: Vec<String> = sources(&GpuSetting::Detect).iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names, ["nvidia-smi", "/proc/driver/nvidia/gpus", "SLURMLET_GPUS"]);
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
