//! The GPU lines seff adds for a job that was given GPUs, in the words of the "Detailed
//! Utilization" part of Princeton's jobstats: each GPU's mean utilisation over the job's run
//! (`0%` marked `<-- GPU was not used`), then each GPU's largest memory use against its
//! memory.
//!
//! jobstats reads each GPU's duty cycle and memory from Prometheus for the GPUs Slurm gave
//! the job; here they are the daemon's samples of each of the job's GPUs
//! (`GET /slurmlet/v1/gpus/samples`) within the job's run, so they are the GPU's whole
//! figures, as jobstats' are: on a GPU shared in shards they count the other jobs on it
//! too. A sample is the mean of the daemon's looks over one step of
//! `gpu_history_resolution` seconds, so a step the job only partly ran in counts whole.

use super::units::{human_bytes, utilization_text};
use crate::api::acct::AcctJob;
use crate::api::activity::GpuSeries;
use std::fmt::Write;

/// What one GPU did during a job.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFigures {
    /// Its index.
    pub index: u32,
    /// Its mean utilisation, percent (`None`: no sample falls in the job's run).
    pub mean_util: Option<f64>,
    /// Its largest memory use of one sample, bytes (`None` likewise).
    pub max_memory: Option<u64>,
    /// Its memory, bytes, where known.
    pub total_memory: Option<u64>,
}

/// The figures of each of `job`'s GPUs from the node's `series`, sampled in steps of
/// `resolution` seconds; a running job's run lasts until `now`.
pub fn per_gpu(job: &AcctJob, series: &[GpuSeries], resolution: u64, now: u64) -> Vec<GpuFigures> {
    let start = job.start as i64;
    let end = if job.end == 0 { now } else { job.end }.max(job.start + 1) as i64;
    let resolution = resolution.max(1) as i64;
    job.gpu_indices
        .iter()
        .map(|&index| {
            let gpu = series.iter().find(|s| s.index == index);
            // The steps that overlap the run: each starts before its end and ends after
            // its start.
            let within: Vec<_> =
                gpu.iter().flat_map(|s| &s.samples).filter(|(t, _, _)| *t < end && t + resolution > start).collect();
            let mean_util = (!within.is_empty())
                .then(|| within.iter().map(|(_, _, u)| *u as f64).sum::<f64>() / within.len() as f64);
            GpuFigures {
                index,
                mean_util,
                max_memory: within.iter().map(|(_, m, _)| *m).max(),
                total_memory: gpu.and_then(|s| s.total_memory),
            }
        })
        .collect()
}

/// jobstats' two blocks for `gpus` on node `node`: utilisation, then memory.
pub fn lines(node: &str, gpus: &[GpuFigures]) -> String {
    let mut out = String::from("\n  GPU utilization per node\n");
    for g in gpus {
        let figure = match g.mean_util {
            Some(0.0) => "0% <-- GPU was not used".to_string(),
            Some(mean) => utilization_text(mean),
            None => "GPU utilization is unknown".to_string(),
        };
        let _ = writeln!(out, "      {node} (GPU {}): {figure}", g.index);
    }
    out.push_str("\n  GPU memory usage per node - maximum used/total\n");
    for g in gpus {
        let figure = match (g.max_memory, g.total_memory) {
            (Some(used), Some(total)) if total > 0 => format!(
                "{}/{} ({:.1}%)",
                human_bytes(used),
                human_bytes(total).replace(".0GB", "GB"),
                100.0 * used as f64 / total as f64
            ),
            (Some(used), _) => human_bytes(used),
            (None, _) => "GPU memory usage is unknown".to_string(),
        };
        let _ = writeln!(out, "      {node} (GPU {}): {figure}", g.index);
    }
    out
}
