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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuReading {
    /// The GPU's UUID (`GPU-…`).
    pub uuid: String,
    /// Memory in use, bytes.
    pub memory_used: Option<u64>,
    /// Memory in all, bytes.
    pub memory_total: Option<u64>,
    /// How busy the GPU was lately, in percent.
    pub utilization: Option<u32>,
    /// What the driver said that cannot be true, and was set right to read as above
    /// (`utilisation 400%`); `None` when all was plausible.
    pub note: Option<String>,
}

/// What one look at the GPUs saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuSample {
    /// Every GPU's compute processes.
    pub processes: Vec<GpuProcess>,
    /// Every whole GPU's figures (those the driver answered for).
    pub gpus: Vec<GpuReading>,
    /// What the driver says is wrong with a GPU: a critical XID event, memory it retired or
    /// remapped and that needs a reset, a GPU lost (see [`GpuTrouble`]).
    pub troubles: Vec<GpuTrouble>,
}

/// Something wrong with one GPU that takes it out of service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuTrouble {
    /// The GPU's UUID.
    pub uuid: String,
    /// What the driver said, as the node's reason shows it (`XID 79: GPU has fallen off the
    /// bus`).
    pub why: String,
}

/// The most troubles one look keeps (a driver may report an event storm).
pub const MAX_TROUBLES: usize = 64;

/// The longest text of one trouble kept.
pub const MAX_TROUBLE_TEXT: usize = 200;

/// The most compute processes one look keeps. A machine runs a few per GPU, a busy one some
/// dozens; a driver or tool that lists more is not believed past this, so that a flood costs
/// the daemon a bounded amount of work while every user waits on it.
pub const MAX_PROCESSES: usize = 4096;

impl GpuSample {
    /// This look with what cannot be true set right: at most [`MAX_PROCESSES`] processes, no
    /// utilisation over 100%, no GPU with more memory in use than it has, no process with
    /// more than its GPU. A GPU's figures set right carry a note of what the driver said.
    /// Returns the kinds of thing set right, for a line in the log.
    pub fn bounded(mut self) -> (GpuSample, Vec<String>) {
        let mut doubts = Vec::new();
        if self.troubles.len() > MAX_TROUBLES {
            doubts
                .push(format!("{} GPU troubles reported; only the first {MAX_TROUBLES} are kept", self.troubles.len()));
            self.troubles.truncate(MAX_TROUBLES);
        }
        for t in &mut self.troubles {
            if t.why.len() > MAX_TROUBLE_TEXT {
                t.why = t.why.chars().take(MAX_TROUBLE_TEXT).collect();
            }
        }
        if self.processes.len() > MAX_PROCESSES {
            doubts.push(format!(
                "{} compute processes listed; only the first {MAX_PROCESSES} are kept",
                self.processes.len()
            ));
            self.processes.truncate(MAX_PROCESSES);
        }
        for gpu in &mut self.gpus {
            let mut notes = Vec::new();
            if let Some(u) = gpu.utilization.filter(|&u| u > 100) {
                notes.push(format!("utilisation {u}%"));
                gpu.utilization = Some(100);
            }
            if let (Some(used), Some(total)) = (gpu.memory_used, gpu.memory_total) {
                if used > total {
                    notes.push(format!("{used} bytes in use of {total}"));
                    gpu.memory_used = Some(total);
                }
            }
            if !notes.is_empty() {
                let note = notes.join(", ");
                doubts.push(format!("GPU {}: {note}", gpu.uuid));
                gpu.note = Some(note);
            }
        }
        let totals: std::collections::HashMap<&str, u64> =
            self.gpus.iter().filter_map(|g| Some((g.uuid.as_str(), g.memory_total?))).collect();
        let mut processes_set_right = 0;
        for p in &mut self.processes {
            let total = totals.get(p.gpu_uuid.as_str()).copied();
            let over_memory = matches!((p.used_memory, total), (Some(used), Some(total)) if used > total);
            let over_util = p.sm_util.is_some_and(|u| u > 100);
            if over_memory {
                p.used_memory = total;
            }
            if over_util {
                p.sm_util = Some(100);
            }
            processes_set_right += usize::from(over_memory || over_util);
        }
        if processes_set_right > 0 {
            doubts.push(format!("{processes_set_right} processes with more memory or utilisation than their GPU has"));
        }
        (self, doubts)
    }
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
/// `/proc` files listed, `amd-smi`'s (or `rocm-smi`'s) for the AMD GPUs `rocm-smi` listed;
/// `None` for the others (configured or stand-ins), whose use is not watched.
pub fn sampler_for(
    source: Option<&str>,
    nvml_library: &std::path::Path,
    gpus: &[super::Gpu],
) -> Option<Box<dyn GpuSampler>> {
    match source {
        Some("nvml") => Some(Box::new(super::NvmlProcesses::new(nvml_library.to_path_buf(), gpus))),
        Some("nvidia-smi" | "/proc/driver/nvidia/gpus") => Some(Box::new(super::NvidiaSmiProcesses::default())),
        Some("rocm-smi") => Some(Box::new(super::AmdProcesses::new(gpus))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, used: u64, util: u32) -> GpuProcess {
        GpuProcess { gpu_uuid: "GPU-1".into(), pid, used_memory: Some(used), sm_util: Some(util) }
    }

    #[test]
    fn impossible_figures_are_set_right_and_noted() {
        let gpu = GpuReading {
            uuid: "GPU-1".into(),
            memory_used: Some(50 << 30),
            memory_total: Some(40 << 30),
            utilization: Some(400),
            note: None,
        };
        let sample = GpuSample {
            gpus: vec![gpu],
            processes: vec![process(7, 60 << 30, 250), process(8, 1 << 30, 50)],
            ..Default::default()
        };
        let (sample, doubts) = sample.bounded();
        let gpu = &sample.gpus[0];
        assert_eq!((gpu.utilization, gpu.memory_used), (Some(100), Some(40 << 30)));
        assert_eq!(gpu.note.as_deref(), Some("utilisation 400%, 53687091200 bytes in use of 42949672960"));
        assert_eq!(sample.processes[0], process(7, 40 << 30, 100));
        assert_eq!(sample.processes[1], process(8, 1 << 30, 50), "a plausible process is left as it is");
        assert_eq!(doubts.len(), 2, "{doubts:?}");
    }

    #[test]
    fn a_storm_of_troubles_is_cut_to_its_bounds() {
        let troubles = (0..MAX_TROUBLES + 5)
            .map(|i| GpuTrouble { uuid: format!("GPU-{i}"), why: "x".repeat(MAX_TROUBLE_TEXT * 2) })
            .collect();
        let (sample, doubts) = GpuSample { troubles, ..Default::default() }.bounded();
        assert_eq!(sample.troubles.len(), MAX_TROUBLES);
        assert!(sample.troubles.iter().all(|t| t.why.len() == MAX_TROUBLE_TEXT));
        assert!(doubts[0].contains("GPU troubles reported"), "{doubts:?}");
    }

    #[test]
    fn a_flood_of_processes_is_cut_to_the_cap() {
        let processes = (0..200_000).map(|pid| process(pid, 1 << 20, 1)).collect();
        let (sample, doubts) = GpuSample { processes, ..Default::default() }.bounded();
        assert_eq!(sample.processes.len(), MAX_PROCESSES);
        assert_eq!(doubts, vec![format!("200000 compute processes listed; only the first {MAX_PROCESSES} are kept")]);
        let (plain, none) = GpuSample { processes: vec![process(1, 1, 1)], ..Default::default() }.bounded();
        assert_eq!((plain.processes.len(), none.len()), (1, 0));
    }
}
