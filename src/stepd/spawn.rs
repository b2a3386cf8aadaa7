//! Starting the batch script: its output files, opened as its owner, then the supervisors'
//! one fork path ([`super::exec`]).

use super::containment::Containment;
use super::exec::{self, cstring, Failure, Program, Wiring};
use super::LaunchSpec;
use crate::identity::Identity;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The running batch shell.
pub struct Child {
    /// Its pid.
    pub pid: i32,
    /// The job's stderr file, kept open for supervisor messages.
    pub stderr: Option<File>,
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

fn open_output(path: &Path, append: bool) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    OpenOptions::new().create(true).write(true).append(append).truncate(!append).mode(0o644).open(path)
}

/// The job's standard streams, opened by the job's owner.
struct Streams {
    stdin: File,
    stdout: File,
    stderr: File,
}

fn open_streams(spec: &LaunchSpec) -> std::io::Result<Streams> {
    let stdout = open_output(&spec.stdout, spec.append)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot open {}: {e}", spec.stdout.display())))?;
    let stderr = match &spec.stderr {
        Some(p) if p != &spec.stdout => open_output(p, spec.append)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot open {}: {e}", p.display())))?,
        _ => stdout.try_clone()?,
    };
    let stdin = match &spec.stdin {
        Some(p) => {
            File::open(p).map_err(|e| std::io::Error::new(e.kind(), format!("cannot open {}: {e}", p.display())))?
        }
        None => File::open("/dev/null")?,
    };
    Ok(Streams { stdin, stdout, stderr })
}

/// Starts the batch script described by `spec` into the job's `containment`, as its owner
/// when it names one.
pub fn start(spec: &LaunchSpec, containment: &mut dyn Containment) -> std::io::Result<Child> {
    let owner = match spec.run_as {
        Some(who) => Some(Identity::lookup(who).map_err(std::io::Error::other)?),
        None => None,
    };
    let Streams { stdin, stdout, stderr } = match &owner {
        Some(user) => user.on_thread(|| open_streams(spec)).map_err(std::io::Error::other)??,
        None => open_streams(spec)?,
    };
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
        // Not the root daemon's private umask for another user's job that gave none.
        umask: spec.umask.or(spec.run_as.map(|_| 0o022)),
        owner,
        failure,
    };
    let wiring = Wiring { fds: [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()], terminal: false };
    let started = program.start(&[], &wiring, containment)?;
    Ok(Child { pid: started.pid, stderr: Some(stderr) })
}
