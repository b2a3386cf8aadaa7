//! The core's QOS: the submit checks of a job's QOS limits, and preemption by QOS
//! (`preempt_type = "preempt/qos"`): a job that waits for resources that running jobs of a
//! QOS it may preempt hold has them preempted, lowest priority and youngest first, just
//! enough of them for it to fit. A preempted job hears its `--signal` first (or SIGTERM),
//! keeps its QOS's `grace_time`, and is then requeued (`REQUEUE`; one that may not be
//! requeued is cancelled) or cancelled (`CANCEL`); its run reads PREEMPTED in sacct.

use super::{Core, Effects};
use crate::api::types::SignalScope;
use crate::config::qos::PreemptMode;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState, Resources};
use crate::daemon::model::refusal::Refusal;
use crate::daemon::scheduling::plan::{Disregard, Plan};
use crate::daemon::scheduling::qos_limits::{self, QosHeld, Tally};

/// Root, as the daemon acts when it preempts.
const ROOT: Caller = Caller { uid: 0, gid: 0 };

impl Core {
    /// Refuses a job (or `count` array tasks) that its QOS's limits do not let in (see
    /// [`qos_limits::check_submit`]).
    pub(super) fn check_qos_submit(&self, job: &Job, count: u32) -> Result<(), Refusal> {
        let Some(qos) = self.config.qos.get(&job.qos) else { return Ok(()) };
        let active = self.active.in_qos(job.uid, &job.qos).saturating_add(count - 1);
        let spg = self.config.shards_per_gpu;
        let held = if qos.deny_on_limit {
            let held = QosHeld::of(self.holding(), spg);
            let user = held.by_user.get(&(job.qos.to_string(), job.uid)).copied().unwrap_or_default();
            (user, held.by_qos.get(job.qos.as_str()).copied().unwrap_or_default())
        } else {
            (Tally::default(), Tally::default())
        };
        qos_limits::check_submit(&job.qos, qos, job, active, held, spg)
    }

    /// Slurm's pending reason when `job` may not start now under its QOS's limits, given
    /// what the QOS's running jobs hold.
    pub(super) fn qos_blocked(&self, job: &Job, held: &QosHeld) -> Option<&'static str> {
        let qos = self.config.qos.get(&job.qos)?;
        let user = held.by_user.get(&(job.qos.to_string(), job.uid)).copied().unwrap_or_default();
        let group = held.by_qos.get(job.qos.as_str()).copied().unwrap_or_default();
        qos_limits::blocked(qos, user, group, job, self.config.shards_per_gpu)
    }

    /// Whether any QOS limits starts (the pass then counts what each QOS's jobs hold).
    pub(super) fn qos_limits_starts(&self) -> bool {
        self.config.qos.0.values().any(qos_limits::limits_starts)
    }

    /// The plan as it would be if the jobs `freed` gave back what they hold now.
    fn plan_freeing(&self, now: u64, freed: &[u32]) -> Plan {
        let mut plan_free =
            Resources { cpus: self.config.cpus, mem_mb: self.config.memory, ..Default::default() }.minus(&self.used());
        let mut gpus = self.gpu_start();
        for id in freed {
            let job = &self.jobs[id];
            plan_free = plan_free.plus(&Resources { gpus: 0, shards: 0, ..job.req });
            for (slot, units) in self.gpu_units_of(job) {
                if let Some(f) = gpus.free.get_mut(slot) {
                    *f += units;
                }
                if let Some(owner) = gpus.owners.as_mut().and_then(|o| o.get_mut(slot)) {
                    *owner = None;
                }
            }
        }
        let releases: Vec<_> = self
            .holding()
            .filter(|j| !freed.contains(&j.id))
            .map(|j| {
                let end = j.limit_end(now).unwrap_or(u64::MAX / 2);
                (end, crate::daemon::scheduling::plan::Hold { resources: j.req, gpus: self.gpu_units_of(j) })
            })
            .collect();
        Plan::new(now, plan_free.cpus, plan_free.mem_mb, gpus, releases)
    }

    /// The running jobs to preempt so that pending job `id` fits now: none when it may
    /// preempt nothing, or when even all it may preempt would not make room. Jobs already
    /// being preempted, and those `claimed` for jobs ahead of it in this pass, count as gone.
    pub(super) fn victims_for(&self, id: u32, now: u64, claimed: &[u32]) -> Vec<u32> {
        let job = &self.jobs[&id];
        let Some(qos) = self.config.qos.get(&job.qos) else { return Vec::new() };
        if self.config.preempt_mode == PreemptMode::Off || qos.preempt.is_empty() {
            return Vec::new();
        }
        let mut ending: Vec<u32> = self.holding().filter(|j| j.preempted).map(|j| j.id).collect();
        ending.extend_from_slice(claimed);
        let fits = |freed: &[u32]| self.plan_freeing(now, freed).fits_now(&job.req, job.uid, Disregard::default());
        if !ending.is_empty() && fits(&ending) {
            return Vec::new();
        }
        let mut candidates: Vec<&Job> = self
            .holding()
            .filter(|j| j.state() == JobState::Running && !j.preempted && !j.interactive && !claimed.contains(&j.id))
            .filter(|j| self.config.qos.preempts(&job.qos, &j.qos))
            .collect();
        // Lowest priority first, then the youngest.
        candidates.sort_by_key(|j| (j.priority, std::cmp::Reverse(j.start_time), std::cmp::Reverse(j.id)));
        let mut freed = ending.clone();
        for c in candidates {
            freed.push(c.id);
            if fits(&freed) {
                return freed.into_iter().filter(|f| !ending.contains(f)).collect();
            }
        }
        Vec::new()
    }

    /// Preempts running job `id` at `now`: its warning signal (its `--signal`, else
    /// SIGTERM) now; its end at once, or when its QOS's grace time is over.
    pub(super) fn preempt(&mut self, id: u32, now: u64) -> Effects {
        let Some(job) = self.jobs.get_mut(&id) else { return Effects::default() };
        let grace = self.config.qos.get(&job.qos).map_or(0, |q| q.grace_time_secs) as u64;
        job.preempted = true;
        job.preempt_at = now + grace;
        // As `--signal` says: `B:` the batch shell alone, else the steps (not the batch
        // shell, which would die of a signal it does not expect, as Slurm's does not send it).
        let (signal, scope) = match job.warn_signal {
            Some(w) => (w.signal, if w.batch_only { SignalScope::Batch } else { SignalScope::Steps }),
            None => (libc::SIGTERM, SignalScope::Full),
        };
        tracing::info!(job = id, grace, "preempted");
        let durable = self.writer.update(job);
        let mut effects = Effects { durable: Some(durable), ..Default::default() };
        // The warning first, as Slurm's send_user_signal gives it.
        if job_has_warning(self.jobs.get(&id)) || grace > 0 {
            if let Ok(more) = self.cancel(id, Some(signal), scope, ROOT) {
                effects.merge(more);
            }
        }
        if grace == 0 {
            effects.merge(self.end_preempted(id));
        } else {
            effects.wake_at = Some(now + grace);
        }
        effects
    }

    /// Ends the preempted jobs whose grace time is over at `now`.
    pub(super) fn end_preempted_due(&mut self, now: u64, effects: &mut Effects) {
        let due: Vec<u32> = self
            .holding()
            .filter(|j| j.preempted && j.state() != JobState::Completing)
            .filter(|j| j.preempt_at <= now)
            .map(|j| j.id)
            .collect();
        for id in due {
            effects.merge(self.end_preempted(id));
        }
        let next =
            self.holding().filter(|j| j.preempted && j.state() != JobState::Completing).map(|j| j.preempt_at).min();
        if let Some(at) = next {
            effects.wake_at = Some(effects.wake_at.map_or(at, |w| w.min(at)));
        }
    }

    /// Ends preempted job `id`: requeued (with `REQUEUE`, when it may be) or cancelled.
    fn end_preempted(&mut self, id: u32) -> Effects {
        let Some(job) = self.jobs.get(&id) else { return Effects::default() };
        let mode = self.config.qos.get(&job.qos).and_then(|q| q.preempt_mode).unwrap_or(self.config.preempt_mode);
        let dir = self.job_dir(id);
        if let Err(e) = std::fs::write(dir.join(crate::stepd::files::PREEMPTED), "") {
            tracing::warn!(job = id, "cannot mark the job as preempted for its supervisor: {e}");
        }
        let requeue = mode == PreemptMode::Requeue && job.requeue && !job.interactive;
        if requeue {
            return self.end_to_requeue(id, &dir);
        }
        match self.cancel(id, None, SignalScope::Steps, ROOT) {
            Ok(effects) => effects,
            Err(e) => {
                tracing::warn!(job = id, "cannot end the preempted job: {}", e.message);
                Effects::default()
            }
        }
    }
}

fn job_has_warning(job: Option<&Job>) -> bool {
    job.is_some_and(|j| j.warn_signal.is_some())
}
