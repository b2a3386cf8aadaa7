//! The body of a step request (`POST /slurmlet/v1/job/{id}/steps`, upgraded to a stream).
//! slurmrestd has no way to launch a step; this is slurmlet's own.

use super::stream::WinSize;
use crate::stepd::step::StepInput;
use serde::{Deserialize, Serialize};

/// What srun asks for when it starts a step in an allocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StepRequest {
    /// `-n`: tasks (`None`: the job's task count).
    pub ntasks: Option<u32>,
    /// `-c`: CPUs per task (`None`: 1).
    pub cpus_per_task: Option<u32>,
    /// `--gres=gpu:N` / `--gpus=N`: GPUs the step takes from the job's (`None`: it sees all
    /// of the job's GPUs and takes none exclusively).
    pub gpus: Option<u32>,
    /// `--overlap`: share every resource with other steps.
    pub overlap: bool,
    /// `-N`: nodes, as written.
    pub nodes: Option<String>,
    /// `-w`: node list, as written.
    pub nodelist: Option<String>,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// srun's environment after `--export` (`NAME=value`).
    pub environment: Vec<String>,
    /// The working directory.
    pub cwd: String,
    /// `--pty`: task 0 on a pseudo-terminal of this size.
    pub pty: Option<WinSize>,
    /// `--output` pattern (`None`: to srun).
    pub stdout: Option<String>,
    /// `--error` pattern.
    pub stderr: Option<String>,
    /// `--input`.
    pub stdin: StepInput,
    /// `--open-mode=append`.
    pub append: bool,
    /// `-l`: sets `SLURM_LABELIO` in the tasks.
    pub label: bool,
    /// `-t` inside an allocation: the step's own time limit in minutes.
    pub time_limit: Option<u32>,
    /// `-J` given to srun itself: the step's name (`None`: the program's file name).
    pub name: Option<String>,
    /// The host srun runs on (`scontrol show step`'s `SrunHost`).
    pub srun_host: String,
    /// srun's process id.
    pub srun_pid: u32,
}
