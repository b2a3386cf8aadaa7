//! A job as the daemon keeps it: what was asked, what was given, and where it stands.

use super::text::Text;
use crate::stepd::{EndCause, WarnSignal};
use serde::{Deserialize, Serialize};

/// Slurm's job states (the base state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobState {
    /// Waiting to start.
    Pending,
    /// Running.
    Running,
    /// Stopped by `scontrol suspend` (SIGSTOP); it keeps its resources, and the time it spends
    /// suspended does not count toward its time limit.
    Suspended,
    /// Being signalled to end (cancel or time limit); resources still held.
    Completing,
    /// Ended with exit code 0.
    Completed,
    /// Ended with a non-zero exit code or a signal.
    Failed,
    /// Cancelled by a user.
    Cancelled,
    /// Reached its time limit.
    Timeout,
    /// Killed for using more memory than it asked for.
    OutOfMemory,
    /// Lost with its node (supervisor gone without a status).
    NodeFail,
    /// Ended because a job of a QOS that may preempt it needed what it held.
    Preempted,
}

impl JobState {
    /// The long name (`PENDING`).
    pub fn name(self) -> &'static str {
        match self {
            JobState::Pending => "PENDING",
            JobState::Running => "RUNNING",
            JobState::Suspended => "SUSPENDED",
            JobState::Completing => "COMPLETING",
            JobState::Completed => "COMPLETED",
            JobState::Failed => "FAILED",
            JobState::Cancelled => "CANCELLED",
            JobState::Timeout => "TIMEOUT",
            JobState::OutOfMemory => "OUT_OF_MEMORY",
            JobState::NodeFail => "NODE_FAIL",
            JobState::Preempted => "PREEMPTED",
        }
    }

    /// Parses a long name.
    pub fn from_name(name: &str) -> Option<JobState> {
        ALL_STATES.iter().copied().find(|s| s.name() == name)
    }

    /// Whether the job has ended.
    pub fn is_finished(self) -> bool {
        !matches!(self, JobState::Pending | JobState::Running | JobState::Suspended | JobState::Completing)
    }

    /// Whether the job holds resources.
    pub fn holds_resources(self) -> bool {
        matches!(self, JobState::Running | JobState::Suspended | JobState::Completing)
    }
}

/// Every state, for lookups.
pub const ALL_STATES: &[JobState] = &[
    JobState::Pending,
    JobState::Running,
    JobState::Suspended,
    JobState::Completing,
    JobState::Completed,
    JobState::Failed,
    JobState::Cancelled,
    JobState::Timeout,
    JobState::OutOfMemory,
    JobState::NodeFail,
    JobState::Preempted,
];

/// An amount of the node's consumable resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resources {
    /// How many of the node's CPUs (a count; which ones is the job's `cpu_ids`).
    pub cpus: u32,
    /// Memory in megabytes as Slurm counts them (MiB), counted against the node's.
    pub mem_mb: u64,
    /// GPUs given whole, which no other job shares.
    pub gpus: u32,
    /// Shards of one GPU (`--gres=shard:N`); a job asks for whole GPUs or shards, never
    /// both.
    pub shards: u32,
    /// The type its GPUs or shards' GPU must be (`--gres=gpu:tesla_t4:1`); `None`: any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_type: Option<super::gres_type::GresType>,
}

impl Resources {
    /// `self - other` (saturating); the type stays `self`'s.
    pub fn minus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus.saturating_sub(other.cpus),
            mem_mb: self.mem_mb.saturating_sub(other.mem_mb),
            gpus: self.gpus.saturating_sub(other.gpus),
            shards: self.shards.saturating_sub(other.shards),
            gpu_type: self.gpu_type,
        }
    }
    /// `self + other`; the type stays `self`'s.
    pub fn plus(&self, other: &Resources) -> Resources {
        Resources {
            cpus: self.cpus + other.cpus,
            mem_mb: self.mem_mb + other.mem_mb,
            gpus: self.gpus + other.gpus,
            shards: self.shards + other.shards,
            gpu_type: self.gpu_type,
        }
    }
}

/// Everything the daemon knows about one job.
///
/// The store keeps it as JSON (the `record` column of `jobs` and `runs`), but for its CPU
/// ids (see [`Job::cpu_ids`]). Every field has a default, here and in the structs it holds,
/// so that a record written before a field existed still reads, with the field's default;
/// fields a newer record has and this one does not know are skipped.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Job {
    /// Its id, never reused (an array task has its own; the array's is `array`'s).
    pub id: u32,
    /// `--job-name` (the script's name, or `wrap`, when none is given).
    pub name: Text,
    /// Its owner, who submitted it: its processes run as them.
    pub uid: u32,
    /// The group its processes run with: the submitter's primary group at submit time.
    pub gid: u32,
    /// The partition it was submitted to (the default one when none was named).
    pub partition: Text,
    /// Its state; `None` only in a record too old to have one, read as pending.
    pub state: Option<JobState>,
    /// Pending reason or why it ended (`None`, `Resources`, …).
    pub reason: Text,
    /// Priority (higher runs first).
    pub priority: u32,
    /// Whether `priority` was set by hand (`scontrol update priority=`): multifactor
    /// priority then leaves it as set, as Slurm does.
    pub priority_set: bool,
    /// Held by the user.
    pub held: bool,
    /// Submit time (UNIX seconds).
    pub submit_time: u64,
    /// Earliest start (`--begin`), UNIX seconds.
    pub begin_time: u64,
    /// When it was given resources (UNIX seconds; 0: not yet). Slurm's `StartTime`.
    pub start_time: u64,
    /// When it ended (UNIX seconds; 0: not yet).
    pub end_time: u64,
    /// Time limit in minutes; `None` = unlimited.
    pub time_limit: Option<u32>,
    /// What it asked for of the node, defaults filled in: what it holds while it runs.
    pub req: Resources,
    /// Tasks.
    pub ntasks: u32,
    /// CPUs per task.
    pub cpus_per_task: u32,
    /// Whether `--cpus-per-task` was given (SLURM_CPUS_PER_TASK is set only then).
    pub cpus_per_task_set: bool,
    /// Memory per CPU when the request was per CPU, else `None`.
    pub mem_per_cpu: Option<u64>,
    /// `tres_per_node` as submitted.
    pub tres_per_node: Text,
    /// `tres_per_job` as submitted.
    pub tres_per_job: Text,
    /// The GPUs given to the job. Stored as their indices (`gpu_ids`), as before GPUs were
    /// records, so that every version reads every record; a daemon that reads a running
    /// job back takes the records from its node's list.
    #[serde(rename = "gpu_ids", with = "crate::gpu::as_indices")]
    pub gpus: Vec<crate::gpu::Gpu>,
    /// The node's CPUs given to the job (ids from 0, ascending), kept after it ends; empty
    /// while it waits. The store keeps them in a column of their own (`jobs.cpu_ids`), not in
    /// the record.
    #[serde(skip)]
    pub cpu_ids: Vec<u32>,
    /// stdout pattern (`slurm-%j.out`), relative to `cwd` unless absolute.
    pub stdout: Text,
    /// stderr pattern; empty means stdout.
    pub stderr: Text,
    /// stdin path; empty means /dev/null.
    pub stdin: Text,
    /// Append instead of truncating output files.
    pub append: bool,
    /// Working directory.
    pub cwd: Text,
    /// The script path as given to sbatch (empty for stdin / --wrap).
    pub command: Text,
    /// `--comment`.
    pub comment: Text,
    /// What an administrator, or the daemon's idle GPU policy, recorded of it
    /// (`AdminComment`).
    pub admin_comment: Text,
    /// `--wckey`.
    pub wckey: Text,
    /// Its run is being ended because a GPU it holds failed: it ends `NODE_FAIL` (and is
    /// requeued when it may be).
    pub node_failed: bool,
    /// `--mail-type`: the events its user is told of.
    pub mail_type: crate::options::mail::MailTypes,
    /// `--mail-user`: who is told (empty: the job's owner).
    pub mail_user: Text,
    /// `--reservation`: the reservation it runs in (empty: none).
    pub reservation: Text,
    /// The end of the window of its reservation it was started in (UNIX seconds; 0: none):
    /// it is ended then, as Slurm ends a job whose reservation is over.
    pub resv_end: u64,
    /// `--account`.
    pub account: Text,
    /// Its QOS: the one asked for (`--qos`), or its user's or account's default.
    pub qos: Text,
    /// Whether this run is being (or was) ended by preemption.
    pub preempted: bool,
    /// When a preempted job's grace time is over (UNIX seconds).
    pub preempt_at: u64,
    /// Whether the job waits in the queue because its last run was preempted (until it
    /// starts again): a requeue asked for meanwhile is already done.
    pub requeued_by_preemption: bool,
    /// `--nice`.
    pub nice: i32,
    /// `--signal`.
    pub warn_signal: Option<WarnSignal>,
    /// Host the job was submitted from.
    pub submit_host: Text,
    /// Raw wait status of the batch shell once it ended.
    pub wait_status: Option<i32>,
    /// How the job ended.
    pub end_cause: Option<EndCause>,
    /// Uid that cancelled the job.
    pub cancelled_by: Option<u32>,
    /// Process id of the job's supervisor while it runs.
    pub stepd_pid: Option<i32>,
    /// An interactive allocation (srun or salloc outside a job): no script; it runs while
    /// its client holds it.
    pub interactive: bool,
    /// The reason it waited for before it started, or was cancelled while pending (Slurm's
    /// `state_reason_prev`, which accounting reports); empty: it never waited.
    pub reason_prev: Text,
    /// When the last scheduling pass's backfill plan expects the pending job to start (0:
    /// it has no reservation). Worked out again at every pass, never stored.
    #[serde(skip)]
    pub expected_start: u64,
    /// What the batch script's processes used, once the job ended.
    pub batch_usage: Option<crate::api::acct::Usage>,
    /// What the batch script's processes did with the GPUs, once the job ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_gpu_use: Option<crate::api::acct::GpuUse>,
    /// The job's place in a job array (`--array`), if it is one of its tasks.
    pub array: Option<ArrayTask>,
    /// `--dependency`, in Slurm's canonical form; empty once every dependency is satisfied
    /// (as Slurm clears it).
    pub dependency: Text,
    /// `--kill-on-invalid-dep=yes`: a dependency that can never be satisfied cancels the job.
    pub kill_on_invalid_dep: bool,
    /// Whether the job may be requeued (`--requeue`, Slurm's default; `--no-requeue`).
    pub requeue: bool,
    /// How many times the job was requeued (Slurm's `Restarts`, `SLURM_RESTART_COUNT`).
    pub restarts: u32,
    /// `scontrol requeue` of the running job: once it has ended, it goes back to the queue.
    pub requeue_on_end: bool,
    /// In a listing's copy of a pending array task only: the indices of the array's
    /// pending tasks it stands for (`3-15%2`), as Slurm lists them in one record (see
    /// `fold_pending` of the scheduler's arrays). Never stored.
    #[serde(skip)]
    pub listed_tasks: Text,
    /// When the job was last suspended or resumed (Slurm's `SuspendTime`); 0: never.
    pub suspend_time: u64,
    /// Seconds the job spent suspended, the current suspension not included: its end time
    /// moves by as much.
    pub suspended_secs: u64,
    /// Seconds the job ran before its last suspension (Slurm's `SecsPreSuspend`).
    pub pre_sus_secs: u64,
    /// The highest raw wait status of its srun steps that ended (Slurm's `DerivedExitCode`:
    /// a step's exit code counts over another's signal, as the raw status orders them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub derived_status: i32,
}

/// Whether a stored number is 0, and so left out of a job's record.
fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// One task of a job array: its index and what every task of the array shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ArrayTask {
    /// The array's job id (`%A`, `SLURM_ARRAY_JOB_ID`): the id of its first task.
    pub job_id: u32,
    /// This task's index (`%a`, `SLURM_ARRAY_TASK_ID`).
    pub task_id: u32,
    /// How many tasks the array has (`SLURM_ARRAY_TASK_COUNT`).
    pub count: u32,
    /// Its lowest index (`SLURM_ARRAY_TASK_MIN`).
    pub min: u32,
    /// Its highest index (`SLURM_ARRAY_TASK_MAX`).
    pub max: u32,
    /// The step between its indices, 1 when they are not evenly spaced
    /// (`SLURM_ARRAY_TASK_STEP`).
    pub step: u32,
    /// `%N`: at most this many of its tasks run at once; 0: no limit.
    pub max_running: u32,
}

impl Job {
    /// The current state (a job always has one once created).
    pub fn state(&self) -> JobState {
        self.state.unwrap_or(JobState::Pending)
    }

    /// Whether the job holds its resources but its supervisor has not started yet (its
    /// GPUs' MPS server is being readied, say): Slurm's CONFIGURING, shown instead of
    /// RUNNING until something of the job runs.
    pub fn configuring(&self) -> bool {
        self.state() == JobState::Running && self.stepd_pid.is_none()
    }

    /// The start time the controller reports: when the job started; for a pending job, the
    /// later of the time `--begin` holds it back to and the start the backfill plan expects
    /// (Slurm's squeue shows it as `%S` and sorts by it; a held job has none); else 0.
    pub fn shown_start(&self) -> u64 {
        if self.start_time != 0 || self.state() != JobState::Pending {
            return self.start_time;
        }
        let begin = if self.begin_time > self.submit_time { self.begin_time } else { 0 };
        let expected = if self.held { 0 } else { self.expected_start };
        begin.max(expected)
    }

    /// The `exit:signal` pair the controller reports for the job (`scontrol show job`, the
    /// REST `exit_code`): the batch script's own status, also when its time limit or a
    /// cancel ended it (`0:15`, as Slurm's); `1:0` when it could not be started.
    pub fn exit_pair(&self) -> (u32, u32) {
        match (self.end_cause, self.script_status()) {
            (Some(EndCause::LaunchFailed), _) => (1, 0),
            (Some(_), Some(ws)) => split_wait_status(ws),
            _ => (0, 0),
        }
    }

    /// The batch script's wait status as Slurm records it: for a job its time limit or a
    /// cancel ended, a script that exits 128+N because the signal reached its child first
    /// (an srun whose step it ended) was ended by signal N.
    pub fn script_status(&self) -> Option<i32> {
        let ws = self.wait_status?;
        let ended_by_signal = matches!(self.state(), JobState::Timeout | JobState::Cancelled)
            && libc::WIFEXITED(ws)
            && (129..160).contains(&libc::WEXITSTATUS(ws));
        Some(if ended_by_signal { libc::WEXITSTATUS(ws) - 128 } else { ws })
    }

    /// The array job id and task index of an array task.
    pub fn array_ids(&self) -> Option<(u32, u32)> {
        self.array.map(|a| (a.job_id, a.task_id))
    }

    /// Slurm's name for the job: `A_i` for an array task, else its id.
    pub fn display_id(&self) -> String {
        match self.array {
            Some(a) => format!("{}_{}", a.job_id, a.task_id),
            None => self.id.to_string(),
        }
    }

    /// Time limit in seconds, if any.
    pub fn limit_secs(&self) -> Option<u64> {
        self.time_limit.map(|m| m as u64 * 60)
    }

    /// When a started job reaches its time limit, as of `now`: its start plus its limit plus
    /// the time it spent suspended (a suspended job's end moves on while it stays so).
    /// A job started in a reservation ends with its window at the latest.
    pub fn limit_end(&self, now: u64) -> Option<u64> {
        let suspended_now = if self.state() == JobState::Suspended { now.saturating_sub(self.suspend_time) } else { 0 };
        let own = self
            .limit_secs()
            .map(|l| self.start_time.saturating_add(l).saturating_add(self.suspended_secs + suspended_now));
        self.capped_by_reservation(own)
    }

    /// `end`, or the end of the reservation window the job was started in when that comes
    /// first.
    pub fn capped_by_reservation(&self, end: Option<u64>) -> Option<u64> {
        match (end, self.resv_end) {
            (end, 0) => end,
            (Some(e), r) => Some(e.min(r)),
            (None, r) => Some(r),
        }
    }

    /// What the job was given as Slurm counts it, `(whole GPUs, shards)`: a shard job
    /// counts its shards, not the GPU they are on.
    pub fn given_gres(&self) -> (u32, u32) {
        self.step_gres(self.gpus.len() as u32)
    }

    /// What a step of the job that sees `gpus` of its GPUs was given, `(whole GPUs,
    /// shards)`: those GPUs, or in a shard job the job's shards.
    pub fn step_gres(&self, gpus: u32) -> (u32, u32) {
        match self.req.shards {
            0 => (gpus, 0),
            shards if gpus > 0 => (0, shards),
            _ => (0, 0),
        }
    }
}

/// Splits a raw wait status into Slurm's `(exit code, signal)`.
pub fn split_wait_status(ws: i32) -> (u32, u32) {
    if libc::WIFSIGNALED(ws) {
        (0, libc::WTERMSIG(ws) as u32)
    } else {
        (libc::WEXITSTATUS(ws) as u32, 0)
    }
}
