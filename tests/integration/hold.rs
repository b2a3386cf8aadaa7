//! `scontrol hold/release` and slurmrestd's job update: a held job stays pending with
//! Slurm's reason and priority 0 until it is released, also across a daemon restart; what
//! cannot be held is refused with Slurm's text.

use crate::common;
use common::T;
use common::*;

/// Waits until `path` (in the work directory) is there.
const BLOCK: &str = "while [ ! -e release ]; do sleep 0.02; done";

/// `squeue -h -j ID -o '%i %t %r'`, as the Slurm transcripts show it.
fn squeue_row(c: &Cluster, id: u32) -> String {
    let out = c.run("squeue", &["-h", "-j", &id.to_string(), "-o", "%i %t %r"]);
    assert!(out.status.success(), "squeue failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs `scontrol ARGS`, returning (exit code, stdout, stderr).
fn scontrol(c: &Cluster, args: &[&str]) -> (i32, String, String) {
    let out = c.run("scontrol", args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// One CPU, taken by a job that runs until `release` exists, and a second job pending
/// behind it: (cluster, running job, pending job).
fn busy_cluster() -> (Cluster, u32, u32) {
    let c = Cluster::start("0", "cpus = 1\n");
    let running = c.sbatch(&["-o", "running.out", "--wrap", &format!("echo up; {BLOCK}")]);
    c.wait_file("running.out", T);
    let pending = c.sbatch(&["-o", "pending.out", "--wrap", "echo ran"]);
    wait_for("the second job to wait for the CPU", T, || {
        let j = c.job(pending);
        until(j.state_reason == "Resources", || format!("{:?} {}", j.job_state, j.state_reason))
    });
    (c, running, pending)
}

/// Submits a job after the held job `held` and waits until it runs on the one CPU: the
/// scheduler has passed over the held job, which came first. The job runs until
/// `release-later` exists.
fn passed_over(c: &Cluster, held: u32) {
    let later = c.sbatch(&["-o", "later.out", "--wrap", "echo up; while [ ! -e release-later ]; do sleep 0.02; done"]);
    assert!(later > held);
    c.wait_state(later, &["RUNNING"], T);
}

#[test]
fn a_held_job_waits_until_it_is_released() {
    let (c, running, pending) = busy_cluster();
    assert_eq!(scontrol(&c, &["hold", &pending.to_string()]), (0, String::new(), String::new()));
    assert_eq!(squeue_row(&c, pending), format!("{pending} PD JobHeldUser"));
    let j = c.job(pending);
    assert!(j.hold, "REST shows the hold");
    assert_eq!(j.priority.number, 0);

    // The CPU frees up; the held job stays where it is.
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(running, &["COMPLETED"], T);
    passed_over(&c, pending);
    assert_eq!(squeue_row(&c, pending), format!("{pending} PD JobHeldUser"));
    std::fs::write(c.path("release-later"), "").unwrap();

    assert_eq!(scontrol(&c, &["release", &pending.to_string()]), (0, String::new(), String::new()));
    let done = c.wait_state(pending, &["COMPLETED"], T);
    assert!(!done.hold);
    assert_eq!(read(&c.path("pending.out")), "ran\n");
}

#[test]
fn what_cannot_be_held_is_refused_with_slurms_words() {
    let (c, running, pending) = busy_cluster();
    let id = running.to_string();
    assert_eq!(
        scontrol(&c, &["hold", &id]),
        (
            1,
            String::new(),
            format!("Job is no longer pending execution for job {id}\nslurm_suspend error: Job is no longer pending execution\n")
        )
    );
    assert_eq!(c.state(running), "RUNNING");
    // Releasing a job that is not held changes nothing and is no error, as in Slurm.
    assert_eq!(scontrol(&c, &["release", &id]).0, 0);
    assert_eq!(
        scontrol(&c, &["hold", "999999"]),
        (
            1,
            String::new(),
            "Invalid job id specified for job 999999\nslurm_suspend error: Invalid job id specified\n".to_string()
        )
    );
    assert_eq!(scontrol(&c, &["bogus"]), (1, String::new(), "invalid keyword: bogus\n".to_string()));
    assert_eq!(scontrol(&c, &["hold"]), (1, String::new(), "too few arguments for keyword:hold\n".to_string()));

    // One refusal among several: the others are held, the exit code says something failed.
    let (code, _, stderr) = scontrol(&c, &["uhold", &format!("{pending},{id}")]);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("Job is no longer pending execution for job {id}")), "{stderr}");
    assert_eq!(squeue_row(&c, pending), format!("{pending} PD JobHeldUser"));

    // A finished job.
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(running, &["COMPLETED"], T);
    let (code, _, stderr) = scontrol(&c, &["release", &id]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!("Job has already finished for job {id}\nslurm_suspend error: Job has already finished\n")
    );
}

#[test]
fn the_rest_update_holds_and_refuses_what_it_cannot_apply() {
    let (c, running, pending) = busy_cluster();
    let client = c.client();
    let id = pending.to_string();
    let held = client.update_job(&id, &serde_json::json!({ "priority": 0 })).unwrap();
    assert!(held.errors.is_empty(), "{:?}", held.errors);
    assert_eq!(c.job(pending).state_reason, "JobHeldUser");

    // A field slurmlet cannot update is refused as a whole: the hold is not released either.
    let refused = client.update_job(&id, &serde_json::json!({ "hold": false, "qos": "high" })).unwrap();
    assert_eq!(refused.errors.len(), 1, "{:?}", refused.errors);
    assert_eq!(refused.errors[0].source, "#/qos/");
    assert!(c.job(pending).hold);

    let unknown = client.update_job("999999", &serde_json::json!({ "hold": true })).unwrap();
    assert_eq!((unknown.errors[0].error_number, unknown.errors[0].error.as_str()), (2017, "Invalid job id specified"));

    let released = client.update_job(&id, &serde_json::json!({ "hold": false })).unwrap();
    assert!(released.errors.is_empty(), "{:?}", released.errors);
    assert!(!c.job(pending).hold);
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(running, &["COMPLETED"], T);
    c.wait_state(pending, &["COMPLETED"], T);
}

#[test]
fn a_hold_survives_a_daemon_restart() {
    let (mut c, running, pending) = busy_cluster();
    assert_eq!(scontrol(&c, &["hold", &pending.to_string()]).0, 0);
    c.kill_daemon();
    c.start_daemon();
    assert_eq!(squeue_row(&c, pending), format!("{pending} PD JobHeldUser"));

    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(running, &["COMPLETED"], T);
    passed_over(&c, pending);
    assert_eq!(c.state(pending), "PENDING", "the restarted daemon started a held job");
    std::fs::write(c.path("release-later"), "").unwrap();

    assert_eq!(scontrol(&c, &["release", &pending.to_string()]).0, 0);
    c.wait_state(pending, &["COMPLETED"], T);
}
