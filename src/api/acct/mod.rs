//! Job accounting: what sacct asks the daemon for (`POST /slurmlet/v1/history`) and the
//! records it gets back, one per job with its steps, in the shape sacct prints them.
//!
//! slurmrestd has no such call: sacct's own reply is smaller than the v0.0.43 records of
//! `GET /slurmdb/v0.0.43/jobs` (see [`super::slurmdb`]), which the daemon builds from the same
//! records.
//!
//! The query and how its options are read are `query.rs`'s; the records are here.

mod query;

pub use query::{default_window, parse_selection, parse_state, HistoryQuery, Selection, StepId, ACCOUNTED_STATES};

use super::types::ApiError;
use serde::{Deserialize, Serialize};

/// Slurm's `NO_VAL`: what the accounting records hold as the start of a job that ended
/// without starting (printed `None`).
pub const NO_VAL: u64 = 0xffff_fffe;

/// CPU time and memory used by the processes of a job's batch script or of a step, as
/// `getrusage(RUSAGE_CHILDREN)` reports them once they are gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// User CPU time, microseconds.
    pub user_usec: u64,
    /// System CPU time, microseconds.
    pub sys_usec: u64,
    /// The largest resident set of any of the processes (of all of them together, where
    /// their cgroup was read), KiB.
    pub max_rss_kb: u64,
    /// Their resident memory on average over the looks taken while they ran (Slurm's
    /// `AveRSS`), KiB; 0 where none was taken.
    pub ave_rss_kb: u64,
}

impl Usage {
    /// The usage of the calling process's children that have been waited for.
    pub fn of_children() -> Usage {
        // SAFETY: getrusage fills a zeroed rusage; RUSAGE_CHILDREN needs no other argument.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
            ru
        };
        let usec = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000 + t.tv_usec.max(0) as u64;
        Usage {
            user_usec: usec(ru.ru_utime),
            sys_usec: usec(ru.ru_stime),
            max_rss_kb: ru.ru_maxrss.max(0) as u64,
            ave_rss_kb: 0,
        }
    }

    /// Its average resident memory, KiB: the one measured, else its peak (no look was
    /// taken while it ran: it was short).
    pub fn average_rss_kb(&self) -> u64 {
        if self.ave_rss_kb > 0 {
            self.ave_rss_kb
        } else {
            self.max_rss_kb
        }
    }

    /// `self + other`, the largest resident set (and average) of the two.
    pub fn plus(&self, other: &Usage) -> Usage {
        Usage {
            user_usec: self.user_usec + other.user_usec,
            sys_usec: self.sys_usec + other.sys_usec,
            max_rss_kb: self.max_rss_kb.max(other.max_rss_kb),
            ave_rss_kb: self.ave_rss_kb.max(other.ave_rss_kb),
        }
    }
}

/// What a step's processes did with the GPUs, as the daemon saw them at each look: the
/// sums over its processes of their GPU memory and SM utilisation (Slurm's `gres/gpumem`
/// and `gres/gpuutil`), their peaks and their averages over the looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuUse {
    /// The most GPU memory its processes held at one look, bytes.
    pub mem_max: u64,
    /// The GPU memory its processes held on average, bytes.
    pub mem_ave: u64,
    /// The highest SM utilisation its processes had at one look, percent (summed over
    /// its GPUs: two busy GPUs make 200).
    pub util_max: u32,
    /// Its processes' SM utilisation on average, percent.
    pub util_ave: u32,
}

/// A TRES amount of a job or step: what it asked for or was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tres {
    /// CPUs.
    pub cpus: u32,
    /// Memory in MB (0: none reserved).
    pub mem_mb: u64,
    /// GPUs (whole).
    pub gpus: u32,
    /// Shards of a GPU (`gres/shard`; 0 in records written before shards were counted).
    pub shards: u32,
    /// Nodes.
    pub nodes: u32,
}

/// One step of an [`AcctJob`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AcctStep {
    /// Its id.
    pub id: StepId,
    /// Its name (`batch`, or the program srun ran).
    pub name: String,
    /// Its state's long name (`RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`…).
    pub state: String,
    /// Who cancelled it (`scancel JOB.STEP`).
    pub cancelled_by: Option<u32>,
    /// Start, UNIX seconds.
    pub start: u64,
    /// End, UNIX seconds (0 while it runs).
    pub end: u64,
    /// Its raw wait status (the one that decides its exit code); `None` while it runs.
    pub exit_status: Option<i32>,
    /// Tasks.
    pub ntasks: u32,
    /// What it was given.
    pub alloc: Tres,
    /// Its own time limit in minutes, if it has one.
    pub time_limit: Option<u32>,
    /// What its processes used, once they are gone.
    pub usage: Option<Usage>,
    /// What its processes did with the GPUs (while the daemon looked at them).
    #[serde(default)]
    pub gpu_use: Option<GpuUse>,
    /// The nodes it ran on.
    pub nodes: String,
}

/// One job as accounting keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct AcctJob {
    /// Job id.
    pub id: u32,
    /// An array task's array job id (0 for a job that is not part of an array).
    pub array_job_id: u32,
    /// An array task's index.
    pub array_task_id: Option<u32>,
    /// Job name.
    pub name: String,
    /// Owner.
    pub uid: u32,
    /// Owner's name.
    pub user: String,
    /// Group.
    pub gid: u32,
    /// Group's name.
    pub group: String,
    /// Partition.
    pub partition: String,
    /// `--account`.
    pub account: String,
    /// QOS.
    pub qos: String,
    /// `--comment`.
    pub comment: String,
    /// What an administrator (or the daemon's own policy) recorded of it.
    pub admin_comment: String,
    /// The reservation it ran in (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reservation: String,
    /// `--wckey`.
    pub wckey: String,
    /// Working directory.
    pub cwd: String,
    /// The cluster's name.
    pub cluster: String,
    /// State's long name.
    pub state: String,
    /// Who cancelled it.
    pub cancelled_by: Option<u32>,
    /// The reason it waited before it started (Slurm's `state_reason_prev`), or why it
    /// waits now.
    pub reason: String,
    /// Submit time.
    pub submit: u64,
    /// When it became eligible (0 while held).
    pub eligible: u64,
    /// Start time: 0 if it never started and may still, [`NO_VAL`] if it ended unstarted.
    pub start: u64,
    /// End time (0 while active).
    pub end: u64,
    /// Time limit in minutes; `None`: unlimited.
    pub time_limit: Option<u32>,
    /// What it asked for.
    pub req: Tres,
    /// What it was given (`None`: it never started).
    pub alloc: Option<Tres>,
    /// Whether its memory was asked for per CPU (`--mem-per-cpu`, Slurm's `MEM_PER_CPU`
    /// flag of `req_mem`) rather than per node: seff shows its share per core then.
    pub mem_per_cpu: bool,
    /// The indices of the GPUs it was given (the GPU its shards are on, in a shard job);
    /// empty before it starts and in records of a Slurm cluster, which keeps none. seff
    /// reads each GPU's samples by them.
    pub gpu_indices: Vec<u32>,
    /// Its nodes (`None assigned` before it started).
    pub nodes: String,
    /// Its raw exit status, as Slurm records it for the job.
    pub exit_status: i32,
    /// The highest raw exit status of its srun steps (`DerivedExitCode`).
    pub derived_status: i32,
    /// Priority.
    pub priority: u32,
    /// Held.
    pub held: bool,
    /// Standard output pattern and path.
    pub stdout: String,
    /// Standard output, expanded.
    pub stdout_expanded: String,
    /// Standard error pattern.
    pub stderr: String,
    /// Standard error, expanded.
    pub stderr_expanded: String,
    /// Standard input pattern.
    pub stdin: String,
    /// Standard input, expanded.
    pub stdin_expanded: String,
    /// Whether the job's own row is shown (not when only some of its steps were asked for).
    pub show_full: bool,
    /// Its steps, the batch script's first.
    pub steps: Vec<AcctStep>,
}

impl AcctJob {
    /// The id sacct prints: `A_i` for an array task, else the job id.
    pub fn id_string(&self) -> String {
        match self.array_task_id {
            Some(task) if self.array_job_id != 0 => format!("{}_{task}", self.array_job_id),
            _ => self.id.to_string(),
        }
    }

    /// Seconds it ran (so far, at `now`).
    pub fn elapsed(&self, now: u64) -> u64 {
        elapsed(self.start, self.end, now)
    }

    /// `-T`: cuts its times and its steps' to the window `[start, end)`, as slurmdbd does
    /// (an end still to come is the window's end, or `now`).
    pub fn truncate(&mut self, (start, end): (u64, u64), now: u64) {
        let end = end.min(now);
        let cut = |s: &mut u64, e: &mut u64| {
            if *s != 0 && *s != NO_VAL && *s < start {
                *s = start;
            }
            if *e == 0 || *e > end {
                *e = end;
            }
        };
        cut(&mut self.start, &mut self.end);
        for step in &mut self.steps {
            cut(&mut step.start, &mut step.end);
        }
    }

    /// What its finished steps used together (Slurm's job totals).
    pub fn usage(&self) -> Usage {
        self.steps
            .iter()
            .filter(|s| s.exit_status.is_some())
            .filter_map(|s| s.usage)
            .fold(Usage::default(), |a, u| a.plus(&u))
    }
}

impl AcctStep {
    /// Seconds it ran (so far, at `now`; a step without an end ends with its job).
    pub fn elapsed(&self, job_end: u64, now: u64) -> u64 {
        elapsed(self.start, if self.end == 0 { job_end } else { self.end }, now)
    }
}

/// Puts `jobs` in the order sacct prints them: by submit time, then (for jobs submitted in
/// the same second) the jobs that are not array tasks by id, then each array's tasks by
/// index. The sort is stable: a requeued job's earlier runs stay before its last.
pub fn sort_as_sacct(jobs: &mut [AcctJob]) {
    jobs.sort_by_key(|j| (j.submit, j.array_job_id, j.array_task_id.unwrap_or(u32::MAX), j.id));
}

/// Seconds from `start` to `end` (to `now` when there is no end yet; 0 if never started).
fn elapsed(start: u64, end: u64, now: u64) -> u64 {
    if start == 0 || start == NO_VAL {
        0
    } else if end == 0 {
        now.saturating_sub(start)
    } else {
        end.saturating_sub(start)
    }
}

/// Reply of `POST /slurmlet/v1/history` (without `json`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct HistoryReply {
    /// The jobs, in sacct's order (by submit time).
    pub jobs: Vec<AcctJob>,
    /// The daemon's time when it answered.
    pub now: u64,
    /// Errors.
    pub errors: Vec<ApiError>,
}
