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
pub(in crate::stepd) mod sink;
pub mod spec;
mod stdio;
mod tasks;
#[cfg(test)]
mod tests;

pub use spec::{StepInput, StepSpec};

use crate::api::stream::Frame;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The pid of the supervisor of the step whose directory is `dir`, while it runs: the
/// process its pid file names, started when the file says (not a later process that got the
/// same pid) and not a zombie, and the step's end not recorded.
pub fn live_supervisor(dir: &Path) -> Option<i32> {
    if end::read(dir).is_some() {
        return None;
    }
    let (pid, ticks) = crate::stepd::read_stepd_pid(dir)?;
    (crate::sys::process_start_ticks(pid) == Some(ticks) && !crate::sys::is_zombie(pid)).then_some(pid)
}

/// The supervisors of the steps of the job whose directory is `job_dir` that still run.
pub fn live_supervisors(job_dir: &Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(job_dir.join(crate::stepd::files::STEPS)) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.parse::<u32>().is_ok()))
        .filter_map(|e| live_supervisor(&e.path()))
        .collect()
}

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
    let wired = wire_tasks(&spec, dir, owner.as_ref(), &term, &reader);
    let started = start_tasks(&spec, wired, &launch, jail.as_mut(), &mut sink);
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
        oom_said: false,
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

/// Opens every task's I/O as the job's `owner` (see [`crate::stepd::opener`]), before any
/// task starts, as slurmstepd does. A FIFO without its other end is waited for until it is
/// ready or the step is to end: a SIGTERM (left pending in `term`, for the relay to act on),
/// its client gone from `conn`, or its time limit. The tasks are then not started, and end
/// as if that signal had ended them; files that are merely slow are given a moment first
/// ([`crate::stepd::opener::Opener::settle`]), and the relay then ends the started tasks.
fn wire_tasks(
    spec: &StepSpec,
    dir: &Path,
    owner: Option<&crate::identity::Identity>,
    term: &crate::sys::SignalFd,
    conn: &UnixStream,
) -> Vec<Result<stdio::TaskIo, NotStarted>> {
    // Said once, for the step.
    let every_task = |message: String, wait_status: i32| {
        (0..spec.ntasks)
            .map(|task| Err(NotStarted { message: (task == 0).then(|| message.clone()), wait_status }))
            .collect()
    };
    let failed = 1 << 8;
    let node = &spec.node_name;
    let own = spec.clone();
    let mut files = stdio::StepFiles::default();
    let mut wired: Vec<Result<stdio::TaskIo, NotStarted>> = Vec::new();
    let opened = crate::stepd::opener::Opener::start(owner.cloned(), spec.owner_umask(), move || {
        while (wired.len() as u32) < own.ntasks {
            match stdio::wire(&own, wired.len() as u32, &mut files) {
                Ok(io) => wired.push(Ok(io)),
                Err(stdio::NotWired::Failed(message)) => {
                    wired.push(Err(NotStarted { message: Some(message), wait_status: 1 << 8 }))
                }
                Err(stdio::NotWired::Waiting(what)) => return crate::stepd::opener::Attempt::Waiting(what),
            }
        }
        crate::stepd::opener::Attempt::Done(std::mem::take(&mut wired))
    });
    let opener = match opened {
        Ok(o) => o,
        Err(e) => return every_task(crate::stepd::error_line(node, &format!("I/O setup: {}", describe(&e))), failed),
    };
    let job_dir = dir.parent().and_then(|d| d.parent()).unwrap_or(dir);
    let timing = crate::stepd::timing::Follower::start(job_dir, spec.job_start, spec.end_time);
    let limit_at = timing.step_deadline(spec.own_end).map(crate::sys::instant_at);
    if wait_for_files(opener.ready().as_raw_fd(), term.as_raw_fd(), conn.as_raw_fd(), limit_at) || opener.settle() {
        match opener.take() {
            Some(Ok(wired)) => return wired,
            Some(Err(e)) => return every_task(crate::stepd::error_line(node, &e.to_string()), failed),
            None => {}
        }
    }
    every_task(
        crate::stepd::error_line(
            node,
            &format!("*** STEP {} ON {node} CANCELLED BEFORE ITS FILES COULD BE OPENED ***", spec.step_name()),
        ),
        libc::SIGTERM,
    )
}

/// A task that is not started: the message for the client, if any, and the status it ends
/// with.
struct NotStarted {
    message: Option<String>,
    wait_status: i32,
}

/// Waits until `ready` is readable (`true`), or until `term` is (a SIGTERM, not read here),
/// the client's connection `conn` is closed or `limit_at` passes (`false`).
fn wait_for_files(ready: RawFd, term: RawFd, conn: RawFd, limit_at: Option<std::time::Instant>) -> bool {
    loop {
        let mut fds = [
            libc::pollfd { fd: ready, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: term, events: libc::POLLIN, revents: 0 },
            // Only its end: what the client sends meanwhile is for the reader thread.
            libc::pollfd { fd: conn, events: libc::POLLRDHUP, revents: 0 },
        ];
        let timeout = match limit_at {
            None => -1,
            Some(at) => match at.saturating_duration_since(std::time::Instant::now()) {
                left if left.is_zero() => return false,
                left => left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32,
            },
        };
        // SAFETY: fds is a valid array of three pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if fds[0].revents != 0 {
            return true;
        }
        if fds[1].revents != 0 || fds[2].revents != 0 {
            return false;
        }
    }
}

/// Starts every task whose I/O is `wired`, telling the client about those that cannot
/// start.
fn start_tasks(
    spec: &StepSpec,
    wired: Vec<Result<stdio::TaskIo, NotStarted>>,
    launch: &tasks::Launch,
    jail: &mut dyn crate::stepd::containment::Containment,
    sink: &mut sink::Sink,
) -> StartedTasks {
    let mut out = StartedTasks { tasks: Vec::new(), sources: Vec::new(), targets: Vec::new() };
    for (task, io) in (0..spec.ntasks).zip(wired) {
        let started = io.and_then(|io| {
            let started = launch.start(task, &io, jail).map_err(|e| NotStarted {
                message: Some(crate::stepd::error_line(&spec.node_name, &format!("task {task}: fork: {e}"))),
                wait_status: 1 << 8,
            })?;
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
            Err(NotStarted { message, wait_status }) => {
                if let Some(message) = message {
                    sink.frame(&Frame::Message(message));
                }
                sink.frame(&Frame::TaskExit { task, wait_status });
                out.tasks.push(relay::Task { pid: None, done: true, status: Some(wait_status) });
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
