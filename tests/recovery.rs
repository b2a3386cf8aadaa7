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
    // Jobs run on without the daemon, and reach their ends while it is down.
    std::fs::write(c.path("release"), "").unwrap();
    for (file, end) in [("r1.out", "done1\n"), ("r2.out", "done2\n")] {
        wait_for(&format!("{file} to end with {end:?}"), T, || {
            let text = std::fs::read_to_string(c.path(file)).unwrap_or_default();
            until(text.ends_with(end), || text.clone())
        });
    }
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
    // A job submitted after it, which needs no GPU, runs: the scheduler has looked at both.
    let cpu_only = c.sbatch(&["--wrap", "true"]);
    c.wait_state(cpu_only, &["COMPLETED"], T);
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

#[test]
fn a_damaged_store_stops_the_daemon_with_the_way_back_to_its_backup() {
    let mut c = Cluster::start("0", "");
    let id = c.sbatch(&["--hold", "--wrap", "true"]);
    // The daemon backs the store up a little after it starts: restart it, then wait for that.
    c.kill_daemon();
    let restarted = std::time::SystemTime::now();
    c.start_daemon();
    let state = c.dir.path().join("state");
    let db = state.join("slurmlet.db");
    let backup = state.join("slurmlet.db.bak");
    let deadline = std::time::Instant::now() + T;
    while std::fs::metadata(&backup).and_then(|m| m.modified()).map_or(true, |t| t < restarted) {
        assert!(std::time::Instant::now() < deadline, "no backup was made; log:\n{}", c.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    c.kill_daemon();
    // The disk loses the store.
    for f in ["slurmlet.db-wal", "slurmlet.db-shm"] {
        let _ = std::fs::remove_file(state.join(f));
    }
    std::fs::write(&db, vec![0x5a; 64 << 10]).unwrap();
    let refused = std::process::Command::new(c.bin.join("slurmletd")).arg("--config").arg(&c.config).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains(&format!("job store {} is damaged", db.display())), "{err}");
    assert!(err.contains(&format!("cp {} {}", backup.display(), db.display())), "{err}");
    // Following the way back restores the job.
    std::fs::rename(&db, state.join("damaged.db")).unwrap();
    std::fs::copy(&backup, &db).unwrap();
    c.start_daemon();
    assert_eq!(c.state(id), "PENDING");
}
