//! Notices of job events (`--mail-type`): which event of which job is told, and when, as
//! Slurm decides it. They are built where the event happens, under the lock, and put in the
//! outbox; the running daemon sends them once the change they tell of is durable, off the
//! scheduler's path.
//!
//! An array task tells of itself only with `ARRAY_TASKS`; otherwise the array tells of its
//! first start and, once every task has ended, of its end in one summary.

use super::Core;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::job_ref::JobRef;
use crate::daemon::model::notice::{self, ArraySummary, Notice};
use crate::daemon::store::writer::Durable;
use crate::options::mail::{self, MailEvent};
use crate::stepd::EndCause;

/// How many notices and timers may wait for the runtime; past that, new ones are dropped
/// (and the log says so once), so that a stuck mail program never grows the daemon.
const OUTBOX_SIZE: usize = 1024;

/// What the outbox carries to the runtime.
#[derive(Debug)]
pub enum Outgoing {
    /// A notice, to send once `durable` resolves.
    Notice(Box<Notice>, Durable),
    /// A time-limit notice to check for at `at`.
    Mark(TimeMark),
}

/// A time-limit notice (`TIME_LIMIT_50/80/90`) of one run of a job, due at `at` unless the
/// job is suspended meanwhile (its due time moves then; see [`Core::time_mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeMark {
    /// The job.
    pub job: u32,
    /// Its run (a requeued job's next run has marks of its own).
    pub restarts: u32,
    /// The event.
    pub event: MailEvent,
    /// When it is due.
    pub at: u64,
}

/// The queue of notices, and its far end until the runtime takes it.
pub(super) struct Outbox {
    tx: tokio::sync::mpsc::Sender<Outgoing>,
    rx: Option<tokio::sync::mpsc::Receiver<Outgoing>>,
    /// Whether the log said the outbox was full, since it last had room.
    said_full: bool,
}

impl Default for Outbox {
    fn default() -> Outbox {
        let (tx, rx) = tokio::sync::mpsc::channel(OUTBOX_SIZE);
        Outbox { tx, rx: Some(rx), said_full: false }
    }
}

impl Outbox {
    fn put(&mut self, out: Outgoing) {
        match self.tx.try_send(out) {
            Ok(()) => self.said_full = false,
            Err(e) if !self.said_full => {
                self.said_full = true;
                tracing::warn!("notices wait to be sent ({OUTBOX_SIZE}); dropping new ones until there is room: {e}");
            }
            Err(_) => {}
        }
    }
}

/// The time-limit notices sent by a timer, with the percent of the limit each is due at;
/// the one at the limit itself is sent with the job's end.
const TIMED: [(MailEvent, u64); 3] = [(mail::TIME50, 50), (mail::TIME80, 80), (mail::TIME90, 90)];

impl Core {
    /// The far end of the outbox, for the runtime (once).
    pub fn take_notices(&mut self) -> Option<tokio::sync::mpsc::Receiver<Outgoing>> {
        self.outbox.rx.take()
    }

    /// Puts notice `event` of job `id` in the outbox when it asked for it and it goes
    /// somewhere; an array task without `ARRAY_TASKS` tells of its array.
    fn notify(&mut self, id: u32, event: MailEvent) {
        let Some(job) = self.jobs.get(&id) else { return };
        if !job.mail_type.has(event) || !self.config.notify.sends_for(job.uid) {
            return;
        }
        let summary = self.summary_of(job);
        let to = match job.mail_user.as_str() {
            "" => self.config.notify.default_address(&crate::identity::user_name(job.uid)),
            given => given.to_string(),
        };
        let notice = notice::build(job, event, summary, to, &self.config.cluster_name, crate::sys::now());
        tracing::debug!(job = id, to = %notice.to, "notice: {}", notice.subject);
        let durable = self.writer.barrier();
        self.outbox.put(Outgoing::Notice(Box::new(notice), durable));
    }

    /// What an array's summary says, for a task of an array that tells of itself as a
    /// whole; `None` for a job of its own or a task with `ARRAY_TASKS`.
    fn summary_of(&self, job: &Job) -> Option<ArraySummary> {
        let array = job.array.filter(|_| !job.mail_type.has(mail::ARRAY_TASKS))?;
        let tasks = self.array_tasks(array.job_id);
        let ended = tasks.iter().filter(|t| t.state().is_finished());
        let statuses: Vec<i32> = ended.map(|t| t.script_status().unwrap_or(0)).collect();
        Some(ArraySummary {
            array_id: array.job_id,
            min_status: statuses.iter().copied().min().unwrap_or(0),
            max_status: statuses.iter().copied().max().unwrap_or(0),
            requeued: tasks.iter().any(|t| t.restarts > 0),
        })
    }

    /// The tasks of array `array_id` in memory.
    fn array_tasks(&self, array_id: u32) -> Vec<&Job> {
        self.ids_named(JobRef { job: array_id, task: None, step: None })
            .iter()
            .filter_map(|id| self.jobs.get(id))
            .collect()
    }

    /// Job `id` was given its resources: `BEGIN` (for an array, at its first task's start)
    /// and the timers of its time-limit notices.
    pub(super) fn notify_start(&mut self, id: u32, now: u64) {
        let Some(job) = self.jobs.get(&id) else { return };
        let first = match job.array.filter(|_| !job.mail_type.has(mail::ARRAY_TASKS)) {
            None => true,
            Some(a) => self.array_tasks(a.job_id).iter().all(|t| t.id == id || t.state() == JobState::Pending),
        };
        if first {
            self.notify(id, mail::BEGIN);
        }
        self.arm_time_marks(id, now);
    }

    /// Puts in the outbox the timers of job `id`'s time-limit notices that are still to
    /// come at `now` (at its start, every one; when the daemon re-adopts it, those not yet
    /// past: one due while the daemon was down is not sent late).
    pub(super) fn arm_time_marks(&mut self, id: u32, now: u64) {
        let Some(job) = self.jobs.get(&id) else { return };
        if !self.config.notify.sends_for(job.uid) {
            return;
        }
        let marks: Vec<TimeMark> = TIMED
            .iter()
            .filter(|(event, _)| job.mail_type.has(*event))
            .filter_map(|&(event, percent)| {
                let at = due(job, percent, now)?;
                (at >= now).then_some(TimeMark { job: id, restarts: job.restarts, event, at })
            })
            .collect();
        for mark in marks {
            self.outbox.put(Outgoing::Mark(mark));
        }
    }

    /// The timer of `mark` went off at `now`: sends its notice if it is due, and returns
    /// when to look again if the job's suspension moved it; `None` once sent, or when the
    /// run it was for has ended.
    pub fn time_mark(&mut self, mark: TimeMark, now: u64) -> Option<u64> {
        let job = self.jobs.get(&mark.job)?;
        let running = matches!(job.state(), JobState::Running | JobState::Suspended);
        if !running || job.restarts != mark.restarts {
            return None;
        }
        let percent = TIMED.iter().find(|(e, _)| *e == mark.event)?.1;
        let at = due(job, percent, now)?;
        if at > now || job.state() == JobState::Suspended {
            // A suspended job's clock stands still: look again when it could be due.
            return Some(at.max(now + 1));
        }
        self.notify(mark.job, mark.event);
        None
    }

    /// Job `id` ended (`requeue`: and goes back to the queue): `TIME_LIMIT` if its limit
    /// ended it, then `FAIL` or `END`, and `REQUEUE`, as Slurm's job completion does; for an
    /// array without `ARRAY_TASKS`, once its last task has ended.
    pub(super) fn notify_end(&mut self, id: u32, requeue: bool) {
        let Some(job) = self.jobs.get(&id) else { return };
        if job.mail_type.is_none() {
            return;
        }
        if job.end_cause == Some(EndCause::TimeLimit) {
            self.notify(id, mail::TIME100);
        }
        let job = &self.jobs[&id];
        match job.array.filter(|_| !job.mail_type.has(mail::ARRAY_TASKS)) {
            Some(a) => self.notify_array_end(id, a.job_id, requeue),
            None => {
                let state = job.state();
                // A requeued job is pending again for Slurm: only its preemption ended it.
                let ended = !requeue || state == JobState::Preempted;
                let failed =
                    matches!(state, JobState::Failed | JobState::Timeout | JobState::NodeFail | JobState::OutOfMemory)
                        || (state == JobState::Preempted && !requeue);
                if ended && failed && job.mail_type.has(mail::FAIL) {
                    self.notify(id, mail::FAIL);
                } else if ended {
                    self.notify(id, mail::END);
                }
                if requeue {
                    self.notify(id, mail::REQUEUE);
                }
            }
        }
    }

    /// Task `id` of array `array_id` ended: once every task has, the array's summary.
    fn notify_array_end(&mut self, id: u32, array_id: u32, requeue: bool) {
        let tasks = self.array_tasks(array_id);
        if requeue || !tasks.iter().all(|t| t.state().is_finished()) {
            return;
        }
        let Some(summary) = self.summary_of(&self.jobs[&id]) else { return };
        let max = summary.max_status;
        if summary.requeued {
            self.notify(id, mail::REQUEUE);
        }
        let failed = libc::WIFEXITED(max) && libc::WEXITSTATUS(max) != 0;
        if failed && self.jobs[&id].mail_type.has(mail::FAIL) {
            self.notify(id, mail::FAIL);
        } else {
            self.notify(id, mail::END);
        }
    }

    /// Job `id`'s dependency can never be satisfied now: `INVALID_DEPEND`, once.
    pub(super) fn notify_invalid_dependency(&mut self, id: u32) {
        if self.jobs.get(&id).is_some_and(|j| j.reason.as_str() != "DependencyNeverSatisfied") {
            self.notify(id, mail::INVALID_DEPEND);
        }
    }
}

/// When `percent` of running `job`'s time limit is reached, as of `now`: its start, plus
/// that part of its limit, plus the time it spent (and spends) suspended. `None` without a
/// limit.
fn due(job: &Job, percent: u64, now: u64) -> Option<u64> {
    let limit = job.limit_secs()?;
    let end = job.limit_end(now)?;
    Some(end - limit + limit * percent / 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marks_due_time_moves_with_the_time_suspended() {
        let job = Job { start_time: 1000, time_limit: Some(10), state: Some(JobState::Running), ..Default::default() };
        assert_eq!(due(&job, 50, 1000), Some(1300));
        assert_eq!(due(&job, 90, 1000), Some(1540));
        let suspended = Job { suspended_secs: 60, suspend_time: 1200, state: Some(JobState::Suspended), ..job.clone() };
        assert_eq!(due(&suspended, 50, 1250), Some(1300 + 60 + 50));
        assert_eq!(due(&Job { time_limit: None, ..job }, 50, 1000), None);
    }
}
