//! The client side of a job step's stream: srun shows the tasks' output, feeds them its
//! standard input, passes its signals on, and says how the tasks ended.
//!
//! The calling thread reads frames and writes the output (the `Reader` of `reader.rs`); a
//! thread reads srun's standard input into `Input` frames; a thread handles signals (see
//! [`super::signals`]). Frames to the supervisor go through one lock on the connection's
//! write half, one frame per write.

pub use super::io_options::{IoOptions, StepOutcome};
use super::reader::Reader;
use super::signals::{self, Handler, Policy, Source};
use super::state::StepState;
use super::terminal::{CrLf, RawTerminal};
use crate::api::stream::{Frame, CHUNK};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// What of the local machine the step uses besides the connection and the two writers.
#[derive(Default)]
pub struct Local {
    /// What to send as the tasks' standard input, if anything.
    pub stdin: Option<Box<dyn Read + Send>>,
    /// Where signals come from, if they are handled.
    pub signals: Option<Source>,
}

/// Runs the client side of a step over `conn` (already upgraded; frames only) until the
/// supervisor closes the stream, with srun's real standard input, output, error, terminal
/// and signals. Returns what happened, with srun's exit code.
///
/// Call [`signals::block_signals`] at the start of srun, before any thread exists: this
/// blocks the handled signals ([`signals::HANDLED`]) again, but a thread started earlier
/// would still take them with their default action. They stay blocked in the calling thread
/// afterwards: srun exits soon after. A thread may remain blocked reading standard input; its
/// next send fails and it ends.
pub fn run_step(conn: UnixStream, opts: &IoOptions) -> io::Result<StepOutcome> {
    // Block the signals before any thread starts, so that all of them inherit the mask.
    let source = Source::block()?;
    let stdout = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let stdin: Option<Box<dyn Read + Send>> = if opts.forward_stdin {
        Some(Box::new(std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?)))
    } else {
        None
    };
    let local = Local { stdin, signals: Some(source) };
    if opts.pty {
        let raw = RawTerminal::enter()?;
        let outcome = match raw {
            Some(_) => run_step_with(conn, opts, stdout, CrLf(io::stderr()), local),
            None => run_step_with(conn, opts, stdout, io::stderr(), local),
        };
        drop(raw);
        outcome
    } else {
        run_step_with(conn, opts, stdout, io::stderr(), local)
    }
}

/// [`run_step`] with the given standard output and error, standard input and signals only
/// as `local` gives them (none with `Local::default()`), and the terminal left alone.
pub fn run_step_with<O, E>(conn: UnixStream, opts: &IoOptions, out: O, err: E, local: Local) -> io::Result<StepOutcome>
where
    O: Write,
    E: Write + Send + 'static,
{
    let ntasks = opts.ntasks.max(1);
    let writer = Arc::new(Mutex::new(conn.try_clone()?));
    let state = Arc::new(Mutex::new(StepState::new(ntasks)));
    let err = Arc::new(Mutex::new(err));

    let mut signal_thread = None;
    let mut stop = None;
    if let Some(source) = local.signals {
        let (stop_r, stop_w) = crate::sys::pipe()?;
        let policy = Policy {
            quit_on_interrupt: opts.quit_on_interrupt,
            disable_status: opts.disable_status,
            pty: opts.pty,
            kill_wait: opts.kill_wait,
            job_id: opts.job_id,
        };
        let h = Handler { policy, state: state.clone(), conn: writer.clone(), err: err.clone() };
        signal_thread = Some(signals::spawn(source, stop_r, h)?);
        stop = Some(stop_w);
    }
    if let Some(input) = local.stdin {
        let w = writer.clone();
        std::thread::Builder::new().name("srun-stdin".into()).spawn(move || pump_stdin(input, &w))?;
    }

    let mut reader = Reader::new(opts, &state, &writer, &err, out);
    reader.read_stream(&conn);

    // Stop the signal thread, then close the connection: a send from the stdin thread fails
    // from now on.
    drop(stop);
    if let Some(t) = signal_thread {
        let _ = t.join();
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
    Ok(reader.finish())
}

/// Reads srun's standard input into `Input` frames, then `InputEof`. Ends when a send fails.
fn pump_stdin(mut input: Box<dyn Read + Send>, conn: &Mutex<UnixStream>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if signals::send(conn, &Frame::Input(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = signals::send(conn, &Frame::InputEof);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::stream::Channel;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::time::{Duration, Instant};

    /// A writer the test can read back after `run_step_with` consumed its handle.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }

        /// Waits until `what` was written: the client has handled the frames before it.
        fn wait_for(&self, what: &str) {
            while !self.text().contains(what) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }

    fn opts(ntasks: u32) -> IoOptions {
        IoOptions { node_name: "vm".into(), ntasks, kill_wait: 30, ..IoOptions::default() }
    }

    fn out(task: u32, data: &str) -> Frame {
        Frame::Output { task, channel: Channel::Stdout, data: data.as_bytes().to_vec() }
    }

    fn run(o: &IoOptions, frames: Vec<Frame>, local: Local) -> (StepOutcome, String, String, Vec<Frame>) {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let fake = std::thread::spawn(move || {
            for f in frames {
                f.write_to(&mut supervisor).unwrap();
            }
            supervisor.shutdown(std::net::Shutdown::Write).unwrap();
            let mut got = Vec::new();
            while let Ok(Some(f)) = Frame::read_from(&mut supervisor) {
                got.push(f);
            }
            got
        });
        let (stdout, stderr) = (Shared::default(), Shared::default());
        let outcome = run_step_with(client, o, stdout.clone(), stderr.clone(), local).unwrap();
        let sent = fake.join().unwrap();
        (outcome, stdout.text(), stderr.text(), sent)
    }

    #[test]
    fn two_tasks_lines_stay_whole_and_failures_are_reported() {
        let frames = vec![
            Frame::StepStarted { job_id: 7, step_id: 0 },
            out(0, "hel"),
            out(1, "one\ntw"),
            out(0, "lo\n"),
            Frame::Output { task: 1, channel: Channel::Stderr, data: b"warn\n".to_vec() },
            out(1, "o\nlast"),
            Frame::TaskExit { task: 0, wait_status: 1 << 8 },
            Frame::TaskExit { task: 1, wait_status: 1 << 8 },
        ];
        let (outcome, stdout, stderr, _) = run(&opts(2), frames, Local::default());
        assert_eq!(stdout, "one\nhello\ntwo\nlast");
        assert_eq!(stderr, "warn\nsrun: error: vm: tasks 0-1: Exited with exit code 1\n");
        assert_eq!(outcome.exit_code, 1);
        assert_eq!(outcome.step, Some((7, 0)));
        assert_eq!(outcome.exits, [(0, 256), (1, 256)]);
        assert!(outcome.lost.is_empty());
    }

    #[test]
    fn labels_signals_and_the_exit_code() {
        let frames = vec![
            Frame::StepWaiting("Requested nodes are busy".into()),
            Frame::StepWaiting("Requested nodes are busy".into()),
            Frame::StepStarted { job_id: 7, step_id: 3 },
            out(1, "b\n"),
            out(0, "a"),
            Frame::Message("slurmstepd-vm: error: something".into()),
            Frame::TaskExit { task: 1, wait_status: 3 << 8 },
            Frame::TaskExit { task: 0, wait_status: libc::SIGKILL },
        ];
        let o = IoOptions { label: true, job_id: Some(7), ..opts(2) };
        let (outcome, stdout, stderr, _) = run(&o, frames, Local::default());
        assert_eq!(stdout, "1: b\n0: a\n");
        assert_eq!(
            stderr,
            "srun: Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)\n\
             srun: Step created for StepId=7.3\n\
             slurmstepd-vm: error: something\n\
             srun: error: vm: task 1: Exited with exit code 3\n\
             srun: error: vm: task 0: Killed\n"
        );
        assert_eq!(outcome.exit_code, 137);
    }

    #[test]
    fn a_vanished_supervisor_loses_the_tasks() {
        let frames = vec![Frame::StepStarted { job_id: 7, step_id: 0 }, Frame::TaskExit { task: 0, wait_status: 0 }];
        let (outcome, _, stderr, _) = run(&opts(3), frames, Local::default());
        assert_eq!(stderr, "srun: error: vm: tasks 1-2: lost (the step's supervisor went away)\n");
        assert_eq!(outcome.exit_code, 1);
        assert_eq!(outcome.lost, [1, 2]);
    }

    #[test]
    fn an_error_before_the_start_fails_the_step() {
        let (outcome, _, stderr, _) = run(&opts(1), vec![Frame::Error("Job 7 has ended".into())], Local::default());
        assert_eq!(stderr, "srun: error: Job 7 has ended\n");
        assert_eq!(outcome.exit_code, 1);
    }

    #[test]
    fn stdin_is_sent_then_its_end() {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let fake = std::thread::spawn(move || {
            Frame::StepStarted { job_id: 1, step_id: 0 }.write_to(&mut supervisor).unwrap();
            let mut got = Vec::new();
            while let Ok(Some(f)) = Frame::read_from(&mut supervisor) {
                let eof = f == Frame::InputEof;
                got.push(f);
                if eof {
                    break;
                }
            }
            Frame::TaskExit { task: 0, wait_status: 0 }.write_to(&mut supervisor).unwrap();
            got
        });
        let local = Local { stdin: Some(Box::new(io::Cursor::new(b"hello".to_vec()))), signals: None };
        let outcome = run_step_with(client, &opts(1), Shared::default(), Shared::default(), local).unwrap();
        assert_eq!(fake.join().unwrap(), [Frame::Input(b"hello".to_vec()), Frame::InputEof]);
        assert_eq!(outcome.exit_code, 0);
    }

    fn signal_pipe() -> (Source, OwnedFd) {
        let (r, w) = crate::sys::pipe().unwrap();
        (Source::Pipe(r), w)
    }

    fn raise(w: &OwnedFd, sig: i32) {
        // SAFETY: write reads one byte from a valid local.
        assert_eq!(unsafe { libc::write(w.as_raw_fd(), (&(sig as u8) as *const u8).cast(), 1) }, 1);
    }

    #[test]
    fn ctrl_c_twice_cancels_the_step() {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let (source, sig) = signal_pipe();
        let stdout = Shared::default();
        let seen = stdout.clone();
        let fake = std::thread::spawn(move || {
            Frame::StepStarted { job_id: 9, step_id: 1 }.write_to(&mut supervisor).unwrap();
            out(0, "ready\n").write_to(&mut supervisor).unwrap();
            seen.wait_for("ready\n");
            raise(&sig, libc::SIGINT);
            raise(&sig, libc::SIGINT);
            let mut got = Vec::new();
            while let Ok(Some(f)) = Frame::read_from(&mut supervisor) {
                let cancel = f == Frame::Cancel;
                got.push(f);
                if cancel {
                    break;
                }
            }
            Frame::Message("slurmstepd: error: *** STEP 9.1 ON vm CANCELLED ***".into())
                .write_to(&mut supervisor)
                .unwrap();
            Frame::TaskExit { task: 0, wait_status: libc::SIGTERM }.write_to(&mut supervisor).unwrap();
            got
        });
        let stderr = Shared::default();
        let local = Local { stdin: None, signals: Some(source) };
        let outcome = run_step_with(client, &opts(1), stdout, stderr.clone(), local).unwrap();
        assert_eq!(fake.join().unwrap(), [Frame::Signal(libc::SIGINT), Frame::Cancel]);
        assert_eq!(
            stderr.text(),
            "srun: interrupt (one more within 1 sec to abort)\n\
             srun: StepId=9.1 task 0: running\n\
             srun: sending Ctrl-C to StepId=9.1\n\
             srun: forcing job termination\n\
             srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n\
             slurmstepd: error: *** STEP 9.1 ON vm CANCELLED ***\n"
        );
        assert!(outcome.cancelled);
        assert_eq!(outcome.exit_code, 143);
    }

    #[test]
    fn srun_gives_up_on_a_step_that_does_not_end() {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let (source, sig) = signal_pipe();
        Frame::StepStarted { job_id: 9, step_id: 1 }.write_to(&mut supervisor).unwrap();
        out(0, "ready\n").write_to(&mut supervisor).unwrap();
        let stdout = Shared::default();
        let seen = stdout.clone();
        let raiser = std::thread::spawn(move || {
            seen.wait_for("ready\n");
            raise(&sig, libc::SIGTERM);
        });
        let o = IoOptions { kill_wait: 0, ..opts(1) };
        let stderr = Shared::default();
        let local = Local { stdin: None, signals: Some(source) };
        let started = Instant::now();
        let outcome = run_step_with(client, &o, stdout, stderr.clone(), local).unwrap();
        assert!(started.elapsed() >= Duration::from_secs(2));
        assert!(
            stderr.text().ends_with("srun: error: Timed out waiting for job step to complete\n"),
            "{}",
            stderr.text()
        );
        assert_eq!(outcome.exit_code, 1);
        assert!(outcome.lost.is_empty() || outcome.lost == [0]);
        raiser.join().unwrap();
        drop(supervisor);
    }

    #[test]
    fn a_signal_before_the_start_cancels_the_pending_step() {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let (source, sig) = signal_pipe();
        Frame::StepWaiting("Requested nodes are busy".into()).write_to(&mut supervisor).unwrap();
        raise(&sig, libc::SIGINT);
        let o = IoOptions { job_id: Some(4), ..opts(1) };
        let stderr = Shared::default();
        let local = Local { stdin: None, signals: Some(source) };
        let outcome = run_step_with(client, &o, Shared::default(), stderr.clone(), local).unwrap();
        assert!(stderr.text().contains("srun: Cancelled pending step for job 4\n"), "{}", stderr.text());
        assert!(!stderr.text().contains("ended before the step started"), "{}", stderr.text());
        assert_eq!(Frame::read_from(&mut supervisor).unwrap(), Some(Frame::Cancel));
        assert!(outcome.cancelled && outcome.step.is_none());
        assert_eq!(outcome.exit_code, 1);
    }

    #[test]
    fn a_closed_stdout_cancels_the_step() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let fake = std::thread::spawn(move || {
            Frame::StepStarted { job_id: 1, step_id: 0 }.write_to(&mut supervisor).unwrap();
            out(0, "x\n").write_to(&mut supervisor).unwrap();
            let got = Frame::read_from(&mut supervisor).unwrap();
            Frame::TaskExit { task: 0, wait_status: libc::SIGTERM }.write_to(&mut supervisor).unwrap();
            got
        });
        let outcome = run_step_with(client, &opts(1), Broken, Shared::default(), Local::default()).unwrap();
        assert_eq!(fake.join().unwrap(), Some(Frame::Cancel));
        assert_eq!(outcome.exit_code, 143);
    }

    #[test]
    fn much_output_passes_quickly() {
        let (client, mut supervisor) = UnixStream::pair().unwrap();
        let total = 64 << 20;
        let fake = std::thread::spawn(move || {
            let mut line = b"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\n".repeat(900);
            line.truncate(CHUNK);
            let mut buf = Vec::new();
            Frame::StepStarted { job_id: 1, step_id: 0 }.write_to(&mut supervisor).unwrap();
            for _ in 0..total / CHUNK {
                crate::api::stream::write_output(&mut supervisor, &mut buf, 0, Channel::Stdout, &line).unwrap();
            }
            Frame::TaskExit { task: 0, wait_status: 0 }.write_to(&mut supervisor).unwrap();
        });
        struct Count(Arc<std::sync::atomic::AtomicUsize>, usize);
        impl Write for Count {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.fetch_add(buf.len(), std::sync::atomic::Ordering::Relaxed);
                self.1 += 1;
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let written = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        run_step_with(client, &opts(1), Count(written.clone(), 0), Shared::default(), Local::default()).unwrap();
        let secs = started.elapsed().as_secs_f64();
        fake.join().unwrap();
        assert_eq!(written.load(std::sync::atomic::Ordering::Relaxed), total);
        // Generous for an unoptimized build; the release build goes far faster.
        assert!(secs < 10.0, "{total} bytes took {secs:.2}s");
    }
}
