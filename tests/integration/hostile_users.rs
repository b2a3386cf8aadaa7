//! A hostile second user of the machine against the root daemon. Each test plays what such
//! a user can do with what they own (their MPS server's directories, their own processes,
//! FIFOs and clients their job's supervisor would wait on) and checks that the daemon still
//! answers at once and other users' jobs still run. The
//! tests make real users with `useradd` and run a system daemon, so they need root (as CI
//! has); run as anyone else they say so and check nothing.

use crate::common;
use common::T;

use common::system::{is_root, Shared, User};
use common::{until, wait_for};
use slurmlet::daemon::mps::place::{CreateStep, Place, CONTROL_PID_FILE};
use slurmlet::identity::{Identity, RunAs};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A uid and gid no account has: what the unit-level attacks act as (the kernel needs no
/// account to give a thread these credentials).
const STRANGER: u32 = 54_321;

/// Runs `f` on a thread with the stranger's credentials.
fn as_stranger<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let who = Identity {
        uid: STRANGER,
        gid: STRANGER,
        groups: vec![STRANGER],
        name: "stranger".into(),
        home: "/".into(),
        shell: "/bin/sh".into(),
    };
    who.on_thread(f).expect("take the stranger's credentials")
}

#[test]
fn no_swap_between_the_steps_of_making_an_mps_servers_directories_redirects_roots_chown() {
    if !is_root("no_swap_between_the_steps_of_making_an_mps_servers_directories_redirects_roots_chown") {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // What the owner would have root give them: a file of root's.
    let prize = state.path().join("prize");
    std::fs::write(&prize, "root's\n").unwrap();
    std::fs::set_permissions(&prize, std::fs::Permissions::from_mode(0o600)).unwrap();
    let place = Place::of(state.path(), 0, STRANGER);
    let mut steps = Vec::new();
    let mut tried = Vec::new();
    // After every step, the owner tries each swap that would turn root's next change by path
    // onto the prize: the pipe and log directories replaced by links to it, moved away, or
    // the server's own directory replaced.
    place
        .create_stepping(Some(RunAs { uid: STRANGER, gid: STRANGER }), &mut |step| {
            steps.push(step);
            for target in [&place.pipe_dir, &place.log_dir, &place.dir] {
                let swapped = as_stranger(|| {
                    let aside = target.with_extension("aside");
                    let moved = std::fs::rename(target, &aside).is_ok();
                    let linked = std::os::unix::fs::symlink(&prize, target).is_ok();
                    moved || linked
                });
                tried.push((step, target.clone(), swapped));
            }
        })
        .unwrap();
    assert_eq!(
        steps,
        vec![
            CreateStep::Cleared,
            CreateStep::TopMade,
            CreateStep::Made("pipe"),
            CreateStep::HandedOver("pipe"),
            CreateStep::Made("log"),
            CreateStep::HandedOver("log"),
        ]
    );
    let won: Vec<_> = tried.iter().filter(|(_, _, swapped)| *swapped).collect();
    assert!(won.is_empty(), "the owner swapped a directory between root's steps: {won:?}");
    let meta = std::fs::metadata(&prize).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600), "root's file was given away");
    for dir in [&place.pipe_dir, &place.log_dir] {
        let meta = std::fs::symlink_metadata(dir).unwrap();
        assert!(meta.is_dir(), "{} is not a directory", dir.display());
        assert_eq!((meta.uid(), meta.mode() & 0o777), (STRANGER, 0o700), "{}", dir.display());
    }
    let top = std::fs::symlink_metadata(&place.dir).unwrap();
    assert_eq!((top.uid(), top.mode() & 0o777), (0, 0o711), "the server's own directory stays root's");
    // What the owner may do in theirs, they may: the control daemon writes there.
    as_stranger(|| std::fs::write(place.pipe_dir.join("control"), "")).unwrap();
    place.remove(Some(RunAs { uid: STRANGER, gid: STRANGER })).unwrap();
    assert!(!place.dir.exists());
}

#[test]
fn the_control_daemons_pid_file_is_read_only_when_it_is_a_small_file_of_its_owner_naming_their_process() {
    if !is_root("the_control_daemons_pid_file_is_read_only_when_it_is_a_small_file_of_its_owner_naming_their_process") {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let place = Place::of(state.path(), 0, STRANGER);
    place.create(Some(RunAs { uid: STRANGER, gid: STRANGER })).unwrap();
    let pid_file = place.pipe_dir.join(CONTROL_PID_FILE);
    // A process of the owner's, which a pid file may rightly name.
    let mut theirs = Command::new("sleep");
    theirs.arg("60").uid(STRANGER).gid(STRANGER);
    let mut theirs = KillOnDrop(theirs.spawn().unwrap());
    let their_pid = theirs.0.id() as i32;
    let plant = |what: &(dyn Fn(&Path) -> std::io::Result<()> + Sync)| {
        as_stranger(|| {
            let _ = std::fs::remove_file(&pid_file);
            what(&pid_file)
        })
        .unwrap();
    };
    let read = || {
        let begun = Instant::now();
        let found = place.control_process(STRANGER);
        assert!(begun.elapsed() < Duration::from_secs(1), "reading the pid file took {:?}", begun.elapsed());
        found
    };
    plant(&|p| std::fs::write(p, format!("{their_pid}\n")));
    assert_eq!(read().map(|c| c.pid), Some(their_pid), "an honest pid file is read");
    plant(&|p| {
        common::mkfifo(p);
        Ok(())
    });
    assert_eq!(read(), None, "a FIFO is not opened for reading (that would block)");
    plant(&|p| std::os::unix::fs::symlink("/dev/zero", p));
    assert_eq!(read(), None, "a link to /dev/zero is not followed (that would read forever)");
    plant(&|p| std::os::unix::fs::symlink(place.pipe_dir.join("elsewhere"), p));
    std::fs::write(place.pipe_dir.join("elsewhere"), format!("{their_pid}\n")).unwrap();
    assert_eq!(read(), None, "a link is not followed even to a good file");
    plant(&|p| std::fs::write(p, vec![b'7'; 64 << 20]));
    assert_eq!(read(), None, "a huge file is not read");
    plant(&|p| std::fs::write(p, "1\n"));
    assert_eq!(read(), None, "init is nobody's control daemon");
    plant(&|p| std::fs::write(p, format!("{}\n", std::process::id())));
    assert_eq!(read(), None, "a root process named in the file is not taken for theirs");
    theirs.0.kill().unwrap();
    place.remove(Some(RunAs { uid: STRANGER, gid: STRANGER })).unwrap();
}

/// A child killed and reaped when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How the stand-in control program behaves.
#[derive(Clone, Copy)]
struct Stand {
    /// Whether its control daemon writes its pid file, as NVIDIA's does.
    writes_pid: bool,
    /// Whether `-d` fails (after two seconds), as it does on a machine whose MPS is broken.
    start_fails: bool,
}

/// A stand-in for `nvidia-cuda-mps-control` that works as the real one does, as far as the
/// daemon can tell: `-d` starts a control daemon in a session of its own, which writes its
/// pid and serves a FIFO named `control` in the pipe directory until it reads `quit`; the
/// client writes its input line to that FIFO (and so waits forever where nobody reads it),
/// a second after it starts, as a real client takes a moment to reach its daemon (which
/// also leaves a user who stops it the time to). Each call is logged to `calls`.
struct ControlProgram {
    dir: tempfile::TempDir,
}

impl ControlProgram {
    fn new(stand: Stand) -> ControlProgram {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let calls = dir.path().join("calls");
        std::fs::write(&calls, "").unwrap();
        std::fs::set_permissions(&calls, std::fs::Permissions::from_mode(0o666)).unwrap();
        let program = ControlProgram { dir };
        program.set(stand);
        program
    }

    /// Rewrites the program to behave as `stand` says.
    fn set(&self, stand: Stand) {
        let pid = if stand.writes_pid { "echo $$ > \"$0/nvidia-cuda-mps-control.pid\"; " } else { "" };
        let fail = if stand.start_fails { "sleep 2; exit 1\n" } else { "" };
        let script = format!(
            "#!/bin/sh\n\
             p=\"$CUDA_MPS_PIPE_DIRECTORY\"\n\
             if [ \"$1\" = -d ]; then\n\
             echo \"start $CUDA_VISIBLE_DEVICES uid=$(id -u)\" >> {calls}\n\
             {fail}\
             setsid sh -c '{pid}mkfifo \"$0/control\"; while [ -p \"$0/control\" ]; do read -r line < \"$0/control\" && [ \"$line\" = quit ] && break; done; rm -f \"$0/control\" \"$0/nvidia-cuda-mps-control.pid\"' \"$p\" </dev/null >/dev/null 2>&1 &\n\
             exit 0\n\
             fi\n\
             read -r line\n\
             echo \"$line $CUDA_VISIBLE_DEVICES uid=$(id -u)\" >> {calls}\n\
             sleep 1\n\
             echo \"$line\" > \"$p/control\"\n",
            calls = self.calls_path().display(),
        );
        let path = self.dir.path().join("nvidia-cuda-mps-control");
        let staged = self.dir.path().join(".staged");
        std::fs::write(&staged, script).unwrap();
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(staged, path).unwrap();
    }

    fn calls_path(&self) -> PathBuf {
        self.dir.path().join("calls")
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.calls_path()).unwrap_or_default()
    }

    /// The daemon's environment: this program first on its `PATH`.
    fn env(&self) -> Vec<(String, String)> {
        vec![("PATH".into(), format!("{}:{}", self.dir.path().display(), std::env::var("PATH").unwrap_or_default()))]
    }
}

/// A system daemon with 2 GPUs of 4 shards each, under MPS started with `program`.
fn mps_daemon(program: &ControlProgram) -> Shared {
    Shared::start_with("shards_per_gpu = 4\nmps = true\n", program.env())
}

/// `squeue` as `user`: it must answer, and at once, whatever the daemon is doing.
fn squeue_answers(shared: &Shared, user: &User) {
    let begun = Instant::now();
    let out = shared.run_as(user, "squeue", &[]);
    assert!(out.status.success(), "squeue: {}", String::from_utf8_lossy(&out.stderr));
    assert!(begun.elapsed() < Duration::from_secs(2), "squeue took {:?}; log:\n{}", begun.elapsed(), shared.log());
}

/// `squeue -h -j ID -o FORMAT` as `user`.
fn squeue_field(shared: &Shared, user: &User, id: u32, format: &str) -> String {
    let out = shared.run_as(user, "squeue", &["-h", "-j", &id.to_string(), "-o", format]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The node's reason, as `scontrol show node` gives it.
fn node_reason(shared: &Shared, user: &User) -> String {
    let out = shared.run_as(user, "scontrol", &["show", "node"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split("Reason=").nth(1).map(|r| r.lines().next().unwrap_or_default().to_string()).unwrap_or_default()
}

/// A loop run as `user`, outside the queue, that stops (SIGSTOP) every copy of the control
/// program they run: the client that says `quit`, and `-d`. Killed when dropped.
fn stop_their_control_calls(shared: &Shared, user: &User) -> KillOnDrop {
    let mut c = Command::new("sh");
    // The kernel keeps 15 characters of a program's name.
    c.args(["-c", &format!("while :; do pkill -STOP -u {} -x nvidia-cuda-mps; sleep 0.02; done", user.uid)])
        .current_dir(&user.home)
        .uid(user.uid)
        .gid(user.gid)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _ = shared;
    KillOnDrop(c.spawn().expect("start the stopping loop"))
}

/// Alice's shard job holding a whole GPU's shards until `release` appears in her home;
/// `then` runs in it first (with `$p` her server's pipe directory).
fn hold_gpu(shared: &Shared, alice: &User, name: &str, then: &str) -> u32 {
    let script = format!(
        "p=\"$CUDA_MPS_PIPE_DIRECTORY\"; {then}; touch {name}.running; while [ ! -e release ]; do sleep 0.1; done"
    );
    let id = shared.sbatch_as(alice, &["--gres=shard:4", "-o", &format!("{name}.out"), "--wrap", &script]);
    let running = alice.home.join(format!("{name}.running"));
    wait_for(&format!("{name} to run"), T, || until(running.exists(), || shared.log()));
    id
}

/// Bob's job needing both GPUs whole: it starts only once neither has a server of Alice's.
fn both_gpus(shared: &Shared, bob: &User) -> u32 {
    shared.sbatch_as(bob, &["--gres=gpu:2", "-o", "both.out", "--wrap", "touch both.ran"])
}

/// Waits for Bob's job to run; while it waits, `squeue` answers at once. Returns the
/// compact states it was seen in, and checks that it was shown running only once its script
/// could run.
fn bob_runs(shared: &Shared, bob: &User, id: u32, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut seen: Vec<String> = Vec::new();
    loop {
        squeue_answers(shared, bob);
        let state = squeue_field(shared, bob, id, "%t");
        if seen.last() != Some(&state) {
            seen.push(state.clone());
        }
        if state == "R" {
            let ran = bob.home.join("both.ran");
            wait_for("bob's job, shown running, to run", Duration::from_secs(5), || {
                until(ran.exists(), || shared.log())
            });
        }
        if bob.home.join("both.ran").exists() && shared.state(id) == "COMPLETED" {
            return seen;
        }
        assert!(Instant::now() < deadline, "bob's job {id} did not run: seen {seen:?}; log:\n{}", shared.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The daemon's highest resident memory so far, in KiB (`VmHWM`).
fn daemon_peak_kib(shared: &Shared) -> u64 {
    let pid = shared.daemon.as_ref().expect("the daemon runs").id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Rewrites the daemon's records of its MPS servers as an older daemon wrote them, without
/// the control daemon's pid: the next quit then has to read the pid file the owner may have
/// replaced.
fn forget_recorded_pids(shared: &Shared) {
    let base = shared.dir.path().join("state").join("mps");
    for entry in std::fs::read_dir(&base).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert!(record.get("control").is_some_and(|c| !c.is_null()), "the pid was kept: {record}");
            record.as_object_mut().unwrap().remove("control");
            std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
        }
    }
}

#[test]
fn a_pid_file_swapped_for_a_fifo_or_a_link_to_dev_zero_neither_hangs_nor_bloats_the_daemon() {
    let test = "a_pid_file_swapped_for_a_fifo_or_a_link_to_dev_zero_neither_hangs_nor_bloats_the_daemon";
    if !is_root(test) {
        return;
    }
    let program = ControlProgram::new(Stand { writes_pid: true, start_fails: false });
    let mut shared = mps_daemon(&program);
    let alice = shared.user("ma");
    let bob = shared.user("mb");
    let pid = "\"$p/nvidia-cuda-mps-control.pid\"";
    hold_gpu(&shared, &alice, "fifo", &format!("rm -f {pid}; mkfifo {pid}"));
    hold_gpu(&shared, &alice, "zero", &format!("rm -f {pid}; ln -s /dev/zero {pid}"));
    // A daemon restarted meanwhile, from records as an older daemon kept them, reads the pid
    // files again, at once.
    shared.stop_daemon();
    forget_recorded_pids(&shared);
    shared.start_daemon();
    squeue_answers(&shared, &bob);
    let both = both_gpus(&shared, &bob);
    std::fs::write(alice.home.join("release"), "").unwrap();
    bob_runs(&shared, &bob, both, T);
    let quits =
        program.calls().lines().filter(|l| l.starts_with("quit") && l.ends_with(&format!("uid={}", alice.uid))).count();
    assert_eq!(quits, 2, "{}", program.calls());
    let peak = daemon_peak_kib(&shared);
    assert!(peak < 256 * 1024, "the daemon grew to {peak} KiB");
    let log = shared.log();
    assert!(log.contains("not reading") && log.contains("not a regular file"), "the FIFO was not named:\n{log}");
}

#[test]
fn a_quit_its_owner_stops_is_killed_at_its_deadline_and_the_gpu_goes_to_the_next_user() {
    let test = "a_quit_its_owner_stops_is_killed_at_its_deadline_and_the_gpu_goes_to_the_next_user";
    if !is_root(test) {
        return;
    }
    let program = ControlProgram::new(Stand { writes_pid: true, start_fails: false });
    let shared = mps_daemon(&program);
    let alice = shared.user("mc");
    let bob = shared.user("md");
    hold_gpu(&shared, &alice, "a0", "true");
    hold_gpu(&shared, &alice, "a1", "true");
    let both = both_gpus(&shared, &bob);
    let _stopping = stop_their_control_calls(&shared, &alice);
    std::fs::write(alice.home.join("release"), "").unwrap();
    let seen = bob_runs(&shared, &bob, both, Duration::from_secs(60));
    // While her servers were being quit it held its GPUs, configuring, not running.
    assert!(seen.contains(&"CF".to_string()), "{seen:?}");
    let log = shared.log();
    assert!(log.contains("did not finish within 5 s and was killed"), "the stopped quit was not ended:\n{log}");
    assert!(log.contains("did not quit; killing it"), "her control daemon was not killed:\n{log}");
    // Nothing of hers is left on the GPUs: her control daemons are gone.
    let left = Command::new("pgrep").args(["-u", &alice.uid.to_string(), "-f", "mkfifo"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "", "her control daemons still run");
}

#[test]
fn a_control_pipe_nobody_answers_holds_the_gpu_no_longer_than_the_quits_deadline() {
    let test = "a_control_pipe_nobody_answers_holds_the_gpu_no_longer_than_the_quits_deadline";
    if !is_root(test) {
        return;
    }
    let program = ControlProgram::new(Stand { writes_pid: true, start_fails: false });
    let shared = mps_daemon(&program);
    let alice = shared.user("me");
    let bob = shared.user("mf");
    // She kills her own control daemon: its FIFO stays, and nobody reads it any more.
    let kill_own = "kill $(cat \"$p/nvidia-cuda-mps-control.pid\"); sleep 0.2";
    hold_gpu(&shared, &alice, "a0", kill_own);
    hold_gpu(&shared, &alice, "a1", kill_own);
    let both = both_gpus(&shared, &bob);
    let begun = Instant::now();
    std::fs::write(alice.home.join("release"), "").unwrap();
    bob_runs(&shared, &bob, both, T);
    assert!(begun.elapsed() < Duration::from_secs(25), "bob waited {:?}", begun.elapsed());
    let log = shared.log();
    assert!(log.contains("did not finish within 5 s and was killed"), "the hung quit was not ended:\n{log}");
}

#[test]
fn a_gpu_whose_server_cannot_be_quit_is_drained_saying_why_until_a_later_quit_succeeds() {
    let test = "a_gpu_whose_server_cannot_be_quit_is_drained_saying_why_until_a_later_quit_succeeds";
    if !is_root(test) {
        return;
    }
    // No pid file: the daemon cannot tell whether her control daemon still runs.
    let program = ControlProgram::new(Stand { writes_pid: false, start_fails: false });
    let shared = mps_daemon(&program);
    let alice = shared.user("mg");
    let bob = shared.user("mh");
    hold_gpu(&shared, &alice, "a0", "true");
    let both = both_gpus(&shared, &bob);
    let stopping = stop_their_control_calls(&shared, &alice);
    std::fs::write(alice.home.join("release"), "").unwrap();
    let reason = wait_for("bob's job to wait for the drained GPU", T, || {
        squeue_answers(&shared, &bob);
        let r = squeue_field(&shared, &bob, both, "%r");
        until(r == "GpuMpsServerFailed", || format!("{r}; log:\n{}", shared.log())).map(|()| r)
    });
    assert_eq!(reason, "GpuMpsServerFailed");
    let node = node_reason(&shared, &bob);
    assert!(
        node.contains("gpu 0 drained: cannot quit the MPS server of GPU 0 for uid")
            && node.contains("did not finish within 5 s"),
        "{node}"
    );
    assert_eq!(shared.state(both), "PENDING");
    // A job that needs no GPU runs meanwhile; its end tries the quit again, which now
    // succeeds: the GPU is given back and Bob's job runs.
    drop(stopping);
    let cpu = shared.sbatch_as(&bob, &["--wrap", "true"]);
    shared.wait_state(cpu, "COMPLETED");
    bob_runs(&shared, &bob, both, T);
    wait_for("the node's reason to clear", T, || {
        let r = node_reason(&shared, &bob);
        until(!r.contains("drained"), || r.clone())
    });
}

#[test]
fn a_gpu_whose_server_cannot_be_started_is_drained_and_its_job_waits_again_never_shown_running() {
    let test = "a_gpu_whose_server_cannot_be_started_is_drained_and_its_job_waits_again_never_shown_running";
    if !is_root(test) {
        return;
    }
    let program = ControlProgram::new(Stand { writes_pid: true, start_fails: true });
    let shared = mps_daemon(&program);
    let alice = shared.user("mi");
    let bob = shared.user("mj");
    let id = shared.sbatch_as(&alice, &["--gres=shard:1", "-o", "shard.out", "--wrap", "touch shard.ran"]);
    let mut seen: Vec<String> = Vec::new();
    wait_for("both GPUs to be drained", Duration::from_secs(40), || {
        squeue_answers(&shared, &bob);
        let state = squeue_field(&shared, &alice, id, "%t %r");
        if seen.last() != Some(&state) {
            seen.push(state.clone());
        }
        until(state == "PD GpuMpsServerFailed", || format!("{seen:?}; log:\n{}", shared.log()))
    });
    assert!(seen.iter().any(|s| s.starts_with("CF")), "never shown configuring: {seen:?}");
    assert!(!seen.iter().any(|s| s.starts_with("R ")), "shown running while nothing ran: {seen:?}");
    let node = node_reason(&shared, &bob);
    assert!(node.contains("gpu 0 drained: cannot start") && node.contains("gpu 1 drained: cannot start"), "{node}");
    // Nothing of it ran, so nothing was recorded of a run.
    let show = String::from_utf8_lossy(&shared.run_as(&alice, "scontrol", &["show", "job", &id.to_string()]).stdout)
        .into_owned();
    assert!(show.contains("Restarts=0"), "{show}");
    let runs = shared.run_as(&alice, "sacct", &["-j", &id.to_string(), "-D", "-X", "-n", "-o", "State"]);
    assert_eq!(String::from_utf8_lossy(&runs.stdout).split_whitespace().collect::<Vec<_>>(), vec!["PENDING"]);
    // Other users' jobs that need no GPU run meanwhile.
    let cpu = shared.sbatch_as(&bob, &["--wrap", "true"]);
    shared.wait_state(cpu, "COMPLETED");
    // Once MPS works again, the GPUs are tried again and the job runs.
    program.set(Stand { writes_pid: true, start_fails: false });
    shared.wait_state_within(id, "COMPLETED", Duration::from_secs(60));
    assert!(alice.home.join("shard.ran").exists());
}

#[test]
fn a_tree_too_deep_for_a_thread_in_the_owners_mps_directories_neither_crashes_the_daemon_nor_stays() {
    let test = "a_tree_too_deep_for_a_thread_in_the_owners_mps_directories_neither_crashes_the_daemon_nor_stays";
    if !is_root(test) {
        return;
    }
    if Command::new("python3").arg("-c").arg("pass").status().map_or(true, |s| !s.success()) {
        common::skip(test, "no python3 to make the deep tree with");
        return;
    }
    let program = ControlProgram::new(Stand { writes_pid: true, start_fails: false });
    let mut shared = mps_daemon(&program);
    let alice = shared.user("mk");
    let bob = shared.user("ml");
    // 30,000 directories, one in the other: far deeper than a thread's stack can recurse.
    let deep = "python3 -c 'import os\nos.chdir(os.environ[\"CUDA_MPS_LOG_DIRECTORY\"])\nfor _ in range(30000):\n    os.mkdir(\"d\"); os.chdir(\"d\")'";
    hold_gpu(&shared, &alice, "deep", deep);
    let both = both_gpus(&shared, &bob);
    std::fs::write(alice.home.join("release"), "").unwrap();
    bob_runs(&shared, &bob, both, T);
    let exited = shared.daemon.as_mut().unwrap().try_wait().unwrap();
    assert!(exited.is_none(), "the daemon died: {exited:?}; log:\n{}", shared.log());
    squeue_answers(&shared, &bob);
    // Her tree is removed, as her, in the background; nothing of it is left.
    let base = shared.dir.path().join("state").join("mps");
    wait_for("her server's directory to be removed", Duration::from_secs(60), || {
        let left: Vec<String> = std::fs::read_dir(&base)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(&format!("uid{}", alice.uid)))
            .collect();
        until(left.is_empty(), || format!("{left:?}; log:\n{}", shared.log()))
    });
}

#[test]
fn a_huge_command_line_outside_the_queue_is_read_in_part_and_shown_only_where_ps_would() {
    use common::fake_nvml::{self, A100_MODEL, UUID0, UUID1};
    let test = "a_huge_command_line_outside_the_queue_is_read_in_part_and_shown_only_where_ps_would";
    if !is_root(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let machine = dir.path().join("nvml.json");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let describe = |pid: u32| {
        let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
        gpu0["processes"] = fake_nvml::processes(&[(pid, 2 << 30, 50)]);
        serde_json::json!({ "gpus": [gpu0, fake_nvml::gpu(1, A100_MODEL, UUID1)] })
    };
    fake_nvml::write_machine(&machine, describe(1));
    let extra = format!(
        "nvml_library = \"{}\"\ngpu_sample_interval = 1\nprivate_data = [\"jobs\"]\n",
        fake_nvml::library().display()
    );
    let env = vec![(fake_nvml::MACHINE_VARIABLE.to_string(), machine.display().to_string())];
    let shared = Shared::start_with(&extra, env);
    let alice = shared.user("mm");
    let bob = shared.user("mn");
    // Bob's program outside the queue, with close to two megabytes of arguments.
    let mut program = Command::new("sh");
    program.args(["-c", "sleep 600", "train"]).args(vec!["x".repeat(120_000); 15]).uid(bob.uid).gid(bob.gid);
    let program = KillOnDrop(program.spawn().unwrap());
    fake_nvml::write_machine(&machine, describe(program.0.id()));
    let seen_by = |user: &User| {
        wait_for("the look to see bob's program", T, || {
            let r = node_reason(&shared, user);
            until(r.contains(&format!("pid {}", program.0.id())), || r.clone()).map(|()| r)
        })
    };
    let his = seen_by(&bob);
    assert!(his.contains(&format!("pid {} ({}) sh -c sleep 600 train xxx", program.0.id(), bob.name)), "{his}");
    assert!(his.contains("…, 2.0 GiB") && his.len() < 400, "read and shown in part: {} bytes", his.len());
    let hers = seen_by(&alice);
    assert_eq!(hers, format!("gpu 0 busy outside the queue: pid {} ({}), 2.0 GiB", program.0.id(), bob.name));
    let out = shared.run_as(&alice, "slurmlet", &["gpus", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["gpus"][0]["outside_queue"][0]["command"], serde_json::Value::Null, "{listed}");
    let log = shared.log();
    assert!(log.len() < 64 << 10, "the log holds the command line whole: {} bytes", log.len());
}

#[test]
fn a_step_process_whose_name_is_not_utf8_is_still_found_and_ended() {
    let test = "a_step_process_whose_name_is_not_utf8_is_still_found_and_ended";
    if Command::new("python3").arg("-c").arg("pass").status().map_or(true, |s| !s.success()) {
        common::skip(test, "no python3 to rename a process with");
        return;
    }
    // Without cgroups: a step's processes are found through its supervisor's session.
    let c = common::Cluster::start("0", "");
    // A task's child that makes a process group of its own and renames itself to bytes that
    // are not UTF-8, as any process may (prctl PR_SET_NAME), so that a reader of
    // /proc/PID/stat as text does not see it.
    let hide = "import os, ctypes, time\nif os.fork() == 0:\n    os.setpgid(0, 0)\n    ctypes.CDLL(None).prctl(15, b'\\xff\\xfe', 0, 0, 0)\n    open('hidden.pid', 'w').write(str(os.getpid()))\n    time.sleep(600)\nos.wait()\n";
    std::fs::write(c.path("hide.py"), hide).unwrap();
    let id = c.sbatch(&["-o", "/dev/null", "--wrap", "srun python3 hide.py"]);
    let pid: i32 = c.wait_file("hidden.pid", T).trim().parse().unwrap();
    let comm = std::fs::read(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm, b"\xff\xfe\n", "the process renamed itself");
    let out = c.run("scancel", &[&id.to_string()]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    c.wait_state(id, &["CANCELLED"], T);
    wait_for("the renamed process to be ended", Duration::from_secs(10), || {
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists() && !slurmlet::sys::is_zombie(pid);
        until(!alive, || format!("pid {pid} still runs; log:\n{}", c.log()))
    });
}

// A user against their own job's supervisor: files, processes and a client of theirs that
// would hold it, and with it their job's resources, past `scancel` and the time limit.

/// Starts `program` with `args` as `user` in their home, outside the queue; killed when
/// dropped.
fn spawn_as(shared: &Shared, user: &User, program: &str, args: &[&str], env: &[(&str, &str)]) -> KillOnDrop {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(&user.home)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", shared.bin.display()))
        .env("HOME", &user.home)
        .env("USER", &user.name)
        .env("SLURMLET_SYSTEM_CONF", &shared.config)
        .envs(env.iter().copied())
        .uid(user.uid)
        .gid(user.gid)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    KillOnDrop(common::system::retrying(|| c.spawn()))
}

/// Makes FIFO `name` in `user`'s home, as theirs.
fn their_fifo(user: &User, name: &str) -> PathBuf {
    let path = user.home.join(name);
    common::mkfifo(&path);
    std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
    path
}

/// Waits for job `id` to end in state `want` by `deadline`, checking meanwhile that `squeue`
/// answers `watcher` at once.
fn ends_by(shared: &Shared, watcher: &User, id: u32, want: &str, deadline: Instant) {
    loop {
        squeue_answers(shared, watcher);
        let state = shared.state(id);
        if state == want {
            return;
        }
        assert!(Instant::now() < deadline, "job {id} is {state}, not {want}, past its bound; log:\n{}", shared.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How long past KillWait (2 s here) a job's end may take in these tests: slack for a busy
/// machine, far below forever.
const SLACK: Duration = Duration::from_secs(15);

/// When job `id`, limited to a minute, must have ended: its start, the minute, KillWait and
/// the slack.
fn minute_limit_end(shared: &Shared, id: u32) -> Instant {
    let r = slurmlet::api::client::Client::at(&shared.socket).unwrap().job(&id.to_string()).unwrap();
    let start = r.jobs[0].start_time.number;
    let left = (start + 60).saturating_sub(slurmlet::sys::now());
    Instant::now() + Duration::from_secs(left + 2) + SLACK
}

/// Bob's job needing all 8 CPUs and both GPUs: it runs only once everything Alice's jobs
/// held is free.
fn bob_takes_everything(shared: &Shared, bob: &User) {
    let id = shared.sbatch_as(bob, &["-c", "8", "--gres=gpu:2", "--wrap", "true"]);
    ends_by(shared, bob, id, "COMPLETED", Instant::now() + T);
}

#[test]
fn fifos_nobody_opens_hold_a_job_past_neither_scancel_nor_its_time_limit() {
    let test = "fifos_nobody_opens_hold_a_job_past_neither_scancel_nor_its_time_limit";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("fa");
    let bob = shared.user("fb");
    for name in ["out-c", "out-t", "in-c", "in-t"] {
        their_fifo(&alice, name);
    }
    // Output FIFOs no process reads, input FIFOs no process writes; two jobs cancelled, two
    // out of time; between them they hold all 8 CPUs.
    let sbatch =
        |extra: &[&str]| shared.sbatch_as(&alice, &[&["-c", "2"], extra, &["--wrap", "cat; sleep 300"]].concat());
    let out_c = sbatch(&["-o", "out-c"]);
    let out_t = sbatch(&["-o", "out-t", "-t", "1"]);
    let in_c = sbatch(&["-i", "in-c", "-o", "in-c.out"]);
    let in_t = sbatch(&["-i", "in-t", "-o", "in-t.out", "-t", "1"]);
    for id in [out_c, out_t, in_c, in_t] {
        shared.wait_state(id, "RUNNING");
    }
    let timed = [(out_t, minute_limit_end(&shared, out_t)), (in_t, minute_limit_end(&shared, in_t))];
    for id in [out_c, in_c] {
        let out = shared.run_as(&alice, "scancel", &[&id.to_string()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        ends_by(&shared, &bob, id, "CANCELLED", Instant::now() + Duration::from_secs(2) + SLACK);
    }
    for (id, by) in timed {
        ends_by(&shared, &bob, id, "TIMEOUT", by);
    }
    let log = shared.log();
    assert!(log.contains("waiting for a process to open FIFO"), "what the job waited for was not said:\n{log}");
    assert!(!log.contains("had not ended it"), "the supervisors ended their jobs themselves:\n{log}");
    bob_takes_everything(&shared, &bob);
    // A reader (or writer) that comes is served, as slurmstepd serves it.
    their_fifo(&alice, "late");
    let id = shared.sbatch_as(&alice, &["-o", "late", "--wrap", "echo read at last"]);
    shared.wait_state(id, "RUNNING");
    let late = alice.home.join("late");
    let got = alice.as_me(|| std::fs::read_to_string(&late)).unwrap();
    assert_eq!(got, "read at last\n");
    ends_by(&shared, &bob, id, "COMPLETED", Instant::now() + T);
}

#[test]
fn a_reader_that_never_reads_holds_neither_the_job_nor_its_supervisors_last_line() {
    let test = "a_reader_that_never_reads_holds_neither_the_job_nor_its_supervisors_last_line";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("ra");
    let bob = shared.user("rb");
    // Her processes hold the FIFOs open for reading and never read them.
    let mut readers = Vec::new();
    for name in ["c", "t"] {
        their_fifo(&alice, name);
        readers.push(spawn_as(&shared, &alice, "sh", &["-c", &format!("exec 3<{name}; sleep 600")], &[]));
    }
    // Each writes until the FIFO is full, and waits there.
    let sbatch = |name: &str, extra: &[&str]| {
        let script = format!("touch {name}.started; yes");
        shared.sbatch_as(&alice, &[&["-c", "4", "-o", name], extra, &["--wrap", &script]].concat())
    };
    let cancelled = sbatch("c", &[]);
    let timed = sbatch("t", &["-t", "1"]);
    for (id, name) in [(cancelled, "c"), (timed, "t")] {
        let started = alice.home.join(format!("{name}.started"));
        wait_for(&format!("job {id} to write"), T, || until(started.exists(), || shared.state(id)));
    }
    let timed_by = minute_limit_end(&shared, timed);
    // Long enough for `yes` to fill the pipe.
    std::thread::sleep(Duration::from_secs(1));
    let out = shared.run_as(&alice, "scancel", &[&cancelled.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ends_by(&shared, &bob, cancelled, "CANCELLED", Instant::now() + Duration::from_secs(2) + SLACK);
    ends_by(&shared, &bob, timed, "TIMEOUT", timed_by);
    assert!(!shared.log().contains("had not ended it"), "the supervisors ended their jobs themselves");
    bob_takes_everything(&shared, &bob);
    drop(readers);
}

#[test]
fn a_stopped_salloc_keeps_its_allocation_past_neither_scancel_nor_its_time_limit() {
    let test = "a_stopped_salloc_keeps_its_allocation_past_neither_scancel_nor_its_time_limit";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("sa");
    let bob = shared.user("sb");
    // Past Slurm's limits, a name or a submit host is refused, saying which.
    let out = shared.run_as(&alice, "salloc", &["-J", &"n".repeat(1025), "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--job-name has 1025 bytes; the limit is 1024"), "{err}");
    // At the limits, two sallocs wait behind her job holding every CPU, and she stops them.
    let host = "h".repeat(1024);
    let blocker = shared.sbatch_as(&alice, &["-c", "8", "--wrap", "sleep 300"]);
    shared.wait_state(blocker, "RUNNING");
    let salloc = |name: &str, extra: &[&str]| {
        let args = [&["-J", name, "-c", "4"], extra, &["sleep", "600"]].concat();
        spawn_as(&shared, &alice, "salloc", &args, &[("HOSTNAME", &host)])
    };
    let (c_name, t_name) = ("c".repeat(1024), "t".repeat(1024));
    let clients = [salloc(&c_name, &[]), salloc(&t_name, &["-t", "1"])];
    let id_of = |name: &str| {
        wait_for("the salloc's job", T, || {
            let out = shared.run_as(&alice, "squeue", &["-h", "-o", "%i %j"]);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let id = text.lines().find_map(|l| l.strip_suffix(&format!(" {name}"))).map(|i| i.parse::<u32>().unwrap());
            id.ok_or(text)
        })
    };
    let (cancelled, timed) = (id_of(&c_name), id_of(&t_name));
    for client in &clients {
        // SAFETY: kill to a child of this test.
        unsafe { libc::kill(client.0.id() as i32, libc::SIGSTOP) };
    }
    assert!(shared.run_as(&alice, "scancel", &[&blocker.to_string()]).status.success());
    for id in [cancelled, timed] {
        shared.wait_state(id, "RUNNING");
    }
    let timed_by = minute_limit_end(&shared, timed);
    let out = shared.run_as(&alice, "scancel", &[&cancelled.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ends_by(&shared, &bob, cancelled, "CANCELLED", Instant::now() + Duration::from_secs(2) + SLACK);
    ends_by(&shared, &bob, timed, "TIMEOUT", timed_by);
    assert!(!shared.log().contains("had not ended it"), "the supervisors ended their jobs themselves");
    bob_takes_everything(&shared, &bob);
    drop(clients);
}

#[test]
fn a_steps_output_fifo_nobody_reads_leaves_no_supervisor_behind_its_job() {
    let test = "a_steps_output_fifo_nobody_reads_leaves_no_supervisor_behind_its_job";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("da");
    let bob = shared.user("db");
    their_fifo(&alice, "step.out");
    let id = shared.sbatch_as(&alice, &["-c", "8", "--gres=gpu:2", "--wrap", "srun -o step.out true; sleep 300"]);
    let pid_file = shared.dir.path().join(format!("state/jobs/{id}/steps/0/stepd.pid"));
    let (pid, ticks) = wait_for("the step's supervisor", T, || {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        let mut it = text.split_whitespace().map(|f| f.parse::<u64>().unwrap_or(0));
        match (it.next(), it.next()) {
            (Some(pid), Some(ticks)) => Ok((pid as i32, ticks)),
            _ => Err(shared.state(id)),
        }
    });
    let out = shared.run_as(&alice, "scancel", &[&id.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The steps get KillWait, then the batch script does.
    ends_by(&shared, &bob, id, "CANCELLED", Instant::now() + Duration::from_secs(4) + SLACK);
    wait_for("the step's supervisor to end", SLACK, || {
        let alive = slurmlet::sys::process_start_ticks(pid) == Some(ticks) && !slurmlet::sys::is_zombie(pid);
        until(!alive, || format!("supervisor {pid} of job {id}'s step still runs"))
    });
    assert!(!shared.log().contains("had not ended it"), "the supervisors ended their jobs themselves");
    bob_takes_everything(&shared, &bob);
}

#[test]
fn a_supervisor_that_does_not_end_its_job_is_killed_and_the_job_fenced_once_past_kill_wait() {
    let test = "a_supervisor_that_does_not_end_its_job_is_killed_and_the_job_fenced_once_past_kill_wait";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("ka");
    let bob = shared.user("kb");
    let sbatch = |name: &str, extra: &[&str]| {
        let script = format!("touch {name}.started; exec sleep 600");
        shared.sbatch_as(&alice, &[&["-c", "4", "--gres=gpu:1"], extra, &["--wrap", &script]].concat())
    };
    let cancelled = sbatch("c", &[]);
    let timed = sbatch("t", &["-t", "1"]);
    let mut sleeps = Vec::new();
    for (id, name) in [(cancelled, "c"), (timed, "t")] {
        let started = alice.home.join(format!("{name}.started"));
        wait_for(&format!("job {id} to start"), T, || until(started.exists(), || shared.state(id)));
        let job_dir = shared.dir.path().join(format!("state/jobs/{id}"));
        let read = |file: &str| std::fs::read_to_string(job_dir.join(file)).unwrap();
        let supervisor: i32 = read("stepd.pid").split_whitespace().next().unwrap().parse().unwrap();
        sleeps.push(read("pgid").trim().parse::<i32>().unwrap());
        // Root stops it, as nothing its user does could any longer.
        // SAFETY: kill to the job's supervisor.
        unsafe { libc::kill(supervisor, libc::SIGSTOP) };
    }
    let timed_by = minute_limit_end(&shared, timed) + Duration::from_secs(2 + 11);
    let out = shared.run_as(&alice, "scancel", &[&cancelled.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // KillWait for the steps, KillWait for the supervisor, its grace, and the next look.
    let cancel_by = Instant::now() + Duration::from_secs(2 + 2 + 10 + 1) + SLACK;
    ends_by(&shared, &bob, cancelled, "CANCELLED", cancel_by);
    ends_by(&shared, &bob, timed, "TIMEOUT", timed_by);
    for pid in sleeps {
        // Gone, or exited and waiting for whoever adopted it to reap it.
        let gone = slurmlet::sys::process_start_ticks(pid).is_none() || slurmlet::sys::is_zombie(pid);
        assert!(gone, "the job's process {pid} outlived its fencing");
    }
    let log = shared.log();
    for id in [cancelled, timed] {
        let said = log.lines().filter(|l| l.contains(&format!("the supervisor of job {id} had not ended it"))).count();
        assert_eq!(said, 1, "job {id}:\n{log}");
    }
    bob_takes_everything(&shared, &bob);
}

/// A FUSE file system on `dir` whose server never answers: every look inside it waits, as
/// on a dead network mount, until the connection is aborted when this is dropped. Mounted by
/// root for the owner with `allow_other`, so that a look by root waits too.
struct StalledMount {
    dir: PathBuf,
    connection: Option<std::fs::File>,
    /// The server of [`StalledMount::taking_requests`]: told to stop, and its thread.
    server: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl StalledMount {
    /// Mounts it on `dir` (made here, `owner`'s); `Err` says why it cannot be.
    fn on(dir: &Path, owner: &User) -> Result<StalledMount, String> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir(dir).unwrap();
        std::os::unix::fs::chown(dir, Some(owner.uid), Some(owner.gid)).unwrap();
        let connection = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/fuse")
            .map_err(|e| format!("cannot open /dev/fuse: {e}"))?;
        let options = std::ffi::CString::new(format!(
            "fd={},rootmode=40000,user_id={},group_id={},allow_other",
            connection.as_raw_fd(),
            owner.uid,
            owner.gid
        ))
        .unwrap();
        let target = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: every pointer is a NUL-terminated string that outlives the call.
        let rc = unsafe {
            libc::mount(
                c"stalled".as_ptr(),
                target.as_ptr(),
                c"fuse".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                options.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(format!("cannot mount FUSE on {}: {}", dir.display(), std::io::Error::last_os_error()));
        }
        Ok(StalledMount { dir: dir.to_path_buf(), connection: Some(connection), server: None })
    }

    /// The same, but with a server that answers the first request (`FUSE_INIT`) and takes
    /// every later one without ever answering it: a look waiting for an answer to a request
    /// its server has taken does not end even when killed, until the connection is aborted.
    fn taking_requests(dir: &Path, owner: &User) -> Result<StalledMount, String> {
        let mut mount = StalledMount::on(dir, owner)?;
        let connection = mount.connection.as_ref().unwrap().try_clone().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let server = std::thread::spawn(move || take_requests(&connection, &stopped));
        mount.server = Some((stop, server));
        Ok(mount)
    }
}

/// The server of [`StalledMount::taking_requests`] on `connection`, until `stop`.
fn take_requests(connection: &std::fs::File, stop: &AtomicBool) {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    const FUSE_INIT: u32 = 26;
    let mut request = vec![0u8; (1 << 20) + 4096];
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd { fd: connection.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut poll, 1, 100) } <= 0 {
            continue;
        }
        let Ok(n) = (&*connection).read(&mut request) else { return };
        if n < 40 || u32::from_ne_bytes(request[4..8].try_into().unwrap()) != FUSE_INIT {
            continue; // Taken, never answered.
        }
        // fuse_out_header (length, error, the request's id), then fuse_init_out: protocol
        // 7.31, writes of 4 KiB, the rest zero.
        let mut reply = vec![0u8; 16 + 64];
        reply[0..4].copy_from_slice(&80u32.to_ne_bytes());
        reply[8..16].copy_from_slice(&request[8..16]);
        reply[16..20].copy_from_slice(&7u32.to_ne_bytes());
        reply[20..24].copy_from_slice(&31u32.to_ne_bytes());
        reply[36..40].copy_from_slice(&4096u32.to_ne_bytes());
        (&*connection).write_all(&reply).expect("answer FUSE_INIT");
    }
}

impl Drop for StalledMount {
    /// Closing the connection aborts it (every waiting look fails at once); then it is
    /// unmounted, so that the owner's home can be removed.
    fn drop(&mut self) {
        if let Some((stop, server)) = self.server.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = server.join();
        }
        drop(self.connection.take());
        let target = std::ffi::CString::new(self.dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

/// Mounts a [`StalledMount`] on `dir`, or says loudly that `test` is skipped and why.
fn stalled_mount(test: &str, dir: &Path, owner: &User) -> Option<StalledMount> {
    StalledMount::on(dir, owner).map_err(|why| common::skip(test, &why)).ok()
}

/// Waits up to `within` for `child` to end, and returns its output.
fn ended_within(mut child: Child, within: Duration, what: &str) -> std::process::Output {
    let deadline = Instant::now() + within;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `squeue` as `user`, which must answer within 2 s: a daemon frozen by someone else's look
/// fails the test rather than hanging it.
fn squeue_at_once(shared: &Shared, user: &User) {
    let out = ended_within(shared.start_as(user, "squeue", &[]), Duration::from_secs(2), "squeue");
    assert!(out.status.success(), "squeue: {}", String::from_utf8_lossy(&out.stderr));
}

/// `sbatch --parsable ARGS` as `user`, which must be answered within 2 s; the job's id.
fn sbatch_at_once(shared: &Shared, user: &User, args: &[&str]) -> u32 {
    let child = shared.start_as(user, "sbatch", &[&["--parsable"], args].concat());
    let out = ended_within(child, Duration::from_secs(2), "sbatch");
    assert!(out.status.success(), "sbatch {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("job id")
}

/// The processes that check user `uid`'s paths (`slurmlet-check`, as that user).
fn checks_of(uid: u32) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let dir = entry.path();
        let (Ok(comm), Ok(status)) =
            (std::fs::read_to_string(dir.join("comm")), std::fs::read_to_string(dir.join("status")))
        else {
            continue;
        };
        let real_uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next());
        if comm.trim_end() == "slurmlet-check" && real_uid == Some(uid.to_string().as_str()) {
            count += 1;
        }
    }
    count
}

#[test]
fn a_path_in_a_mount_that_never_answers_is_refused_at_its_deadline_while_everyone_else_is_served() {
    let test = "a_path_in_a_mount_that_never_answers_is_refused_at_its_deadline_while_everyone_else_is_served";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("pa");
    let bob = shared.user("pb");
    let Some(_stalled) = stalled_mount(test, &alice.home.join("fz"), &alice) else { return };
    let inside = alice.home.join("fz").join("x");
    let inside = inside.to_str().unwrap();
    let output = format!("{inside}/out");
    // Alice names a path in it as an output directory, as a batch job's working directory,
    // and as the directory of an srun that makes its own allocation, all at once.
    let begun = Instant::now();
    // Root's own submit is looked at by a thread of the daemon (there is nobody to become):
    // given up at the deadline as well.
    let root_output = format!("{inside}/root.out");
    let root = Command::new(shared.bin.join("sbatch"))
        .args(["-o", &root_output, "--wrap", "true"])
        .env("SLURMLET_SYSTEM_CONF", &shared.config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tries = [
        ("sbatch -o", shared.start_as(&alice, "sbatch", &["-o", &output, "--wrap", "true"])),
        ("sbatch -D", shared.start_as(&alice, "sbatch", &["-D", inside, "--wrap", "true"])),
        ("srun --chdir", shared.start_as(&alice, "srun", &["--chdir", inside, "true"])),
        ("root's sbatch -o", root),
    ];
    std::thread::sleep(Duration::from_millis(500));

    // Meanwhile Bob is answered at once, and his job is taken and runs.
    squeue_at_once(&shared, &bob);
    let id = sbatch_at_once(&shared, &bob, &["-o", "bob.out", "--wrap", "echo ran"]);
    shared.wait_state(id, "COMPLETED");
    assert_eq!(common::read(&bob.home.join("bob.out")), "ran\n");
    squeue_at_once(&shared, &bob);

    // Each of Alice's is refused once the deadline passed, naming the path that did not answer.
    let said = format!("cannot check {inside}: it did not answer within 5 s");
    for (what, child) in tries {
        let out = ended_within(child, Duration::from_secs(20), what);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what} was taken: {err}");
        assert!(err.contains(&said), "{what}: {err}");
    }
    let took = begun.elapsed();
    assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(12), "refused after {took:?}");
    // Afterwards everyone is answered, Alice and root included.
    squeue_at_once(&shared, &alice);
    assert_eq!(shared.state(id), "COMPLETED");
    let ok = shared.sbatch_as(&alice, &["-o", "fine/out", "--wrap", "true"]);
    shared.wait_state(ok, "COMPLETED");
}

#[test]
fn one_user_with_many_checks_stalled_waits_for_their_own_turns_and_nobody_else_does() {
    let test = "one_user_with_many_checks_stalled_waits_for_their_own_turns_and_nobody_else_does";
    if !is_root(test) {
        return;
    }
    // Exactly as many jobs as she tries: one her refusals left counted would be seen.
    let shared = Shared::start("[limits]\nmax_submitted_jobs_per_user = 20\n");
    let alice = shared.user("fc");
    let bob = shared.user("fd");
    let Some(_stalled) = stalled_mount(test, &alice.home.join("fz"), &alice) else { return };
    let mut tries: Vec<Child> = (0..20)
        .map(|i| {
            let output = format!("{}/fz/d{i}/out", alice.home.display());
            shared.start_as(&alice, "sbatch", &["-o", &output, "--wrap", "true"])
        })
        .collect();
    // Half of them she kills once they are asked: their checks still count as hers.
    std::thread::sleep(Duration::from_millis(500));
    for child in tries.iter_mut().skip(1).step_by(2) {
        child.kill().unwrap();
    }
    // For as long as her checks wait, Bob is answered at once, and Alice never has more
    // than her turns' worth of checks under way.
    let watch = Instant::now();
    let mut most = 0;
    while watch.elapsed() < Duration::from_secs(7) {
        squeue_at_once(&shared, &bob);
        most = most.max(checks_of(alice.uid));
        assert!(most <= 4, "{most} checks of alice's at once");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(most > 0, "no check of alice's was ever seen");
    let id = sbatch_at_once(&shared, &bob, &["--wrap", "true"]);
    // Every one she waited for is refused: a check that did not answer, or one that waited
    // for a turn until the deadline.
    let mut unanswered = 0;
    for (i, child) in tries.into_iter().enumerate().step_by(2) {
        let out = ended_within(child, Duration::from_secs(30), &format!("alice's sbatch {i}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "sbatch {i} was taken: {err}");
        if err.contains("did not answer within 5 s") {
            unanswered += 1;
        } else {
            assert!(err.contains("earlier checks of this user's paths are still waiting for an answer"), "{err}");
        }
    }
    assert!(unanswered >= 1, "no check ran to the deadline");
    shared.wait_state(id, "COMPLETED");
    // Her turns came back, and none of her refused jobs is counted against her: paths that
    // answer are taken at once, up to her limit.
    wait_for("alice's checks to end", T, || until(checks_of(alice.uid) == 0, String::new));
    for _ in 0..20 {
        sbatch_at_once(&shared, &alice, &["-H", "-o", "fine/out", "--wrap", "true"]);
    }
}

#[test]
fn checks_stuck_past_their_kill_hold_their_users_turns_and_nobody_elses() {
    let test = "checks_stuck_past_their_kill_hold_their_users_turns_and_nobody_elses";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("fg");
    let bob = shared.user("fh");
    let stuck = match StalledMount::taking_requests(&alice.home.join("fz"), &alice) {
        Ok(m) => m,
        Err(why) => return common::skip(test, &why),
    };
    // Four tries fill her turns with checks that even SIGKILL does not end; each is refused
    // at its deadline all the same.
    let tries: Vec<Child> = (0..4)
        .map(|i| {
            let output = format!("{}/fz/s{i}/out", alice.home.display());
            shared.start_as(&alice, "sbatch", &["-o", &output, "--wrap", "true"])
        })
        .collect();
    for (i, child) in tries.into_iter().enumerate() {
        let out = ended_within(child, Duration::from_secs(20), &format!("alice's sbatch {i}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("did not answer within 5 s"), "{err}");
    }
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(checks_of(alice.uid), 4, "the stuck checks are gone");
    // Her next submit, of paths that would answer, waits for a turn until the deadline and
    // is refused saying why; Bob is not held up at all.
    let begun = Instant::now();
    let waiting = shared.start_as(&alice, "sbatch", &["-o", "fine/out", "--wrap", "true"]);
    squeue_at_once(&shared, &bob);
    let id = sbatch_at_once(&shared, &bob, &["-o", "bob.out", "--wrap", "true"]);
    let out = ended_within(waiting, Duration::from_secs(20), "alice's waiting sbatch");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "taken without a turn: {err}");
    assert!(err.contains("4 earlier checks of this user's paths are still waiting for an answer"), "{err}");
    assert!(begun.elapsed() >= Duration::from_secs(4), "refused after {:?}", begun.elapsed());
    shared.wait_state(id, "COMPLETED");
    // Once the connection is aborted the stuck checks end and are reaped, and her turns
    // come back.
    drop(stuck);
    wait_for("the stuck checks to end", T, || until(checks_of(alice.uid) == 0, String::new));
    sbatch_at_once(&shared, &alice, &["-o", "fine/out", "--wrap", "true"]);
}

/// A directory of root's, closed to others, holding a directory and a file: the paths of
/// that directory, of that file, and of nothing, none of which a user can tell apart.
fn closed_paths(shared: &Shared) -> Vec<String> {
    let closed = shared.dir.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::create_dir(closed.join("dir")).unwrap();
    std::fs::write(closed.join("file"), "x").unwrap();
    ["dir", "file", "missing"].iter().map(|name| closed.join(name).display().to_string()).collect()
}

#[test]
fn a_step_that_cannot_enter_its_directory_says_what_its_owner_met_there_not_what_root_sees() {
    let test = "a_step_that_cannot_enter_its_directory_says_what_its_owner_met_there_not_what_root_sees";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("fe");
    let paths = closed_paths(&shared);
    // Each task says what its own chdir met there: the same for all three.
    let script: String = paths.iter().map(|p| format!("srun --chdir={p} pwd\n")).collect();
    let id = shared.sbatch_as(&alice, &["-o", "steps.out", "--wrap", &script]);
    shared.wait_state(id, "COMPLETED");
    let text = common::read(&alice.home.join("steps.out"));
    for p in &paths {
        let line =
            format!("slurmstepd-node1: error: couldn't chdir to `{p}': Permission denied: going to /tmp instead");
        assert!(text.contains(&line), "no {line:?} in:\n{text}");
    }
    assert_eq!(text.lines().filter(|l| *l == "/tmp").count(), 3, "{text}");
}

#[test]
fn a_working_directory_a_user_cannot_reach_is_refused_alike_whatever_root_sees_there() {
    let test = "a_working_directory_a_user_cannot_reach_is_refused_alike_whatever_root_sees_there";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("ff");
    let paths = closed_paths(&shared);
    // What a refusal says, the path taken out.
    let said = |out: &std::process::Output, path: &str| String::from_utf8_lossy(&out.stderr).replace(path, "PATH");
    // A batch job's and an allocation's working directory.
    for (command, option) in [("sbatch", "-D"), ("srun", "--chdir")] {
        let outs: Vec<_> = paths
            .iter()
            .map(|p| {
                let args: Vec<&str> =
                    if command == "sbatch" { vec![option, p, "--wrap", "true"] } else { vec![option, p, "true"] };
                (p, shared.run_as(&alice, command, &args))
            })
            .collect();
        for (p, out) in &outs {
            assert!(!out.status.success(), "{command} {option} {p} was taken");
            assert!(
                said(out, p).contains("working directory PATH does not exist or is not a directory"),
                "{}",
                said(out, p)
            );
        }
        assert!(outs.iter().all(|(p, out)| said(out, p) == said(&outs[0].1, outs[0].0)), "they differ: {outs:?}");
    }
}

/// `squeue` as `user` with no system daemon configured and no `XDG_RUNTIME_DIR`: its daemon's
/// socket is `/tmp/slurmlet-UID/slurmlet.sock`, and `squeue` starts one if none answers.
fn own_squeue(shared: &Shared, user: &User, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(shared.bin.join("squeue"));
    c.current_dir(&user.home)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", shared.bin.display()))
        .env("HOME", &user.home)
        .env("USER", &user.name)
        .envs(env.iter().copied())
        .uid(user.uid)
        .gid(user.gid)
        .stdin(Stdio::null());
    common::system::retrying(|| c.output())
}

#[test]
fn a_runtime_directory_another_user_made_first_in_tmp_is_refused_not_used() {
    let test = "a_runtime_directory_another_user_made_first_in_tmp_is_refused_not_used";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("ta");
    let bob = shared.user("tb");
    // Bob makes Alice's runtime directory first, open to all, to receive her socket.
    let hers = PathBuf::from(format!("/tmp/slurmlet-{}", alice.uid));
    let _ = std::fs::remove_dir_all(&hers);
    bob.as_me(|| {
        std::fs::create_dir(&hers)?;
        std::fs::set_permissions(&hers, std::fs::Permissions::from_mode(0o777))
    })
    .unwrap();
    let out = own_squeue(&shared, &alice, &[]);
    let _ = std::fs::remove_dir_all(&hers);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "squeue used bob's directory: {err}");
    assert!(
        err.contains(&format!("{} belongs to {} (uid {}), not to this user", hers.display(), bob.name, bob.uid)),
        "{err}"
    );
    // And a link there, to a directory of Bob's, is not followed either.
    let bobs = bob.home.join("trap");
    bob.as_me(|| std::fs::create_dir(&bobs)).unwrap();
    std::os::unix::fs::symlink(&bobs, &hers).unwrap();
    let out = own_squeue(&shared, &alice, &[]);
    let _ = std::fs::remove_file(&hers);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && err.contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&bobs).unwrap().count(), 0, "something of alice's went into bob's directory");
}

#[test]
fn a_socket_another_user_listens_on_is_sent_nothing() {
    let test = "a_socket_another_user_listens_on_is_sent_nothing";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("ua");
    let bob = shared.user("ub");
    // Bob listens where Alice's commands are pointed (here by SLURMLET_SOCKET, as a
    // directory others may write would let him), and keeps what he is sent.
    let dir = bob.home.join("sock");
    bob.as_me(|| std::fs::create_dir(&dir)).unwrap();
    std::fs::set_permissions(&bob.home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let socket = dir.join("slurmlet.sock");
    let listener = bob.as_me(|| std::os::unix::net::UnixListener::bind(&socket)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = own_squeue(&shared, &alice, &[("SLURMLET_SOCKET", socket.to_str().unwrap())]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("served by a process of uid {}, neither yours nor root's", bob.uid)), "{err}");
    // What reached him: a connection, and not a byte.
    let (mut conn, _) = listener.accept().expect("alice's command connected");
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut got = Vec::new();
    let _ = std::io::Read::read_to_end(&mut conn, &mut got);
    assert!(got.is_empty(), "alice's command sent bob {} bytes", got.len());
}
