//! A daemon killed with SIGKILL loses nothing: running jobs finish with their real exit codes
//! and output, pending jobs start, no GPU is handed out twice, no job id is reused.

mod common;
use common::*;
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

#[test]
fn kill_dash_nine_of_the_daemon_loses_nothing() {
    let mut c = Cluster::start("4", "");
    let hold = "while [ ! -e release ]; do sleep 0.02; done";
    let r1 = c.sbatch(&[
        "--gres=gpu:2",
        "-o",
        "r1.out",
        "--wrap",
        &format!("echo $CUDA_VISIBLE_DEVICES; {hold}; echo done1; exit 5"),
    ]);
    let r2 = c.sbatch(&[
        "--gres=gpu:2",
        "-o",
        "r2.out",
        "--wrap",
        &format!("echo $CUDA_VISIBLE_DEVICES; {hold}; echo done2"),
    ]);
    let p = c.sbatch(&["--gres=gpu:3", "-o", "p.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_file("r1.out", T);
    c.wait_file("r2.out", T);
    assert_eq!(c.state(p), "PENDING");

    c.kill_daemon();
    // Jobs run on without the daemon; one of them ends while it is down.
    std::fs::write(c.path("release"), "").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    c.start_daemon();

    let j1 = c.wait_state(r1, &["COMPLETED", "FAILED", "NODE_FAIL"], T);
    assert_eq!(j1.job_state, vec!["FAILED"]);
    assert_eq!(j1.exit_code.return_code.number, 5);
    let j2 = c.wait_state(r2, &["COMPLETED", "FAILED", "NODE_FAIL"], T);
    assert_eq!(j2.job_state, vec!["COMPLETED"]);
    assert!(read(&c.path("r1.out")).ends_with("done1\n"));
    assert!(read(&c.path("r2.out")).ends_with("done2\n"));
    c.wait_state(p, &["COMPLETED"], T);
    assert_eq!(read(&c.path("p.out")).trim().split(',').count(), 3);
    let next = c.sbatch(&["--wrap", "true"]);
    assert!(next > p, "job id {next} reused (last was {p})");
}

#[test]
fn a_job_running_across_a_restart_keeps_its_gpus_fenced() {
    let mut c = Cluster::start("2", "");
    let hold = "while [ ! -e release ]; do sleep 0.02; done";
    let r = c.sbatch(&["--gres=gpu:2", "-o", "r.out", "--wrap", &format!("echo $CUDA_VISIBLE_DEVICES; {hold}")]);
    c.wait_file("r.out", T);
    c.kill_daemon();
    c.start_daemon();
    // The restarted daemon re-adopted the job: its GPUs are not free.
    assert_eq!(c.state(r), "RUNNING");
    let w = c.sbatch(&["--gres=gpu:1", "-o", "w.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    std::thread::sleep(Duration::from_millis(300));
    let jw = c.job(w);
    assert_eq!(jw.job_state, vec!["PENDING"], "a GPU was handed out twice");
    assert_eq!(jw.state_reason, "Resources");
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(r, &["COMPLETED"], T);
    c.wait_state(w, &["COMPLETED"], T);
    // Cancel still works on an adopted job.
    let r2 = c.sbatch(&["-o", "r2.out", "--wrap", "echo up; sleep 300"]);
    c.wait_file("r2.out", T);
    c.kill_daemon();
    c.start_daemon();
    assert!(c.run("scancel", &[&r2.to_string()]).status.success());
    c.wait_state(r2, &["CANCELLED"], T);
}
