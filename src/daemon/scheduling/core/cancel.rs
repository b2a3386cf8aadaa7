//! `scancel`: cancelling jobs, array tasks and steps, and sending their processes
//! signals.

use super::{Core, Effects};
use crate::api::types::{errno, SignalScope};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;
use crate::daemon::scheduling::suspend;
use crate::daemon::store::writer::Durable;
use crate::stepd::{self, containment, EndCause};
use std::cmp::Reverse;

/// A cancel/signal request that could not be carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct CancelError {
    /// Slurm's error number.
    pub code: i32,
    /// Slurm's text.
    pub message: String,
}

fn cancel_error(code: i32, message: &str) -> CancelError {
    CancelError { code, message: message.into() }
}

impl Core {
    /// `scancel`: cancels a job (no signal, or SIGKILL) or sends a signal to the processes
    /// `scope` names (the steps, the batch shell, or both and the shell's children).
    pub fn cancel(
        &mut self,
        id: u32,
        signal: Option<i32>,
        scope: SignalScope,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let dir = self.job_dir(id);
        let Some(job) = self.jobs.get_mut(&id) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        let action = if signal.is_some() { "signal" } else { "cancel" };
        if !caller.may_manage(job, &self.config, action) {
            return Err(cancel_error(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        let full_cancel = matches!(signal, None | Some(libc::SIGKILL)) && scope != SignalScope::Batch;
        match job.state() {
            s if s.is_finished() => Err(cancel_error(errno::ALREADY_DONE, "Job/step already completing or completed")),
            JobState::Completing if full_cancel => {
                Err(cancel_error(errno::ALREADY_DONE, "Job/step already completing or completed"))
            }
            JobState::Pending if full_cancel => {
                let reason = job.reason.clone();
                let durable = self.end_pending(id, &reason, Some(caller.uid));
                Ok(Effects { durable: Some(durable), reschedule: true, ..Default::default() })
            }
            JobState::Pending => Err(cancel_error(errno::JOB_PENDING, "Job is pending execution")),
            _ if full_cancel => {
                suspend::continue_for_cancel(job, &dir);
                // Its supervisor says it was cancelled even if the script ends by itself first.
                if let Err(e) = std::fs::write(dir.join(stepd::files::CANCELLED), "") {
                    tracing::warn!(job = id, "cannot mark the job as cancelled for its supervisor: {e}");
                }
                job.state = Some(JobState::Completing);
                job.cancelled_by = Some(caller.uid);
                let durable = self.writer.update(job);
                // The steps first, then the batch script, as Slurm does.
                let steps = self.steps.supervisors(id);
                for pid in &steps {
                    let _ = crate::sys::kill_pid(*pid, libc::SIGTERM);
                }
                let mut effects = Effects { durable: Some(durable), ..Default::default() };
                // `-s KILL` does not wait for the steps.
                match job.stepd_pid {
                    Some(pid) if steps.is_empty() || signal == Some(libc::SIGKILL) => {
                        let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
                    }
                    Some(pid) => effects.end_after_steps.push((id, pid)),
                    None => {}
                }
                Ok(effects)
            }
            _ => {
                let sig = signal.unwrap_or(libc::SIGTERM);
                let Some(pgid) = stepd::read_pgid(&dir) else {
                    return Err(cancel_error(errno::ERROR, "Job step not running yet"));
                };
                // The batch shell leads the job's process group.
                let mut steps_reached = false;
                let res = match scope {
                    SignalScope::Batch => crate::sys::kill_pid(pgid, sig),
                    SignalScope::Full => {
                        let jail = containment::of_job(&dir, None);
                        steps_reached = jail.covers_steps();
                        jail.signal_all(sig)
                    }
                    SignalScope::Steps => Ok(()),
                };
                res.map_err(|e| cancel_error(errno::ERROR, &e.to_string()))?;
                if scope != SignalScope::Batch && !steps_reached {
                    for pid in self.steps.supervisors(id) {
                        let _ = containment::of_step(pid).signal_all(sig);
                    }
                }
                Ok(Effects::default())
            }
        }
    }

    /// Ends pending job `id` as cancelled (by `by`, when a user did it), with `reason`
    /// recorded as what it waited for.
    pub(super) fn end_pending(&mut self, id: u32, reason: &str, by: Option<u32>) -> Durable {
        let job = self.jobs.get_mut(&id).expect("a pending job exists");
        job.reason_prev = job.reason.clone();
        job.reason = reason.into();
        job.state = Some(JobState::Cancelled);
        self.active.remove(job.uid, &job.qos);
        job.end_time = crate::sys::now();
        job.cancelled_by = by;
        job.end_cause = Some(EndCause::Cancelled);
        let key = (Reverse(job.priority), id);
        let durable = self.writer.update(job);
        self.index.queue.remove(&key);
        self.ended.send_modify(|n| *n += 1);
        self.notify_end(id, false);
        durable
    }

    /// `scancel A`, `scancel A_T`: [`Core::cancel`] of the job, or of every task of the array
    /// it names. Tasks it cannot act on (ended, or pending when signalled) are passed over, unless it
    /// can act on none.
    pub fn cancel_named(
        &mut self,
        target: crate::daemon::model::job_ref::JobRef,
        signal: Option<i32>,
        scope: SignalScope,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let unknown = cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified");
        self.for_each_named(target, unknown, |core, id| core.cancel(id, signal, scope, caller))
    }

    /// Applies `act` to the job `target` names, or to every task of the array it names.
    /// Tasks it refuses (ended, or not in the state it needs) are passed over, unless it
    /// refuses them all; then its first refusal is the answer. `unknown`: the error when
    /// `target` names no job.
    pub fn for_each_named<E>(
        &mut self,
        target: crate::daemon::model::job_ref::JobRef,
        unknown: E,
        mut act: impl FnMut(&mut Core, u32) -> Result<Effects, E>,
    ) -> Result<Effects, E> {
        let ids = self.ids_named(target);
        match ids.as_slice() {
            [] => return Err(unknown),
            [id] => return act(self, *id),
            _ => {}
        }
        let mut effects = Effects::default();
        let mut refusal = None;
        let mut acted = false;
        for id in ids {
            match act(self, id) {
                Ok(more) => {
                    effects.merge(more);
                    acted = true;
                }
                Err(e) => refusal = refusal.or(Some(e)),
            }
        }
        match refusal {
            Some(e) if !acted => Err(e),
            _ => Ok(effects),
        }
    }

    /// Cancels interactive job `id` whose client went away, on its owner's behalf.
    pub fn cancel_abandoned(&mut self, id: u32) -> Option<Effects> {
        let owner = self.jobs.get(&id).map(|j| Caller { uid: j.uid, gid: j.gid })?;
        self.cancel(id, None, SignalScope::Steps, owner).ok()
    }

    /// `scancel JOB.STEP`: ends a step (no signal, or SIGKILL: its supervisor ends its tasks,
    /// SIGKILL after KillWait) or sends its tasks a signal.
    pub fn cancel_step(
        &mut self,
        id: u32,
        step: u32,
        signal: Option<i32>,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let Some(job) = self.jobs.get(&id) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        if !caller.may_manage(job, &self.config, "step cancel") {
            return Err(cancel_error(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        let Some(pid) = self.steps.supervisor(id, step) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        match signal {
            None | Some(libc::SIGKILL) => {
                self.steps.cancelled(id, step, caller.uid);
                let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
            }
            Some(sig) => {
                let _ = containment::of_step(pid).signal_all(sig);
            }
        }
        Ok(Effects::default())
    }
}
