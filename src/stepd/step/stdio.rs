//! Where each task's standard input, output and error go: pipes to and from the supervisor,
//! files (`--input`, `--output`, `--error`), /dev/null, or the pseudo-terminal (`--pty`).

use super::spec::{StepInput, StepSpec};
use crate::api::stream::Channel;
use crate::options::pattern::{self, PatternContext};
use crate::stepd::stream_files::{self, Ready};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A descriptor the supervisor reads a task's output from.
pub struct Source {
    /// The read end (non-blocking), or the pseudo-terminal's master.
    pub fd: Arc<OwnedFd>,
    /// The task.
    pub task: u32,
    /// Which output it carries (a pseudo-terminal's master carries both, as stdout; it
    /// reads EIO once the slave side is closed, which ends it like an end of file).
    pub channel: Channel,
}

/// A descriptor the supervisor writes the client's input to.
pub struct Target {
    /// The write end (non-blocking), or the pseudo-terminal's master.
    pub fd: Arc<OwnedFd>,
    /// A pseudo-terminal's master: the end of input does not close it, and resizes apply.
    pub pty: bool,
}

/// One task's I/O.
pub struct TaskIo {
    /// What the task gets as descriptors 0, 1 and 2.
    pub child: [OwnedFd; 3],
    /// The task runs on the pseudo-terminal (descriptor 0 is its slave side): it becomes a
    /// session leader with that terminal as its controlling terminal.
    pub pty: bool,
    /// Its outputs that come to the supervisor.
    pub sources: Vec<Source>,
    /// Where the client's input for it goes, if anywhere.
    pub target: Option<Target>,
}

/// The step's files as opened so far. Output files are opened once per path: tasks whose
/// pattern expands to the same file share one open file (and so one offset), so that they
/// do not overwrite each other. An input FIFO that waits for its writer stays open here (see
/// [`stream_files::open_input`]).
#[derive(Default)]
pub struct StepFiles {
    outputs: HashMap<PathBuf, File>,
    waiting_inputs: HashMap<u32, File>,
}

impl StepFiles {
    fn output(&mut self, path: &Path, append: bool) -> std::io::Result<Option<OwnedFd>> {
        if let Some(f) = self.outputs.get(path) {
            return Ok(Some(f.try_clone()?.into()));
        }
        let Ready::Open(f) = stream_files::open_output(path, append)? else { return Ok(None) };
        let fd = f.try_clone()?.into();
        self.outputs.insert(path.to_path_buf(), f);
        Ok(Some(fd))
    }

    fn input(&mut self, path: &Path, task: u32) -> std::io::Result<Option<OwnedFd>> {
        let mut held = self.waiting_inputs.remove(&task);
        match stream_files::open_input(path, &mut held)? {
            Ready::Open(f) => Ok(Some(f.into())),
            Ready::Waiting => {
                self.waiting_inputs.extend(held.map(|f| (task, f)));
                Ok(None)
            }
        }
    }
}

/// Why a task's I/O is not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotWired {
    /// It cannot be: the message for the client (the task is not started).
    Failed(String),
    /// A FIFO waits for its other end: what it waits for.
    Waiting(String),
}

/// The capacity asked for the output pipes (the default is 64 KiB): a task writing fast
/// blocks less often, and the relay moves more per wake-up (about a quarter more throughput
/// for `cat` of a large file). Not more: the pages of all a user's pipes count against a
/// per-user limit (`/proc/sys/fs/pipe-user-pages-soft`).
const OUTPUT_PIPE_SIZE: i32 = 1 << 18;

/// A pipe whose task end is blocking and whose supervisor end is not: `(read, write)`.
fn pipe(supervisor_reads: bool) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = crate::sys::pipe()?;
    let task_end = if supervisor_reads { &w } else { &r };
    crate::sys::set_nonblocking(task_end.as_fd(), false)?;
    if supervisor_reads {
        // Best effort: past the limits (pipe-max-size, the user's pages) it fails, and the
        // pipe keeps its default size.
        // SAFETY: F_SETPIPE_SZ on a pipe we own; no memory is passed.
        unsafe { libc::fcntl(r.as_raw_fd(), libc::F_SETPIPE_SZ, OUTPUT_PIPE_SIZE) };
    }
    Ok((r, w))
}

fn dev_null() -> std::io::Result<OwnedFd> {
    Ok(File::open("/dev/null")?.into())
}

/// Expands a file name pattern for `task`; a relative name is relative to the step's `cwd`.
pub fn task_path(spec: &StepSpec, pattern: &str, task: u32) -> PathBuf {
    let ctx = PatternContext { task_id: task, ..spec.names.clone() };
    spec.cwd.join(pattern::expand(pattern, &ctx))
}

/// Opens `task`'s I/O, as far as `files` has it already. A file that cannot be opened
/// fails the task ([`NotWired::Failed`]: it is then not started); a FIFO without its other
/// end leaves it [`NotWired::Waiting`], to be tried again. Task 0 of a `--pty` step gets the
/// terminal as its input, output and error, whatever the other options say, and the
/// client's input.
pub fn wire(spec: &StepSpec, task: u32, files: &mut StepFiles) -> Result<TaskIo, NotWired> {
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        NotWired::Failed(crate::stepd::error_line(
            &spec.node_name,
            &format!("Could not open {what} file {}: {}", path.display(), super::describe(&e)),
        ))
    };
    let waiting = |path: &Path, how: &str| {
        NotWired::Waiting(format!(
            "step {}: task {task} waits for a process to open FIFO {} for {how}",
            spec.step_name(),
            path.display()
        ))
    };
    let other = |e: std::io::Error| {
        NotWired::Failed(crate::stepd::error_line(
            &spec.node_name,
            &format!("task {task} I/O setup: {}", super::describe(&e)),
        ))
    };
    if task == 0 {
        if let Some(ws) = spec.pty {
            return pty(ws.rows, ws.cols).map_err(other);
        }
    }
    // The files first: nothing else is made while one of them waits.
    let mut output = |pattern: &Option<String>, what: &str| -> Result<Option<OwnedFd>, NotWired> {
        let Some(p) = pattern else { return Ok(None) };
        let path = task_path(spec, p, task);
        match files.output(&path, spec.append) {
            Ok(Some(fd)) => Ok(Some(fd)),
            Ok(None) => Err(waiting(&path, "reading")),
            Err(e) => Err(fail(what, &path, e)),
        }
    };
    let stdout_file = output(&spec.stdout, "stdout")?;
    let stderr_file = output(&spec.stderr, "stderr")?;
    let stdin_file = match &spec.stdin {
        StepInput::File(p) => {
            let path = task_path(spec, p, task);
            match files.input(&path, task) {
                Ok(Some(fd)) => Some(fd),
                Ok(None) => return Err(waiting(&path, "writing")),
                Err(e) => return Err(fail("stdin", &path, e)),
            }
        }
        _ => None,
    };
    let mut sources = Vec::new();
    let mut target = None;
    let wants_input = match &spec.stdin {
        StepInput::All => true,
        StepInput::Task(n) => *n == task,
        StepInput::None | StepInput::File(_) => false,
    };
    let stdin = if let Some(fd) = stdin_file {
        fd
    } else if wants_input {
        let (r, w) = pipe(false).map_err(other)?;
        target = Some(Target { fd: Arc::new(w), pty: false });
        r
    } else {
        dev_null().map_err(other)?
    };
    let mut relay = |channel| -> Result<OwnedFd, NotWired> {
        let (r, w) = pipe(true).map_err(other)?;
        sources.push(Source { fd: Arc::new(r), task, channel });
        Ok(w)
    };
    let stdout = match stdout_file {
        Some(fd) => fd,
        None => relay(Channel::Stdout)?,
    };
    let stderr = match (stderr_file, &spec.stdout) {
        (Some(fd), _) => fd,
        (None, Some(_)) => stdout.try_clone().map_err(other)?,
        (None, None) => relay(Channel::Stderr)?,
    };
    Ok(TaskIo { child: [stdin, stdout, stderr], pty: false, sources, target })
}

/// Task 0 on a new pseudo-terminal of `rows` × `cols`.
fn pty(rows: u16, cols: u16) -> std::io::Result<TaskIo> {
    let (master, slave) = crate::sys::openpty(Some((rows, cols)))?;
    crate::sys::set_nonblocking(master.as_fd(), true)?;
    let master = Arc::new(master);
    let child = [slave.try_clone()?, slave.try_clone()?, slave];
    Ok(TaskIo {
        child,
        pty: true,
        sources: vec![Source { fd: master.clone(), task: 0, channel: Channel::Stdout }],
        target: Some(Target { fd: master, pty: true }),
    })
}
