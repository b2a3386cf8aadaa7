//! What the daemon tells a step's supervisor: `STEPDIR/spec.json`.

use crate::api::stream::WinSize;
use crate::options::pattern::PatternContext;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where the tasks' standard input comes from (`srun --input`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StepInput {
    /// The client's standard input goes to every task (Slurm's default).
    #[default]
    All,
    /// Only task N gets it; the others read /dev/null.
    Task(u32),
    /// Every task reads /dev/null.
    None,
    /// Each task reads this file (a pattern: `%t`, `%j`, … expanded per task).
    File(String),
}

/// One job step: the tasks to start and how their I/O is wired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSpec {
    /// The job id.
    pub job_id: u32,
    /// The step id within the job (0, 1, …).
    pub step_id: u32,
    /// The program and its arguments (the program is looked up in the tasks' `PATH`).
    pub argv: Vec<String>,
    /// The environment every task starts from (`NAME=value`), job and step variables
    /// included. Each task adds `SLURM_PROCID`, `SLURM_LOCALID` and `SLURM_TASK_PID`.
    pub env: Vec<String>,
    /// The tasks' working directory.
    pub cwd: PathBuf,
    /// How many tasks.
    pub ntasks: u32,
    /// Task 0 runs on a pseudo-terminal of this size (`--pty`).
    pub pty: Option<WinSize>,
    /// `--output` pattern: each task's stdout goes to this file instead of the client.
    pub stdout: Option<String>,
    /// `--error` pattern: each task's stderr goes to this file instead of the client
    /// (`None` with `stdout` set: stderr goes to the stdout file).
    pub stderr: Option<String>,
    /// `--input`.
    pub stdin: StepInput,
    /// Append to output files instead of truncating them.
    pub append: bool,
    /// When the step must end (UNIX seconds): the job's or the step's time limit, as of its
    /// start (see [`crate::stepd::timing`] for what moves it).
    pub end_time: Option<u64>,
    /// When the job started (UNIX seconds), to tell its timing file from an earlier run's.
    #[serde(default)]
    pub job_start: u64,
    /// When the step's own time limit (`srun --time`) ends, if it has one (UNIX seconds).
    #[serde(default)]
    pub own_end: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_wait: u32,
    /// Node name, for messages.
    pub node_name: String,
    /// What the tasks' file name patterns (`--output`, `--error`, `--input`) expand to, the
    /// array's job and task ids included; each task puts its own id in `task_id`.
    pub names: PatternContext,
    /// The submitter's umask, if known.
    pub umask: Option<u32>,
    /// The job's owner, whom the tasks run as when the supervisor runs as root for another
    /// user.
    #[serde(default)]
    pub run_as: Option<crate::identity::RunAs>,
    /// What the step was given: its CPUs, memory and the GPUs its tasks see (their
    /// environment already names the GPUs).
    #[serde(flatten)]
    pub share: crate::stepd::containment::Share,
}

impl StepSpec {
    /// `JOB.STEP`, as messages name the step.
    pub fn step_name(&self) -> String {
        format!("{}.{}", self.job_id, self.step_id)
    }

    /// The umask the tasks and their files get: the submitter's, else 022 for another
    /// user's step (never the root daemon's private one); `None` leaves the supervisor's.
    pub fn owner_umask(&self) -> Option<u32> {
        self.umask.or(self.run_as.map(|_| 0o022))
    }
}
