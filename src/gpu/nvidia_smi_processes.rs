//! `nvidia-smi --query-compute-apps`: the compute processes of the GPUs, for machines whose
//! GPUs were not found through NVML; nvidia-smi's [`GpuSampler`].

use super::sampler::{GpuProcess, GpuSampler};
use super::GpuError;

/// The arguments that make `nvidia-smi` list each compute process as `UUID, PID, MiB`.
pub const QUERY: [&str; 2] = ["--query-compute-apps=gpu_uuid,pid,used_memory", "--format=csv,noheader,nounits"];

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

    fn compute_processes(&self) -> Result<Vec<GpuProcess>, GpuError> {
        let out = std::process::Command::new(&self.program)
            .args(QUERY)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|source| GpuError::Run { program: self.program.clone(), source })?;
        if !out.status.success() {
            return Err(GpuError::Failed { program: self.program.clone(), status: out.status });
        }
        Ok(parse_compute_apps(&String::from_utf8_lossy(&out.stdout)))
    }
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
                GpuProcess { gpu_uuid: "GPU-1".into(), pid: 4242, used_memory: Some(11468 << 20) },
                GpuProcess { gpu_uuid: "GPU-2".into(), pid: 17, used_memory: None },
            ]
        );
        assert!(parse_compute_apps("").is_empty());
    }
}
