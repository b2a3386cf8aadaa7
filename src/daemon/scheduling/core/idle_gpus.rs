//! The `[idle_gpus]` policy: each look at the GPUs is weighed, for every running job given
//! GPUs, against the policy's threshold ([`crate::daemon::gpu_use::idle`]); a job that kept
//! every GPU below it for `after` is told so in its error output (by its supervisor, see
//! [`crate::stepd::idle_gpu`]), its record says why (`AdminComment`), and under
//! `action = "cancel"` it is cancelled as root would cancel it. Exempt QOS and partitions,
//! suspended jobs and jobs whose use cannot be read are never touched.

use super::{Core, Effects};
use crate::api::types::SignalScope;
use crate::config::idle_gpus::{IdleAction, IdleGpus};
use crate::daemon::gpu_use::idle::{job_busy, IdleClock};
use crate::daemon::gpu_use::Owner;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;
use crate::gpu::GpuSample;
use std::collections::{HashMap, HashSet};

impl Core {
    /// Weighs the look that saw `sample` at `now` (its processes' owners `owners`) against
    /// the policy, and acts on the jobs idle long enough.
    pub fn watch_idle_gpus(&mut self, sample: &GpuSample, owners: &HashMap<u32, Owner>, now: u64) -> Effects {
        let Some(policy) = self.config.idle_gpus.clone() else {
            self.gpu_watch.idle.clear();
            return Effects::default();
        };
        let watched: Vec<(u32, u64, Vec<crate::gpu::Gpu>, bool)> = self
            .holding()
            .filter(|j| !j.gpus.is_empty() && j.stepd_pid.is_some() && j.state() == JobState::Running)
            .filter(|j| !policy.exempts(&j.qos, &j.partition))
            .map(|j| (j.id, j.start_time, j.gpus.clone(), j.req.shards > 0))
            .collect();
        let mut due = Vec::new();
        for (id, start_time, gpus, shared) in &watched {
            let busy = job_busy(*id, gpus, *shared, sample, owners, &self.config.gpus);
            if let Some(idle_for) =
                self.gpu_watch.idle.look(*id, *start_time, busy, policy.below, policy.after_secs, now)
            {
                due.push((*id, idle_for));
            }
        }
        self.gpu_watch.idle.keep_only(&watched.iter().map(|w| w.0).collect::<HashSet<u32>>());
        let mut effects = Effects::default();
        for (id, idle_for) in due {
            effects.merge(self.act_on_idle(id, idle_for, &policy));
        }
        effects
    }

    /// Tells job `id` (idle for `idle_for` seconds) so, records why, and cancels it when the
    /// policy says to.
    fn act_on_idle(&mut self, id: u32, idle_for: u64, policy: &IdleGpus) -> Effects {
        self.gpu_watch.idle.acted(id);
        let busy = self.gpu_watch.idle.of(id).map(|c| c.busy.clone()).unwrap_or_default();
        let dir = self.job_dir(id);
        let Some(job) = self.jobs.get_mut(&id) else { return Effects::default() };
        let cancel = policy.action == IdleAction::Cancel;
        let notice = crate::stepd::idle_gpu::IdleGpus {
            start_time: job.start_time,
            below: policy.below,
            for_secs: idle_for,
            gpus: busy,
            cancelled: cancel,
        };
        tracing::info!(job = id, idle_for, action = policy.action.name(), "a job's GPUs stayed idle");
        match notice.write_once(&dir) {
            Ok(true) => {
                if let Some(pid) = job.stepd_pid {
                    let _ = crate::sys::kill_pid(pid, crate::stepd::timing::NOTIFY);
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(job = id, "cannot tell the job's supervisor its GPUs are idle: {e}"),
        }
        job.admin_comment = notice.comment().as_str().into();
        let durable = self.writer.update(job);
        self.changed();
        if !cancel {
            return Effects { durable: Some(durable), ..Default::default() };
        }
        let root = Caller { uid: 0, gid: 0 };
        match self.cancel(id, None, SignalScope::Full, root) {
            Ok(effects) => effects,
            Err(e) => {
                tracing::warn!(job = id, "cannot cancel the idle job: {}", e.message);
                Effects { durable: Some(durable), ..Default::default() }
            }
        }
    }

    /// Job `id`'s idle clock, while its GPUs stay below the policy's threshold.
    pub fn idle_clock(&self, id: u32) -> Option<&IdleClock> {
        self.gpu_watch.idle.of(id)
    }
}
