//! The reading side of a step's stream: the supervisor's frames read, the tasks' output
//! shown by whole lines (or as it comes), srun's messages, `-K` and `-W`, and how the tasks
//! ended said once the stream is over.

use super::exits::{self, ReportStyle};
use super::io_options::{IoOptions, StepOutcome};
use super::output::Lines;
use super::signals;
use super::state::StepState;
use crate::api::stream::{Channel, Frame, CHUNK};
use std::io::{self, BufReader, BufWriter, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The size of srun's output buffer.
const OUT_BUFFER: usize = 1 << 20;

/// The longest output is held while frames keep coming.
const MAX_HOLD: Duration = Duration::from_millis(20);

/// The reading side: frames in, output and messages out.
pub(super) struct Reader<'a, O: Write, E: Write> {
    opts: &'a IoOptions,
    state: &'a Mutex<StepState>,
    writer: &'a Arc<Mutex<UnixStream>>,
    err: &'a Mutex<E>,
    out: BufWriter<O>,
    lines: Lines,
    scratch: Vec<u8>,
    stdout_broken: bool,
    waiting_said: bool,
    killed_on_bad_exit: bool,
    exits_reported: bool,
    error: Option<String>,
}

impl<'a, O: Write, E: Write> Reader<'a, O, E> {
    /// A reader of the step `opts` describes, whose state is `state`: frames to the
    /// supervisor go through `writer`, the output to `out` (buffered) and `err`.
    pub(super) fn new(
        opts: &'a IoOptions,
        state: &'a Mutex<StepState>,
        writer: &'a Arc<Mutex<UnixStream>>,
        err: &'a Mutex<E>,
        out: O,
    ) -> Self {
        let ntasks = opts.ntasks.max(1);
        Reader {
            opts,
            state,
            writer,
            err,
            out: BufWriter::with_capacity(OUT_BUFFER, out),
            lines: Lines::new(opts.label, opts.unbuffered || opts.pty, ntasks),
            scratch: Vec::new(),
            stdout_broken: false,
            waiting_said: false,
            killed_on_bad_exit: false,
            exits_reported: false,
            error: None,
        }
    }

    /// The step's state, shared with the signal thread.
    fn state(&self) -> std::sync::MutexGuard<'_, StepState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A task ended while others run: `-K` ends the step if it failed; `-W` ends it a while
    /// after the first task ended.
    fn end_early(&mut self, wait_status: i32, first: bool) {
        if self.opts.kill_on_bad_exit && wait_status != 0 && !self.killed_on_bad_exit {
            self.killed_on_bad_exit = true;
            let _ = signals::send(self.writer, &Frame::Cancel);
        }
        if let (Some(after), true) = (self.opts.wait_after_first, first) {
            let writer = self.writer.clone();
            std::thread::spawn(move || {
                std::thread::sleep(after);
                // Gone already if the step ended meanwhile: the write fails harmlessly.
                let _ = signals::send(&writer, &Frame::Cancel);
            });
        }
    }

    /// Handles frames until the stream ends.
    pub(super) fn read_stream(&mut self, conn: &UnixStream) {
        let mut input = BufReader::with_capacity(4 * CHUNK, conn);
        let mut last_flush = Instant::now();
        loop {
            if input.buffer().is_empty() && !readable_now(conn.as_raw_fd()) {
                // Nothing more is at hand: show what we have before waiting.
                self.flush_out();
                last_flush = Instant::now();
            }
            let frame = match Frame::read_from(&mut input) {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => {
                    if !matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset) {
                        self.say(&format!("srun: error: step stream: {e}"));
                    }
                    break;
                }
            };
            self.handle(frame);
            if last_flush.elapsed() >= MAX_HOLD {
                self.flush_out();
                last_flush = Instant::now();
            }
        }
        self.end_output();
    }

    /// Shows or records what one frame says.
    fn handle(&mut self, frame: Frame) {
        match frame {
            Frame::Output { task, channel: Channel::Stdout, data } => {
                if self.stdout_broken {
                    return;
                }
                if let Err(e) = self.lines.push(task, Channel::Stdout, &data, &mut self.out) {
                    self.stdout_failed(e);
                }
            }
            Frame::Output { task, channel: Channel::Stderr, data } => {
                self.scratch.clear();
                let _ = self.lines.push(task, Channel::Stderr, &data, &mut self.scratch);
                if !self.scratch.is_empty() {
                    let bytes = std::mem::take(&mut self.scratch);
                    self.write_err(&bytes);
                    self.scratch = bytes;
                }
            }
            Frame::Message(text) => self.say(&text),
            Frame::StepWaiting(why) => {
                if !self.waiting_said {
                    self.waiting_said = true;
                    let job = self.opts.job_id.map(|j| format!(" {j}")).unwrap_or_default();
                    self.say(&format!("srun: Job{job} step creation temporarily disabled, retrying ({why})"));
                }
            }
            Frame::StepStarted { job_id, step_id } => {
                self.state().step = Some((job_id, step_id));
                if self.waiting_said || self.opts.verbose > 0 {
                    self.say(&format!("srun: Step created for StepId={job_id}.{step_id}"));
                }
            }
            Frame::TaskExit { task, wait_status } => {
                let (all, first) = {
                    let mut s = self.state();
                    let first = !(0..s.ntasks).any(|t| s.has_exited(t));
                    s.record_exit(task, wait_status);
                    (s.all_exited(), first)
                };
                if all {
                    self.end_output();
                } else {
                    self.end_early(wait_status, first);
                }
            }
            Frame::Error(text) => {
                self.say(&format!("srun: error: {text}"));
                self.error = Some(text);
            }
            Frame::Queued { job_id, .. } => self.say(&format!("srun: job {job_id} queued and waiting for resources")),
            Frame::Granted(g) => self.say(&format!("srun: job {} has been allocated resources", g.job_id)),
            Frame::Revoked(why) => self.say(&format!("srun: error: {why}")),
            // Frames for the supervisor, not for us.
            Frame::Input(_)
            | Frame::InputEof
            | Frame::Signal(_)
            | Frame::Resize(_)
            | Frame::Cancel
            | Frame::Release(_)
            | Frame::Detach => {}
        }
    }

    /// Writing our standard output failed: as srun on SIGPIPE, end the step (once); the rest
    /// of the output is dropped.
    fn stdout_failed(&mut self, e: io::Error) {
        self.stdout_broken = true;
        if e.kind() != io::ErrorKind::BrokenPipe {
            self.say(&format!("srun: error: write to standard output: {e}"));
        }
        let _ = signals::send(self.writer, &Frame::Cancel);
    }

    /// Writes out what waits for standard output, unless that is broken.
    fn flush_out(&mut self) {
        if self.stdout_broken {
            return;
        }
        if let Err(e) = self.out.flush() {
            self.stdout_failed(e);
        }
    }

    /// Writes `bytes` on standard error, after what waits for standard output, so that the
    /// two keep their order where they go to the same place.
    fn write_err(&mut self, bytes: &[u8]) {
        self.flush_out();
        let mut e = self.err.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = e.write_all(bytes);
        let _ = e.flush();
    }

    /// Writes one of srun's own lines on standard error.
    fn say(&mut self, line: &str) {
        self.write_err(format!("{line}\n").as_bytes());
    }

    /// The tasks are done (or the stream is): write out the held partial lines, then say
    /// how the tasks ended. Only the first call says it.
    fn end_output(&mut self) {
        let mut held = Vec::new();
        self.lines.finish(|channel, bytes| held.push((channel, bytes.to_vec())));
        for (channel, bytes) in held {
            match channel {
                Channel::Stdout if !self.stdout_broken => {
                    if let Err(e) = self.out.write_all(&bytes) {
                        self.stdout_failed(e);
                    }
                }
                Channel::Stdout => {}
                Channel::Stderr => self.write_err(&bytes),
            }
        }
        self.flush_out();
        if self.exits_reported {
            return;
        }
        self.exits_reported = true;
        let (lines, lost_line) = {
            let s = self.state();
            let style = ReportStyle { cancelled: s.cancelled, verbose: self.opts.verbose > 0 };
            let lines = exits::report_exits(&self.opts.node_name, &s.exits, style);
            let running = s.running();
            let lost = (s.step.is_some() && !running.is_empty() && !s.timed_out)
                .then(|| exits::report_lost(&self.opts.node_name, &running));
            (lines, lost)
        };
        for line in lines.iter().chain(lost_line.iter()) {
            self.say(line);
        }
    }

    /// What happened, once the stream is over.
    pub(super) fn finish(mut self) -> StepOutcome {
        let state = self.state;
        let s = state.lock().unwrap_or_else(PoisonError::into_inner);
        let started = s.step.is_some();
        let lost = if started { s.running() } else { Vec::new() };
        let mut code = exits::exit_code(s.exits.iter().map(|&(_, st)| st));
        let failed = !started || !lost.is_empty() || s.timed_out || self.error.is_some();
        if code == 0 && failed {
            code = 1;
        }
        let outcome = StepOutcome {
            exit_code: code,
            step: s.step,
            exits: s.exits.clone(),
            lost,
            cancelled: s.cancelled,
            error: self.error.take(),
        };
        let quiet = started || s.cancelled || outcome.error.is_some();
        drop(s);
        if !quiet {
            self.say("srun: error: the step's stream ended before the step started");
        }
        outcome
    }
}

/// Whether `fd` has data (or its end) ready to read now.
fn readable_now(fd: RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: poll reads and writes one valid local entry.
    unsafe { libc::poll(&mut p, 1, 0) > 0 }
}
