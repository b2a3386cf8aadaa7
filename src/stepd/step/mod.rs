//! A job step's supervisor (`slurmlet stepd-step STEPDIR`), slurmlet's slurmstepd for one
//! step: starts the step's tasks and relays their I/O, exits and signals over the client's
//! stream connection.
//!
//! * `tasks` starts one task (fork, process group or terminal session, `execve`);
//! * `stdio` opens each task's input and output (pipes, files, the pseudo-terminal);
//! * `input` is the reader thread (the client's frames, the tasks' input);
//! * `relay` is the main loop (output, exits, cancel, time limit);
//! * `sink` writes frames to the client without ever blocking the loop.

pub mod end;
mod input;
mod relay;
mod sink;
pub mod spec;
mod stdio;
mod tasks;
#[cfg(test)]
mod tests;

pub use spec::{StepInput, StepSpec};

use crate::api::stream::Frame;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Supervises the step whose spec is `dir/spec.json`, over the client's connection `conn`
/// (already upgraded: frames only). `ended` (if any) is dropped (closed) as soon as every
/// task process is gone, before the last frames are flushed. Returns the process exit code
/// (0 unless the supervisor itself failed).
///
/// To be called in the supervisor's own process: it changes the calling thread's signal mask
/// (SIGTERM and SIGCHLD are blocked and read from signalfds), the dispositions of SIGCHLD
/// and SIGPIPE, and reaps every child of the process.
pub fn supervise(dir: &Path, ended: Option<OwnedFd>, conn: UnixStream) -> i32 {
    prepare_process();
    let reader = conn.try_clone();
    let mut sink = sink::Sink::new(conn);
    let fail = |mut sink: sink::Sink, why: String| {
        sink.frame(&Frame::Error(why));
        sink.finish(None);
        1
    };
    let spec = match start_files(dir) {
        Ok(spec) => spec,
        Err(why) => return fail(sink, why),
    };
    let reader = match reader {
        Ok(r) => r,
        Err(e) => return fail(sink, format!("step {}: {e}", spec.step_name())),
    };
    // Blocked before any task exists, so that no SIGCHLD is lost, and before the reader
    // thread starts, so that it inherits the mask and never takes these signals itself.
    let signals = crate::sys::SignalFd::block(libc::SIGTERM).and_then(|term| {
        let chld = crate::sys::SignalFd::block(libc::SIGCHLD)?;
        Ok((term, chld, crate::sys::SignalFd::block(super::timing::NOTIFY)?))
    });
    let (term, chld, notify) = match signals {
        Ok(s) => s,
        Err(e) => return fail(sink, format!("step {}: signalfd: {e}", spec.step_name())),
    };
    let owner = match spec.run_as.map(crate::identity::Identity::lookup).transpose() {
        Ok(owner) => owner,
        Err(e) => return fail(sink, format!("step {}: {e}", spec.step_name())),
    };
    let launch = match tasks::Launch::new(&spec, owner.clone()) {
        Ok(l) => l,
        Err(why) => return fail(sink, format!("step {}: {why}", spec.step_name())),
    };
    sink.frame(&Frame::StepStarted { job_id: spec.job_id, step_id: spec.step_id });
    // The tasks, and whatever they start in the supervisor's session (which it leads when the
    // daemon starts it).
    let mut jail = crate::stepd::containment::for_supervisor(&spec.share, true);
    let started = start_tasks(&spec, &launch, jail.as_mut(), owner.as_ref(), &mut sink);
    // The relay reads the wake pipe without blocking; the reader thread writes it blocking,
    // so that no message is ever lost.
    let wake = crate::sys::pipe().and_then(|(r, w)| {
        crate::sys::set_nonblocking(w.as_fd(), false)?;
        input::spawn(reader, started.targets, w).map(|_| r)
    });
    let wake = wake.ok();
    if wake.is_none() {
        sink.frame(&Frame::Message(crate::stepd::error_line(
            &spec.node_name,
            &format!("step {}: cannot read the client's input", spec.step_name()),
        )));
    }
    relay::Relay {
        spec: &spec,
        dir,
        sink,
        sources: started.sources,
        tasks: started.tasks,
        jail,
        term,
        chld,
        notify,
        wake,
        ended,
    }
    .run();
    0
}

/// Sets up what the supervisor's process relies on: descriptors 0 to 2 open (so that no
/// descriptor it opens takes their place), none of the others passed on to the tasks,
/// SIGCHLD queued (not ignored) and SIGPIPE ignored (a closed pipe or socket is an error).
fn prepare_process() {
    for fd in 0..3 {
        // SAFETY: fcntl and open have no memory preconditions; the path is NUL-terminated.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) < 0 {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
    crate::sys::close_inherited_on_exec();
    // SAFETY: signal only changes the process's dispositions.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Writes `dir/stepd.pid` and reads the spec.
fn start_files(dir: &Path) -> Result<StepSpec, String> {
    let me = std::process::id() as i32;
    let ticks = crate::sys::process_start_ticks(me).unwrap_or(0);
    let pid_file = dir.join(super::files::STEPD_PID);
    std::fs::write(&pid_file, format!("{me} {ticks}\n")).map_err(|e| format!("{}: {e}", pid_file.display()))?;
    let path = dir.join(super::files::SPEC);
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The tasks as started, and their I/O.
struct StartedTasks {
    tasks: Vec<relay::Task>,
    sources: Vec<stdio::Source>,
    targets: Vec<stdio::Target>,
}

/// Starts every task, telling the client about those that cannot start. The tasks' files
/// and terminal are opened by the job's `owner`, when the step runs as another user.
fn start_tasks(
    spec: &StepSpec,
    launch: &tasks::Launch,
    jail: &mut dyn crate::stepd::containment::Containment,
    owner: Option<&crate::identity::Identity>,
    sink: &mut sink::Sink,
) -> StartedTasks {
    let mut out = StartedTasks { tasks: Vec::new(), sources: Vec::new(), targets: Vec::new() };
    let mut files = stdio::OutputFiles::default();
    for task in 0..spec.ntasks {
        let io = match owner {
            Some(user) => user.on_thread(|| stdio::wire(spec, task, &mut files)).unwrap_or_else(|e| Err(e.to_string())),
            None => stdio::wire(spec, task, &mut files),
        };
        let started = io.and_then(|io| {
            let started = launch
                .start(task, &io, jail)
                .map_err(|e| crate::stepd::error_line(&spec.node_name, &format!("task {task}: fork: {e}")))?;
            out.sources.extend(io.sources);
            out.targets.extend(io.target);
            Ok(started)
        });
        match started {
            Ok(s) => {
                if let Some(errno) = s.exec_error {
                    sink.frame(&Frame::Message(crate::stepd::error_line(
                        &spec.node_name,
                        &format!("execve(): {}: {}", launch.program(), strerror(errno)),
                    )));
                }
                out.tasks.push(relay::Task { pid: Some(s.pid), done: false, status: None });
            }
            Err(message) => {
                sink.frame(&Frame::Message(message));
                sink.frame(&Frame::TaskExit { task, wait_status: 1 << 8 });
                out.tasks.push(relay::Task { pid: None, done: true, status: Some(1 << 8) });
            }
        }
    }
    out
}

/// The text of an errno value, as `strerror` gives it.
fn strerror(errno: i32) -> String {
    describe(&std::io::Error::from_raw_os_error(errno))
}

/// An error as C programs print it: `strerror`'s text, without Rust's `(os error N)`.
fn describe(e: &std::io::Error) -> String {
    crate::sys::c_error_text(e)
}
