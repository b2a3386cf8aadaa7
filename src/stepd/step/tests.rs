//! The supervisor run for real: in a forked child process (its signal mask and its reaping
//! of children must not touch the test harness's threads), with one end of a socket pair
//! standing in for the client.

use super::{supervise, StepInput, StepSpec};
use crate::api::stream::{Channel, Frame, WinSize};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

fn spec(argv: &[&str]) -> StepSpec {
    StepSpec {
        job_id: 7,
        step_id: 0,
        argv: argv.iter().map(|a| a.to_string()).collect(),
        env: vec!["PATH=/usr/local/bin:/usr/bin:/bin".into(), "SLURM_PROCID=99".into(), "KEEP=me".into()],
        cwd: "/tmp".into(),
        ntasks: 1,
        pty: None,
        stdout: None,
        stderr: None,
        stdin: StepInput::None,
        append: false,
        end_time: None,
        own_end: None,
        job_start: 0,
        kill_wait: 1,
        node_name: "vm".into(),
        names: crate::options::pattern::PatternContext {
            job_id: 7,
            job_name: "test".into(),
            user: "me".into(),
            node: "vm".into(),
            array_job_id: 7,
            step: "0".into(),
            ..Default::default()
        },
        umask: None,
        run_as: None,
        share: Default::default(),
    }
}

/// A supervisor running in a child process, and the client's end of its connection.
struct Step {
    client: UnixStream,
    pid: i32,
    _dir: tempfile::TempDir,
}

/// What the client received.
#[derive(Debug, Default)]
struct Seen {
    frames: Vec<Frame>,
    output: BTreeMap<(u32, bool), Vec<u8>>,
    messages: Vec<String>,
    exits: Vec<(u32, i32)>,
    code: i32,
}

impl Seen {
    fn out(&self, task: u32, channel: Channel) -> String {
        String::from_utf8_lossy(self.output.get(&(task, channel == Channel::Stderr)).map_or(&[][..], |v| v))
            .into_owned()
    }
}

impl Step {
    fn start(spec: &StepSpec) -> Step {
        Step::start_with(spec, None)
    }

    fn start_with(spec: &StepSpec, ended: Option<OwnedFd>) -> Step {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.json"), serde_json::to_vec(spec).unwrap()).unwrap();
        Step::start_in(dir, ended)
    }

    fn start_in(dir: tempfile::TempDir, ended: Option<OwnedFd>) -> Step {
        let (client, server) = UnixStream::pair().unwrap();
        client.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let path = dir.path().to_path_buf();
        let mut keep = vec![server.as_raw_fd()];
        keep.extend(ended.as_ref().map(|e| e.as_raw_fd()));
        keep.sort();
        // SAFETY: the child only closes descriptors, blocks SIGTERM (as the daemon starts a
        // supervisor) and runs the supervisor, which glibc's fork handlers make safe enough
        // in a test; it never returns into the harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: as above: close_range and setsid take numbers, the signal set is a
            // local (all-zero is a valid empty one), and _exit leaves the child without
            // returning into the harness.
            unsafe {
                let mut from = 3u32;
                for &fd in &keep {
                    if fd as u32 > from {
                        libc::syscall(libc::SYS_close_range, from, fd as u32 - 1, 0);
                    }
                    from = fd as u32 + 1;
                }
                libc::syscall(libc::SYS_close_range, from, u32::MAX, 0);
                // A session of its own, as the daemon starts a supervisor.
                libc::setsid();
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGTERM);
                libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                let code = supervise(&path, ended, server);
                libc::_exit(code);
            }
        }
        drop(server);
        drop(ended);
        Step { client, pid, _dir: dir }
    }

    fn send(&mut self, f: Frame) {
        f.write_to(&mut self.client).unwrap();
    }

    fn next(&mut self) -> Option<Frame> {
        Frame::read_from(&mut self.client).expect("a frame in time")
    }

    /// Reads frames into `seen` until `want` holds.
    fn until(&mut self, seen: &mut Seen, want: impl Fn(&Seen) -> bool) {
        while !want(seen) {
            let f = self.next().expect("the stream ended before the expected frame");
            seen.add(f);
        }
    }

    /// Reads every frame to the end of the stream and waits for the supervisor.
    fn finish(mut self, mut seen: Seen) -> Seen {
        while let Some(f) = self.next() {
            seen.add(f);
        }
        let mut status = 0;
        // SAFETY: waitpid writes into a valid local; the child is ours.
        assert_eq!(unsafe { libc::waitpid(self.pid, &mut status, 0) }, self.pid);
        assert!(libc::WIFEXITED(status), "supervisor status {status}");
        seen.code = libc::WEXITSTATUS(status);
        seen
    }
}

impl Seen {
    fn add(&mut self, f: Frame) {
        match &f {
            Frame::Output { task, channel, data } => {
                self.output.entry((*task, *channel == Channel::Stderr)).or_default().extend(data)
            }
            Frame::Message(m) => self.messages.push(m.clone()),
            Frame::TaskExit { task, wait_status } => self.exits.push((*task, *wait_status)),
            _ => {}
        }
        self.frames.push(f);
    }
}

fn run(spec: &StepSpec) -> Seen {
    Step::start(spec).finish(Seen::default())
}

#[test]
fn each_task_gets_its_rank_and_pid() {
    let mut s =
        spec(&["sh", "-c", r#"echo $SLURM_PROCID $SLURM_LOCALID $KEEP; [ "$SLURM_TASK_PID" = "$$" ] && echo pid-ok"#]);
    s.ntasks = 2;
    let seen = run(&s);
    assert_eq!(seen.code, 0);
    assert_eq!(seen.frames[0], Frame::StepStarted { job_id: 7, step_id: 0 });
    assert_eq!(seen.out(0, Channel::Stdout), "0 0 me\npid-ok\n");
    assert_eq!(seen.out(1, Channel::Stdout), "1 1 me\npid-ok\n");
    let mut exits = seen.exits.clone();
    exits.sort();
    assert_eq!(exits, vec![(0, 0), (1, 0)]);
    assert!(seen.messages.is_empty(), "{:?}", seen.messages);
}

#[test]
fn exit_codes_and_stderr_come_back() {
    let seen = run(&spec(&["sh", "-c", "echo oops >&2; exit 7"]));
    assert_eq!(seen.out(0, Channel::Stderr), "oops\n");
    assert_eq!(seen.exits, vec![(0, 7 << 8)]);
}

#[test]
fn a_missing_command_is_reported_as_slurmstepd_does() {
    let seen = run(&spec(&["no-such-command"]));
    assert_eq!(seen.messages, vec!["slurmstepd-vm: error: execve(): no-such-command: No such file or directory"]);
    assert_eq!(seen.exits, vec![(0, 2 << 8)]);
    let at = |want: fn(&Frame) -> bool| seen.frames.iter().position(want).unwrap();
    assert!(at(|f| matches!(f, Frame::Message(_))) < at(|f| matches!(f, Frame::TaskExit { .. })));
    assert_eq!(seen.code, 0);
}

#[test]
fn input_reaches_the_tasks_and_its_end_closes_it() {
    let mut s = spec(&["cat"]);
    s.ntasks = 2;
    s.stdin = StepInput::All;
    let mut step = Step::start(&s);
    step.send(Frame::Input(b"hello\n".to_vec()));
    step.send(Frame::Input(b"world\n".to_vec()));
    step.send(Frame::InputEof);
    let seen = step.finish(Seen::default());
    assert_eq!(seen.out(0, Channel::Stdout), "hello\nworld\n");
    assert_eq!(seen.out(1, Channel::Stdout), "hello\nworld\n");
    assert_eq!(seen.exits.len(), 2);
    assert!(seen.exits.iter().all(|&(_, ws)| ws == 0));
}

#[test]
fn input_for_one_task_leaves_the_others_on_dev_null() {
    let mut s = spec(&["cat"]);
    s.ntasks = 2;
    s.stdin = StepInput::Task(1);
    let mut step = Step::start(&s);
    step.send(Frame::Input(b"only one\n".to_vec()));
    step.send(Frame::InputEof);
    let seen = step.finish(Seen::default());
    assert_eq!(seen.out(0, Channel::Stdout), "");
    assert_eq!(seen.out(1, Channel::Stdout), "only one\n");
}

#[test]
fn a_missing_input_file_keeps_its_task_from_starting() {
    let mut s = spec(&["cat"]);
    s.stdin = StepInput::File("no-such-input-%t".into());
    let seen = run(&s);
    assert_eq!(
        seen.messages,
        vec!["slurmstepd-vm: error: Could not open stdin file /tmp/no-such-input-0: No such file or directory"]
    );
    assert_eq!(seen.exits, vec![(0, 1 << 8)]);
}

#[test]
fn output_patterns_give_each_task_its_file() {
    let cwd = tempfile::tempdir().unwrap();
    let mut s = spec(&["sh", "-c", "echo task $SLURM_PROCID; echo err $SLURM_PROCID >&2"]);
    s.ntasks = 2;
    s.cwd = cwd.path().to_path_buf();
    s.stdout = Some("out-%j.%s-%t.txt".into());
    let seen = run(&s);
    assert!(seen.output.is_empty(), "{:?}", seen.output);
    for t in 0..2 {
        let text = std::fs::read_to_string(cwd.path().join(format!("out-7.0-{t}.txt"))).unwrap();
        assert_eq!(text, format!("task {t}\nerr {t}\n"));
    }
    // --error alone: only stderr goes to the file.
    let mut s = spec(&["sh", "-c", "echo to-client; echo to-file >&2"]);
    s.cwd = cwd.path().to_path_buf();
    s.stderr = Some("err-%t".into());
    let seen = run(&s);
    assert_eq!(seen.out(0, Channel::Stdout), "to-client\n");
    assert_eq!(std::fs::read_to_string(cwd.path().join("err-0")).unwrap(), "to-file\n");
}

#[test]
fn one_output_file_for_all_tasks_keeps_all_their_lines() {
    let cwd = tempfile::tempdir().unwrap();
    let mut s = spec(&["sh", "-c", "echo line $SLURM_PROCID"]);
    s.ntasks = 3;
    s.cwd = cwd.path().to_path_buf();
    s.stdout = Some("all.out".into());
    run(&s);
    let text = std::fs::read_to_string(cwd.path().join("all.out")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, vec!["line 0", "line 1", "line 2"]);
}

fn mkfifo(path: &std::path::Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: name is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

#[test]
fn an_output_fifo_is_waited_for_until_a_reader_comes() {
    let cwd = tempfile::tempdir().unwrap();
    mkfifo(&cwd.path().join("out"));
    let mut s = spec(&["echo", "through the fifo"]);
    s.cwd = cwd.path().to_path_buf();
    s.stdout = Some("out".into());
    let step = Step::start(&s);
    // Opening it for reading waits for the task to open it for writing.
    assert_eq!(std::fs::read_to_string(cwd.path().join("out")).unwrap(), "through the fifo\n");
    assert_eq!(step.finish(Seen::default()).exits, vec![(0, 0)]);
}

#[test]
fn a_step_waiting_for_its_fifos_ends_on_a_cancel_its_clients_end_or_its_time_limit() {
    let cwd = tempfile::tempdir().unwrap();
    mkfifo(&cwd.path().join("out"));
    mkfifo(&cwd.path().join("in"));
    let waiting = |output: bool| {
        let mut s = spec(&["cat"]);
        s.cwd = cwd.path().to_path_buf();
        s.ntasks = 2;
        if output {
            s.stdout = Some("out".into());
        } else {
            s.stdin = StepInput::File("in".into());
        }
        s
    };
    let ended = |seen: &Seen| {
        assert_eq!(seen.messages.len(), 1, "{:?}", seen.messages);
        assert!(seen.messages[0].contains("*** STEP 7.0 ON vm CANCELLED BEFORE ITS FILES COULD BE OPENED ***"));
        assert_eq!(seen.exits, vec![(0, libc::SIGTERM), (1, libc::SIGTERM)]);
    };
    // A cancel from the daemon (SIGTERM).
    let mut step = Step::start(&waiting(true));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| !s.frames.is_empty());
    // SAFETY: kill to the supervisor child this test started.
    unsafe { libc::kill(step.pid, libc::SIGTERM) };
    ended(&step.finish(seen));
    // Its client gone.
    let mut step = Step::start(&waiting(false));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| !s.frames.is_empty());
    step.client.shutdown(std::net::Shutdown::Write).unwrap();
    ended(&step.finish(seen));
    // Its time limit.
    let mut s = waiting(true);
    s.end_time = Some(crate::sys::now() + 1);
    ended(&run(&s));
}

#[test]
fn cancel_ends_the_step_with_slurmstepds_line() {
    let mut step = Step::start(&spec(&["sleep", "100"]));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| !s.frames.is_empty());
    step.send(Frame::Cancel);
    let seen = step.finish(seen);
    assert_eq!(seen.messages.len(), 1, "{:?}", seen.messages);
    let m = &seen.messages[0];
    assert!(m.starts_with("slurmstepd-vm: error: *** STEP 7.0 ON vm CANCELLED AT "), "{m}");
    assert!(m.ends_with(" ***") && !m.contains("TIME LIMIT"), "{m}");
    assert_eq!(seen.exits, vec![(0, libc::SIGTERM)]);
}

#[test]
fn a_second_cancel_kills_at_once() {
    let mut s = spec(&["sh", "-c", "trap '' TERM; echo ready; sleep 100"]);
    s.kill_wait = 60;
    let mut step = Step::start(&s);
    let mut seen = Seen::default();
    step.until(&mut seen, |s| s.out(0, Channel::Stdout) == "ready\n");
    let began = Instant::now();
    step.send(Frame::Cancel);
    step.send(Frame::Cancel);
    let seen = step.finish(seen);
    // The shell ignores SIGTERM; KillWait is a minute: only the second cancel ends it now.
    assert_eq!(seen.exits, vec![(0, libc::SIGKILL)]);
    assert!(began.elapsed() < Duration::from_secs(30));
}

#[test]
fn the_client_going_away_cancels_the_step() {
    let mut step = Step::start(&spec(&["sleep", "100"]));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| !s.frames.is_empty());
    step.client.shutdown(std::net::Shutdown::Write).unwrap();
    let seen = step.finish(seen);
    assert!(seen.messages[0].contains("CANCELLED AT"), "{:?}", seen.messages);
    assert_eq!(seen.exits, vec![(0, libc::SIGTERM)]);
}

#[test]
fn the_time_limit_ends_the_step_and_kill_wait_follows() {
    let mut s = spec(&["sh", "-c", "trap '' TERM; echo ready; sleep 100"]);
    s.end_time = Some(crate::sys::now() + 1);
    s.kill_wait = 1;
    let began = Instant::now();
    let seen = run(&s);
    assert!(seen.messages[0].ends_with(" DUE TO TIME LIMIT ***"), "{:?}", seen.messages);
    // The shell ignores SIGTERM: SIGKILL ends it.
    assert_eq!(seen.exits, vec![(0, libc::SIGKILL)]);
    assert!(began.elapsed() < Duration::from_secs(10));
}

#[test]
fn signals_reach_every_task() {
    let mut s = spec(&["sh", "-c", "trap 'echo got; exit 3' USR1; echo ready; while :; do sleep 0.05; done"]);
    s.ntasks = 2;
    let mut step = Step::start(&s);
    let mut seen = Seen::default();
    step.until(&mut seen, |s| s.out(0, Channel::Stdout) == "ready\n" && s.out(1, Channel::Stdout) == "ready\n");
    step.send(Frame::Signal(libc::SIGUSR1));
    let seen = step.finish(seen);
    assert_eq!(seen.out(0, Channel::Stdout), "ready\ngot\n");
    assert_eq!(seen.out(1, Channel::Stdout), "ready\ngot\n");
    assert!(seen.exits.iter().all(|&(_, ws)| ws == 3 << 8), "{:?}", seen.exits);
}

#[test]
fn a_pty_task_has_a_terminal_of_the_given_size() {
    let mut s = spec(&["sh", "-c", "tty; stty size; read line; stty size; echo got $line"]);
    s.pty = Some(WinSize { rows: 30, cols: 100 });
    s.stdin = StepInput::All;
    let mut step = Step::start(&s);
    let mut seen = Seen::default();
    step.until(&mut seen, |s| s.out(0, Channel::Stdout).contains("30 100"));
    step.send(Frame::Resize(WinSize { rows: 40, cols: 120 }));
    step.send(Frame::Input(b"hi\n".to_vec()));
    let seen = step.finish(seen);
    let out = seen.out(0, Channel::Stdout);
    assert!(out.starts_with("/dev/pts/"), "{out:?}");
    assert!(out.ends_with("40 120\r\ngot hi\r\n"), "{out:?}");
    assert_eq!(seen.exits, vec![(0, 0)]);
}

#[test]
fn the_end_pipe_closes_once_the_tasks_are_gone() {
    let (r, w) = crate::sys::pipe().unwrap();
    let mut s = spec(&["sh", "-c", "echo ready; read x; echo bye"]);
    s.stdin = StepInput::All;
    let mut step = Step::start_with(&s, Some(w));
    let mut seen = Seen::default();
    // The task runs, and cannot end before its input does: the end pipe must still be open.
    step.until(&mut seen, |s| s.out(0, Channel::Stdout) == "ready\n");
    assert!(!readable_now(&r), "the end pipe closed while the task ran");
    step.send(Frame::InputEof);
    let seen = step.finish(seen);
    assert!(readable_now(&r), "the end pipe did not close with the step");
    let mut b = [0u8; 1];
    assert_eq!(std::io::Read::read(&mut std::fs::File::from(r), &mut b).unwrap(), 0);
    assert_eq!(seen.exits, vec![(0, 0)]);
    assert_eq!(seen.out(0, Channel::Stdout), "ready\nbye\n");
}

/// Whether reading `fd` would not block now (data, or its end).
fn readable_now(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: p is one valid pollfd structure.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    assert!(n >= 0, "poll: {}", std::io::Error::last_os_error());
    n > 0
}

/// Whether process `pid` is gone or on its way out: reaped, a zombie, exiting, or with a
/// SIGKILL pending that it cannot escape.
fn dead_or_dying(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    let fields: Vec<&str> = stat.rsplit_once(") ").map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    // The state (field 3), and the flags (field 9): PF_EXITING is 0x4.
    let exiting = fields.get(6).and_then(|f| f.parse::<u64>().ok()).is_some_and(|f| f & 0x4 != 0);
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) || exiting {
        return true;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kill = 1u64 << (libc::SIGKILL - 1);
    status
        .lines()
        .filter_map(|l| l.strip_prefix("SigPnd:").or_else(|| l.strip_prefix("ShdPnd:")))
        .filter_map(|v| u64::from_str_radix(v.trim(), 16).ok())
        .any(|mask| mask & kill != 0)
}

#[test]
fn a_bad_directory_falls_back_to_tmp() {
    let mut s = spec(&["pwd"]);
    s.cwd = "/no/such/dir".into();
    let seen = run(&s);
    assert_eq!(seen.out(0, Channel::Stdout), "/tmp\n");
    assert_eq!(
        seen.out(0, Channel::Stderr),
        "slurmstepd-vm: error: couldn't chdir to `/no/such/dir': No such file or directory: going to /tmp instead\n"
    );
}

#[test]
fn leftover_background_processes_do_not_hold_the_step() {
    let began = Instant::now();
    let seen = run(&spec(&["sh", "-c", "sleep 100 & echo done"]));
    assert_eq!(seen.out(0, Channel::Stdout), "done\n");
    assert_eq!(seen.exits, vec![(0, 0)]);
    assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
}

#[test]
fn background_jobs_in_their_own_groups_end_with_the_step() {
    // `set -m`: the background job gets a process group of its own, which signals to the
    // task's group do not reach; it still holds the output pipe.
    let (r, w) = crate::sys::pipe().unwrap();
    crate::sys::set_nonblocking(std::os::fd::AsFd::as_fd(&r), false).unwrap();
    let mut step = Step::start_with(&spec(&["bash", "-c", "set -m; sleep 100 & echo $!"]), Some(w));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| s.out(0, Channel::Stdout).ends_with('\n'));
    let pid: i32 = seen.out(0, Channel::Stdout).trim().parse().unwrap();
    // The supervisor says every task is gone by closing the end pipe; by then it has killed
    // the background job (not after lingering on the output the job holds open).
    let mut b = [0u8; 1];
    assert_eq!(std::io::Read::read(&mut std::fs::File::from(r), &mut b).unwrap(), 0);
    assert!(dead_or_dying(pid), "the background job was not killed when the step's tasks ended");
    let seen = step.finish(seen);
    assert_eq!(seen.exits, vec![(0, 0)]);
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    let state = state.as_deref().and_then(|s| s.rsplit(") ").next()).and_then(|s| s.chars().next());
    assert!(matches!(state, None | Some('Z')), "the background job still runs: {state:?}");
}

#[test]
fn a_daemon_holding_the_output_keeps_the_step_only_a_moment() {
    // A session of its own: nothing of the step's reaches it; it writes for a minute, on
    // past the step's end (a write to the closed pipe fails; SIGPIPE is ignored).
    let seen = run(&spec(&[
        "sh",
        "-c",
        "setsid sh -c 'trap \"\" PIPE; echo daemon $$; i=0; while [ $i -lt 1200 ]; do echo x; sleep 0.05; i=$((i+1)); done' & \
         sleep 0.3; echo started",
    ]));
    let out = seen.out(0, Channel::Stdout);
    let daemon: i32 = out.lines().find_map(|l| l.strip_prefix("daemon ")?.parse().ok()).expect("the daemon's pid");
    // SAFETY: kill has no memory preconditions; signal 0 only checks that the pid exists.
    let alive = unsafe { libc::kill(daemon, 0) } == 0 && !dead_or_dying(daemon);
    // SAFETY: as above; the daemon is this test's.
    unsafe { libc::kill(daemon, libc::SIGKILL) };
    assert!(out.contains("\nx\n"), "{out:?}");
    assert_eq!(seen.exits, vec![(0, 0)]);
    // The step ended while the daemon still wrote: it did not wait for the output's end ...
    assert!(alive, "the step waited for the daemon to end");
    // ... but it did read on for a moment after its task ended.
    let exit_at = seen.frames.iter().position(|f| matches!(f, Frame::TaskExit { .. })).expect("a TaskExit");
    assert!(
        seen.frames[exit_at..].iter().any(|f| matches!(f, Frame::Output { .. })),
        "no output was read after the task ended: {out:?}"
    );
}

#[test]
fn a_bad_spec_is_an_error_frame() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.json"), b"{").unwrap();
    let seen = Step::start_in(dir, None).finish(Seen::default());
    assert_eq!(seen.code, 1);
    assert!(matches!(&seen.frames[..], [Frame::Error(e)] if e.contains("spec.json")), "{:?}", seen.frames);
}

/// Runs `cat` of a file of `size` bytes through the supervisor and checks every byte. (Its
/// rate is measured by `slurmlet-bench`, figure 8.)
fn cat_through(size: usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big");
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    std::fs::File::create(&file).unwrap().write_all(&data).unwrap();
    let mut step = Step::start(&spec(&["cat", file.to_str().unwrap()]));
    let mut seen = Seen::default();
    step.until(&mut seen, |s| !s.frames.is_empty());
    let mut got = 0usize;
    let mut ok = true;
    while let Some(f) = step.next() {
        match f {
            Frame::Output { data: chunk, .. } => {
                ok &= chunk[..] == data[got..got + chunk.len()];
                got += chunk.len();
            }
            other => seen.add(other),
        }
    }
    let seen = step.finish(seen);
    assert!(ok && got == size, "{got} bytes of {size}");
    assert_eq!(seen.exits, vec![(0, 0)]);
}

#[test]
fn large_output_arrives_whole() {
    cat_through(8 << 20);
}
