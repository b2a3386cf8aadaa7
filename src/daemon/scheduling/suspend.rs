//! `scontrol suspend` and `scontrol resume`: `POST /slurmlet/v1/job/{job_id}/suspend` and
//! `…/resume` (slurmrestd v0.0.43 has no such endpoint).
//!
//! A suspended job keeps its resources (Slurm's behaviour without gang scheduling, except
//! that Slurm also lets other jobs use its CPUs) and its processes are stopped: the job's
//! supervisor stops the batch script's process group, each step's supervisor its tasks (see
//! [`crate::stepd::timing`]). The time it spends suspended does not count toward its time
//! limit: its end moves by as much when it is resumed. The state is part of the stored job
//! record, so a daemon that restarts finds the job still suspended; its supervisors, which
//! outlive the daemon, keep its processes stopped.

use super::core::{Core, Effects};
use super::hold::{refused, UpdateError};
use crate::api::types::errno;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::stepd::timing::{Timing, NOTIFY};

/// Suspend or resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Stop a running job.
    Suspend,
    /// Let a suspended job go on.
    Resume,
}

impl Op {
    /// The word, for logs and paths.
    pub fn name(self) -> &'static str {
        match self {
            Op::Suspend => "suspend",
            Op::Resume => "resume",
        }
    }
}

/// Whether `op` may be applied to `job` now, as Slurm's controller decides it: `Ok(false)`
/// when there is nothing to do (suspending a suspended job).
fn check(job: &Job, op: Op) -> Result<bool, UpdateError> {
    match (job.state(), op) {
        (JobState::Pending, _) => Err(refused(errno::JOB_PENDING, "Job is pending execution")),
        (s, _) if s.is_finished() || s == JobState::Completing => {
            Err(refused(errno::ALREADY_DONE, "Job/step already completing or completed"))
        }
        (JobState::Suspended, Op::Suspend) => Ok(false),
        // Its supervisor is still starting: there is nothing to stop yet.
        (_, Op::Suspend) if job.stepd_pid.is_none() => Err(refused(errno::JOB_NOT_RUNNING, "Job is not running")),
        (JobState::Suspended, Op::Resume) => Ok(true),
        (_, Op::Resume) => Err(refused(errno::JOB_NOT_SUSPENDED, "Job is not suspended")),
        (_, Op::Suspend) => Ok(true),
    }
}

/// `job` suspended or resumed at `now`, with Slurm's bookkeeping: `SuspendTime` is the last
/// change, `SecsPreSuspend` the time it ran before the last suspension, and the time spent
/// suspended moves its end.
fn apply(job: &mut Job, op: Op, now: u64) {
    match op {
        Op::Suspend => {
            let since = if job.suspend_time > 0 { job.suspend_time } else { job.start_time };
            job.pre_sus_secs += now.saturating_sub(since);
            job.state = Some(JobState::Suspended);
        }
        Op::Resume => {
            job.suspended_secs += now.saturating_sub(job.suspend_time);
            job.state = Some(JobState::Running);
        }
    }
    job.suspend_time = now;
}

/// What the supervisors of `job` must follow (see [`crate::stepd::timing`]).
pub fn timing(job: &Job) -> Timing {
    Timing {
        start_time: job.start_time,
        end_time: job.capped_by_reservation(
            job.limit_secs().map(|l| job.start_time.saturating_add(l).saturating_add(job.suspended_secs)),
        ),
        suspended: job.state() == JobState::Suspended,
        suspended_secs: job.suspended_secs,
    }
}

impl Core {
    /// Suspends or resumes job `id` for `caller`; the change is queued for the store and the
    /// job's supervisors are told.
    pub fn suspend(&mut self, id: u32, op: Op, caller: Caller) -> Result<Effects, UpdateError> {
        let Some(job) = self.jobs.get(&id) else {
            return Err(refused(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        if !caller.may_manage(job, &self.config, op.name()) {
            return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        if !check(job, op)? {
            return Ok(Effects::default());
        }
        let job = self.jobs.get_mut(&id).expect("checked above");
        apply(job, op, crate::sys::now());
        tracing::info!(job = id, uid = caller.uid, op = op.name(), "job suspended or resumed");
        let durable = self.writer.update(job);
        self.tell_supervisors(id);
        Ok(Effects { durable: Some(durable), reschedule: true, ..Default::default() })
    }

    /// Writes the timing of running job `id` to its directory and tells its supervisors to
    /// read it: after a suspend or resume, a new time limit, or when the daemon re-adopts it.
    pub fn tell_supervisors(&self, id: u32) {
        let Some(job) = self.jobs.get(&id) else { return };
        let dir = self.job_dir(id);
        if let Err(e) = timing(job).write(&dir) {
            tracing::warn!(job = id, "cannot write the job's timing for its supervisors: {e}");
            return;
        }
        for pid in job.stepd_pid.into_iter().chain(self.steps.supervisors(id)) {
            let _ = crate::sys::kill_pid(pid, NOTIFY);
        }
    }
}

/// Before suspended `job` (its directory `dir`) is cancelled: its batch script's processes go
/// on, so that they can take its steps' last output while the steps end first (each
/// supervisor lets its own processes go on as it ends them).
pub fn continue_for_cancel(job: &Job, dir: &std::path::Path) {
    if job.state() == JobState::Suspended {
        crate::stepd::containment::of_job(dir, None).thaw();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Job {
        Job {
            id: 3,
            state: Some(JobState::Running),
            start_time: 1_000,
            time_limit: Some(1),
            stepd_pid: Some(42),
            ..Default::default()
        }
    }

    #[test]
    fn the_time_suspended_moves_the_end() {
        let mut job = running();
        assert_eq!(
            timing(&job),
            Timing { start_time: 1_000, end_time: Some(1_060), suspended: false, suspended_secs: 0 }
        );
        apply(&mut job, Op::Suspend, 1_010);
        assert_eq!((job.state(), job.pre_sus_secs, job.suspend_time), (JobState::Suspended, 10, 1_010));
        assert!(timing(&job).suspended);
        assert_eq!(job.limit_end(1_100), Some(1_150), "the end moves on while it stays suspended");
        apply(&mut job, Op::Resume, 1_110);
        assert_eq!(
            timing(&job),
            Timing { start_time: 1_000, end_time: Some(1_160), suspended: false, suspended_secs: 100 }
        );
        assert_eq!(job.limit_end(2_000), Some(1_160));
        apply(&mut job, Op::Suspend, 1_120);
        assert_eq!(job.pre_sus_secs, 20, "the run time since the resume is added");
    }

    #[test]
    fn what_cannot_be_suspended_or_resumed_is_refused_with_slurms_words() {
        let mut job = running();
        assert_eq!(check(&job, Op::Resume).unwrap_err().message, "Job is not suspended");
        assert_eq!(check(&job, Op::Suspend), Ok(true));
        job.state = Some(JobState::Suspended);
        assert_eq!(check(&job, Op::Suspend), Ok(false), "suspending it again changes nothing, as in Slurm");
        assert_eq!(check(&job, Op::Resume), Ok(true));
        job.state = Some(JobState::Pending);
        assert_eq!(check(&job, Op::Suspend).unwrap_err(), refused(2024, "Job is pending execution"));
        for state in [JobState::Completing, JobState::Completed, JobState::Cancelled] {
            job.state = Some(state);
            assert_eq!(check(&job, Op::Resume).unwrap_err().code, errno::ALREADY_DONE);
        }
    }
}
