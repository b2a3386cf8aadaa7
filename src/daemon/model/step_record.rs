//! A job step as the store keeps it for accounting (the `steps` table): written when its
//! supervisor starts, completed when its tasks are gone.

use crate::api::acct::{GpuUse, Usage};
use crate::daemon::model::job::JobState;

/// One srun step of a job.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    /// Its job.
    pub job: u32,
    /// Its id within the job.
    pub step: u32,
    /// Its name: `srun -J`, else the program it runs.
    pub name: String,
    /// `RUNNING`, then how it ended.
    pub state: JobState,
    /// When its supervisor started (UNIX seconds).
    pub start: u64,
    /// When its last task ended (0 while it runs).
    pub end: u64,
    /// Its raw exit status, once it ended.
    pub exit_status: Option<i32>,
    /// Tasks.
    pub ntasks: u32,
    /// CPUs (tasks × CPUs per task).
    pub cpus: u32,
    /// GPUs its tasks see.
    pub gpus: u32,
    /// Memory in MB (the job's: a step may use all of it).
    pub mem_mb: u64,
    /// Its own time limit (`srun -t` inside a job), minutes.
    pub time_limit: Option<u32>,
    /// Who cancelled it (`scancel JOB.STEP`).
    pub cancelled_by: Option<u32>,
    /// What its tasks used, once they ended.
    pub usage: Option<Usage>,
    /// What its processes did with the GPUs, once they ended.
    #[serde(default)]
    pub gpu_use: Option<GpuUse>,
}

/// The end of a step, to complete its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepEnding {
    /// Its job.
    pub job: u32,
    /// Its id within the job.
    pub step: u32,
    /// How it ended.
    pub state: JobState,
    /// When.
    pub end: u64,
    /// Its raw exit status.
    pub exit_status: i32,
    /// Who cancelled it.
    pub cancelled_by: Option<u32>,
    /// What its tasks used.
    pub usage: Option<Usage>,
    /// What its processes did with the GPUs.
    pub gpu_use: Option<GpuUse>,
}

impl StepEnding {
    /// The end of step `step` of `job` from what its supervisor recorded (`None`: nothing,
    /// the supervisor died first), at `now`; `cancelled_by`: who cancelled it, if someone did.
    pub fn from_status(
        job: u32,
        step: u32,
        end: Option<crate::stepd::step::end::StepEnd>,
        cancelled_by: Option<u32>,
        now: u64,
    ) -> StepEnding {
        let (exit_status, end_time, usage) = match end {
            Some(e) => (e.wait_status, e.end_time, Some(e.usage)),
            None => (libc::SIGKILL, now, None),
        };
        let state = match cancelled_by {
            Some(_) => JobState::Cancelled,
            None => state_of(exit_status),
        };
        StepEnding { job, step, state, end: end_time, exit_status, cancelled_by, usage, gpu_use: None }
    }

    /// The same end, with what the step's processes did with the GPUs.
    pub fn with_gpu_use(self, gpu_use: Option<GpuUse>) -> StepEnding {
        StepEnding { gpu_use, ..self }
    }
}

/// The state Slurm's accounting gives a step (or a batch script) that ended with raw status
/// `status`: slurmstepd's `SIG_OOM` is `OUT_OF_MEMORY`, killed by a signal `CANCELLED`, a
/// non-zero exit `FAILED`, else `COMPLETED`.
pub fn state_of(status: i32) -> JobState {
    if status & 0xff == crate::stepd::SIG_OOM {
        JobState::OutOfMemory
    } else if libc::WIFSIGNALED(status) {
        JobState::Cancelled
    } else if status != 0 {
        JobState::Failed
    } else {
        JobState::Completed
    }
}

/// The raw status of a step still running when its job ended: ended by SIGTERM.
pub const ENDED_WITH_JOB: i32 = libc::SIGTERM;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_from_statuses_as_slurmdbd_records_them() {
        assert_eq!(state_of(0), JobState::Completed);
        assert_eq!(state_of(7 << 8), JobState::Failed);
        assert_eq!(state_of(libc::SIGTERM), JobState::Cancelled);
        let lost = StepEnding::from_status(3, 0, None, None, 50);
        assert_eq!((lost.state, lost.exit_status, lost.end), (JobState::Cancelled, libc::SIGKILL, 50));
        let cancelled = StepEnding::from_status(3, 1, None, Some(1000), 50);
        assert_eq!(cancelled.state, JobState::Cancelled);
    }
}
