//! `slurmlet node-check` on a Slurm node: what slurmlet knows of GPUs and Slurm does not.
//! Slurm runs it as `HealthCheckProgram` (and may run it as a prolog); it looks at the
//! node's GPUs once, and finds a process outside the queue that holds one (more GPU memory
//! than `foreign_gpu_memory` MiB, and no Slurm job among its ancestors), or a GPU the driver
//! reports lost or waiting for a reset. Its [`Verdict`] drains the node with the reason, and
//! resumes a node it drained itself once all is clear (never one drained by anybody else).

use crate::config::Config;
use crate::gpu::process;
use crate::gpu::{GpuProcess, GpuSample};

/// The prefix of the reasons it sets: what it may resume.
pub const REASON_PREFIX: &str = "slurmlet:";

/// The longest reason it sets (Slurm keeps it whole, people read it in `sinfo -R`).
pub const MAX_REASON: usize = 200;

/// What one look found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing wrong.
    Clear,
    /// The node should not take jobs, for these reasons.
    Drain(Vec<String>),
}

impl Verdict {
    /// The node's reason: the prefix, then each finding, cut at [`MAX_REASON`].
    pub fn reason(&self) -> Option<String> {
        let Verdict::Drain(why) = self else { return None };
        let text = format!("{REASON_PREFIX} {}", why.join("; "));
        Some(match text.char_indices().nth(MAX_REASON) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text,
        })
    }
}

/// Whether `pid` runs under a Slurm job: one of it or its ancestors is a `slurmstepd` of
/// root's, or its cgroup is one Slurm made. A user cannot make a process of root's, nor put
/// one into root's cgroups, so naming a program `slurmstepd` does not pass.
pub fn in_a_job(pid: i32) -> bool {
    if slurm_cgroup(&std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default()) {
        return true;
    }
    std::iter::once(pid).chain(process::ancestors(pid)).any(|p| {
        let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
        comm.trim_end() == "slurmstepd" && process::owner(p).is_some_and(|(uid, _)| uid == 0)
    })
}

/// Whether a `/proc/PID/cgroup` text places the process in a cgroup of Slurm's jobs: v1's
/// `/slurm/uid_U/job_J/…` (`/slurm_NODE/…` with several slurmds), v2's
/// `…/slurmstepd.scope/job_J/…`.
pub fn slurm_cgroup(text: &str) -> bool {
    text.lines().filter_map(|l| l.splitn(3, ':').nth(2)).any(|path| {
        let parts: Vec<&str> = path.split('/').collect();
        parts.windows(2).any(|w| {
            let v1 = (w[0] == "slurm" || w[0].starts_with("slurm_")) && w[1].starts_with("uid_");
            let v2 = w[0] == "slurmstepd.scope" && w[1].starts_with("job_");
            v1 || v2
        })
    })
}

/// The verdict on `sample` of the node's GPUs (`gpus`), `threshold` bytes the memory a
/// process outside the queue may hold; `in_job` says whether a pid runs under a job.
pub fn assess(sample: &GpuSample, gpus: &[crate::gpu::Gpu], threshold: u64, in_job: impl Fn(i32) -> bool) -> Verdict {
    let mut why: Vec<String> = sample
        .troubles
        .iter()
        .map(|t| format!("gpu {} {}", index_of(gpus, &t.uuid).map_or_else(|| t.uuid.clone(), |i| i.to_string()), t.why))
        .collect();
    for p in sample.processes.iter().filter(|p| p.used_memory.is_none_or(|m| m > threshold)) {
        if in_job(p.pid as i32) {
            continue;
        }
        why.push(outsider(p, index_of(gpus, &p.gpu_uuid)));
    }
    why.dedup();
    if why.is_empty() {
        Verdict::Clear
    } else {
        Verdict::Drain(why)
    }
}

fn index_of(gpus: &[crate::gpu::Gpu], uuid: &str) -> Option<u32> {
    gpus.iter().find(|g| g.uuid.as_deref() == Some(uuid)).map(|g| g.index)
}

/// `gpu 0 busy outside the queue: pid 4242 (bob), 11 GiB`.
fn outsider(p: &GpuProcess, index: Option<u32>) -> String {
    let gpu = index.map_or_else(|| p.gpu_uuid.clone(), |i| i.to_string());
    let who = process::owner(p.pid as i32)
        .map_or_else(|| " (not in this pid namespace)".to_string(), |(_, name)| format!(" ({name})"));
    let memory = p.used_memory.map_or_else(|| "memory unknown".to_string(), |b| format!("{} MiB", b >> 20));
    format!("gpu {gpu} busy outside the queue: pid {}{who}, {memory}", p.pid)
}

/// One look at this node's GPUs under `config`: the GPUs found, and what their sampler
/// saw (nothing on a node without GPUs); `Err` when no sampler can look at them
/// (configured or stand-in GPUs).
pub fn look(config: &mut Config) -> Result<(Vec<crate::gpu::Gpu>, GpuSample), String> {
    let source = config.discover_gpus();
    if source.is_none() {
        return Ok((Vec::new(), GpuSample::default()));
    }
    let Some(sampler) = crate::gpu::sampler_for(source.as_deref(), &config.nvml_library, &config.gpus) else {
        return Err(format!(
            "the GPUs here ({}) cannot be looked at: node-check needs NVML, nvidia-smi, amd-smi or rocm-smi",
            source.as_deref().unwrap_or("none found")
        ));
    };
    let sample = sampler.sample().map_err(|e| e.to_string())?;
    Ok((config.gpus.clone(), sample.bounded().0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{Gpu, GpuTrouble};

    fn gpu(index: u32) -> Gpu {
        Gpu { uuid: Some(format!("GPU-{index}")), ..Gpu::nvidia(index) }
    }

    fn process(pid: u32, gpu: u32, mib: u64) -> GpuProcess {
        GpuProcess { gpu_uuid: format!("GPU-{gpu}"), pid, used_memory: Some(mib << 20), sm_util: None }
    }

    #[test]
    fn slurms_job_cgroups_are_told_from_others() {
        assert!(slurm_cgroup("4:freezer:/slurm/uid_1000/job_12/step_0\n"));
        assert!(slurm_cgroup("4:freezer:/slurm_n2/uid_1000/job_12/step_batch\n"));
        assert!(slurm_cgroup("0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n"));
        assert!(!slurm_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
        assert!(!slurm_cgroup("0::/user.slice/slurm-lookalike/job_1\n"));
    }

    #[test]
    fn a_process_outside_the_queue_over_the_threshold_drains_and_small_or_queued_ones_do_not() {
        let gpus = [gpu(0), gpu(1)];
        let sample = GpuSample {
            processes: vec![process(10, 0, 4000), process(11, 1, 50), process(12, 1, 9000)],
            ..Default::default()
        };
        let verdict = assess(&sample, &gpus, 100 << 20, |pid| pid == 12);
        let Verdict::Drain(why) = &verdict else { panic!("{verdict:?}") };
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].starts_with("gpu 0 busy outside the queue: pid 10 (") && why[0].ends_with(", 4000 MiB"),
            "{why:?}"
        );
        assert!(verdict.reason().unwrap().starts_with("slurmlet: gpu 0 busy"));
        let all_queued = assess(&sample, &gpus, 100 << 20, |_| true);
        assert_eq!(all_queued, Verdict::Clear);
    }

    #[test]
    fn a_failing_gpu_drains_with_what_the_driver_said() {
        let sample = GpuSample {
            troubles: vec![GpuTrouble { uuid: "GPU-1".into(), why: "XID 79: GPU has fallen off the bus".into() }],
            ..Default::default()
        };
        let verdict = assess(&sample, &[gpu(0), gpu(1)], 0, |_| false);
        assert_eq!(verdict.reason().unwrap(), "slurmlet: gpu 1 XID 79: GPU has fallen off the bus");
        let long = Verdict::Drain(vec!["x".repeat(500)]);
        assert_eq!(long.reason().unwrap().chars().count(), MAX_REASON + 1);
    }
}
