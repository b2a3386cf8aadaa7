//! Starting the batch script: fork, new process group, redirections, execve.
//!
//! Everything the child needs is prepared before `fork`, so that the child only makes
//! async-signal-safe calls.

use super::LaunchSpec;
use crate::identity::Identity;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The running batch shell.
pub struct Child {
    /// Its pid, which is also its process group id.
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

fn cstring(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL byte in argument"))
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

/// Starts the batch script described by `spec`, as its owner when it names one.
pub fn start(spec: &LaunchSpec) -> std::io::Result<Child> {
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
    // SLURM_TASK_PID is the batch shell's own pid: reserve room and fill it in after fork.
    const PID_VAR: &[u8] = b"SLURM_TASK_PID=";
    let mut env: Vec<CString> = env_vars
        .iter()
        .filter(|e| !e.as_bytes().starts_with(PID_VAR))
        .map(|e| cstring(e.as_bytes()))
        .collect::<Result<_, _>>()?;
    env.push(cstring(b"SLURM_TASK_PID=0000000000")?);
    let pid_slot = env.last().expect("just pushed").as_ptr() as *mut u8;
    let cwd = cstring(spec.cwd.as_os_str().as_bytes())?;
    let argv_ptrs: Vec<*const libc::c_char> =
        argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let env_ptrs: Vec<*const libc::c_char> =
        env.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let (in_fd, out_fd, err_fd) = (stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd());
    let node = &spec.node_name;
    let chdir_msg = super::error_line(
        node,
        &format!("couldn't chdir to `{}': No such file or directory: going to /tmp instead\n", spec.cwd.display()),
    );
    // Not the root daemon's private umask for another user's job that gave none.
    let umask = spec.umask.or(spec.run_as.map(|_| 0o022));
    let identity_msg = super::error_line(
        node,
        &format!("cannot run as the job's owner {}\n", owner.as_ref().map(|u| u.name.as_str()).unwrap_or_default()),
    );
    let exec_msg = super::error_line(node, &format!("execve(): {}: ", spec.script.display()));

    // SAFETY: between fork and execve/_exit the child calls only async-signal-safe functions
    // on memory prepared above (no allocation, no locks).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        unsafe {
            libc::setpgid(0, 0);
            libc::dup2(in_fd, 0);
            libc::dup2(out_fd, 1);
            libc::dup2(err_fd, 2);
            if let Some(mask) = umask {
                libc::umask(mask as libc::mode_t);
            }
            if let Some(user) = &owner {
                if user.become_for_good().is_err() {
                    libc::write(2, identity_msg.as_ptr().cast(), identity_msg.len());
                    libc::_exit(1);
                }
            }
            if libc::chdir(cwd.as_ptr()) != 0 {
                libc::write(2, chdir_msg.as_ptr().cast(), chdir_msg.len());
                libc::chdir(c"/tmp".as_ptr());
            }
            // Write our pid into the reserved SLURM_TASK_PID value (ten digits of room).
            crate::sys::write_decimal(pid_slot.add(PID_VAR.len()), libc::getpid() as u32);
            // The job starts with default signal handling: Rust ignores SIGPIPE and the
            // daemon blocks SIGTERM, neither of which a job script expects.
            for sig in 1..32 {
                libc::signal(sig, libc::SIG_DFL);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            libc::execve(path.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            let err = *libc::__errno_location();
            libc::write(2, exec_msg.as_ptr().cast(), exec_msg.len());
            super::errno_text::write_text(2, err);
            libc::write(2, c"\n".as_ptr().cast(), 1);
            libc::_exit(127);
        }
    }
    // Also set the group from the parent, so that a signal sent right after fork finds it.
    // SAFETY: setpgid on our own child has no memory preconditions.
    unsafe { libc::setpgid(pid, pid) };
    Ok(Child { pid, stderr: Some(stderr) })
}
