//! Starting a task: its program found along the task's `PATH`, its own variables, its
//! descriptors (and its terminal), through the supervisors' one fork path
//! ([`crate::stepd::exec`]).

use super::spec::StepSpec;
use super::stdio::TaskIo;
use crate::stepd::containment::Containment;
use crate::stepd::exec::{self, cstring, Failure, Program, Wiring};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;

pub use crate::stepd::exec::Started;

/// The variables every task gets its own value of.
const TASK_VARS: [&str; 3] = ["SLURM_PROCID=", "SLURM_LOCALID=", exec::PID_VAR];

/// What is the same for every task of the step, ready for `execve`.
pub struct Launch {
    argv0: String,
    program: Program,
}

impl Launch {
    /// Prepares the program, the environment and the directory of `spec`'s tasks; `Err` says
    /// why they cannot be.
    pub fn new(spec: &StepSpec, owner: Option<crate::identity::Identity>) -> Result<Launch, String> {
        let argv0 = spec.argv.first().ok_or("the step has no command")?.clone();
        let text = |e: io::Error| e.to_string();
        let argv = spec.argv.iter().map(|a| cstring(a.as_str())).collect::<Result<_, _>>().map_err(text)?;
        let mut env_vars = spec.env.clone();
        if let Some(user) = &owner {
            user.set_env(&mut env_vars);
        }
        let env = env_vars
            .iter()
            .filter(|e| !TASK_VARS.iter().any(|v| e.starts_with(v)))
            .map(|e| cstring(e.as_str()))
            .collect::<Result<_, _>>()
            .map_err(text)?;
        let path = spec.env.iter().find_map(|e| e.strip_prefix("PATH="));
        let candidates = exec::search_path(&argv0, path).map_err(text)?;
        let cwd = cstring(spec.cwd.as_os_str().as_bytes()).map_err(text)?;
        let chdir_line = exec::chdir_line(&spec.node_name, &spec.cwd);
        let umask = spec.owner_umask();
        let program = Program { argv, candidates, env, cwd, chdir_line, umask, owner, failure: Failure::Reported };
        Ok(Launch { argv0, program })
    }

    /// The program as the step names it, for messages.
    pub fn program(&self) -> &str {
        &self.argv0
    }

    /// Forks task `task` with descriptors `io` into the step's `containment`, and waits
    /// until it has executed its program (or failed to).
    pub fn start(&self, task: u32, io: &TaskIo, containment: &mut dyn Containment) -> io::Result<Started> {
        let own = [cstring(format!("SLURM_PROCID={task}"))?, cstring(format!("SLURM_LOCALID={task}"))?];
        let wiring = Wiring {
            fds: [io.child[0].as_raw_fd(), io.child[1].as_raw_fd(), io.child[2].as_raw_fd()],
            terminal: io.pty,
        };
        self.program.start(&own, &wiring, containment)
    }
}
