//! The supervisor's main loop: one `poll` over the tasks' outputs, SIGTERM and SIGCHLD
//! (signalfds), the reader thread's wake pipe, the client socket while frames wait for it,
//! and the next deadline (time limit, SIGKILL after KillWait, the end of the linger).
//!
//! Output goes to the client as it comes; each reaped task's `TaskExit` follows what its
//! outputs held at that moment. Once every task is reaped, the tasks' process groups are
//! killed (leftover background processes), the daemon is told (`ended` is closed), and the
//! outputs are read to their end.

use super::input::Wake;
use super::sink::Sink;
use super::spec::StepSpec;
use super::stdio::Source;
use crate::api::stream::{self, Frame};
use crate::sys::SignalFd;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long outputs are still read once every task is reaped, when something the step's
/// signals do not reach keeps them open (a daemon that made a session of its own).
const LINGER: Duration = Duration::from_secs(1);

/// How long that may last while the client is slow to take the output.
const LINGER_MAX: Duration = Duration::from_secs(10);

/// The most chunks read from one output in a row.
const READ_ROUNDS: usize = 16;

/// The most chunks read from one output of a task as it is reaped: more than its pipe holds.
const DRAIN_ROUNDS: usize = 32;

/// One task of the step.
pub struct Task {
    /// Its pid and process group id; `None` if it was never started.
    pub pid: Option<i32>,
    /// It was reaped (or never started).
    pub done: bool,
    /// Its raw wait status, once reaped (or why it never started).
    pub status: Option<i32>,
}

/// The loop's state.
pub struct Relay<'a> {
    /// The step.
    pub spec: &'a StepSpec,
    /// The step's directory, where its end is recorded.
    pub dir: &'a std::path::Path,
    /// Frames for the client.
    pub sink: Sink,
    /// The outputs still open.
    pub sources: Vec<Source>,
    /// The tasks, by task id.
    pub tasks: Vec<Task>,
    /// Where the tasks and what they start are kept.
    pub jail: Box<dyn crate::stepd::containment::Containment>,
    /// SIGTERM for the supervisor: cancel the step.
    pub term: SignalFd,
    /// SIGCHLD: a task may have exited.
    pub chld: SignalFd,
    /// [`crate::stepd::timing::NOTIFY`]: the job was suspended or resumed, or its time limit
    /// changed.
    pub notify: SignalFd,
    /// The reader thread's messages (`None` once it is gone).
    pub wake: Option<OwnedFd>,
    /// Closed once every task is gone.
    pub ended: Option<OwnedFd>,
    /// slurmstepd's line about processes killed for want of memory was sent.
    pub oom_said: bool,
}

/// What the loop keeps track of besides the descriptors.
#[derive(Default)]
struct Clock {
    /// The step was cancelled (or timed out) already.
    cancelled: bool,
    /// The client is gone; the step was cancelled for it.
    gone: bool,
    /// The time limit.
    limit_at: Option<Instant>,
    /// SIGKILL is due.
    kill_at: Option<Instant>,
    /// When every task was reaped.
    finished_at: Option<Instant>,
    /// How many times the client asked for the end of the step.
    client_cancels: u32,
    /// The next look at what the tasks hold.
    sample_at: Option<Instant>,
}

impl<'a> Relay<'a> {
    /// The job's directory, where its timing is (the step's is `JOBDIR/steps/N`).
    fn job_dir(&self) -> &'a std::path::Path {
        self.dir.parent().and_then(|d| d.parent()).unwrap_or(self.dir)
    }

    /// The job's timing changed: stops or lets go on the tasks and moves the time limit.
    fn follow(&mut self, clock: &mut Clock, timing: &mut crate::stepd::timing::Follower) {
        if clock.cancelled || clock.finished_at.is_some() {
            return;
        }
        if let Some(pause) = timing.reread(self.job_dir()) {
            pause.apply(self.jail.as_ref());
        }
        clock.limit_at = timing.step_deadline(self.spec.own_end).map(crate::sys::instant_at);
    }
}

impl Relay<'_> {
    /// Runs the step to its end, then sends what is left for the client and ends the stream.
    pub fn run(mut self) {
        let mut clock = Clock::default();
        let mut timing = crate::stepd::timing::Follower::start(self.job_dir(), self.spec.job_start, self.spec.end_time);
        clock.limit_at = timing.step_deadline(self.spec.own_end).map(crate::sys::instant_at);
        clock.sample_at = self.jail.sample_every().map(|every| Instant::now() + every);
        if let Some(pause) = timing.pause_due() {
            pause.apply(self.jail.as_ref());
        }
        let mut buf = vec![0u8; stream::CHUNK];
        loop {
            if clock.finished_at.is_none() && self.tasks.iter().all(|t| t.done) {
                self.finish(&mut clock);
            }
            if clock.finished_at.is_some() && self.sources.is_empty() {
                break;
            }
            if self.sink.dead() && !clock.gone {
                clock.gone = true;
                self.cancel(&mut clock, "");
            }
            match self.wait(&mut clock, &mut buf, &mut timing) {
                Ok(()) => {}
                Err(e) => {
                    // Nothing can be watched any more: end the step at once.
                    self.sink
                        .frame(&Frame::Message(crate::stepd::error_line(&self.spec.node_name, &format!("poll: {e}"))));
                    self.signal_all(libc::SIGKILL);
                    break;
                }
            }
            let now = Instant::now();
            if clock.limit_at.is_some_and(|t| t <= now) {
                clock.limit_at = None;
                self.cancel(&mut clock, " DUE TO TIME LIMIT");
            }
            if clock.kill_at.is_some_and(|t| t <= now) {
                clock.kill_at = None;
                self.signal_all(libc::SIGKILL);
            }
            if clock.sample_at.is_some_and(|t| t <= now) {
                self.jail.sample();
                clock.sample_at = self.jail.sample_every().map(|every| now + every);
            }
            if let Some(at) = clock.finished_at {
                if (now >= at + LINGER && !self.sink.backlogged()) || now >= at + LINGER_MAX {
                    // Take what the outputs hold now, and no more.
                    for task in 0..self.tasks.len() {
                        self.drain_task(task as u32, &mut buf);
                    }
                    self.sources.clear();
                }
            }
        }
        self.sink.finish(Some(self.term.as_raw_fd()));
    }

    /// Every task is reaped: kill what they left behind, record how the step ended and tell
    /// the daemon.
    fn finish(&mut self, clock: &mut Clock) {
        clock.finished_at = Some(Instant::now());
        clock.limit_at = None;
        clock.kill_at = None;
        clock.sample_at = None;
        self.signal_all(libc::SIGKILL);
        let statuses: Vec<i32> = self.tasks.iter().map(|t| t.status.unwrap_or(0)).collect();
        let mut wait_status = super::end::step_status(&statuses);
        if self.say_oom() {
            wait_status = crate::stepd::SIG_OOM;
        }
        let end = super::end::StepEnd { wait_status, end_time: crate::sys::now(), usage: self.jail.usage() };
        if let Err(e) = super::end::write(self.dir, &end) {
            // Without it the step is recorded as ended with its job.
            self.sink.frame(&Frame::Message(crate::stepd::error_line(
                &self.spec.node_name,
                &format!("step {}: cannot record its end: {e}", self.spec.step_name()),
            )));
        }
        self.ended = None;
    }

    /// Waits for and handles the next events (or the next deadline).
    fn wait(
        &mut self,
        clock: &mut Clock,
        buf: &mut [u8],
        timing: &mut crate::stepd::timing::Follower,
    ) -> io::Result<()> {
        let backlogged = self.sink.backlogged();
        let none = -1;
        let mut fds = vec![
            pollin(self.term.as_raw_fd()),
            pollin(self.chld.as_raw_fd()),
            pollin(self.wake.as_ref().map_or(none, |w| w.as_raw_fd())),
            libc::pollfd {
                fd: if backlogged { self.sink.fd().as_raw_fd() } else { none },
                events: libc::POLLOUT,
                revents: 0,
            },
            pollin(self.notify.as_raw_fd()),
        ];
        const FIXED: usize = 5;
        // While frames wait for the client, no more output is read.
        if !backlogged {
            fds.extend(self.sources.iter().map(|s| pollin(s.fd.as_raw_fd())));
        }
        let mut deadline = [clock.limit_at, clock.kill_at, clock.sample_at].into_iter().flatten().min();
        if let Some(at) = clock.finished_at {
            let linger = if backlogged { at + LINGER_MAX } else { at + LINGER };
            deadline = Some(deadline.map_or(linger, |d| d.min(linger)));
        }
        let timeout = match deadline {
            None => -1,
            // Round up, so that a wake-up never comes before the deadline.
            Some(at) => {
                at.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
            }
        };
        // SAFETY: fds is a valid array of fds.len() pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        if n == 0 {
            return Ok(());
        }
        if fds[3].revents != 0 {
            self.sink.flush();
        }
        // Output before exits: what a task wrote before it exited comes before its TaskExit.
        let ready: Vec<bool> = fds[FIXED..].iter().map(|p| p.revents != 0).collect();
        let mut i = 0;
        let mut k = 0;
        while i < self.sources.len() {
            let open = !ready.get(k).copied().unwrap_or(false) || self.read_once(i, buf);
            k += 1;
            if open {
                i += 1;
            } else {
                self.sources.remove(i);
            }
        }
        if fds[1].revents != 0 {
            self.chld.drain();
            self.reap(buf);
        }
        if fds[0].revents != 0 {
            self.term.drain();
            self.cancel(clock, "");
        }
        if fds[2].revents != 0 {
            self.read_wake(clock);
        }
        if fds[4].revents != 0 {
            self.notify.drain();
            self.follow(clock, timing);
        }
        Ok(())
    }

    /// Reads source `i` and sends what it holds, a few chunks at most, while the client
    /// takes it; `false` at its end.
    fn read_once(&mut self, i: usize, buf: &mut [u8]) -> bool {
        let s = &self.sources[i];
        let mut n;
        let mut rounds = 0;
        loop {
            // SAFETY: read writes at most buf.len() bytes into the buffer.
            n = unsafe { libc::read(s.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            self.sink.output(s.task, s.channel, &buf[..n as usize]);
            rounds += 1;
            if (n as usize) < buf.len() || rounds == READ_ROUNDS || self.sink.backlogged() {
                return true;
            }
        }
        if n == 0 {
            return false;
        }
        // Any other error is the end, such as the EIO a pseudo-terminal's master reads once its
        // slave side is closed.
        matches!(io::Error::last_os_error().kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted)
    }

    /// Reads every source of `task` until it has nothing more for now (or [`DRAIN_ROUNDS`]
    /// chunks: a background process may still be writing to it).
    fn drain_task(&mut self, task: u32, buf: &mut [u8]) {
        let mut i = 0;
        while i < self.sources.len() {
            if self.sources[i].task != task {
                i += 1;
                continue;
            }
            let mut rounds = 0;
            let open = loop {
                rounds += 1;
                if rounds > DRAIN_ROUNDS {
                    break true;
                }
                let s = &self.sources[i];
                // SAFETY: read writes at most buf.len() bytes into the buffer.
                let n = unsafe { libc::read(s.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n > 0 {
                    self.sink.output(s.task, s.channel, &buf[..n as usize]);
                    continue;
                }
                if n == 0 {
                    break false;
                }
                match io::Error::last_os_error().kind() {
                    io::ErrorKind::Interrupted => {}
                    io::ErrorKind::WouldBlock => break true,
                    _ => break false,
                }
            };
            if open {
                i += 1;
            } else {
                self.sources.remove(i);
            }
        }
    }

    /// Whether the kernel killed any of the step's processes for want of memory; the first
    /// time it has, slurmstepd's line says so, before the exit of the task it was learnt at.
    fn say_oom(&mut self) -> bool {
        // Once said, the count is not read again: it only grows.
        if self.oom_said {
            return true;
        }
        let kills = self.jail.oom_kills();
        if kills > 0 {
            self.oom_said = true;
            let step = format!("{}.{}", self.spec.job_id, self.spec.step_id);
            let line = crate::stepd::error_line(&self.spec.node_name, &crate::stepd::oom_line(kills, &step));
            self.sink.frame(&Frame::Message(line));
        }
        kills > 0
    }

    /// Reaps every exited task and reports it.
    fn reap(&mut self, buf: &mut [u8]) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status into a valid local.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            let Some(task) = self.tasks.iter().position(|t| t.pid == Some(pid) && !t.done) else { continue };
            self.tasks[task].done = true;
            self.tasks[task].status = Some(status);
            self.drain_task(task as u32, buf);
            // As slurmstepd does: once the kernel has killed anything of the step for want of
            // memory, that is said, and every task that ends is reported as `SIG_OOM`, for
            // srun's `Out Of Memory` line and exit code. (The kernel's count only grows.)
            let wait_status = if self.say_oom() { crate::stepd::SIG_OOM } else { status };
            self.sink.frame(&Frame::TaskExit { task: task as u32, wait_status });
        }
    }

    /// Handles the reader thread's messages.
    fn read_wake(&mut self, clock: &mut Clock) {
        let Some(wake) = &self.wake else { return };
        let mut bytes = [0u8; Wake::SIZE * 64];
        // SAFETY: read writes at most bytes.len() bytes into the local array.
        let n = unsafe { libc::read(wake.as_raw_fd(), bytes.as_mut_ptr().cast(), bytes.len()) };
        if n == 0 || (n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock) {
            self.wake = None;
            return;
        }
        for w in Wake::decode(&bytes[..n.max(0) as usize]) {
            match w {
                Wake::Cancel => {
                    clock.client_cancels += 1;
                    if clock.client_cancels > 1 && clock.finished_at.is_none() {
                        // The client asked twice (a third Ctrl-C): no more waiting for KillWait.
                        clock.kill_at = Some(Instant::now());
                    } else {
                        self.cancel(clock, "");
                    }
                }
                Wake::Gone => {
                    clock.gone = true;
                    self.cancel(clock, "");
                }
                Wake::Signal(sig) if clock.finished_at.is_none() => self.signal_all(sig),
                Wake::Signal(_) => {}
            }
        }
    }

    /// Ends the step as slurmstepd does, once: its `*** STEP … CANCELLED AT …{why} ***`
    /// line, then SIGCONT and SIGTERM to every task, and SIGKILL after KillWait.
    fn cancel(&mut self, clock: &mut Clock, why: &str) {
        if clock.cancelled || clock.finished_at.is_some() {
            return;
        }
        // Ended otherwise (its srun ended by the job's own time limit) at its limit, which the
        // job's supervisor may reach a moment sooner (each turns the same wall-clock second
        // into its own instant): the limit ended it, as slurmstepd says.
        let at_limit = clock.limit_at.is_some_and(|t| t <= Instant::now() + Duration::from_secs(1));
        let why = if at_limit { " DUE TO TIME LIMIT" } else { why };
        clock.cancelled = true;
        clock.limit_at = None;
        let node = &self.spec.node_name;
        let when = crate::sys::format_local_time(crate::sys::now());
        self.sink.frame(&Frame::Message(crate::stepd::error_line(
            node,
            &format!("*** STEP {} ON {node} CANCELLED AT {when}{why} ***", self.spec.step_name()),
        )));
        crate::stepd::terminate(self.jail.as_ref());
        clock.kill_at = Some(Instant::now() + Duration::from_secs(self.spec.kill_wait as u64));
    }

    /// Sends `sig` to every process of the step, once each: every started task (each leads
    /// a process group of its own), then whatever else lives in the supervisor's session or
    /// in the pseudo-terminal task's session: the tasks' descendants that made process
    /// groups of their own (a shell's background jobs).
    fn signal_all(&self, sig: i32) {
        let _ = self.jail.signal_all(sig);
    }
}

fn pollin(fd: i32) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}
