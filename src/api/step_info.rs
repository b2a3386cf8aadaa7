//! The steps of running jobs, as `GET /slurmlet/v1/steps` lists them for `squeue -s` and
//! `scontrol show step`. slurmrestd v0.0.43 has no listing of the steps of running jobs;
//! the fields carry what Slurm's `job_step_info_t` has that slurmlet knows.

use super::acct::{GpuUse, StepId};
use super::types::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// One step of a running job: its batch script's (`batch`), or an srun step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StepInfo {
    /// Its job's own id.
    pub job_id: u32,
    /// The array its job is a task of (0: none).
    pub array_job_id: u32,
    /// Its job's index in that array.
    pub array_task_id: Option<u32>,
    /// The step within its job.
    pub step: StepId,
    /// Its name (`batch`, `srun -J`, else the program's file name).
    pub name: String,
    /// Its job's partition.
    pub partition: String,
    /// Its owner's uid.
    pub user_id: u32,
    /// Its owner's name.
    pub user_name: String,
    /// The nodes it runs on.
    pub nodes: String,
    /// `RUNNING`, or `SUSPENDED` with its job.
    pub state: String,
    /// When it started (UNIX seconds).
    pub start_time: u64,
    /// Its own time limit in minutes (`None`: `UNLIMITED`).
    pub time_limit: Option<u32>,
    /// CPUs it holds (0 for the batch step, as Slurm reports it).
    pub cpus: u32,
    /// Tasks.
    pub tasks: u32,
    /// What it was given (`cpu=1,mem=1000M,node=1`; empty for the batch step).
    pub tres: String,
    /// GPUs per node it was given, as `gres/gpu:N` (empty: none).
    pub tres_per_node: String,
    /// How its tasks are laid out (`Block`, `Cyclic`; empty for the batch step).
    pub distribution: String,
    /// The host its srun runs on (empty for the batch step, or when not known).
    pub srun_host: String,
    /// Its srun's process id (0: none, or not known).
    pub srun_pid: u32,
    /// What its processes use now, when asked for (`sstat`) and the caller may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<StepStats>,
}

/// What a running step's processes use now, as `sstat` shows it: read from `/proc` when
/// asked, and the daemon's tally of its GPU use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StepStats {
    /// Its processes, in pid order.
    pub pids: Vec<u32>,
    /// The CPU time its live processes have used, microseconds.
    pub cpu_usec: u64,
    /// The largest resident set of one of its processes, KiB.
    pub rss_max_kb: u64,
    /// The resident sets of all of them, KiB.
    pub rss_total_kb: u64,
    /// The largest virtual memory of one of them, KiB.
    pub vsize_max_kb: u64,
    /// The virtual memory of all of them, KiB.
    pub vsize_total_kb: u64,
    /// Its GPU use so far, while the daemon looks at the GPUs.
    pub gpu_use: Option<GpuUse>,
}

impl StepInfo {
    /// Its id as squeue and scontrol print it: `J.S`, or `A_T.S` for a step of an array task
    /// (Slurm's `_print_step_id`).
    pub fn display_id(&self) -> String {
        match (self.array_job_id, self.array_task_id) {
            (a, Some(t)) if a != 0 => format!("{a}_{t}.{}", self.step),
            _ => format!("{}.{}", self.job_id, self.step),
        }
    }

    /// Seconds it has run at UNIX time `now`.
    pub fn run_time(&self, now: u64) -> u64 {
        now.saturating_sub(self.start_time)
    }

    /// Whether job id `job` names its job: the job's own id, or its array's (Slurm's step
    /// filter); `task` narrows an array to one task.
    pub fn of_job(&self, job: u32, task: Option<u32>) -> bool {
        match task {
            None => job == self.job_id || (self.array_job_id != 0 && job == self.array_job_id),
            Some(t) => self.array_job_id == job && self.array_task_id == Some(t),
        }
    }
}

/// Reply of `GET /slurmlet/v1/steps`: the steps of the running jobs the caller may see, by
/// job id, each job's batch step first and then its srun steps in the order they started.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StepsResponse {
    /// The steps.
    pub steps: Vec<StepInfo>,
    /// The usual `meta`.
    pub meta: Meta,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(job: u32, array: u32, task: Option<u32>, step: StepId) -> StepInfo {
        StepInfo { job_id: job, array_job_id: array, array_task_id: task, step, ..Default::default() }
    }

    #[test]
    fn ids_as_slurm_prints_them() {
        assert_eq!(step(7, 0, None, StepId::Number(0)).display_id(), "7.0");
        assert_eq!(step(7, 0, None, StepId::Batch).display_id(), "7.batch");
        assert_eq!(step(7, 5, Some(2), StepId::Number(1)).display_id(), "5_2.1");
        assert_eq!(step(5, 5, Some(0), StepId::Batch).display_id(), "5_0.batch");
    }

    #[test]
    fn a_job_id_names_its_own_steps_and_an_arrays_tasks() {
        let s = step(7, 5, Some(2), StepId::Number(0));
        assert!(s.of_job(7, None) && s.of_job(5, None) && s.of_job(5, Some(2)));
        assert!(!s.of_job(6, None) && !s.of_job(5, Some(1)) && !s.of_job(7, Some(2)));
        let plain = step(9, 0, None, StepId::Number(0));
        assert!(plain.of_job(9, None) && !plain.of_job(0, None));
    }
}
