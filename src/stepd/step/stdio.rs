//! Where each task's standard input, output and error go: pipes to and from the supervisor,
//! files (`--input`, `--output`, `--error`), /dev/null, or the pseudo-terminal (`--pty`).

use super::spec::{StepInput, StepSpec};
use crate::api::stream::Channel;
use crate::options::pattern::{self, PatternContext};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
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

/// Output files, opened once per path: tasks whose pattern expands to the same file share
/// one open file (and so one offset), so that they do not overwrite each other.
#[derive(Default)]
pub struct OutputFiles {
    open: HashMap<PathBuf, File>,
}

impl OutputFiles {
    fn get(&mut self, path: &Path, append: bool) -> std::io::Result<OwnedFd> {
        if let Some(f) = self.open.get(path) {
            return Ok(f.try_clone()?.into());
        }
        let f = OpenOptions::new().create(true).write(true).append(append).truncate(!append).mode(0o644).open(path)?;
        let fd = f.try_clone()?.into();
        self.open.insert(path.to_path_buf(), f);
        Ok(fd)
    }
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

/// Opens `task`'s I/O. `Err` is the message to give the client when a file cannot be
/// opened (the task is then not started). Task 0 of a `--pty` step gets the terminal as its
/// input, output and error, whatever the other options say, and the client's input.
pub fn wire(spec: &StepSpec, task: u32, files: &mut OutputFiles) -> Result<TaskIo, String> {
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        crate::stepd::error_line(
            &spec.node_name,
            &format!("Could not open {what} file {}: {}", path.display(), super::describe(&e)),
        )
    };
    let other = |e: std::io::Error| {
        crate::stepd::error_line(&spec.node_name, &format!("task {task} I/O setup: {}", super::describe(&e)))
    };
    if task == 0 {
        if let Some(ws) = spec.pty {
            return pty(ws.rows, ws.cols).map_err(other);
        }
    }
    let mut sources = Vec::new();
    let mut target = None;
    let wants_input = match &spec.stdin {
        StepInput::All => true,
        StepInput::Task(n) => *n == task,
        StepInput::None | StepInput::File(_) => false,
    };
    let stdin = if let StepInput::File(p) = &spec.stdin {
        let path = task_path(spec, p, task);
        File::open(&path).map_err(|e| fail("stdin", &path, e))?.into()
    } else if wants_input {
        let (r, w) = pipe(false).map_err(other)?;
        target = Some(Target { fd: Arc::new(w), pty: false });
        r
    } else {
        dev_null().map_err(other)?
    };
    let mut relay = |channel| -> Result<OwnedFd, String> {
        let (r, w) = pipe(true).map_err(other)?;
        sources.push(Source { fd: Arc::new(r), task, channel });
        Ok(w)
    };
    let stdout = match &spec.stdout {
        Some(p) => {
            let path = task_path(spec, p, task);
            files.get(&path, spec.append).map_err(|e| fail("stdout", &path, e))?
        }
        None => relay(Channel::Stdout)?,
    };
    let stderr = match (&spec.stderr, &spec.stdout) {
        (Some(p), _) => {
            let path = task_path(spec, p, task);
            files.get(&path, spec.append).map_err(|e| fail("stderr", &path, e))?
        }
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
