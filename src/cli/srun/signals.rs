//! srun's signals: blocked in all its threads and read from a signalfd by one thread, which
//! acts as Slurm's srun does (`_handle_intr` and the signal manager of `srun_job.c`):
//!
//! - SIGINT: the first prints `srun: interrupt (one more within 1 sec to abort)` and the
//!   tasks' status; a second within a second sends SIGINT to the tasks and ends the step
//!   (`srun: sending Ctrl-C to StepId=J.S`, `srun: forcing job termination`). With `-X` each
//!   Ctrl-C is only forwarded; with `--quit-on-interrupt` the first one ends the step.
//! - SIGTERM, SIGHUP (and SIGQUIT, after `srun: Quit`): `srun: forcing job termination`, the
//!   step ends.
//! - SIGUSR1, SIGUSR2: forwarded to the tasks. SIGCONT: `srun: got SIGCONT`. SIGALRM:
//!   ignored (srun uses it for `--wait`). SIGWINCH: the new size goes to the pty.
//! - Before the step has started, any of them but SIGCONT and SIGWINCH cancels the pending
//!   step.
//!
//! Once srun has asked for the step's end it waits KillWait + 2 seconds for it
//! (`srun: Job step aborted: Waiting up to 32 seconds for job step to finish.`), then gives
//! up (`srun: error: Timed out waiting for job step to complete`).

use super::state::StepState;
use super::terminal::terminal_size;
use crate::api::stream::Frame;
use crate::sys::SignalFd;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The signals srun handles.
pub const HANDLED: [i32; 9] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCONT,
    libc::SIGALRM,
];

/// Blocks [`HANDLED`] in the calling thread, and so in every thread it starts afterwards.
/// srun should call this first thing, before any thread exists: a signal sent to the process
/// goes to any thread that does not block it, and there it would take its default action.
pub fn block_signals() -> io::Result<()> {
    // SAFETY: the set is initialised by sigemptyset/sigaddset before pthread_sigmask reads it.
    let rc = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in HANDLED {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Slurm's `STEP_ABORT_TIME`: how much longer than KillWait srun waits for an ended step.
const STEP_ABORT_TIME: u32 = 2;

/// Where the signal thread reads signals from.
pub enum Source {
    /// The real signals, blocked in every thread of srun.
    Signals(SignalFd),
    /// Signal numbers, one byte each, from a non-blocking pipe (for tests).
    Pipe(OwnedFd),
}

impl Source {
    /// Blocks [`HANDLED`] in the calling thread, so that the threads it starts from now on
    /// inherit the mask, and reads them from a signalfd. They stay blocked in this thread.
    pub fn block() -> io::Result<Source> {
        SignalFd::block_all(&HANDLED).map(Source::Signals)
    }

    fn fd(&self) -> RawFd {
        match self {
            Source::Signals(s) => s.as_raw_fd(),
            Source::Pipe(p) => p.as_raw_fd(),
        }
    }

    fn next(&self) -> Option<i32> {
        match self {
            Source::Signals(s) => s.next(),
            Source::Pipe(p) => {
                let mut b = 0u8;
                // SAFETY: read writes at most one byte into a valid local; the pipe is
                // non-blocking.
                let n = unsafe { libc::read(p.as_raw_fd(), (&mut b as *mut u8).cast(), 1) };
                (n == 1).then_some(b as i32)
            }
        }
    }
}

/// The options that decide what a signal does.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// `--quit-on-interrupt`.
    pub quit_on_interrupt: bool,
    /// `-X`: no status on Ctrl-C; each one is forwarded.
    pub disable_status: bool,
    /// `--pty`: SIGWINCH resizes the pty.
    pub pty: bool,
    /// KillWait, in seconds.
    pub kill_wait: u32,
    /// The job id, when known before the step starts.
    pub job_id: Option<u32>,
}

/// What the signal thread remembers between signals.
#[derive(Debug, Default)]
pub struct Memory {
    last_interrupt: Option<Instant>,
    kill_sent: u32,
    last_abort_note: Option<Instant>,
    pending_cancelled: bool,
}

/// What the step looks like when a signal comes.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// `StepId=J.S`, once the step has started.
    pub step: Option<String>,
    /// Some task is still running.
    pub running: bool,
    /// srun already ended the step itself.
    pub cancelled: bool,
}

/// One thing to do about a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Print this line on standard error.
    Say(String),
    /// Print the tasks' status.
    Status,
    /// Send this frame to the supervisor.
    Send(Frame),
    /// Send the terminal's new size.
    Resize,
    /// srun ended the step itself.
    Cancelled,
    /// Give the step this long to end, from now (unless a limit is set already).
    AbortWait(Duration),
    /// Stop reading the stream now: srun is done with it.
    StopReading,
}

/// What srun does about signal `sig`.
pub fn decide(sig: i32, mem: &mut Memory, policy: &Policy, view: &View, now: Instant) -> Vec<Effect> {
    let Some(step) = &view.step else { return pending(sig, mem, policy) };
    match sig {
        libc::SIGINT => interrupt(mem, policy, view, step, now),
        libc::SIGQUIT => {
            let mut e = vec![Effect::Say("srun: Quit".into())];
            e.extend(terminate(policy, view));
            e
        }
        libc::SIGTERM | libc::SIGHUP => terminate(policy, view),
        libc::SIGCONT => vec![Effect::Say("srun: got SIGCONT".into())],
        libc::SIGALRM => Vec::new(),
        libc::SIGWINCH => resize(policy),
        other => vec![Effect::Send(Frame::Signal(other))],
    }
}

fn resize(policy: &Policy) -> Vec<Effect> {
    if policy.pty {
        vec![Effect::Resize]
    } else {
        Vec::new()
    }
}

/// A signal before the step started: all but SIGCONT and SIGWINCH cancel it, and srun stops
/// waiting for it at once, as Slurm's srun leaves its step-creation loop.
fn pending(sig: i32, mem: &mut Memory, policy: &Policy) -> Vec<Effect> {
    match sig {
        libc::SIGCONT => Vec::new(),
        libc::SIGWINCH => resize(policy),
        _ if mem.pending_cancelled => Vec::new(),
        _ => {
            mem.pending_cancelled = true;
            let line = match policy.job_id {
                Some(j) => format!("srun: Cancelled pending step for job {j}"),
                None => "srun: Cancelled pending step".to_string(),
            };
            vec![Effect::Say(line), Effect::Cancelled, Effect::Send(Frame::Cancel), Effect::StopReading]
        }
    }
}

fn interrupt(mem: &mut Memory, policy: &Policy, view: &View, step: &str, now: Instant) -> Vec<Effect> {
    let recent = mem.last_interrupt.is_some_and(|t| now.duration_since(t) < Duration::from_secs(1));
    let ctrl_c =
        || vec![Effect::Say(format!("srun: sending Ctrl-C to {step}")), Effect::Send(Frame::Signal(libc::SIGINT))];
    if policy.quit_on_interrupt || recent {
        let mut e = ctrl_c();
        e.extend(force_termination(mem, policy, view, now));
        return e;
    }
    mem.last_interrupt = Some(now);
    if policy.disable_status {
        ctrl_c()
    } else if !view.cancelled {
        vec![Effect::Say("srun: interrupt (one more within 1 sec to abort)".into()), Effect::Status]
    } else {
        Vec::new()
    }
}

/// Slurm's `job_force_termination`: the first time the step is ended; later ones only say
/// so (once a second), and the second one asks again.
fn force_termination(mem: &mut Memory, policy: &Policy, view: &View, now: Instant) -> Vec<Effect> {
    mem.kill_sent += 1;
    if mem.kill_sent == 1 {
        let mut e = vec![Effect::Say("srun: forcing job termination".into()), Effect::Cancelled];
        e.extend(end_step(policy, view));
        return e;
    }
    let mut e = Vec::new();
    if mem.last_abort_note.is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1)) {
        mem.last_abort_note = Some(now);
        e.push(Effect::Say("srun: job abort in progress".into()));
    }
    if mem.kill_sent == 2 {
        e.push(Effect::Send(Frame::Cancel));
    }
    e
}

/// SIGTERM, SIGHUP: the step ends (but is not counted as cancelled by srun).
fn terminate(policy: &Policy, view: &View) -> Vec<Effect> {
    let mut e = vec![Effect::Say("srun: forcing job termination".into())];
    e.extend(end_step(policy, view));
    e
}

fn end_step(policy: &Policy, view: &View) -> Vec<Effect> {
    let wait = policy.kill_wait + STEP_ABORT_TIME;
    // Said before the request goes, so that it comes before what the supervisor answers.
    let mut e = Vec::new();
    if view.running {
        e.push(Effect::Say(format!("srun: Job step aborted: Waiting up to {wait} seconds for job step to finish.")));
    }
    e.push(Effect::Send(Frame::Cancel));
    e.push(Effect::AbortWait(Duration::from_secs(wait.into())));
    e
}

/// What the signal thread works with.
pub struct Handler<E> {
    /// What the signals do.
    pub policy: Policy,
    /// The step, shared with the stream reader.
    pub state: Arc<Mutex<StepState>>,
    /// The connection's write half.
    pub conn: Arc<Mutex<UnixStream>>,
    /// srun's standard error.
    pub err: Arc<Mutex<E>>,
}

/// Sends `frame` on the shared connection, one write under the lock.
pub fn send(conn: &Mutex<UnixStream>, frame: &Frame) -> io::Result<()> {
    let mut c = conn.lock().unwrap_or_else(PoisonError::into_inner);
    frame.write_to(&mut *c)
}

/// Prints `line` and a newline on the shared standard error, in one write.
pub fn say<E: Write>(err: &Mutex<E>, line: &str) {
    let mut e = err.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = e.write_all(format!("{line}\n").as_bytes());
    let _ = e.flush();
}

/// Starts the thread that reads `source` and acts on each signal until `stop`'s other end is
/// closed.
pub fn spawn<E: Write + Send + 'static>(source: Source, stop: OwnedFd, h: Handler<E>) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name("srun-signals".into()).spawn(move || run(source, stop, h))
}

fn run<E: Write>(source: Source, stop: OwnedFd, h: Handler<E>) {
    let mut mem = Memory::default();
    let mut source_open = true;
    loop {
        let deadline = h.state.lock().unwrap_or_else(PoisonError::into_inner).abort_deadline;
        let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let fd = if source_open { source.fd() } else { -1 };
        let (hung_up, stopped) = wait(fd, stop.as_raw_fd(), timeout);
        if stopped {
            return;
        }
        let mut any = false; // whether a signal came
        while let Some(sig) = source.next() {
            any = true;
            let view = {
                let s = h.state.lock().unwrap_or_else(PoisonError::into_inner);
                View { step: s.step_name(), running: s.step.is_some() && !s.all_exited(), cancelled: s.cancelled }
            };
            for effect in decide(sig, &mut mem, &h.policy, &view, Instant::now()) {
                apply(&h, effect);
            }
        }
        if hung_up && !any {
            // The source ended (a test's pipe; a signalfd never does): stop watching it.
            source_open = false;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            give_up(&h);
        }
    }
}

/// The step did not end in time: say so and stop reading the stream.
fn give_up<E: Write>(h: &Handler<E>) {
    {
        let mut s = h.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.abort_deadline = None;
        s.timed_out = true;
    }
    say(&h.err, "srun: error: Timed out waiting for job step to complete");
    stop_reading(h);
}

/// Makes the reader see the end of the stream.
fn stop_reading<E>(h: &Handler<E>) {
    let c = h.conn.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = c.shutdown(std::net::Shutdown::Read);
}

fn apply<E: Write>(h: &Handler<E>, effect: Effect) {
    match effect {
        Effect::Say(line) => say(&h.err, &line),
        Effect::Status => {
            let lines = h.state.lock().unwrap_or_else(PoisonError::into_inner).status_lines();
            for line in lines {
                say(&h.err, &line);
            }
        }
        Effect::Send(frame) => {
            let _ = send(&h.conn, &frame);
        }
        Effect::Resize => {
            if let Some(ws) = terminal_size() {
                let _ = send(&h.conn, &Frame::Resize(ws));
            }
        }
        Effect::Cancelled => h.state.lock().unwrap_or_else(PoisonError::into_inner).cancelled = true,
        Effect::StopReading => stop_reading(h),
        Effect::AbortWait(d) => {
            let mut s = h.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.abort_deadline.get_or_insert(Instant::now() + d);
        }
    }
}

/// Waits until `source` is readable or `stop` is readable or hung up, or `timeout` passes.
/// Returns whether `source` hung up and whether `stop` is ready.
fn wait(source: RawFd, stop: RawFd, timeout: Option<Duration>) -> (bool, bool) {
    let mut fds = [
        libc::pollfd { fd: source, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: stop, events: libc::POLLIN, revents: 0 },
    ];
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128 - 1) as i32 + 1);
    // SAFETY: poll reads and writes the two entries of a valid local array.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n <= 0 {
        return (false, false);
    }
    let hup = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
    (fds[0].revents & hup != 0, fds[1].revents != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started() -> View {
        View { step: Some("StepId=7.0".into()), running: true, cancelled: false }
    }

    fn says(effects: &[Effect]) -> Vec<&str> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Say(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn one_ctrl_c_shows_the_status_and_two_end_the_step() {
        let policy = Policy { kill_wait: 30, ..Policy::default() };
        let mut mem = Memory::default();
        let t0 = Instant::now();
        let first = decide(libc::SIGINT, &mut mem, &policy, &started(), t0);
        assert_eq!(first, [Effect::Say("srun: interrupt (one more within 1 sec to abort)".into()), Effect::Status]);
        let second = decide(libc::SIGINT, &mut mem, &policy, &started(), t0 + Duration::from_millis(300));
        assert_eq!(
            says(&second),
            [
                "srun: sending Ctrl-C to StepId=7.0",
                "srun: forcing job termination",
                "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."
            ]
        );
        assert!(second.contains(&Effect::Send(Frame::Signal(libc::SIGINT))));
        assert!(second.contains(&Effect::Send(Frame::Cancel)));
        assert!(second.contains(&Effect::Cancelled));
        assert!(second.contains(&Effect::AbortWait(Duration::from_secs(32))));
        let cancelled = View { cancelled: true, ..started() };
        let third = decide(libc::SIGINT, &mut mem, &policy, &cancelled, t0 + Duration::from_millis(600));
        assert_eq!(says(&third), ["srun: sending Ctrl-C to StepId=7.0", "srun: job abort in progress"]);
        assert!(third.contains(&Effect::Send(Frame::Cancel)));
        // Later than a second after the first: nothing to say once cancelled.
        assert!(decide(libc::SIGINT, &mut mem, &policy, &cancelled, t0 + Duration::from_secs(5)).is_empty());
    }

    #[test]
    fn ctrl_c_a_second_apart_only_shows_the_status() {
        let mut mem = Memory::default();
        let t0 = Instant::now();
        let p = Policy::default();
        decide(libc::SIGINT, &mut mem, &p, &started(), t0);
        let again = decide(libc::SIGINT, &mut mem, &p, &started(), t0 + Duration::from_millis(1500));
        assert_eq!(says(&again), ["srun: interrupt (one more within 1 sec to abort)"]);
    }

    #[test]
    fn disable_status_forwards_and_quit_on_interrupt_ends_at_once() {
        let t0 = Instant::now();
        let x = Policy { disable_status: true, ..Policy::default() };
        let e = decide(libc::SIGINT, &mut Memory::default(), &x, &started(), t0);
        assert_eq!(
            e,
            [Effect::Say("srun: sending Ctrl-C to StepId=7.0".into()), Effect::Send(Frame::Signal(libc::SIGINT))]
        );
        let q = Policy { quit_on_interrupt: true, ..Policy::default() };
        let e = decide(libc::SIGINT, &mut Memory::default(), &q, &started(), t0);
        assert!(e.contains(&Effect::Send(Frame::Cancel)) && e.contains(&Effect::Cancelled));
    }

    #[test]
    fn other_signals() {
        let p = Policy { pty: true, ..Policy::default() };
        let t = Instant::now();
        let mut m = Memory::default();
        let term = decide(libc::SIGTERM, &mut m, &p, &started(), t);
        assert_eq!(says(&term)[0], "srun: forcing job termination");
        assert!(term.contains(&Effect::Send(Frame::Cancel)) && !term.contains(&Effect::Cancelled));
        assert_eq!(says(&decide(libc::SIGQUIT, &mut m, &p, &started(), t))[0], "srun: Quit");
        assert_eq!(decide(libc::SIGUSR1, &mut m, &p, &started(), t), [Effect::Send(Frame::Signal(libc::SIGUSR1))]);
        assert_eq!(decide(libc::SIGCONT, &mut m, &p, &started(), t), [Effect::Say("srun: got SIGCONT".into())]);
        assert!(decide(libc::SIGALRM, &mut m, &p, &started(), t).is_empty());
        assert_eq!(decide(libc::SIGWINCH, &mut m, &p, &started(), t), [Effect::Resize]);
        assert!(decide(libc::SIGWINCH, &mut m, &Policy::default(), &started(), t).is_empty());
    }

    #[test]
    fn before_the_step_starts_a_signal_cancels_it_once() {
        let p = Policy { job_id: Some(12), ..Policy::default() };
        let mut m = Memory::default();
        let t = Instant::now();
        let e = decide(libc::SIGINT, &mut m, &p, &View::default(), t);
        assert_eq!(says(&e), ["srun: Cancelled pending step for job 12"]);
        assert!(e.contains(&Effect::Send(Frame::Cancel)) && e.contains(&Effect::StopReading));
        assert!(decide(libc::SIGTERM, &mut m, &p, &View::default(), t).is_empty());
    }
}
