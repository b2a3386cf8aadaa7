//! Starting a process of a job, its batch script or one of a step's tasks: one fork path.
//!
//! The child enters the job's or step's [`Containment`], takes its descriptors (and its
//! terminal), umask, owner, directory and pid variable, gets default signal handling, and
//! executes its program. Everything it needs is prepared before `fork`, so that the child
//! only makes async-signal-safe calls. Whether `execve` failed comes back through a
//! close-on-exec pipe: the child writes its errno there before it exits; a successful
//! `execve` closes the pipe without a word.

use super::containment::Containment;
use crate::identity::Identity;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::Path;

/// The variable that holds the started process's own pid.
pub const PID_VAR: &str = "SLURM_TASK_PID=";

/// Room for the pid in the `SLURM_TASK_PID` value, filled in after `fork`.
const PID_ROOM: &str = "SLURM_TASK_PID=0000000000";

/// The search path when the environment has none (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// How a process that cannot start says so, besides its report to the supervisor.
pub enum Failure {
    /// A step's task: its supervisor tells the client, and the task exits with the errno
    /// (Slurm's exit code for a task that could not be executed).
    Reported,
    /// The batch script: slurmstepd's lines in the job's error output, then exit code 127,
    /// or 1 when it cannot become its owner.
    Written {
        /// The line when it cannot become its owner.
        identity: String,
        /// The start of the line when `execve` fails (the error's text follows).
        exec: String,
    },
}

/// A program as the processes started from it run it, ready for `execve`.
pub struct Program {
    /// Its arguments, the program's name first.
    pub argv: Vec<CString>,
    /// The paths to try `execve` on, in order (see [`search_path`]).
    pub candidates: Vec<CString>,
    /// The environment without the variables each process gets its own value of.
    pub env: Vec<CString>,
    /// The working directory.
    pub cwd: CString,
    /// The line written to the process's error output when it cannot enter `cwd`.
    pub chdir_line: ChdirLine,
    /// The umask to set, if any.
    pub umask: Option<u32>,
    /// The user the processes run as, when the supervisor runs as root for another user.
    pub owner: Option<Identity>,
    /// How a failure to start is told.
    pub failure: Failure,
}

/// The standard descriptors of one process.
pub struct Wiring {
    /// Its standard input, output and error.
    pub fds: [RawFd; 3],
    /// Its standard input is a pseudo-terminal, which becomes its controlling terminal in a
    /// session of its own.
    pub terminal: bool,
}

/// A process that was forked.
pub struct Started {
    /// Its pid.
    pub pid: i32,
    /// The errno of its failed `execve` (or of its failure to become its owner), if it
    /// failed; the child has then exited.
    pub exec_error: Option<i32>,
}

/// `s` as a C string; `Err` names what holds a NUL byte.
pub fn cstring(s: impl Into<Vec<u8>>) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in the command or environment"))
}

/// Where `execve` looks for `program`: itself when it names a file (has a `/`), otherwise
/// each directory of `path` (the environment's `PATH`, glibc's default when there is none),
/// as `execvpe` does.
pub fn search_path(program: &str, path: Option<&str>) -> io::Result<Vec<CString>> {
    if program.is_empty() {
        return Ok(Vec::new());
    }
    if program.contains('/') {
        return Ok(vec![cstring(program)?]);
    }
    path.unwrap_or(DEFAULT_PATH)
        .split(':')
        .map(|dir| if dir.is_empty() { cstring(program) } else { cstring(format!("{dir}/{program}")) })
        .collect()
}

/// slurmstepd's line when a process cannot enter its directory, in the two parts around
/// the reason: the child writes the reason its own `chdir` gave, after it became the owner,
/// so that the line says what the owner sees there and never what root sees.
pub struct ChdirLine {
    before: String,
    after: String,
}

/// [`ChdirLine`] for directory `cwd` on node `node`.
pub fn chdir_line(node: &str, cwd: &Path) -> ChdirLine {
    ChdirLine {
        before: super::error_line(node, &format!("couldn't chdir to `{}': ", cwd.display())),
        after: ": going to /tmp instead\n".into(),
    }
}

impl ChdirLine {
    /// Writes the line with the text of `errno` to `fd` (async-signal-safe).
    pub fn write(&self, fd: libc::c_int, errno: i32) {
        // SAFETY: writes from strings of the given lengths.
        unsafe { libc::write(fd, self.before.as_ptr().cast(), self.before.len()) };
        super::errno_text::write_text(fd, errno);
        // SAFETY: as above.
        unsafe { libc::write(fd, self.after.as_ptr().cast(), self.after.len()) };
    }
}

impl Program {
    /// Forks a process of `self` into `containment`, with `own_env` (its own values of the
    /// per-process variables) and descriptors `wiring`, and waits until it has executed
    /// its program (or failed to).
    pub fn start(
        &self,
        own_env: &[CString],
        wiring: &Wiring,
        containment: &mut dyn Containment,
    ) -> io::Result<Started> {
        let mut pid_var = PID_ROOM.as_bytes().to_vec();
        pid_var.push(0);
        let pid_room = pid_var.as_mut_ptr();
        let env: Vec<*const libc::c_char> = self
            .env
            .iter()
            .chain(own_env)
            .map(|e| e.as_ptr())
            .chain([pid_room as *const libc::c_char, std::ptr::null()])
            .collect();
        let argv: Vec<*const libc::c_char> =
            self.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        let (report_r, report_w) = crate::sys::pipe()?;
        crate::sys::set_nonblocking(report_r.as_fd(), false)?;
        let report = report_w.as_raw_fd();

        // SAFETY: between fork and execve/_exit the child calls only async-signal-safe
        // functions on memory prepared above (no allocation, no locks).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: as above; the child never returns from this call.
            unsafe { self.child(wiring, &*containment, pid_room, &argv, &env, report) }
        }
        containment.placed(pid, wiring.terminal);
        drop(report_w);
        Ok(Started { pid, exec_error: read_errno(&report_r) })
    }

    /// The child's side of [`Program::start`].
    ///
    /// # Safety
    ///
    /// To be called only in the child right after `fork`; every pointer must point at memory
    /// prepared before the fork.
    unsafe fn child(
        &self,
        wiring: &Wiring,
        containment: &dyn Containment,
        pid_room: *mut u8,
        argv: &[*const libc::c_char],
        env: &[*const libc::c_char],
        report: i32,
    ) -> ! {
        if wiring.terminal {
            // SAFETY: setsid takes nothing; TIOCSCTTY takes an integer (0: take the terminal
            // only if no session has it) on the terminal's descriptor, open since before the
            // fork. Both are plain system calls, safe in the child.
            unsafe {
                libc::setsid();
                libc::ioctl(wiring.fds[0], libc::TIOCSCTTY, 0);
            }
        }
        // SAFETY: we are the child right after fork, which is what `enter` asks of its caller.
        unsafe { containment.enter(wiring.terminal) };
        for (to, from) in wiring.fds.into_iter().enumerate() {
            // SAFETY: dup2 takes two descriptor numbers and no memory; a bad one only fails.
            unsafe { libc::dup2(from, to as i32) };
        }
        if let Some(mask) = self.umask {
            // SAFETY: umask takes a number and cannot fail.
            unsafe { libc::umask(mask as libc::mode_t) };
        }
        if let Some(user) = &self.owner {
            // SAFETY: we are the child right after fork, as `become_for_good` asks; its
            // groups were looked up before the fork.
            if let Err(err) = unsafe { user.become_for_good() } {
                if let Failure::Written { identity, .. } = &self.failure {
                    // SAFETY: write reads `identity.len()` bytes of the string, built before
                    // the fork and alive in `self`.
                    unsafe { libc::write(2, identity.as_ptr().cast(), identity.len()) };
                }
                // SAFETY: `report` is the pipe's write end, open since before the fork;
                // _exit ends the child without running the parent's atexit handlers or
                // flushing its copies of the parent's buffers.
                unsafe {
                    write_errno(report, err);
                    libc::_exit(1);
                }
            }
        }
        // SAFETY: `cwd` is a NUL-terminated CString built before the fork, and so is the
        // literal; `__errno_location` points at this thread's errno, always valid to read.
        unsafe {
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                self.chdir_line.write(2, *libc::__errno_location());
                libc::chdir(c"/tmp".as_ptr());
            }
        }
        // SAFETY: `pid_room` points at the copy of PID_ROOM and its NUL that `start` made
        // before the fork: past the PID_VAR prefix it holds ten digits and the NUL, the 11
        // bytes that `write_decimal` writes at most. getpid takes nothing.
        unsafe { crate::sys::write_decimal(pid_room.add(PID_VAR.len()), libc::getpid() as u32) };
        // Processes start with default signal handling and nothing blocked: the supervisor
        // ignores SIGPIPE and blocks SIGTERM and SIGCHLD, none of which a program expects.
        for sig in 1..65 {
            // SAFETY: SIG_DFL installs no handler of ours; numbers that name no signal (or
            // SIGKILL and SIGSTOP) only fail.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
        // SAFETY: an all-zero sigset_t is a valid (empty) set, which sigemptyset empties by
        // its own rules; sigprocmask reads that local and writes no old mask (null).
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        }
        // As execvpe: go on along the path past names that are missing or not allowed, and
        // report EACCES if one was found but could not be executed.
        let mut err = libc::ENOENT;
        let mut denied = false;
        for path in &self.candidates {
            // SAFETY: `path` is a NUL-terminated CString; `argv` and `env` are null-terminated
            // arrays of pointers to CStrings that `start` holds (in `self`, `own_env` and its
            // own `pid_var`) until this child, which never returns, has executed or exited.
            // `__errno_location` points at this thread's errno.
            unsafe {
                libc::execve(path.as_ptr(), argv.as_ptr(), env.as_ptr());
                err = *libc::__errno_location();
            }
            match err {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => break,
            }
        }
        if denied && matches!(err, libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT) {
            err = libc::EACCES;
        }
        // SAFETY: `report` is the pipe's write end, open since before the fork.
        unsafe { write_errno(report, err) };
        match &self.failure {
            // SAFETY: _exit ends the child at once, touching none of the parent's state.
            Failure::Reported => unsafe { libc::_exit(err) },
            Failure::Written { exec, .. } => {
                // SAFETY: write reads `exec.len()` bytes of the string built before the fork,
                // and the one byte of the literal; _exit ends the child at once.
                unsafe {
                    libc::write(2, exec.as_ptr().cast(), exec.len());
                    super::errno_text::write_text(2, err);
                    libc::write(2, c"\n".as_ptr().cast(), 1);
                    libc::_exit(127)
                }
            }
        }
    }
}

/// Writes `errno` to the report pipe (async-signal-safe).
///
/// # Safety
///
/// `report` must be an open descriptor.
unsafe fn write_errno(report: i32, errno: i32) {
    let bytes = errno.to_ne_bytes();
    // SAFETY: write reads the four bytes of the local array.
    unsafe { libc::write(report, bytes.as_ptr().cast(), bytes.len()) };
}

/// The errno a child reported before it exited, or `None` when its `execve` closed the pipe.
fn read_errno(report: &std::os::fd::OwnedFd) -> Option<i32> {
    let mut errno = [0u8; 4];
    let mut got = 0;
    while got < errno.len() {
        // SAFETY: read writes at most the remaining bytes of the local array.
        let n = unsafe { libc::read(report.as_raw_fd(), errno[got..].as_mut_ptr().cast(), errno.len() - got) };
        match n {
            0 => break,
            n if n > 0 => got += n as usize,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    (got == errno.len()).then(|| i32::from_ne_bytes(errno))
}
