//! Holding, releasing and re-prioritizing jobs: `scontrol hold/uhold/release`, and the
//! `hold` and `priority` of slurmrestd's job update.
//!
//! A held job stays pending with priority 0 and reason `JobHeldUser` (held by its owner) or
//! `JobHeldAdmin` (held by root); it leaves the scheduling queue until it is released. The
//! hold is part of the stored job record, so it survives a restart. The update itself is
//! [`super::core::Core::update_job`] (see [`super::job_edit`]).

use crate::api::types::errno;
use crate::config::Config;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};

/// One change to a job's place in the queue, in the order a request lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueChange {
    /// Hold the pending job (`hold: true`, `priority: 0`).
    Hold,
    /// Release a held job (`hold: false`, `priority: INFINITE`).
    Release,
    /// Set the job's priority (root only).
    Priority(u32),
}

/// A refused update: Slurm's error number and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateError {
    /// Slurm's error number.
    pub code: i32,
    /// Slurm's text for it.
    pub message: std::borrow::Cow<'static, str>,
}

/// A refusal with Slurm's number and text.
pub(in crate::daemon) fn refused(code: i32, message: &'static str) -> UpdateError {
    UpdateError { code, message: message.into() }
}

/// The reason of a job held by its owner.
pub const HELD_USER: &str = "JobHeldUser";
/// The reason of a job held by root: only root releases it.
pub const HELD_ADMIN: &str = "JobHeldAdmin";

/// `job` with `changes` applied for `caller`, as Slurm's controller decides them.
pub(in crate::daemon) fn changed(
    job: &Job,
    changes: &[QueueChange],
    caller: Caller,
    config: &Config,
) -> Result<Job, UpdateError> {
    if !caller.may_manage(job, config, "update") {
        return Err(refused(errno::USER_ID_MISSING, "Invalid user id"));
    }
    if job.state().is_finished() {
        return Err(refused(errno::JOB_FINISHED, "Job has already finished"));
    }
    let mut new = job.clone();
    for change in changes {
        match *change {
            QueueChange::Hold => {
                if new.state() != JobState::Pending {
                    return Err(refused(errno::JOB_NOT_PENDING, "Job is no longer pending execution"));
                }
                let by_admin = caller.privileged(config) && caller.uid != new.uid;
                // The owner's hold does not turn an administrator's into theirs.
                if by_admin || !new.held {
                    new.reason = if by_admin { HELD_ADMIN } else { HELD_USER }.into();
                }
                new.held = true;
            }
            // Releasing a job that is not held changes nothing, as in Slurm.
            QueueChange::Release if !new.held => {}
            QueueChange::Release => {
                if &*new.reason == HELD_ADMIN && !caller.privileged(config) {
                    return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
                }
                new.held = false;
                new.reason = "None".into();
            }
            QueueChange::Priority(_) if !caller.privileged(config) => {
                return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
            }
            QueueChange::Priority(_) if new.held => {
                return Err(refused(errno::JOB_HELD, "Job is in held state, pending scheduler release"));
            }
            QueueChange::Priority(p) => {
                new.priority = p;
                // Set by hand, it stays as set: multifactor priority leaves it alone.
                new.priority_set = true;
            }
        }
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: JobState) -> Job {
        Job {
            id: 5,
            uid: 1000,
            gid: 1000,
            state: Some(state),
            priority: 1,
            reason: "Priority".into(),
            ..Default::default()
        }
    }
    fn config() -> Config {
        Config::resolve(Default::default(), std::path::Path::new("test.toml")).unwrap()
    }
    const OWNER: Caller = Caller { uid: 1000, gid: 1000 };
    const OTHER: Caller = Caller { uid: 1001, gid: 1001 };
    const ROOT: Caller = Caller { uid: 0, gid: 0 };

    #[test]
    fn the_owner_holds_and_releases_a_pending_job() {
        let held = changed(&job(JobState::Pending), &[QueueChange::Hold], OWNER, &config()).unwrap();
        assert!(held.held);
        assert_eq!(&*held.reason, HELD_USER);
        let released = changed(&held, &[QueueChange::Release], OWNER, &config()).unwrap();
        assert!(!released.held);
        assert_eq!(&*released.reason, "None");
        assert_eq!(released.priority, 1, "the priority comes back");
    }

    #[test]
    fn only_the_owner_or_root_may_change_a_job() {
        let refused = changed(&job(JobState::Pending), &[QueueChange::Hold], OTHER, &config()).unwrap_err();
        assert_eq!(refused, UpdateError { code: 2010, message: "Invalid user id".into() });
        let held = changed(&job(JobState::Pending), &[QueueChange::Hold], ROOT, &config()).unwrap();
        assert_eq!(&*held.reason, HELD_ADMIN);
    }

    #[test]
    fn an_administrators_hold_is_released_by_an_administrator_only() {
        let held = changed(&job(JobState::Pending), &[QueueChange::Hold], ROOT, &config()).unwrap();
        let again = changed(&held, &[QueueChange::Hold], OWNER, &config()).unwrap();
        assert_eq!(&*again.reason, HELD_ADMIN, "the owner's hold keeps the administrator's");
        assert_eq!(changed(&held, &[QueueChange::Release], OWNER, &config()).unwrap_err().code, errno::ACCESS_DENIED);
        assert!(!changed(&held, &[QueueChange::Release], ROOT, &config()).unwrap().held);
    }

    #[test]
    fn running_and_finished_jobs_are_refused_as_slurm_refuses_them() {
        let running = changed(&job(JobState::Running), &[QueueChange::Hold], OWNER, &config()).unwrap_err();
        assert_eq!(running, UpdateError { code: 2073, message: "Job is no longer pending execution".into() });
        assert!(
            changed(&job(JobState::Running), &[QueueChange::Release], OWNER, &config()).is_ok(),
            "nothing to release"
        );
        let done = changed(&job(JobState::Completed), &[QueueChange::Release], OWNER, &config()).unwrap_err();
        assert_eq!(done, UpdateError { code: 2084, message: "Job has already finished".into() });
    }

    #[test]
    fn priorities_are_set_by_root_on_jobs_that_are_not_held() {
        assert_eq!(
            changed(&job(JobState::Pending), &[QueueChange::Priority(9)], OWNER, &config()).unwrap_err().code,
            2002
        );
        assert_eq!(changed(&job(JobState::Pending), &[QueueChange::Priority(9)], ROOT, &config()).unwrap().priority, 9);
        let both = [QueueChange::Hold, QueueChange::Priority(9)];
        assert_eq!(changed(&job(JobState::Pending), &both, ROOT, &config()).unwrap_err().code, errno::JOB_HELD);
    }
}
