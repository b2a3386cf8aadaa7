//! `GET /slurmlet/v1/gpus`: the node's GPUs and who holds each now, for `slurmlet gpus`:
//! the jobs given it (another user's job only as the caller's view of the queue shows it),
//! the processes outside the queue the last look found on it, and that look's figures.

use crate::api::gpus::{GpuJob, GpuOutsider, GpuStatus, GpusResponse};
use crate::daemon::gpu_use::foreign::command_visible;
use crate::daemon::gpu_use::share::{reading_of, total_memory};
use crate::daemon::gpu_use::ForeignProcess;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::Job;
use crate::daemon::scheduling::core::Core;
use crate::gpu::{Gpu, GpuReading};

/// Every GPU of the node as `caller` may see it, without the job owners' names.
pub fn listing(core: &Core, caller: Caller) -> GpusResponse {
    let config = &core.config;
    let looked_at = config.gpu_sample_interval > 0
        && crate::gpu::sampler_for(core.machine.gpu_source.as_deref(), &config.nvml_library, &config.gpus).is_some();
    let sample = core.gpu_sample().filter(|_| looked_at);
    let holders: Vec<&Job> = core.holding().collect();
    let gpus = config
        .gpus
        .iter()
        .map(|gpu| {
            let reading = sample.and_then(|(_, s)| reading_of(gpu, &s.gpus));
            let holds = Holders {
                jobs: &holders,
                visible: &|job| caller.may_see(job, config),
                used: &|job| sample.map(|_| core.gpu_memory_of(job.id, gpu.index)),
                idle_since: &|job| core.idle_clock(job.id).map(|c| c.since),
                shards_per_gpu: config.shards_per_gpu,
            };
            let command_shown =
                |p: &ForeignProcess| command_visible(p, caller.uid, caller.privileged(config), config.private_jobs);
            let mut status = status(gpu, reading, &holds, core.foreign_gpu_processes(), &command_shown);
            status.failed = core.failed_gpus().get(&gpu.index).cloned();
            status
        })
        .collect();
    GpusResponse {
        gpus,
        sampled_at: sample.map(|(at, _)| *at),
        sample_interval: if looked_at { config.gpu_sample_interval } else { 0 },
        ..Default::default()
    }
}

/// The jobs that hold GPUs, as the caller may see them.
struct Holders<'a> {
    /// The jobs that hold resources.
    jobs: &'a [&'a Job],
    /// Whether the caller may see a job in full.
    visible: &'a dyn Fn(&Job) -> bool,
    /// The GPU memory a job held on the GPU at the last look (`None`: not looked at).
    used: &'a dyn Fn(&Job) -> Option<u64>,
    /// Since when a job's GPUs have stayed idle (see [`GpuJob::idle_since`]).
    idle_since: &'a dyn Fn(&Job) -> Option<u64>,
    /// The shards each GPU is split into.
    shards_per_gpu: u32,
}

/// `gpu` with `reading`, the jobs of `holders` given it (shown in full where visible, a
/// shard job with its share of the GPU's memory) and the processes of `outsiders` on it.
fn status(
    gpu: &Gpu,
    reading: Option<&GpuReading>,
    holders: &Holders,
    outsiders: &[ForeignProcess],
    command_shown: &dyn Fn(&ForeignProcess) -> bool,
) -> GpuStatus {
    let memory_total = total_memory(gpu, reading);
    let jobs = holders
        .jobs
        .iter()
        .filter(|job| job.gpus.iter().any(|g| g.index == gpu.index))
        .map(|job| match (holders.visible)(job) {
            true => {
                let shards = (job.req.shards > 0).then_some(job.req.shards);
                GpuJob {
                    job: Some(job.display_id()),
                    job_id: Some(job.id),
                    user_id: Some(job.uid),
                    user_name: None,
                    used_memory: (holders.used)(job),
                    idle_since: (holders.idle_since)(job),
                    shards,
                    share_bytes: shards
                        .zip(memory_total)
                        .map(|(n, total)| crate::gpu::share_of(total, n, holders.shards_per_gpu)),
                }
            }
            false => GpuJob::default(),
        })
        .collect();
    let outside_queue = outsiders
        .iter()
        .filter(|p| p.gpu == gpu.index)
        .map(|p| GpuOutsider {
            pid: p.pid,
            user_name: p.user.clone(),
            command: p.command.clone().filter(|_| command_shown(p)),
            used_memory: p.used_memory,
        })
        .collect();
    GpuStatus {
        index: gpu.index,
        uuid: gpu.uuid.clone(),
        name: gpu.model.clone(),
        gres_type: gpu.gres_type.clone(),
        memory_used: reading.and_then(|r| r.memory_used),
        memory_total,
        utilization: reading.and_then(|r| r.utilization),
        note: reading.and_then(|r| r.note.clone()),
        shards: holders.shards_per_gpu,
        jobs,
        outside_queue,
        failed: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a100(index: u32) -> Gpu {
        Gpu {
            uuid: Some(format!("GPU-{index}")),
            model: Some("NVIDIA A100-SXM4-40GB".into()),
            memory_mb: Some(40960),
            ..Gpu::nvidia(index)
        }
    }

    /// The holders `jobs`, all visible where `visible`, each having held 2 GiB at the last
    /// look, on GPUs split into `shards_per_gpu`.
    fn check<'a>(jobs: &'a [&'a Job], visible: &'a dyn Fn(&Job) -> bool, shards_per_gpu: u32) -> Holders<'a> {
        Holders { jobs, visible, used: &|_| Some(2 << 30), idle_since: &|_| None, shards_per_gpu }
    }

    #[test]
    fn a_gpu_shows_what_was_read_of_it_and_who_holds_it() {
        let job = Job { id: 7, uid: 1000, gpus: vec![a100(0)], ..Default::default() };
        let outsider = ForeignProcess {
            gpu: 0,
            uid: Some(1001),
            pid: 4242,
            user: Some("bob".into()),
            command: Some("python train.py".into()),
            used_memory: Some(1 << 30),
        };
        let reading = GpuReading {
            uuid: "GPU-0".into(),
            memory_used: Some(3 << 30),
            memory_total: Some(40 << 30),
            utilization: Some(87),
            note: None,
        };
        let all = |_: &Job| true;
        let seen =
            status(&a100(0), Some(&reading), &check(&[&job], &all, 0), std::slice::from_ref(&outsider), &|_| true);
        assert_eq!((seen.memory_used, seen.memory_total, seen.utilization), (Some(3 << 30), Some(40 << 30), Some(87)));
        assert_eq!(
            seen.jobs,
            [GpuJob {
                job: Some("7".into()),
                job_id: Some(7),
                user_id: Some(1000),
                used_memory: Some(2 << 30),
                ..Default::default()
            }]
        );
        assert_eq!(seen.outside_queue[0].pid, 4242);

        // Not read: its size as found, nothing made up; another GPU's holders are not its.
        let other = status(&a100(1), None, &check(&[&job], &all, 0), std::slice::from_ref(&outsider), &|_| false);
        assert_eq!((other.memory_used, other.memory_total, other.utilization), (None, Some(40 << 30), None));
        assert!(other.jobs.is_empty() && other.outside_queue.is_empty());

        // A job the caller may not see is there, without its id or owner.
        let hidden = status(&a100(0), None, &check(&[&job], &|_| false, 0), &[], &|_| true);
        assert_eq!(hidden.jobs.len(), 1);
        assert!(hidden.jobs[0].hidden() && hidden.jobs[0].user_id.is_none() && hidden.jobs[0].used_memory.is_none());
    }

    #[test]
    fn a_shard_job_is_shown_with_its_share() {
        let req = |shards| crate::daemon::model::job::Resources { shards, ..Default::default() };
        let one = Job { id: 7, gpus: vec![a100(0)], req: req(1), ..Default::default() };
        let three = Job { id: 8, gpus: vec![a100(0)], req: req(3), ..Default::default() };
        let all = |_: &Job| true;
        let seen = status(&a100(0), None, &check(&[&one, &three], &all, 4), &[], &|_| true);
        assert_eq!(seen.shards, 4);
        let shares: Vec<_> = seen.jobs.iter().map(|j| (j.job_id, j.shards, j.share_bytes, j.used_memory)).collect();
        assert_eq!(
            shares,
            [(Some(7), Some(1), Some(10 << 30), Some(2 << 30)), (Some(8), Some(3), Some(30 << 30), Some(2 << 30))]
        );
    }
}
