//! Supervisors that outlive the end of their job.
//!
//! A job's supervisor ends its job by itself: on a cancel (the SIGTERM the daemon sends it,
//! once the job's steps had KillWait to end) and at its time limit, within KillWait. One
//! still there KillWait twice and [`GRACE`] later is stuck: stopped, or waiting on something
//! its job's owner controls. The daemon then kills it and what is left of its job, and
//! records the job's end itself (see [`crate::daemon::supervision::backstop`]), so that no
//! supervisor keeps a job's resources past its cancel or its time limit.

use super::{Core, Effects};
use crate::daemon::model::job::JobState;
use crate::stepd::{EndCause, EndStatus};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// Seconds a supervisor is given, past the steps' and its own KillWait, to record its job's
/// end.
pub const GRACE: u64 = 10;

/// What the daemon keeps of jobs being ended.
#[derive(Debug, Default)]
pub(in crate::daemon) struct Overdue {
    /// When each cancelled job was first seen completing (UNIX seconds).
    completing_since: HashMap<u32, u64>,
    /// The jobs whose supervisor is being killed: their end is the backstop's to record.
    killing: BTreeSet<u32>,
}

/// A stuck supervisor, to be killed with its job.
#[derive(Debug, Clone)]
pub struct Stuck {
    /// Its job.
    pub job: u32,
    /// Its pid.
    pub pid: i32,
    /// The job's directory.
    pub dir: PathBuf,
    /// The job's steps' supervisors, `(step, pid)`.
    pub steps: Vec<(u32, i32)>,
    /// Why the job is ending: cancelled (or requeued), or out of time.
    pub cause: EndCause,
    /// Seconds since it should have begun ending it.
    pub late_by: u64,
}

impl Core {
    /// The supervisors that should have ended their job by `now` (UNIX seconds) and have
    /// not; each is marked as being killed until [`Core::end_stuck`].
    pub fn stuck_supervisors(&mut self, now: u64) -> Vec<Stuck> {
        let allowance = self.backstop_allowance();
        let mut stuck = Vec::new();
        for (id, pid, since, cause) in self.endings(now) {
            if now >= since + allowance {
                let dir = self.job_dir(id);
                let steps = self.steps.step_supervisors(id);
                stuck.push(Stuck { job: id, pid, dir, steps, cause, late_by: now - since });
            }
        }
        for s in &stuck {
            self.overdue.killing.insert(s.job);
        }
        stuck
    }

    /// When (UNIX seconds) the first supervisor that has not ended its job yet will be
    /// overdue, as things stand at `now`; `None` when none is due to end its job. A change to
    /// a job (a cancel, a start, a new time limit) may bring it forward: the caller looks
    /// again then.
    pub fn next_stuck_check(&mut self, now: u64) -> Option<u64> {
        let allowance = self.backstop_allowance();
        self.endings(now).into_iter().map(|(_, _, since, _)| since + allowance).min()
    }

    /// Seconds a supervisor has, from its job's cancel or time limit, to end its job.
    fn backstop_allowance(&self) -> u64 {
        2 * self.config.kill_wait as u64 + GRACE
    }

    /// The jobs whose supervisor is to end them (cancelled, or at their time limit by
    /// `now`) and is not being killed: each with that supervisor's pid, since when (UNIX
    /// seconds) and why. A job is counted as cancelled from the first time it is seen so.
    fn endings(&mut self, now: u64) -> Vec<(u32, i32, u64, EndCause)> {
        let jobs = &self.jobs;
        self.overdue.completing_since.retain(|id, _| jobs.get(id).is_some_and(|j| j.state() == JobState::Completing));
        let mut found = Vec::new();
        for &id in &self.index.holding {
            let job = &self.jobs[&id];
            let Some(pid) = job.stepd_pid else { continue };
            if self.overdue.killing.contains(&id) {
                continue;
            }
            let (since, cause) = match job.state() {
                JobState::Completing => (*self.overdue.completing_since.entry(id).or_insert(now), EndCause::Cancelled),
                JobState::Running => match job.limit_end(now) {
                    Some(end) => (end, EndCause::TimeLimit),
                    None => continue,
                },
                _ => continue,
            };
            found.push((id, pid, since, cause));
        }
        found
    }

    /// Whether the supervisor of job `id` is being killed as stuck: its exit without a
    /// status is then no failure of the node's (see [`Core::end_stuck`]).
    pub(super) fn killing_stuck(&self, id: u32) -> bool {
        self.overdue.killing.contains(&id)
    }

    /// Records the end of the job of `stuck`, whose supervisor and processes were killed,
    /// unless it ended meanwhile; frees its resources.
    pub fn end_stuck(&mut self, stuck: &Stuck) -> Effects {
        self.overdue.killing.remove(&stuck.job);
        if !self.supervises(stuck.job, stuck.pid) {
            return Effects::default();
        }
        let what = if stuck.cause == EndCause::TimeLimit { "time limit" } else { "cancel" };
        tracing::warn!(
            pid = stuck.pid,
            "the supervisor of job {} had not ended it {} s after its {what} (KillWait {} s); killed it and the job's processes, and gave back its resources",
            stuck.job,
            stuck.late_by,
            self.config.kill_wait,
        );
        let end_time = crate::sys::now();
        self.finish(
            stuck.job,
            Some(EndStatus { wait_status: libc::SIGKILL, cause: stuck.cause, end_time, usage: None }),
        );
        Effects::reschedule()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::daemon::model::job::{Job, Resources};

    /// A daemon's state (KillWait 2 s) running job 1, of 2 CPUs and a minute's limit, started
    /// at `start` and supervised by a (made-up) pid 4242.
    fn running(dir: &std::path::Path, start: u64) -> Core {
        let text = format!("cpus = 4\nmemory = 16000\ngpus = 0\nkill_wait = 2\nstate_dir = \"{}\"\n", dir.display());
        let config = Config::resolve(toml::from_str(&text).unwrap(), &dir.join("slurmlet.toml")).unwrap();
        let mut core = Core::open(config, Default::default()).unwrap();
        let job = Job {
            id: 1,
            state: Some(JobState::Pending),
            partition: "gpu".into(),
            priority: 1,
            ntasks: 1,
            cpus_per_task: 2,
            time_limit: Some(1),
            req: Resources { cpus: 2, ..Default::default() },
            ..Default::default()
        };
        drop(core.writer.insert_all(std::slice::from_ref(&job), crate::daemon::store::Payload::default()));
        let _ = core.admit(vec![job]);
        assert_eq!(core.schedule().launch.len(), 1);
        let job = core.jobs.get_mut(&1).unwrap();
        job.start_time = start;
        job.stepd_pid = Some(4242);
        core
    }

    #[test]
    fn a_supervisor_past_its_time_limit_and_twice_kill_wait_and_the_grace_is_stuck_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = running(dir.path(), 1_000);
        let limit = 1_060;
        assert_eq!(core.next_stuck_check(1_000), Some(limit + 2 * 2 + GRACE), "looked for when it could be due");
        assert!(core.stuck_supervisors(limit + 2 * 2 + GRACE - 1).is_empty(), "still within its time");
        let stuck = core.stuck_supervisors(limit + 2 * 2 + GRACE);
        assert_eq!(stuck.len(), 1);
        assert_eq!((stuck[0].job, stuck[0].pid, stuck[0].cause), (1, 4242, EndCause::TimeLimit));
        assert!(core.stuck_supervisors(limit + 100).is_empty(), "being killed already");
        assert_eq!(core.next_stuck_check(limit + 100), None, "nothing more to look for");
        // Its exit, without a status, is the backstop's to record, not a node failure.
        let _ = core.stepd_exited(1, 4242, None);
        assert_eq!(core.jobs[&1].state(), JobState::Running);
        let _ = core.end_stuck(&stuck[0]);
        assert_eq!((core.jobs[&1].state(), core.jobs[&1].reason.as_str()), (JobState::Timeout, "TimeLimit"));
        assert_eq!(core.resources.used, Resources::default(), "its CPUs are free");
    }

    #[test]
    fn a_cancelled_job_is_given_its_time_from_when_it_was_first_seen_completing() {
        let dir = tempfile::tempdir().unwrap();
        let now = crate::sys::now();
        let mut core = running(dir.path(), now);
        core.jobs.get_mut(&1).unwrap().state = Some(JobState::Completing);
        assert_eq!(core.next_stuck_check(now), Some(now + 2 * 2 + GRACE), "the cancel brings it forward");
        assert!(core.stuck_supervisors(now).is_empty());
        assert!(core.stuck_supervisors(now + 2 * 2 + GRACE - 1).is_empty());
        let stuck = core.stuck_supervisors(now + 2 * 2 + GRACE);
        assert_eq!(stuck.iter().map(|s| s.cause).collect::<Vec<_>>(), vec![EndCause::Cancelled]);
        // It ended by itself meanwhile: nothing more is recorded.
        let status = EndStatus { wait_status: 0, cause: EndCause::Cancelled, end_time: now, usage: None };
        let _ = core.end_recorded(1, 4242, Some(status));
        let _ = core.end_stuck(&stuck[0]);
        assert_eq!(core.jobs[&1].state(), JobState::Cancelled);
        assert!(core.stuck_supervisors(now + 1_000).is_empty());
    }
}
