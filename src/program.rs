//! Running an external program (a vendor's GPU tool, the MPS control program) to a deadline,
//! with a cap on what it prints. The system daemon is root and serves every user: a program
//! that hangs (a wedged driver, a client stopped by the user it runs as, a socket that never
//! answers) or floods its output must never hold the daemon's threads, its locks or its
//! memory. So the program runs in a process group of its own; when its deadline passes the
//! whole group is killed, and one that does not die even then (stuck in the kernel) is left
//! to a thread that reaps it whenever it ends, and reported.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a killed program has to be gone before it is left to a reaper thread.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// The bounds a program runs within.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long it may run, from its start.
    pub deadline: Duration,
    /// How many bytes of each of its output streams are kept; the rest is read and dropped.
    pub max_output: usize,
}

/// What a program that ended within its deadline left.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub status: ExitStatus,
    /// Its standard output, at most [`Limits::max_output`] bytes.
    pub stdout: Vec<u8>,
    /// Its standard error, at most as much.
    pub stderr: Vec<u8>,
    /// Whether either stream said more than was kept.
    pub truncated: bool,
}

impl Finished {
    /// Its standard output as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Its standard error as text, trimmed.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_string()
    }
}

/// Why a program gave no result.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// It could not be started.
    #[error("cannot run {program}: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
    /// It did not end within its deadline, and was killed with its process group.
    #[error("{program} did not finish within {} s and was killed{}", .after.as_secs_f64(), if *.unkillable { " (it did not end even then)" } else { "" })]
    TimedOut {
        /// The program.
        program: String,
        /// Its deadline.
        after: Duration,
        /// Whether it was still there after the kill (stuck in the kernel).
        unkillable: bool,
    },
    /// Waiting for it or reading it failed.
    #[error("{program}: {source}")]
    Io {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
}

impl ProgramError {
    /// Whether the program ran past its deadline.
    pub fn timed_out(&self) -> bool {
        matches!(self, ProgramError::TimedOut { .. })
    }
}

/// Makes `cmd` ready for [`finish`]: a process group of its own (so that the deadline ends
/// everything it started in it), its output read through pipes, and its input a pipe when
/// `input` is to be written to it, else nothing.
pub fn prepare(cmd: &mut Command, input: bool) -> &mut Command {
    cmd.process_group(0)
        .stdin(if input { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}

/// Runs `cmd` within `limits`, with `input` written to it, and returns how it ended.
pub fn run(cmd: &mut Command, input: Option<&[u8]>, limits: Limits) -> Result<Finished, ProgramError> {
    prepare(cmd, input.is_some());
    run_prepared(cmd, input, limits)
}

/// [`run`] of a command already [`prepare`]d (and changed after, say to drop its output).
pub fn run_prepared(cmd: &mut Command, input: Option<&[u8]>, limits: Limits) -> Result<Finished, ProgramError> {
    let name = name_of(cmd);
    let child = {
        let _one = one_spawn_at_a_time();
        cmd.spawn().map_err(|source| ProgramError::Start { program: name.clone(), source })?
    };
    finish(child, &name, input, limits)
}

/// Every process start of the daemon and every job script's writing, one at a time.
static SPAWN_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds off every other process start of the daemon (a supervisor's, a helper program's)
/// and every job script's writing while the caller starts one: a process forked while a
/// script is open for writing would keep it open until it execs, and the script's own exec
/// would then fail with "Text file busy".
pub fn one_spawn_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name a program is reported by: its path as given.
pub fn name_of(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

/// Writes `input` to `child` (started from a command [`prepare`]d), reads its output and
/// waits for it to end, all within `limits.deadline` of now; at the deadline its process
/// group is killed. Once the program itself has ended, what its output pipes hold is read
/// and the rest left: a daemon it started may hold them open for its whole life.
pub fn finish(mut child: Child, program: &str, input: Option<&[u8]>, limits: Limits) -> Result<Finished, ProgramError> {
    let started = Instant::now();
    let deadline = started + limits.deadline;
    let io_error = |source| ProgramError::Io { program: program.to_string(), source };
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        // A few bytes fit in the pipe at once; a program that reads none, or has left, is
        // not waited for.
        let _ = crate::sys::set_nonblocking(std::os::fd::AsFd::as_fd(&stdin), true);
        let _ = stdin.write_all(input);
    }
    let mut streams: Vec<Stream> = [child.stdout.take().map(Source::Out), child.stderr.take().map(Source::Err)]
        .into_iter()
        .flatten()
        .map(Stream::new)
        .collect();
    // A stream left blocking is read only when poll says it holds something.
    for s in &streams {
        let _ = crate::sys::set_nonblocking(s.fd(), true);
    }
    // Where pidfds are missing (Linux before 5.3), the end is looked for every few
    // milliseconds instead of being waited on.
    let exit = crate::sys::pidfd_open(child.id() as i32).ok();
    let status = loop {
        let now = Instant::now();
        let waited = match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if now >= deadline => {
                let unkillable = kill(child, program);
                return Err(ProgramError::TimedOut {
                    program: program.to_string(),
                    after: limits.deadline,
                    unkillable,
                });
            }
            Ok(None) => {
                let mut fds: Vec<i32> = streams.iter().filter(|s| s.open).map(|s| s.fd().as_raw_fd()).collect();
                fds.extend(exit.as_ref().map(|e| e.as_raw_fd()));
                let wait =
                    if exit.is_some() { deadline - now } else { (deadline - now).min(Duration::from_millis(10)) };
                crate::sys::poll_readable(&fds, Some(wait))
            }
            Err(e) => Err(e),
        };
        if let Err(e) = waited {
            kill(child, program);
            return Err(io_error(e));
        }
        for s in streams.iter_mut() {
            s.read_available(limits.max_output);
        }
    };
    for s in streams.iter_mut() {
        s.read_available(limits.max_output);
    }
    let truncated = streams.iter().any(|s| s.truncated);
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for s in streams {
        match s.source {
            Source::Out(_) => stdout = s.kept,
            Source::Err(_) => stderr = s.kept,
        }
    }
    Ok(Finished { status, stdout, stderr, truncated })
}

/// Kills `child`'s process group and waits a little for it to end; one that is still there
/// then is left to a thread that reaps it when it ends. Returns whether it was left so.
fn kill(mut child: Child, program: &str) -> bool {
    let pid = child.id() as i32;
    let _ = crate::sys::kill_group(pid, libc::SIGKILL);
    let gone_by = Instant::now() + KILL_GRACE;
    while Instant::now() < gone_by {
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    tracing::error!("{program} (pid {pid}) did not end when killed; it is left to end by itself");
    let _ = std::thread::Builder::new().name("reaper".into()).spawn(move || {
        let _ = child.wait();
    });
    true
}

/// One of a program's output pipes.
enum Source {
    Out(std::process::ChildStdout),
    Err(std::process::ChildStderr),
}

/// A pipe being read: what was kept of it, whether more was dropped, whether it is open.
struct Stream {
    source: Source,
    kept: Vec<u8>,
    truncated: bool,
    open: bool,
}

impl Stream {
    fn new(source: Source) -> Stream {
        Stream { source, kept: Vec::new(), truncated: false, open: true }
    }

    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        match &self.source {
            Source::Out(p) => p.as_fd(),
            Source::Err(p) => p.as_fd(),
        }
    }

    /// Reads what the pipe holds now (its end closes it), keeping up to `max` bytes.
    fn read_available(&mut self, max: usize) {
        let mut buf = [0u8; 16384];
        while self.open {
            let read = match &mut self.source {
                Source::Out(p) => p.read(&mut buf),
                Source::Err(p) => p.read(&mut buf),
            };
            match read {
                Ok(0) => self.open = false,
                Ok(n) => {
                    let room = max.saturating_sub(self.kept.len());
                    self.kept.extend_from_slice(&buf[..n.min(room)]);
                    self.truncated |= n > room;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => self.open = false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Limits = Limits { deadline: Duration::from_secs(5), max_output: 1 << 20 };

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn output_status_and_input() {
        let done = run(&mut sh("read x; echo \"got $x\"; echo oops >&2; exit 3"), Some(b"quit\n"), SHORT).unwrap();
        assert_eq!(
            (done.stdout_text(), done.stderr_text(), done.status.code()),
            ("got quit\n".into(), "oops".into(), Some(3))
        );
        assert!(!done.truncated);
        assert!(matches!(run(&mut Command::new("/nonexistent/tool"), None, SHORT), Err(ProgramError::Start { .. })));
    }

    #[test]
    fn a_hung_program_and_what_it_started_are_killed_at_the_deadline() {
        let marker = tempfile::NamedTempFile::new().unwrap();
        let script = format!("sleep 300 & echo $! > {}; wait", marker.path().display());
        let begun = Instant::now();
        let err = run(&mut sh(&script), None, Limits { deadline: Duration::from_millis(300), ..SHORT }).unwrap_err();
        assert!(err.timed_out() && begun.elapsed() < Duration::from_secs(3), "{err} after {:?}", begun.elapsed());
        let pid: i32 = std::fs::read_to_string(marker.path()).unwrap().trim().parse().unwrap();
        let gone = Instant::now() + Duration::from_secs(3);
        while crate::sys::kill_pid(pid, 0).is_ok() && !crate::sys::is_zombie(pid) && Instant::now() < gone {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(crate::sys::kill_pid(pid, 0).is_err() || crate::sys::is_zombie(pid), "its child {pid} outlived it");
    }

    #[test]
    fn a_stopped_program_is_killed_at_the_deadline() {
        let begun = Instant::now();
        let err =
            run(&mut sh("kill -STOP $$; echo never"), None, Limits { deadline: Duration::from_millis(300), ..SHORT })
                .unwrap_err();
        assert!(matches!(err, ProgramError::TimedOut { unkillable: false, .. }), "{err}");
        assert!(begun.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_flood_is_cut_to_the_cap_and_read_to_its_end() {
        let done = run(&mut sh("yes line | head -n 200000"), None, Limits { max_output: 1000, ..SHORT }).unwrap();
        assert!(done.status.success() && done.truncated && done.stdout.len() == 1000, "{}", done.stdout.len());
    }

    #[test]
    fn a_daemon_holding_the_output_open_is_not_waited_for() {
        let begun = Instant::now();
        let done = run(&mut sh("echo started; (sleep 3; echo late) & exit 0"), None, SHORT).unwrap();
        assert_eq!(done.stdout_text(), "started\n");
        assert!(begun.elapsed() < Duration::from_secs(2), "{:?}", begun.elapsed());
    }
}
