//! Starting the batch script, its files open (see [`super::batch_files`]), through the
//! supervisors' one fork path ([`super::exec`]).

use super::batch_files::Streams;
use super::containment::Containment;
use super::exec::{self, cstring, Failure, Program, Wiring};
use super::LaunchSpec;
use crate::identity::Identity;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;

/// The running batch shell.
pub struct Child {
    /// Its pid.
    pub pid: i32,
    /// The job's stderr file, kept open for the supervisor's lines.
    pub notes: super::notes::Notes,
}

impl Child {
    /// Reaps the exited child and returns its raw wait status.
    pub fn wait(&mut self) -> Option<i32> {
        let mut status = 0;
        // SAFETY: waitpid writes into a valid local; the child is ours.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
        (rc == self.pid).then_some(status)
    }
}

/// Starts the batch script described by `spec` on `streams` into the job's `containment`,
/// as its `owner` when it has one.
pub fn start(
    spec: &LaunchSpec,
    owner: Option<Identity>,
    streams: Streams,
    containment: &mut dyn Containment,
) -> std::io::Result<Child> {
    let Streams { stdin, stdout, stderr } = streams;
    let mut env_vars = spec.env.clone();
    if let Some(user) = &owner {
        user.set_env(&mut env_vars);
    }
    let path = cstring(spec.script.as_os_str().as_bytes())?;
    let mut argv = vec![path.clone()];
    for a in &spec.argv {
        argv.push(cstring(a.as_bytes())?);
    }
    // SLURM_TASK_PID is the batch shell's own pid, filled in after fork.
    let env = env_vars
        .iter()
        .filter(|e| !e.starts_with(exec::PID_VAR))
        .map(|e| cstring(e.as_bytes()))
        .collect::<Result<_, _>>()?;
    let node = &spec.node_name;
    let failure = Failure::Written {
        identity: super::error_line(
            node,
            &format!("cannot run as the job's owner {}\n", owner.as_ref().map(|u| u.name.as_str()).unwrap_or_default()),
        ),
        exec: super::error_line(node, &format!("execve(): {}: ", spec.script.display())),
    };
    let program = Program {
        argv,
        candidates: vec![path],
        env,
        cwd: cstring(spec.cwd.as_os_str().as_bytes())?,
        chdir_line: exec::chdir_line(node, &spec.cwd),
        umask: spec.owner_umask(),
        owner,
        failure,
    };
    let wiring = Wiring { fds: [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()], terminal: false };
    let started = program.start(&[], &wiring, containment)?;
    Ok(Child { pid: started.pid, notes: super::notes::Notes::new(Some(stderr)) })
}
