//! A job's life in the daemon's state: reserved (checked and numbered), staged once its
//! paths passed (its insert queued), admitted once stored, and ended, from its supervisor's
//! status or its exit.

use super::{Core, Effects, Reserved, Staged};
use crate::api::acct::StepId;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::refusal::Refusal;
use crate::daemon::scheduling::array;
use crate::daemon::scheduling::depend;
use crate::daemon::scheduling::limits;
use crate::daemon::scheduling::submit;
use crate::stepd::{self, EndCause, EndStatus};
use std::cmp::Reverse;

impl Core {
    /// Checks a job and sets aside the next id for it (an array, one id per task), counting
    /// it against its user from now on, so that racing submits cannot pass the limit
    /// together. Its paths are then checked without the lock (by the runtime's submit);
    /// [`Core::stage`] or [`Core::give_back`] follows.
    pub fn reserve(
        &mut self,
        desc: &crate::api::types::JobDescMsg,
        top_script: Option<&str>,
        caller: Caller,
        interactive: bool,
    ) -> Result<Reserved, Refusal> {
        let now = crate::sys::now();
        let mut new = submit::build(desc, top_script, caller, &self.config, now, interactive)?;
        let array = array::requested(desc, &self.config)?;
        if let Some(text) = desc.dependency.as_deref().filter(|d| !d.is_empty()) {
            new.job.dependency = depend::on_submit(text, &self.lookup())?.as_str().into();
        }
        let count = array.as_ref().map_or(1, |a| a.indices.len() as u32);
        let active = self.active.of(caller.uid).saturating_add(count - 1);
        limits::check_submit(&self.config.limits, &new.job, active)?;
        self.check_qos_submit(&new.job, count)?;
        self.check_reservation_access(&new.job)?;
        let new_qos = new.job.qos.to_string();
        if new.job.held {
            new.job.reason = "JobHeldUser".into();
        }
        let jobs = match &array {
            Some(spec) => {
                if desc.standard_output.as_deref().is_none_or(str::is_empty) {
                    new.job.stdout = array::DEFAULT_OUTPUT.into();
                }
                array::tasks(&new.job, spec, self.next_id)
            }
            None => vec![Job { id: self.next_id, ..new.job }],
        };
        let ids = self.next_id..self.next_id + count;
        self.next_id = ids.end;
        for _ in 0..count {
            self.active.add(caller.uid, &new_qos);
        }
        Ok(Reserved { jobs, payload: new.payload, warnings: new.warnings, ids })
    }

    /// A reserved job whose paths were refused: it no longer counts against its user, and
    /// its ids are taken again by the next submit unless a later one has been given ids
    /// meanwhile.
    pub fn give_back(&mut self, reserved: Reserved) {
        for job in &reserved.jobs {
            self.active.remove(job.uid, &job.qos);
        }
        if self.next_id == reserved.ids.end {
            self.next_id = reserved.ids.start;
        }
    }

    /// Queues the insert of a reserved job whose paths passed. The job becomes visible and
    /// schedulable with [`Core::admit`], once the insert is durable.
    pub fn stage(&mut self, reserved: Reserved) -> Staged {
        let Reserved { jobs, payload, warnings, .. } = reserved;
        let durable = self.writer.insert_all(&jobs, payload);
        Staged { jobs, warnings, durable }
    }

    /// Staged jobs that could not be stored: they no longer count against their user.
    pub fn unstage(&mut self, jobs: &[Job]) {
        for job in jobs {
            self.active.remove(job.uid, &job.qos);
        }
    }

    /// Adds stored jobs to the queue; a scheduling pass follows.
    pub fn admit(&mut self, jobs: Vec<Job>) -> Effects {
        let mut effects = Effects::default();
        let now = crate::sys::now();
        for mut job in jobs {
            self.prioritize_new(&mut job, now);
            if Self::queued(&job) {
                self.index.queue.insert((Reverse(job.priority), job.id));
                effects.reschedule = true;
            }
            self.track_dependency(&job);
            self.jobs.insert(job.id, job);
        }
        self.changed();
        effects
    }

    /// Records the end of a running job from its supervisor's status (`None`: lost), frees
    /// its resources and removes its directory.
    pub fn finish(&mut self, id: u32, status: Option<EndStatus>) {
        tracing::debug!(job = id, "job ended");
        if !self.jobs.get(&id).is_some_and(|j| j.state().holds_resources()) {
            return;
        }
        let end_time = status.as_ref().map(|s| s.end_time).unwrap_or_else(crate::sys::now);
        self.record_step_ends(id, end_time);
        let batch_gpu_use = self.take_gpu_use(id, StepId::Batch);
        self.forget_gpu_use(id);
        let Some(job) = self.jobs.get_mut(&id) else { return };
        let (state, reason) = match &status {
            None => (JobState::NodeFail, "NodeDown"),
            // A GPU it held failed: however its script ended, the node (its GPU) failed it.
            Some(_) if job.node_failed => (JobState::NodeFail, "NodeDown"),
            Some(s) => match s.cause {
                EndCause::LaunchFailed => (JobState::Failed, "JobLaunchFailure"),
                EndCause::Cancelled if job.preempted => (JobState::Preempted, "None"),
                EndCause::Cancelled => (JobState::Cancelled, "None"),
                EndCause::TimeLimit => (JobState::Timeout, "TimeLimit"),
                EndCause::OutOfMemory => (JobState::OutOfMemory, "OutOfMemory"),
                // Cancelled while its script was ending by itself (the cancel waits for the
                // steps first): a cancelled job, as Slurm records it.
                EndCause::Exited if job.cancelled_by.is_some() => (JobState::Cancelled, "None"),
                EndCause::Exited if s.wait_status == 0 => (JobState::Completed, "None"),
                EndCause::Exited => (JobState::Failed, "NonZeroExitCode"),
            },
        };
        job.state = Some(state);
        self.index.holding.remove(&id);
        self.active.remove(job.uid, &job.qos);
        job.reason = reason.into();
        job.end_time = end_time;
        job.wait_status = status.as_ref().map(|s| s.wait_status);
        job.end_cause = status.as_ref().map(|s| s.cause);
        job.batch_usage = status.as_ref().and_then(|s| s.usage);
        job.batch_gpu_use = batch_gpu_use;
        job.stepd_pid = None;
        for pid in self.steps.forget(id) {
            let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
        }
        self.resources.used = self.resources.used.minus(&job.req);
        // The job's directory (its status file) stays until the end is durable.
        let dir = stepd::job_dir(&self.jobs_dir, id, job.restarts);
        let usage = self.charge(id);
        let job = &self.jobs[&id];
        // Nobody waits for it: until it is durable, recovery finds the end in the directory.
        drop(self.writer.update_then_remove(job, usage, dir));
        let job = &self.jobs[&id];
        // The job keeps its CPU ids, as it keeps its GPUs, for the views of its end.
        let (cpu_ids, requeue) = (job.cpu_ids.clone(), job.requeue_on_end);
        self.release_gpus(id);
        self.release_cpu_ids(&cpu_ids);
        self.notify_end(id, requeue);
        if requeue {
            // Its callers schedule next.
            let _ = self.back_to_queue(id);
        }
        self.ended.send_modify(|n| *n += 1);
    }

    /// The supervisor `pid` of job `id` closed its end pipe: if it recorded the job's end
    /// (its processes are gone by then), record it and schedule, before the supervisor has
    /// made the file durable and exited. `None`: nothing recorded (the supervisor died); its
    /// exit decides.
    /// `status` is the job's status file, read without the lock from [`Core::job_dir`].
    pub fn end_recorded(&mut self, id: u32, pid: i32, status: Option<stepd::EndStatus>) -> Option<Effects> {
        if !self.supervises(id, pid) {
            return None;
        }
        let status = status?;
        self.finish(id, Some(status));
        Some(Effects::reschedule())
    }

    /// Whether `pid` is the supervisor of the current run of job `id` (not of a run that
    /// ended before the job was requeued), while it holds resources.
    pub(super) fn supervises(&self, id: u32, pid: i32) -> bool {
        self.jobs.get(&id).is_some_and(|j| j.state().holds_resources() && j.stepd_pid == Some(pid))
    }

    /// The supervisor `pid` of job `id` exited: record the end, unless it is recorded
    /// already, and schedule. `status` is the job's status file, read without the lock from
    /// [`Core::job_dir`] after the exit.
    pub fn stepd_exited(&mut self, id: u32, pid: i32, status: Option<stepd::EndStatus>) -> Effects {
        if !self.supervises(id, pid) {
            // Ended already (from its status before the exit), or a requeued job's earlier
            // run: its directory, and the process group id in it, belong to the past.
            return Effects::default();
        }
        if status.is_none() && self.killing_stuck(id) {
            // Killed by the daemon as stuck: its end is recorded once its job is fenced.
            return Effects::default();
        }
        if status.is_none() {
            self.fence_and_fail(id, Some(pid));
        } else {
            self.finish(id, status);
        }
        Effects::reschedule()
    }
}
