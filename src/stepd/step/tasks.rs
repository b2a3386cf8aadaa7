//! Starting a task: fork, its own process group (or session, on the pseudo-terminal), its
//! descriptors, signals, umask and directory, then `execve` along the task's `PATH`.
//!
//! Everything the child needs is prepared before `fork`, so that the child only makes
//! async-signal-safe calls. Whether `execve` failed comes back through a close-on-exec pipe:
//! the child writes its errno there and exits with it (Slurm's exit code for a task that
//! could not be executed); a successful `execve` closes the pipe without a word.

use super::spec::StepSpec;
use super::stdio::TaskIo;
use super::strerror;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;

/// The variables every task gets its own value of.
const TASK_VARS: [&str; 3] = ["SLURM_PROCID=", "SLURM_LOCALID=", "SLURM_TASK_PID="];

/// Room for the task's pid in its `SLURM_TASK_PID` value, filled in after `fork`.
const PID_ROOM: &str = "SLURM_TASK_PID=0000000000";

/// The search path when the tasks' environment has none (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// What is the same for every task of the step, ready for `execve`.
pub struct Launch {
    argv0: String,
    argv: Vec<CString>,
    /// The paths to try `execve` on, in order.
    candidates: Vec<CString>,
    /// The step's environment without the per-task variables.
    env: Vec<CString>,
    cwd: CString,
    umask: Option<u32>,
    /// The line the task writes to its stderr when it cannot enter `cwd`.
    chdir_msg: String,
    /// The user the tasks run as, when the supervisor runs as root for another user.
    owner: Option<crate::identity::Identity>,
}

/// A task that was forked.
pub struct Started {
    /// Its pid, which is also its process group id.
    pub pid: i32,
    /// The errno of its failed `execve`, if it failed (the child has then exited with it).
    pub exec_error: Option<i32>,
    /// It leads a session of its own (it runs on the pseudo-terminal).
    pub session: bool,
}

fn cstring(s: impl Into<Vec<u8>>) -> Result<CString, String> {
    CString::new(s).map_err(|_| "NUL byte in the step's command or environment".to_string())
}

impl Launch {
    /// Prepares the program, the environment and the directory of `spec`'s tasks; `Err` says
    /// why they cannot be.
    pub fn new(spec: &StepSpec, owner: Option<crate::identity::Identity>) -> Result<Launch, String> {
        let argv0 = spec.argv.first().ok_or("the step has no command")?.clone();
        let argv = spec.argv.iter().map(|a| cstring(a.as_str())).collect::<Result<_, _>>()?;
        let mut env_vars = spec.env.clone();
        if let Some(user) = &owner {
            user.set_env(&mut env_vars);
        }
        let env: Vec<CString> = env_vars
            .iter()
            .filter(|e| !TASK_VARS.iter().any(|v| e.starts_with(v)))
            .map(|e| cstring(e.as_str()))
            .collect::<Result<_, _>>()?;
        let path = spec.env.iter().find_map(|e| e.strip_prefix("PATH=")).unwrap_or(DEFAULT_PATH);
        let candidates = if argv0.is_empty() {
            Vec::new()
        } else if argv0.contains('/') {
            vec![cstring(argv0.as_str())?]
        } else {
            path.split(':')
                .map(|dir| if dir.is_empty() { cstring(argv0.as_str()) } else { cstring(format!("{dir}/{argv0}")) })
                .collect::<Result<_, _>>()?
        };
        let cwd = cstring(spec.cwd.as_os_str().as_bytes())?;
        // The child cannot call strerror safely: name the reason the directory looks
        // unusable from here.
        let why = match std::fs::metadata(&spec.cwd) {
            Ok(m) if !m.is_dir() => strerror(libc::ENOTDIR),
            Ok(_) => strerror(libc::EACCES),
            Err(e) => strerror(e.raw_os_error().unwrap_or(libc::ENOENT)),
        };
        let chdir_msg = crate::stepd::error_line(
            &spec.node_name,
            &format!("couldn't chdir to `{}': {why}: going to /tmp instead\n", spec.cwd.display()),
        );
        // Not the root daemon's private umask for another user's step that gave none.
        let umask = spec.umask.or(owner.as_ref().map(|_| 0o022));
        Ok(Launch { argv0, argv, candidates, env, cwd, umask, chdir_msg, owner })
    }

    /// The program as the step names it, for messages.
    pub fn program(&self) -> &str {
        &self.argv0
    }

    /// Forks task `task` with descriptors `io` and waits until it has executed its program
    /// (or failed to).
    pub fn start(&self, task: u32, io: &TaskIo) -> io::Result<Started> {
        let mut env = self.env.clone();
        env.push(cstring(format!("SLURM_PROCID={task}")).map_err(io::Error::other)?);
        env.push(cstring(format!("SLURM_LOCALID={task}")).map_err(io::Error::other)?);
        let mut pid_var = PID_ROOM.as_bytes().to_vec();
        pid_var.push(0);
        let pid_digits = pid_var.as_mut_ptr();
        let env_ptrs: Vec<*const libc::c_char> =
            env.iter().map(|e| e.as_ptr()).chain([pid_digits as *const libc::c_char, std::ptr::null()]).collect();
        let argv_ptrs: Vec<*const libc::c_char> =
            self.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        let (report_r, report_w) = crate::sys::pipe()?;
        crate::sys::set_nonblocking(report_r.as_fd(), false)?;
        let fds = [io.child[0].as_raw_fd(), io.child[1].as_raw_fd(), io.child[2].as_raw_fd()];
        let report = report_w.as_raw_fd();
        let pty = io.pty;

        // SAFETY: between fork and execve/_exit the child calls only async-signal-safe
        // functions on memory prepared above (no allocation, no locks).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: as above; the child never returns from this block.
            unsafe { self.child(fds, pty, pid_digits, &argv_ptrs, &env_ptrs, report) }
        }
        if !pty {
            // Also set the group from the parent, so that a signal sent right after fork
            // finds it. (The pty task makes its own session: a group leader could not.)
            // SAFETY: setpgid on our own child has no memory preconditions.
            unsafe { libc::setpgid(pid, pid) };
        }
        drop(report_w);
        let mut errno = [0u8; 4];
        let mut got = 0;
        while got < errno.len() {
            // SAFETY: read writes at most the remaining bytes of the local array.
            let n = unsafe { libc::read(report_r.as_raw_fd(), errno[got..].as_mut_ptr().cast(), errno.len() - got) };
            match n {
                0 => break,
                n if n > 0 => got += n as usize,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        let exec_error = (got == errno.len()).then(|| i32::from_ne_bytes(errno));
        Ok(Started { pid, exec_error, session: pty })
    }

    /// The child's side of [`Launch::start`].
    ///
    /// # Safety
    ///
    /// To be called only in the child right after `fork`; every pointer must point at memory
    /// prepared before the fork.
    unsafe fn child(
        &self,
        fds: [i32; 3],
        pty: bool,
        pid_room: *mut u8,
        argv: &[*const libc::c_char],
        env: &[*const libc::c_char],
        report: i32,
    ) -> ! {
        if pty {
            libc::setsid();
            libc::ioctl(fds[0], libc::TIOCSCTTY, 0);
        } else {
            libc::setpgid(0, 0);
        }
        for (to, from) in fds.into_iter().enumerate() {
            libc::dup2(from, to as i32);
        }
        if let Some(mask) = self.umask {
            libc::umask(mask as libc::mode_t);
        }
        if let Some(user) = &self.owner {
            if let Err(err) = user.become_for_good() {
                let bytes = err.to_ne_bytes();
                libc::write(report, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(1);
            }
        }
        if libc::chdir(self.cwd.as_ptr()) != 0 {
            libc::write(2, self.chdir_msg.as_ptr().cast(), self.chdir_msg.len());
            libc::chdir(c"/tmp".as_ptr());
        }
        crate::sys::write_decimal(pid_room.add("SLURM_TASK_PID=".len()), libc::getpid() as u32);
        // Tasks start with default signal handling and nothing blocked: the supervisor
        // ignores SIGPIPE and blocks SIGTERM and SIGCHLD, none of which a program expects.
        for sig in 1..65 {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        // As execvpe: go on along the path past names that are missing or not allowed, and
        // report EACCES if one was found but could not be executed.
        let mut err = libc::ENOENT;
        let mut denied = false;
        for path in &self.candidates {
            libc::execve(path.as_ptr(), argv.as_ptr(), env.as_ptr());
            err = *libc::__errno_location();
            match err {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => break,
            }
        }
        if denied && matches!(err, libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT) {
            err = libc::EACCES;
        }
        let bytes = err.to_ne_bytes();
        libc::write(report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(err)
    }
}
