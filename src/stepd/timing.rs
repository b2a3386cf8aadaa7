//! What a running job's supervisors learn after they started: whether the job is suspended
//! (`scontrol suspend`/`resume`), and when it now reaches its time limit (moved by the time
//! spent suspended, or by `scontrol update TimeLimit=`).
//!
//! The daemon writes `JOBDIR/timing.json` (atomically), then sends [`NOTIFY`] to the job's
//! supervisor and to each of its steps' supervisors. A supervisor blocks [`NOTIFY`] and reads
//! it from a signalfd; on each one it reads the file again. Its default action is to be
//! ignored, so a notice that reaches a supervisor before it blocked the signal is lost
//! harmlessly: the supervisor reads the file once it has, and finds the change there.
//!
//! Each supervisor freezes its own processes while the job is suspended (the batch script's,
//! or a step's tasks, through their [`Containment`]) and thaws them afterwards; it has no
//! deadline meanwhile.

use super::containment::Containment;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a supervisor's processes are due when the job is suspended or resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// Stop them (Slurm's SIGSTOP).
    Freeze,
    /// Let them go on (SIGCONT).
    Thaw,
}

impl Pause {
    /// Freezes or thaws the processes of `containment`.
    pub fn apply(self, containment: &dyn Containment) {
        match self {
            Pause::Freeze => containment.freeze(),
            Pause::Thaw => containment.thaw(),
        }
    }
}

/// The signal that tells a supervisor to read the timing file again.
pub const NOTIFY: i32 = libc::SIGURG;

/// The file's name, in the job's directory.
pub const FILE: &str = "timing.json";

/// The job's timing as the daemon last set it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// When the job started (UNIX seconds): a file left from an earlier run of the job (one
    /// put back in the queue) is not this run's.
    pub start_time: u64,
    /// When the job reaches its time limit (UNIX seconds), suspensions so far included;
    /// `None`: no limit.
    pub end_time: Option<u64>,
    /// The job is suspended: its processes stay stopped and no deadline runs.
    pub suspended: bool,
    /// Seconds the job spent suspended so far, the current suspension not included.
    pub suspended_secs: u64,
}

impl Timing {
    /// Reads `job_dir`'s timing file; `None` when the daemon never wrote one.
    pub fn read(job_dir: &Path) -> Option<Timing> {
        serde_json::from_slice(&std::fs::read(job_dir.join(FILE)).ok()?).ok()
    }

    /// Replaces `job_dir`'s timing file with `self` (a reader sees the old file or the new
    /// one, never a part). It need not be durable: the daemon's store is, and the supervisors
    /// that read the file do not outlive the machine.
    pub fn write(&self, job_dir: &Path) -> std::io::Result<()> {
        let path = job_dir.join(FILE);
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(self).expect("timing serializes"))?;
        std::fs::rename(&tmp, &path)
    }

    /// The job's deadline now: none while it is suspended.
    pub fn deadline(&self) -> Option<u64> {
        if self.suspended {
            None
        } else {
            self.end_time
        }
    }
}

/// A supervisor's view of the job's timing: what it last read, and whether it stopped its
/// processes for it.
#[derive(Debug, Clone, Copy)]
pub struct Follower {
    /// The timing last read.
    pub now: Timing,
    /// The job's suspended seconds when this supervisor started: a step's own time limit
    /// moves by what the job spends suspended after that.
    pub suspended_at_start: u64,
    /// Whether this supervisor stopped its processes.
    pub stopped: bool,
}

impl Follower {
    /// Starts following the job of `job_dir` that started at `start_time`, whose end time is
    /// `end_time` unless the daemon wrote otherwise for this run.
    pub fn start(job_dir: &Path, start_time: u64, end_time: Option<u64>) -> Follower {
        let now = Timing::read(job_dir).filter(|t| t.start_time == start_time).unwrap_or(Timing {
            start_time,
            end_time,
            ..Default::default()
        });
        Follower { now, suspended_at_start: now.suspended_secs, stopped: false }
    }

    /// Reads the file again and tells what to do: `Some` when the processes must be frozen
    /// or thawed.
    pub fn reread(&mut self, job_dir: &Path) -> Option<Pause> {
        if let Some(t) = Timing::read(job_dir).filter(|t| t.start_time == self.now.start_time) {
            self.now = t;
        }
        self.pause_due()
    }

    /// What the processes are due, if anything, and records it as done.
    pub fn pause_due(&mut self) -> Option<Pause> {
        match (self.now.suspended, self.stopped) {
            (true, false) => {
                self.stopped = true;
                Some(Pause::Freeze)
            }
            (false, true) => {
                self.stopped = false;
                Some(Pause::Thaw)
            }
            _ => None,
        }
    }

    /// The job's deadline now (UNIX seconds).
    pub fn deadline(&self) -> Option<u64> {
        self.now.deadline()
    }

    /// A step's deadline now: the job's, or the step's own `own_end` moved by the time the job
    /// spent suspended since the step started, whichever is first.
    pub fn step_deadline(&self, own_end: Option<u64>) -> Option<u64> {
        if self.now.suspended {
            return None;
        }
        let moved = self.now.suspended_secs.saturating_sub(self.suspended_at_start);
        [self.now.end_time, own_end.map(|e| e.saturating_add(moved))].into_iter().flatten().min()
    }

    /// The job is being ended: its processes are let go on (they get SIGCONT with their
    /// SIGTERM), so no SIGCONT is due later.
    pub fn ending(&mut self) {
        self.stopped = false;
        self.now.suspended = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suspension_stops_and_lets_go_once_and_has_no_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = Follower::start(dir.path(), 940, Some(1_000));
        assert_eq!(f.deadline(), Some(1_000), "no file: the launch's end");
        assert_eq!(f.reread(dir.path()), None);
        Timing { start_time: 1, end_time: Some(1_000), suspended: true, suspended_secs: 0 }.write(dir.path()).unwrap();
        assert_eq!(f.reread(dir.path()), None, "an earlier run's file");
        Timing { start_time: 940, end_time: Some(1_000), suspended: true, suspended_secs: 0 }
            .write(dir.path())
            .unwrap();
        assert_eq!(f.reread(dir.path()), Some(Pause::Freeze));
        assert_eq!(f.reread(dir.path()), None, "stopped once");
        assert_eq!(f.deadline(), None);
        Timing { start_time: 940, end_time: Some(1_030), suspended: false, suspended_secs: 30 }
            .write(dir.path())
            .unwrap();
        assert_eq!(f.reread(dir.path()), Some(Pause::Thaw));
        assert_eq!(f.deadline(), Some(1_030));
        assert_eq!(f.step_deadline(Some(500)), Some(530), "a step's own limit moves as much");
        assert_eq!(f.step_deadline(None), Some(1_030));
    }

    #[test]
    fn a_step_started_after_a_suspension_keeps_its_own_limit() {
        let dir = tempfile::tempdir().unwrap();
        Timing { start_time: 3, end_time: None, suspended: false, suspended_secs: 40 }.write(dir.path()).unwrap();
        let f = Follower::start(dir.path(), 3, Some(5));
        assert_eq!(f.deadline(), None);
        assert_eq!(f.step_deadline(Some(700)), Some(700));
    }
}
