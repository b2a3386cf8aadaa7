//! Signals (`--signal`, `scancel -s/-b`, scancel's filters), `--export` and `--open-mode`.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

#[test]
fn signal_before_the_time_limit_reaches_the_batch_shell() {
    let c = Cluster::start("0", "");
    // One minute limit, USR1 58 s before it: about 2 s after the start.
    let id = c.sbatch(&[
        "-t",
        "1",
        "--signal=B:USR1@58",
        "-o",
        "sig.out",
        "--wrap",
        "trap 'echo got USR1; exit 0' USR1; while true; do sleep 0.1; done",
    ]);
    let j = c.wait_state(id, &["COMPLETED", "TIMEOUT", "FAILED"], Duration::from_secs(40));
    assert_eq!(j.job_state, vec!["COMPLETED"]);
    assert_eq!(read(&c.path("sig.out")), "got USR1\n");
    // The warning came about 2 s in: not at the start, and long before the limit (60 s).
    let ran = j.end_time.number - j.start_time.number;
    assert!((1..30).contains(&ran), "ran {ran} s");
}

#[test]
fn scancel_signals_and_filters() {
    let c = Cluster::start("0", "");
    let trap = c.sbatch(&[
        "-J",
        "trapper",
        "-o",
        "t.out",
        "--wrap",
        "trap 'echo got USR2' USR2; echo up; while true; do sleep 0.1; done",
    ]);
    c.wait_file("t.out", T);
    let o = c.run("scancel", &["-b", "-s", "USR2", &trap.to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let deadline = std::time::Instant::now() + T;
    while !read(&c.path("t.out")).contains("got USR2") {
        assert!(std::time::Instant::now() < deadline, "USR2 never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.state(trap), "RUNNING");
    let p1 = c.sbatch(&["-J", "keep", "--hold", "--wrap", "true"]);
    let p2 = c.sbatch(&["-J", "drop", "--hold", "--wrap", "true"]);
    assert!(c.run("scancel", &["-n", "drop"]).status.success());
    assert_eq!(c.state(p2), "CANCELLED");
    assert_eq!(c.state(p1), "PENDING");
    assert!(c.run("scancel", &["--me", "-t", "PENDING"]).status.success());
    assert_eq!(c.state(p1), "CANCELLED");
    assert_eq!(c.state(trap), "RUNNING");
    assert!(c.run("scancel", &["-n", "trapper"]).status.success());
    c.wait_state(trap, &["CANCELLED"], T);
    let out = read(&c.path("t.out"));
    assert!(out.contains("CANCELLED AT"), "{out}");
}

#[test]
fn export_selects_the_job_environment() {
    let c = Cluster::start("0", "");
    let submit = |export: Option<&str>, out: &str| {
        let mut cmd = c.cmd("sbatch");
        cmd.env("FOO", "hello").env("BAR", "world");
        if let Some(e) = export {
            cmd.arg(format!("--export={e}"));
        }
        let o = cmd.args(["--parsable", "-o", out, "--wrap", "echo \"[$FOO][$BAR][$SLURM_JOB_ID]\""]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let id: u32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        c.wait_state(id, &["COMPLETED"], T);
        (id, read(&c.path(out)))
    };
    let (id, out) = submit(None, "all.out");
    assert_eq!(out, format!("[hello][world][{id}]\n"));
    let (id, out) = submit(Some("NONE"), "none.out");
    assert_eq!(out, format!("[][][{id}]\n"));
    let (id, out) = submit(Some("FOO"), "foo.out");
    assert_eq!(out, format!("[hello][][{id}]\n"));
    let (id, out) = submit(Some("ALL,BAR=changed"), "allbar.out");
    assert_eq!(out, format!("[hello][changed][{id}]\n"));
}

#[test]
fn open_mode_append_keeps_earlier_output() {
    let c = Cluster::start("0", "");
    std::fs::write(c.path("log.out"), "earlier\n").unwrap();
    let id = c.sbatch(&["--open-mode=append", "-o", "log.out", "--wrap", "echo later"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("log.out")), "earlier\nlater\n");
    let id = c.sbatch(&["-o", "log.out", "--wrap", "echo only"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("log.out")), "only\n");
}

#[test]
fn files_created_by_the_job_get_the_submitters_umask() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let c = Cluster::start("0", "");
    let mut cmd = c.cmd("sbatch");
    // SAFETY: umask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    let o = cmd.args(["--parsable", "-o", "u.out", "--wrap", "touch made; umask"]).output().unwrap();
    assert!(o.status.success());
    let id: u32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("u.out")), "0077\n");
    let mode = std::fs::metadata(c.path("made")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_job_holds_no_descriptor_of_its_supervisor_or_daemon() {
    // The supervisor holds the write end of the daemon's end pipe as descriptor 3 until the
    // job's end is recorded; a job (or anything it leaves behind) holding it would hide its
    // end. Descriptors the daemon was started with (under `cargo test`, the build's pipes)
    // must not reach jobs either. A job has its three standard streams, and the shell its
    // script.
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["-o", "fd.out", "--wrap", "ls -l /proc/$$/fd/"]);
    let j = c.wait_state(id, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["COMPLETED"]);
    let fds = read(&c.path("fd.out"));
    let extra: Vec<&str> = fds
        .lines()
        .filter_map(|l| l.split_once(" -> ").map(|(fd, target)| (fd.rsplit(' ').next().unwrap_or(""), target)))
        .filter(|(fd, target)| !["0", "1", "2"].contains(fd) && !target.ends_with("/slurm_script"))
        .map(|(fd, _)| fd)
        .collect();
    assert!(extra.is_empty(), "the job inherited descriptors {extra:?}:\n{fds}");
}
