//! One suite of remote-mode tests, run against every kind of endpoint a profile can name: a
//! real Slurm 26.05 slurmrestd (`tests/real_slurm.rs`) and slurmlet's own daemon over TCP
//! with a token (`tests/integration/remote_ours.rs`), so both are held to one standard.
//!
//! Each test compares what our commands print through the profile with what the endpoint's
//! own commands print for the same jobs: the cluster's `squeue` and `sacct`, or, for our
//! daemon, the same commands on its local socket. `remote_suite!(constructor)` writes one
//! `#[test]` per check; the constructor gives the endpoint, or `None` (after saying why)
//! where there is none.

use std::process::Output;
use std::time::{Duration, Instant};

/// An endpoint reached through a profile, and its own commands.
pub trait Endpoint {
    /// Our `name ARGS` through the profile.
    fn ours(&self, name: &str, args: &[&str]) -> Output;
    /// The endpoint's own `name ARGS`, run as the profile's user.
    fn theirs(&self, name: &str, args: &[&str]) -> Output;
    /// A directory that exists for jobs there.
    fn workdir(&self) -> String;
}

/// Writes one `#[test]` per check of the suite, each on the endpoint `$make(test_name)`.
#[macro_export]
macro_rules! remote_suite {
    ($make:path) => {
        $crate::remote_suite!(@tests $make;
            squeue_through_the_profile_reads_as_the_endpoints_own,
            sacct_through_the_profile_reads_as_the_endpoints_own,
            cancelling_through_the_profile_shows_there,
            errors_read_as_the_endpoints_own,
            what_rest_cannot_do_fails_with_one_clear_line);
    };
    (@tests $make:path; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                if let Some(endpoint) = $make(stringify!($name)) {
                    remote_suite::$name(&endpoint);
                }
            }
        )*
    };
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `sbatch --parsable -D WORKDIR ARGS` through the profile: the job id.
pub fn sbatch(e: &dyn Endpoint, args: &[&str]) -> u32 {
    let dir = e.workdir();
    let o = e.ours("sbatch", &[&["--parsable", "-D", dir.as_str()], args].concat());
    assert!(o.status.success(), "sbatch {args:?}: {}", text(&o.stderr));
    text(&o.stdout).trim().parse().unwrap_or_else(|_| panic!("sbatch {args:?} printed {}", text(&o.stdout)))
}

/// `squeue -l`'s output with its first line, the time it was printed at (`Thu Nov 26
/// 13:22:32 2026`), left out: the two runs may fall either side of a second.
fn without_clock_line(out: &[u8]) -> String {
    let t = text(out);
    let first = t.lines().next().unwrap_or_default();
    let is_clock = first.len() == 24 && first.split(' ').filter(|w| !w.is_empty()).count() == 5 && first.contains(':');
    if is_clock {
        t[first.len()..].to_string()
    } else {
        t
    }
}

/// Runs `name ARGS` both ways and asserts the same output and exit code.
fn same(e: &dyn Endpoint, name: &str, args: &[&str]) {
    let (ours, theirs) = (e.ours(name, args), e.theirs(name, args));
    assert_eq!(
        (without_clock_line(&ours.stdout), text(&ours.stderr), ours.status.code()),
        (without_clock_line(&theirs.stdout), text(&theirs.stderr), theirs.status.code()),
        "{name} {args:?}: ours (left) and the endpoint's own (right)"
    );
}

/// Waits until the endpoint's own sacct shows the allocations of `ids` (`count` lines) all
/// ended.
fn wait_ended(e: &dyn Endpoint, ids: &str, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let o = e.theirs("sacct", &["-n", "-X", "-P", "-j", ids, "-o", "JobID,State"]);
        let seen = text(&o.stdout);
        let lines: Vec<&str> = seen.lines().collect();
        if lines.len() == count && lines.iter().all(|l| !l.ends_with("|PENDING") && !l.ends_with("|RUNNING")) {
            return;
        }
        assert!(Instant::now() < deadline, "jobs {ids} did not all end: {seen}{}", text(&o.stderr));
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Waits until the endpoint's own squeue shows job `id` in `state`.
fn wait_state(e: &dyn Endpoint, id: u32, state: &str) {
    let args = ["-h", "-t", "all", "-j", &id.to_string(), "-o", "%T"];
    poll_theirs(e, "squeue", &args, &format!("job {id} to be {state}"), |out| out.trim() == state);
}

/// Runs the endpoint's own `name ARGS` every 200 ms until its output satisfies `done`, for
/// at most a minute; then fails, saying what it waited for and what it saw last.
fn poll_theirs(e: &dyn Endpoint, name: &str, args: &[&str], what: &str, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let o = e.theirs(name, args);
        if done(&text(&o.stdout)) {
            return;
        }
        assert!(Instant::now() < deadline, "waited for {what}: {}{}", text(&o.stdout), text(&o.stderr));
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits until the endpoint's own sacct records job `id` as cancelled by its user: a real
/// cluster's accounting learns who cancelled a job a moment after its squeue shows it.
fn wait_cancel_recorded(e: &dyn Endpoint, id: u32) {
    let args = ["-X", "-n", "-P", "-o", "State", "-j", &id.to_string()];
    poll_theirs(e, "sacct", &args, &format!("job {id}'s cancel to be recorded"), |out| {
        out.starts_with("CANCELLED by ")
    });
}

/// A GPU job, a throttled array and a job depending on it, held, list the same in our
/// squeue through the profile as in the endpoint's own, in several formats.
pub fn squeue_through_the_profile_reads_as_the_endpoints_own(e: &dyn Endpoint) {
    let gpu = sbatch(e, &["--hold", "--gres=gpu:2", "-J", "gpu2", "--wrap", "true"]);
    let array = sbatch(e, &["--hold", "--array=0-3%2", "-J", "arr", "--wrap", "true"]);
    let dep = sbatch(e, &["--hold", "-J", "dep", "--dependency", &format!("afterok:{array}"), "--wrap", "true"]);
    let ids = format!("{gpu},{array},{dep}");
    // Sorted by id: how Slurm orders jobs that tie on its default keys is not what its REST
    // API's order gives.
    for args in [
        vec!["-h", "-S", "i", "-j", &ids, "-o", "%i %j %u %T %r %b %E %l %D %C"],
        vec!["-h", "-S", "i", "-r", "-j", &ids, "-o", "%i %j %T %r"],
        vec!["-S", "i", "-j", &ids],
        vec!["-S", "i", "-j", &ids, "-l"],
    ] {
        same(e, "squeue", &args);
    }
    let o = e.ours("squeue", &["-h", "-j", &format!("{array}_2"), "-o", "%i %T"]);
    assert_eq!(text(&o.stdout), format!("{array}_2 PENDING\n"));
    for id in [gpu, array, dep] {
        assert!(e.ours("scancel", &[&id.to_string()]).status.success());
    }
}

/// Jobs that ran (one with a GPU and an srun step, an array whose tasks fail with their
/// index) read the same in our sacct through the profile as in the endpoint's own.
pub fn sacct_through_the_profile_reads_as_the_endpoints_own(e: &dyn Endpoint) {
    let done = sbatch(e, &["-J", "done", "--wrap", "true"]);
    let array = sbatch(e, &["-J", "tasks", "--array=0-2", "--wrap", "exit $SLURM_ARRAY_TASK_ID"]);
    let gpu =
        sbatch(e, &["-J", "gpu", "--gres=gpu:1", "-d", &format!("afterany:{array}"), "--wrap", "srun true; exit 0"]);
    let ids = format!("{done},{array},{gpu}");
    wait_ended(e, &ids, 5);
    for args in [
        vec!["-j", &ids],
        vec!["-X", "-j", &ids],
        vec!["-j", &format!("{array}_1")],
        vec!["-j", &format!("{gpu}.0")],
        vec!["-P", "-j", &ids, "-o", "JobID,JobIDRaw,JobName,State,ExitCode,AllocTRES,ReqTRES,NNodes,NodeList"],
        vec!["-n", "-X", "-j", &ids, "--name", "tasks,gpu", "-o", "JobID,JobName%20,State"],
        vec!["-X", "-j", &ids, "-q", "normal", "-N", "node1"],
    ] {
        same(e, "sacct", &args);
    }
    // And what they say is right.
    let o =
        e.ours("sacct", &["-n", "-X", "-P", "-j", &format!("{array}_1,{gpu}"), "-o", "JobID,State,ExitCode,AllocTRES"]);
    let out = text(&o.stdout);
    let line = |prefix: String| out.lines().find(|l| l.starts_with(&prefix)).map(str::to_string);
    assert!(line(format!("{array}_1|FAILED|1:0|")).is_some(), "{out}");
    assert!(line(format!("{gpu}|COMPLETED|0:0|")).is_some_and(|l| l.contains("gres/gpu=1")), "{out}");
}

/// A running job and an array task cancelled through the profile end there, a signal sent
/// through it reaches the job's script, and all of it reads the same in both sacct and
/// squeue.
pub fn cancelling_through_the_profile_shows_there(e: &dyn Endpoint) {
    let running = sbatch(e, &["-J", "long", "--wrap", "sleep 300"]);
    let array = sbatch(e, &["--hold", "-J", "arr", "--array=0-2", "--wrap", "true"]);
    wait_state(e, running, "RUNNING");
    let o = e.ours("scancel", &[&running.to_string(), &format!("{array}_1")]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    wait_state(e, running, "CANCELLED");
    // Slurm keeps no record of a pending task cancelled before it was split off its array;
    // what both show is that it no longer waits.
    let pending = ["-h", "-t", "PD", "-r", "-j", &array.to_string(), "-o", "%i %T %r", "-S", "i"];
    let o = e.theirs("squeue", &pending);
    assert_eq!(text(&o.stdout), format!("{array}_0 PENDING JobHeldUser\n{array}_2 PENDING JobHeldUser\n"));
    same(e, "squeue", &pending);
    wait_cancel_recorded(e, running);
    same(e, "sacct", &["-X", "-j", &running.to_string()]);

    // A signal reaches the batch script (-b), which ends on it as it likes.
    let trap = sbatch(e, &["-J", "trap", "--wrap", "trap 'exit 7' USR1; sleep 300 & wait"]);
    wait_state(e, trap, "RUNNING");
    std::thread::sleep(Duration::from_millis(500));
    let o = e.ours("scancel", &["-b", "-s", "USR1", &trap.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    wait_ended(e, &trap.to_string(), 1);
    let o = e.theirs("sacct", &["-n", "-X", "-P", "-j", &trap.to_string(), "-o", "State,ExitCode"]);
    assert_eq!(text(&o.stdout), "FAILED|7:0\n");
    same(e, "sacct", &["-j", &trap.to_string()]);
    assert!(e.ours("scancel", &[&array.to_string()]).status.success());
}

/// Jobs that do not exist are reported as the endpoint's own commands report them.
pub fn errors_read_as_the_endpoints_own(e: &dyn Endpoint) {
    same(e, "squeue", &["-j", "99999999"]);
    same(e, "scontrol", &["show", "job", "99999999"]);
    same(e, "sacct", &["-j", "99999999"]);
}

/// `srun` and `salloc` need what slurmrestd has no endpoint for: one line says so and what
/// to use instead.
pub fn what_rest_cannot_do_fails_with_one_clear_line(e: &dyn Endpoint) {
    for (name, args) in [("srun", vec!["hostname"]), ("salloc", vec!["true"])] {
        let o = e.ours(name, &args);
        assert_ne!(o.status.code(), Some(0), "{name}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains("use the cluster's own srun or salloc on its login node"), "{name}: {err}");
    }
}
