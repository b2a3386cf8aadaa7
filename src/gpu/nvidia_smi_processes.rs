//! `nvidia-smi --query-gpu` and `--query-compute-apps`: the GPUs' figures and compute
//! processes, for machines whose GPUs were not found through NVML; nvidia-smi's
//! [`GpuSampler`].

use super::sampler::{GpuProcess, GpuReading, GpuSample, GpuSampler};
use super::tool::output_of;
use super::GpuError;

/// The arguments that make `nvidia-smi` list each compute process as `UUID, PID, MiB`.
pub const QUERY: [&str; 2] = ["--query-compute-apps=gpu_uuid,pid,used_memory", "--format=csv,noheader,nounits"];

/// The arguments that make `nvidia-smi` list each GPU as `UUID, used MiB, total MiB, %`.
pub const GPU_QUERY: [&str; 2] =
    ["--query-gpu=uuid,memory.used,memory.total,utilization.gpu", "--format=csv,noheader,nounits"];

/// Runs `nvidia-smi` (looked up in `PATH`) to list the GPUs' compute processes.
#[derive(Debug, Clone)]
pub struct NvidiaSmiProcesses {
    program: String,
}

impl Default for NvidiaSmiProcesses {
    fn default() -> NvidiaSmiProcesses {
        NvidiaSmiProcesses { program: "nvidia-smi".into() }
    }
}

impl GpuSampler for NvidiaSmiProcesses {
    fn name(&self) -> &str {
        &self.program
    }

    fn sample(&self) -> Result<GpuSample, GpuError> {
        Ok(GpuSample {
            gpus: parse_gpu_readings(&output_of(&self.program, &GPU_QUERY)?),
            processes: parse_compute_apps(&output_of(&self.program, &QUERY)?),
            troubles: Vec::new(),
        })
    }
}

/// Parses `GPU-…, 1024, 81559, 37` lines (memory in MiB, `[N/A]` when unknown); other lines
/// are skipped.
pub fn parse_gpu_readings(text: &str) -> Vec<GpuReading> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [uuid, used, total, utilization] = fields[..] else { return None };
            let mib = |f: &str| f.parse::<u64>().ok().map(|m| m << 20);
            uuid.starts_with("GPU-").then(|| GpuReading {
                uuid: uuid.to_string(),
                memory_used: mib(used),
                memory_total: mib(total),
                utilization: utilization.parse().ok(),
                note: None,
            })
        })
        .collect()
}

/// Parses `GPU-…, 4242, 11468` lines (memory in MiB, `[N/A]` when unknown); other lines
/// (a message that there is no process) are skipped.
pub fn parse_compute_apps(text: &str) -> Vec<GpuProcess> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [uuid, pid, memory] = fields[..] else { return None };
            Some(GpuProcess {
                gpu_uuid: uuid.to_string(),
                pid: pid.parse().ok()?,
                used_memory: memory.parse::<u64>().ok().map(|mib| mib << 20),
                sm_util: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_compute_apps() {
        let text = "GPU-1, 4242, 11468\nGPU-2, 17, [N/A]\nNo running processes found\n";
        assert_eq!(
            parse_compute_apps(text),
            [
                GpuProcess { gpu_uuid: "GPU-1".into(), pid: 4242, used_memory: Some(11468 << 20), sm_util: None },
                GpuProcess { gpu_uuid: "GPU-2".into(), pid: 17, used_memory: None, sm_util: None },
            ]
        );
        assert!(parse_compute_apps("").is_empty());
    }

    #[test]
    fn parses_gpu_readings() {
        let text = "GPU-1, 1024, 81559, 37\nGPU-2, [N/A], 81559, [N/A]\nsomething else\n";
        let readings = parse_gpu_readings(text);
        assert_eq!(readings.len(), 2);
        assert_eq!(
            readings[0],
            GpuReading {
                uuid: "GPU-1".into(),
                memory_used: Some(1 << 30),
                memory_total: Some(81559 << 20),
                utilization: Some(37),
                note: None,
            }
        );
        assert_eq!((readings[1].memory_used, readings[1].utilization), (None, None));
    }
}
