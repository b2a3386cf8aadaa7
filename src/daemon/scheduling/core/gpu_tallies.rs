//! Each running job's and step's GPU use, as the scheduler keeps it between looks at the
//! GPUs: tallied at each look, taken into the step's record when it ends; and each shard
//! job's memory against its share of its GPU's (see [`crate::stepd::gpu_share`]).

use super::Core;
use crate::api::acct::{GpuUse, StepId};
use crate::config::ShardMemory;
use crate::daemon::gpu_use::share::{self, Share};
use crate::daemon::gpu_use::{JobProcesses, Owner};
use crate::gpu::{GpuProcess, GpuSample};
use crate::stepd::gpu_share::OverShare;
use std::collections::HashMap;

impl Core {
    /// Counts one look at the GPUs into the tallies of the running jobs of `jobs` and of
    /// their running steps: each gets the sums of the memory and SM utilisation of its
    /// processes among `processes` (found by `owners`), 0 when none was seen. A job given no
    /// GPUs is counted only once one of its processes was seen on one.
    pub fn tally_gpu_use(&mut self, processes: &[GpuProcess], owners: &HashMap<u32, Owner>, jobs: &JobProcesses) {
        let mut sums: HashMap<Owner, (u64, u32)> = HashMap::new();
        for p in processes {
            if let Some(owner) = owners.get(&p.pid) {
                let sum = sums.entry(*owner).or_default();
                sum.0 += p.used_memory.unwrap_or(0);
                sum.1 += p.sm_util.unwrap_or(0);
            }
        }
        for job in &jobs.jobs {
            if !self.index.holding.contains(&job.id) {
                continue;
            }
            // Only the steps still running: one that ended since the look has its record.
            let running = self.steps.running(job.id);
            let keys: Vec<Owner> = std::iter::once(StepId::Batch)
                .chain(job.steps.iter().filter(|(s, _)| running.contains(s)).map(|&(s, _)| StepId::Number(s)))
                .map(|step| (job.id, step))
                .collect();
            let watched =
                job.has_gpus || keys.iter().any(|k| sums.contains_key(k) || self.gpu_watch.tallies.contains_key(k));
            if !watched {
                continue;
            }
            for key in keys {
                let (memory, util) = sums.get(&key).copied().unwrap_or_default();
                self.gpu_watch.tallies.entry(key).or_default().add(memory, util);
            }
        }
    }

    /// Counts one look at the GPUs into each job's GPU memory (`owners` finds the jobs of the
    /// processes of `sample`), and tells the supervisor of each shard job found over its
    /// share at two looks in a row, once: the notice goes into the job's directory, and the
    /// supervisor, sent [`crate::stepd::timing::NOTIFY`], reads it (see
    /// [`crate::stepd::gpu_share`]).
    pub fn watch_gpu_shares(&mut self, sample: &GpuSample, owners: &HashMap<u32, Owner>) {
        let used = share::job_memory(&sample.processes, owners, &self.config.gpus);
        let shares = self.gpu_shares_now(sample);
        for (found, now) in self.gpu_watch.shares.look(used, &shares) {
            self.tell_over_share(found, now);
        }
    }

    /// The shares of the running shard jobs whose supervisors run, as `sample` reads the
    /// GPUs' sizes.
    fn gpu_shares_now(&self, sample: &GpuSample) -> Vec<Share> {
        self.holding()
            .filter(|job| job.req.shards > 0 && job.stepd_pid.is_some())
            .filter_map(|job| {
                let gpu = job.gpus.first()?;
                let total = share::total_memory(gpu, share::reading_of(gpu, &sample.gpus))?;
                let bytes = crate::gpu::share_of(total, job.req.shards, self.config.shards_per_gpu);
                Some(Share { job: job.id, gpu: gpu.index, shards: job.req.shards, bytes })
            })
            .collect()
    }

    /// Tells the supervisor of job `found.job` that it holds `now` bytes of its GPU, over its
    /// share.
    fn tell_over_share(&self, found: Share, now: u64) {
        let Some(job) = self.jobs.get(&found.job) else { return };
        let notice = OverShare {
            start_time: job.start_time,
            gpu: found.gpu,
            used: now,
            share: found.bytes,
            shards: found.shards,
            shards_per_gpu: self.config.shards_per_gpu,
            end_job: self.config.shard_memory == ShardMemory::Enforce,
        };
        tracing::info!(
            job = found.job,
            gpu = found.gpu,
            used = now,
            share = found.bytes,
            shard_memory = self.config.shard_memory.name(),
            "a shard job uses more than its share of its GPU's memory"
        );
        match notice.write_once(&self.job_dir(found.job)) {
            Ok(true) => {
                if let Some(pid) = job.stepd_pid {
                    let _ = crate::sys::kill_pid(pid, crate::stepd::timing::NOTIFY);
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(job = found.job, "cannot tell the job's supervisor of its GPU memory: {e}"),
        }
    }

    /// The GPU memory job `job` held on GPU `gpu` at the last look (0: none of its processes
    /// were seen there).
    pub fn gpu_memory_of(&self, job: u32, gpu: u32) -> u64 {
        self.gpu_watch.shares.used_by(job, gpu)
    }

    /// Counts the look that saw `sample` into the GPU samples kept for the board: each whole
    /// GPU's memory and utilisation as the driver read them, and each running job's memory
    /// and SM utilisation summed over its processes (found by `owners`; a job given GPUs
    /// counts 0 while none of its processes is seen). A step it closes goes to the store.
    /// The change counter moves: the GPUs were looked at.
    pub fn record_gpu_history(&mut self, sample: &GpuSample, owners: &HashMap<u32, Owner>, jobs: &JobProcesses) {
        self.changed();
        if self.config.gpu_history_days == 0 {
            return;
        }
        let gpus: Vec<(u32, u64, u32)> = self
            .config
            .gpus
            .iter()
            .filter_map(|gpu| {
                let reading = share::reading_of(gpu, &sample.gpus)?;
                Some((gpu.index, reading.memory_used.unwrap_or(0), reading.utilization.unwrap_or(0)))
            })
            .collect();
        let mut by_job: std::collections::BTreeMap<u32, (u64, u32)> = jobs
            .jobs
            .iter()
            .filter(|j| j.has_gpus && self.index.holding.contains(&j.id))
            .map(|j| (j.id, (0, 0)))
            .collect();
        for p in &sample.processes {
            if let Some((job, _)) = owners.get(&p.pid) {
                let sum = by_job.entry(*job).or_default();
                sum.0 += p.used_memory.unwrap_or(0);
                sum.1 += p.sm_util.unwrap_or(0);
            }
        }
        let by_job: Vec<(u32, u64, u32)> =
            by_job.into_iter().map(|(job, (memory, util))| (job, memory, util)).collect();
        if let Some(closed) = self.gpu_watch.history.look(crate::sys::now(), &gpus, &by_job) {
            drop(self.writer.gpu_samples(closed));
        }
    }

    /// The GPU samples kept in memory (see [`crate::daemon::gpu_use::GpuHistory`]).
    pub fn gpu_history(&self) -> &crate::daemon::gpu_use::GpuHistory {
        &self.gpu_watch.history
    }

    /// Keeps what the last look at the GPUs saw, for the views of the GPUs.
    pub fn set_gpu_sample(&mut self, sample: GpuSample) {
        self.gpu_watch.sample = Some((crate::sys::now(), sample));
    }

    /// What the last look at the GPUs saw and when; `None` before the first, or when the
    /// GPUs are not looked at.
    pub fn gpu_sample(&self) -> Option<&(u64, GpuSample)> {
        self.gpu_watch.sample.as_ref()
    }

    /// The GPU use of step `step` of job `job` so far (`None`: not watched).
    pub fn gpu_use(&self, job: u32, step: StepId) -> Option<GpuUse> {
        self.gpu_watch.tallies.get(&(job, step)).and_then(|t| t.figures())
    }

    /// The supervisor of running job `id` (which runs its batch script).
    pub fn job_supervisor(&self, id: u32) -> Option<i32> {
        self.jobs.get(&id).filter(|j| j.state().holds_resources()).and_then(|j| j.stepd_pid)
    }

    /// Takes the GPU use of step `step` of job `job`, which ended.
    pub(super) fn take_gpu_use(&mut self, job: u32, step: StepId) -> Option<GpuUse> {
        self.gpu_watch.tallies.remove(&(job, step)).and_then(|t| t.figures())
    }

    /// Forgets the tallies of job `job`, which ended.
    pub(super) fn forget_gpu_use(&mut self, job: u32) {
        self.gpu_watch.tallies.retain(|(j, _), _| *j != job);
        self.gpu_watch.shares.forget(job);
    }
}
