//! `scontrol suspend/resume`: a suspended job's processes are stopped, squeue shows it `S`,
//! the time it spends suspended does not count toward its time limit, it stays suspended
//! across a daemon restart, a cancel still ends it, and what cannot be suspended is refused
//! with Slurm's words.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

/// Runs `scontrol ARGS`: (exit code, stdout, stderr).
fn scontrol(c: &Cluster, args: &[&str]) -> (i32, String, String) {
    let out = c.run("scontrol", args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `squeue ARGS` (which must succeed), trimmed.
fn squeue(c: &Cluster, args: &[&str]) -> String {
    let out = c.run("squeue", args);
    assert!(out.status.success(), "squeue failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The state letter of process `pid` in /proc (`S`, `R`, `T`, …).
fn process_state(pid: &str) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name, which is in parentheses.
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()).unwrap_or('?')
}

/// Waits until process `pid` is stopped (`true`) or not.
fn wait_stopped(pid: &str, stopped: bool) {
    wait_for(&format!("process {pid} stopped: {stopped}"), T, || {
        let s = process_state(pid);
        until((s == 'T') == stopped && s != '?', || format!("state {s}"))
    });
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[test]
fn suspended_time_does_not_count_toward_the_time_limit_and_survives_a_restart() {
    let mut c = Cluster::start("0", "");
    let id = c.sbatch(&["-t", "1", "-o", "out", "--wrap", "echo $$ > pid; exec sleep 600"]);
    let pid = c.wait_file("pid", T).trim().to_string();
    let start = c.wait_state(id, &["RUNNING"], T).start_time.number;
    let sid = id.to_string();

    assert_eq!(scontrol(&c, &["suspend", &sid]), (0, String::new(), String::new()));
    let suspended_by = now();
    wait_stopped(&pid, true);
    assert_eq!(squeue(&c, &["-h", "-j", &sid, "-o", "%i %t %T"]), format!("{id} S SUSPENDED"));
    assert_eq!(squeue(&c, &["-h", "-t", "S", "-o", "%i"]), sid);
    assert_eq!(squeue(&c, &["-h", "-t", "R", "-o", "%i"]), "");
    // Suspending it again changes nothing, as in Slurm.
    assert_eq!(scontrol(&c, &["suspend", &sid]).0, 0);

    // The daemon restarts meanwhile: the job is still suspended, its process still stopped.
    c.kill_daemon();
    c.start_daemon();
    assert_eq!(c.state(id), "SUSPENDED");
    assert_eq!(process_state(&pid), 'T');
    let (code, show, _) = scontrol(&c, &["show", "job", &sid]);
    assert_eq!(code, 0);
    assert!(show.contains("JobState=SUSPENDED") && !show.contains("SuspendTime=None"), "{show}");

    // Past the end of its one-minute limit, it is still suspended.
    while now() < start + 65 {
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(c.state(id), "SUSPENDED");
    let resumed_after = now();
    assert_eq!(scontrol(&c, &["resume", &sid]), (0, String::new(), String::new()));
    wait_stopped(&pid, false);
    // Its minute is not up yet: the time it was suspended moved the end.
    assert_eq!(c.state(id), "RUNNING");
    let end = c.wait_state(id, &["TIMEOUT"], Duration::from_secs(150)).end_time.number;
    assert!(
        end >= start + 60 + (resumed_after - suspended_by),
        "ended at {end}: started {start}, suspended by {suspended_by}, resumed after {resumed_after}"
    );
    assert!(read(&c.path("out")).contains("DUE TO TIME LIMIT"));
}

#[test]
fn a_suspended_job_and_its_step_stop_and_a_cancel_ends_them() {
    let c = Cluster::start("0", "");
    let script = "echo $$ > pid; srun bash -c 'echo $$ > steppid; exec sleep 600'";
    let id = c.sbatch(&["-o", "out", "--wrap", script]);
    let pid = c.wait_file("pid", T).trim().to_string();
    let step = c.wait_file("steppid", T).trim().to_string();
    let sid = id.to_string();

    assert_eq!(scontrol(&c, &["suspend", &sid]), (0, String::new(), String::new()));
    wait_stopped(&pid, true);
    wait_stopped(&step, true);
    assert_eq!(c.state(id), "SUSPENDED");

    let out = c.run("scancel", &[&sid]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let done = c.wait_state(id, &["CANCELLED"], T);
    assert!(done.end_time.number > 0);
    wait_for("the job's processes to be gone", T, || {
        until(process_state(&pid) == '?' && process_state(&step) == '?', || {
            format!("{pid}: {}, {step}: {}", process_state(&pid), process_state(&step))
        })
    });
}

#[test]
fn what_cannot_be_suspended_or_resumed_is_refused_with_slurms_words() {
    let c = Cluster::start("0", "cpus = 1\n");
    let running = c.sbatch(&["-o", "running.out", "--wrap", "echo up; while [ ! -e release ]; do sleep 0.02; done"]);
    c.wait_file("running.out", T);
    let pending = c.sbatch(&["--wrap", "true"]);
    let (r, p) = (running.to_string(), pending.to_string());

    let refused = |args: &[&str], text: String| assert_eq!(scontrol(&c, args), (1, String::new(), text), "{args:?}");
    refused(&["suspend", &p], format!("Job is pending execution for job {pending}\n"));
    refused(&["resume", &r], format!("Job is not suspended for job {running}\n"));
    refused(&["suspend", "999999"], "Invalid job id specified for job 999999\n".into());
    refused(&["resume", "abc"], "Invalid job id specified for job abc\n".into());
    refused(&["suspend"], "too few arguments for keyword:suspend\n".into());
    // One refusal among several jobs: the others are carried out, the exit code is 1.
    refused(&["suspend", &format!("{running},999999")], "Invalid job id specified for job 999999\n".into());
    assert_eq!(c.state(running), "SUSPENDED");
    assert_eq!(scontrol(&c, &["resume", &format!("JobId={running}")]).0, 0);
    assert_eq!(c.state(running), "RUNNING");

    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(running, &["COMPLETED"], T);
    refused(&["suspend", &r], format!("Job/step already completing or completed for job {running}\n"));
}
