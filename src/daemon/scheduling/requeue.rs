//! `scontrol requeue`: a batch job goes back to the queue, pending, to run again under the
//! same id; its `Restarts` count goes up and its script sees `SLURM_RESTART_COUNT`.
//!
//! A running job is ended first (its processes get SIGTERM, then SIGKILL after KillWait, as
//! when it is cancelled) and goes back once it has ended; a finished one goes back at once.
//! Each run that ended so is kept in the store, for `sacct --duplicates`, with the state
//! REQUEUED, as Slurm's accounting keeps it.

use super::core::{Core, Effects};
use super::hold::{refused, UpdateError};
use crate::api::types::errno;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;
use std::cmp::Reverse;

impl Core {
    /// Requeues job `id` for `caller`: a running job is ended and goes back to the queue
    /// once it has; a finished one goes back now. Refused, as Slurm refuses it, for a job
    /// that is pending or ending, an interactive allocation, a `--no-requeue` job, or another
    /// user's job.
    pub fn requeue(&mut self, id: u32, caller: Caller) -> Result<Effects, UpdateError> {
        let dir = self.job_dir(id);
        let Some(job) = self.jobs.get_mut(&id) else {
            return Err(refused(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        if !caller.may_manage(job, &self.config, "requeue") {
            return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        if job.interactive {
            return Err(refused(errno::BATCH_ONLY, "Only batch jobs are accepted or processed"));
        }
        if !job.requeue {
            return Err(refused(errno::DISABLED, "Requested operation is presently disabled"));
        }
        match job.state() {
            // Preempted and requeued already: submitit's handler asks for the same on the
            // warning signal, a moment after; it is done.
            JobState::Pending if job.requeued_by_preemption => Ok(Effects::default()),
            JobState::Pending => Err(refused(errno::JOB_PENDING, "Job is pending execution")),
            // Already being ended to go back to the queue (preempted, or requeued twice, as
            // submitit's handler does on the warning of a preemption): nothing more to do.
            JobState::Completing if job.requeue_on_end => Ok(Effects::default()),
            JobState::Completing => {
                Err(refused(errno::TRANSITION_STATE_NO_UPDATE, "Job can not be altered now, try again later"))
            }
            // Preempted, in its grace time: it goes back to the queue when it ends, by itself
            // or at the grace time's end. Its processes are not signalled now: the one asking
            // (submitit's handler, having saved its checkpoint) is one of them.
            JobState::Running | JobState::Suspended if job.preempted => {
                job.requeue_on_end = true;
                let durable = self.writer.update(job);
                Ok(Effects { durable: Some(durable), ..Default::default() })
            }
            JobState::Running | JobState::Suspended => Ok(self.end_to_requeue(id, &dir)),
            _ => Ok(self.back_to_queue(id)),
        }
    }

    /// Ends running job `id` (its job directory `dir`) to go back to the queue: SIGTERM, then
    /// SIGKILL after KillWait, as when it is cancelled.
    pub(in crate::daemon) fn end_to_requeue(&mut self, id: u32, dir: &std::path::Path) -> Effects {
        let Some(job) = self.jobs.get_mut(&id) else { return Effects::default() };
        // A suspended job's processes must run to hear that they are to end.
        super::suspend::continue_for_cancel(job, dir);
        // Its supervisor says why it ends, as slurmstepd does.
        if let Err(e) = std::fs::write(dir.join(crate::stepd::files::REQUEUED), "") {
            tracing::warn!(job = id, "cannot mark the job as requeued for its supervisor: {e}");
        }
        job.requeue_on_end = true;
        job.state = Some(JobState::Completing);
        let durable = self.writer.update(job);
        for pid in self.running_supervisors(id) {
            let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
        }
        Effects { durable: Some(durable), ..Default::default() }
    }

    /// Puts finished job `id` back in the queue, pending, as a new run: the run that ended is
    /// kept in the store as it was, and the job starts over with one more restart.
    pub(in crate::daemon) fn back_to_queue(&mut self, id: u32) -> Effects {
        let Some(job) = self.jobs.get_mut(&id) else { return Effects::default() };
        tracing::info!(job = id, restarts = job.restarts + 1, "requeued");
        drop(self.writer.requeued(job));
        job.restarts += 1;
        job.requeue_on_end = false;
        job.requeued_by_preemption = job.preempted;
        job.node_failed = false;
        if job.preempted {
            // As Slurm's: a preempted job may start again only after the requeue delay, so
            // that the job that preempted it has what it freed.
            job.begin_time = crate::sys::now() + self.config.requeue_delay as u64 + 1;
        }
        job.preempted = false;
        job.preempt_at = 0;
        job.state = Some(JobState::Pending);
        job.reason = "None".into();
        job.reason_prev = Default::default();
        job.start_time = 0;
        job.end_time = 0;
        job.wait_status = None;
        job.end_cause = None;
        job.cancelled_by = None;
        job.stepd_pid = None;
        job.batch_usage = None;
        job.batch_gpu_use = None;
        job.gpus.clear();
        job.cpu_ids.clear();
        job.suspend_time = 0;
        job.suspended_secs = 0;
        job.pre_sus_secs = 0;
        let durable = self.writer.update(job);
        if !job.held {
            self.index.queue.insert((Reverse(job.priority), id));
        }
        let (uid, qos) = (job.uid, job.qos.clone());
        self.count_active(uid, &qos);
        Effects { durable: Some(durable), reschedule: true, ..Default::default() }
    }
}
