//! A panic in the daemon while it holds its state's lock: the daemon aborts instead of
//! staying up and failing every request, and the next daemon recovers the jobs from the
//! store and adopts the running one. The panic is caused on purpose through
//! `SLURMLET_TEST_FAULT`, which only a test build reads.

use crate::common;
use common::*;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

#[test]
fn a_panic_under_the_state_lock_aborts_and_the_next_daemon_recovers() {
    let mut c = Cluster::configure("1", "");
    c.start_daemon_with(&[("SLURMLET_TEST_FAULT", "submit:boom")]);
    let held = c.sbatch(&["--hold", "-J", "kept", "--wrap", "true"]);
    let runner = c.sbatch(&["-J", "runner", "--gres=gpu:1", "-o", "r.out", "--wrap", "echo started; sleep 300"]);
    c.wait_file("r.out", Duration::from_secs(20));

    let o = c.run("sbatch", &["-J", "boom", "--wrap", "true"]);
    assert!(!o.status.success(), "the submit that panicked is not accepted");
    let status = c.wait_daemon();
    assert_eq!(status.signal(), Some(libc::SIGABRT), "the daemon aborted: {status:?}\n{}", c.log());
    let log = c.log();
    assert!(log.contains("fault submit:boom caused on purpose"), "{log}");
    assert!(log.contains("aborting, so that the next daemon recovers the jobs"), "{log}");

    // A new daemon finds both jobs, the running one adopted with its GPU.
    c.start_daemon();
    let o = c.run("squeue", &["-h", "-o", "%i %j %T %b"]);
    let mut lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, vec![format!("{held} kept PENDING N/A"), format!("{runner} runner RUNNING gres/gpu:1")]);
    let o = c.run("scancel", &[&runner.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    c.wait_state(runner, &["CANCELLED"], Duration::from_secs(20));
    // The job whose submit panicked was never stored.
    let o = c.run("sacct", &["-n", "-X", "-o", "JobName%10"]);
    let names: Vec<String> = stdout(&o).split_whitespace().map(String::from).collect();
    assert!(names.contains(&"runner".to_string()) && !names.contains(&"boom".to_string()), "{names:?}");
}
