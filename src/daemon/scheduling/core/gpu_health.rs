//! GPUs taken out of service for what their driver reported: a critical XID event, memory
//! waiting for a reset, a GPU lost (see [`crate::gpu::GpuTrouble`]). A failed GPU is kept
//! from new jobs, named in the node's reason (`sinfo -R`, `scontrol show node`) while the
//! node stays up for its other GPUs, and kept so across restarts until an administrator puts
//! it back (`slurmlet gpus --resume N`, `scontrol update nodename=NODE state=resume`). The
//! jobs on it end as on a failed node: `NODE_FAIL`, requeued when they may be.

use super::{Core, Effects};
use crate::api::types::SignalScope;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;
use crate::daemon::store::failed_gpus;
use crate::gpu::GpuTrouble;
use std::collections::BTreeMap;

impl Core {
    /// Takes the GPUs `troubles` names (by UUID) out of service, those not out already, and
    /// ends the jobs on them.
    pub fn set_gpu_troubles(&mut self, troubles: &[GpuTrouble]) -> Effects {
        let mut effects = Effects::default();
        for t in troubles {
            let Some(index) = self.config.gpus.iter().find(|g| g.uuid.as_deref() == Some(&t.uuid)).map(|g| g.index)
            else {
                continue;
            };
            if self.gpu_watch.failed.contains_key(&index) {
                continue;
            }
            tracing::error!(gpu = index, uuid = %t.uuid, "GPU taken out of service: {}", t.why);
            self.gpu_watch.failed.insert(index, t.why.clone());
            self.gpu_watch.failed_since = crate::sys::now();
            effects.merge(self.fail_jobs_on(index));
            effects.durable = Some(self.writer.meta(failed_gpus::KEY, failed_gpus::text(&self.gpu_watch.failed)));
            effects.reschedule = true;
            self.changed();
        }
        effects
    }

    /// Puts GPU `index` back in service, or every failed GPU (`None`); returns those put
    /// back.
    pub fn resume_gpus(&mut self, index: Option<u32>) -> (Vec<u32>, Effects) {
        let back: Vec<u32> = self.gpu_watch.failed.keys().copied().filter(|g| index.is_none_or(|i| i == *g)).collect();
        if back.is_empty() {
            return (back, Effects::default());
        }
        for gpu in &back {
            tracing::info!(gpu, "GPU put back in service");
            self.gpu_watch.failed.remove(gpu);
        }
        self.gpu_watch.failed_since = crate::sys::now();
        self.changed();
        let durable = self.writer.meta(failed_gpus::KEY, failed_gpus::text(&self.gpu_watch.failed));
        (back, Effects { durable: Some(durable), reschedule: true, ..Default::default() })
    }

    /// The GPUs out of service, by index, and why.
    pub fn failed_gpus(&self) -> &BTreeMap<u32, String> {
        &self.gpu_watch.failed
    }

    /// When the failed GPUs last changed.
    pub fn failed_gpus_since(&self) -> u64 {
        self.gpu_watch.failed_since
    }

    /// What the node's reason says of a failed GPU.
    pub fn describe_failure(gpu: u32, why: &str) -> String {
        format!("gpu {gpu} failed: {why}")
    }

    /// Ends the jobs that hold GPU `gpu`, as on a failed node.
    fn fail_jobs_on(&mut self, gpu: u32) -> Effects {
        let on: Vec<u32> = self.holding().filter(|j| j.gpus.iter().any(|g| g.index == gpu)).map(|j| j.id).collect();
        let mut effects = Effects::default();
        for id in on {
            effects.merge(self.fail_job(id, gpu));
        }
        effects
    }

    /// Ends job `id`, whose GPU `gpu` failed: `NODE_FAIL`, requeued when it may be.
    fn fail_job(&mut self, id: u32, gpu: u32) -> Effects {
        let dir = self.job_dir(id);
        let Some(job) = self.jobs.get_mut(&id) else { return Effects::default() };
        // One being ended already (cancelled, requeued) ends as it was asked to.
        let running = matches!(job.state(), JobState::Running | JobState::Suspended);
        if job.node_failed || !running {
            return Effects::default();
        }
        job.node_failed = true;
        let requeue = job.requeue && !job.interactive;
        tracing::warn!(job = id, gpu, requeue, "the job's GPU failed: ending it");
        if let Err(e) = std::fs::write(dir.join(crate::stepd::files::NODE_FAILED), "") {
            tracing::warn!(job = id, "cannot mark the job as failed by its node for its supervisor: {e}");
        }
        if requeue {
            return self.end_to_requeue(id, &dir);
        }
        match self.cancel(id, None, SignalScope::Full, Caller { uid: 0, gid: 0 }) {
            Ok(effects) => effects,
            Err(e) => {
                tracing::warn!(job = id, "cannot end the job on the failed GPU: {}", e.message);
                Effects::default()
            }
        }
    }
}
