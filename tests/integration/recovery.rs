//! A daemon killed with SIGKILL loses nothing: running jobs finish with their real exit codes
//! and output, pending jobs start, no GPU is handed out twice, no job id is reused.

use crate::common;
use common::T;
use common::*;
use std::path::{Path, PathBuf};

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

/// Restarts `c`'s daemon and waits for the copy of the store it makes a little after its
/// start; then kills it (`kill -9`). The store's path and its copy's.
fn backed_up_and_killed(c: &mut Cluster) -> (PathBuf, PathBuf) {
    c.kill_daemon();
    let restarted = std::time::SystemTime::now();
    c.start_daemon();
    let state = c.dir.path().join("state");
    let (db, backup) = (state.join("slurmlet.db"), state.join("slurmlet.db.bak"));
    wait_for("the store's backup", T, || {
        let made = std::fs::metadata(&backup).and_then(|m| m.modified()).is_ok_and(|t| t >= restarted);
        until(made, || c.log())
    });
    c.kill_daemon();
    (db, backup)
}

#[test]
fn a_damaged_store_stops_the_daemon_with_the_way_back_to_its_backup() {
    let mut c = Cluster::start("0", "");
    let id = c.sbatch(&["--hold", "--wrap", "true"]);
    let (db, backup) = backed_up_and_killed(&mut c);
    let state = db.parent().unwrap().to_path_buf();
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

/// Every path under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    found.sort();
    found
}

/// Overwrites the start of the root page of `table` in the store at `db` (its write-ahead
/// log folded in first, so that the page is the one read).
fn damage_table(db: &Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let page: u64 =
        conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap();
    let size: u64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    drop(conn);
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
    f.write_all(&[0xa5; 256]).unwrap();
}

#[test]
fn a_store_with_a_damaged_page_is_refused_at_start_and_left_as_it_is() {
    let mut c = Cluster::start("0", "");
    // Jobs whose scripts fill pages of the payloads table, which the start does not read.
    std::fs::write(c.path("job.sh"), format!("#!/bin/sh\n{}true\n", "# a line of the script\n".repeat(100))).unwrap();
    let held: Vec<u32> = (0..20).map(|_| c.sbatch(&["--hold", "job.sh"])).collect();
    let (db, backup) = backed_up_and_killed(&mut c);
    damage_table(&db, "payloads");
    let state = db.parent().unwrap().to_path_buf();
    let (bytes, files) = (std::fs::read(&db).unwrap(), tree(&state));

    let o = c.start_refused();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let last = err.lines().last().unwrap_or_default();
    for says in [
        format!("slurmletd: error: job store {} is damaged (SQLite's quick_check: ", db.display()),
        "the daemon will not start on it, so as not to lose its jobs, and left it as it is".into(),
        format!("cp {} {}", backup.display(), db.display()),
    ] {
        assert!(last.contains(&says), "{says:?} not in {last}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the store is byte for byte as it was");
    assert_eq!(tree(&state), files, "no file was added or removed in the state directory");
    assert!(!c.socket.exists(), "nothing listens");

    // The way back: the copy, with every job in it; the daemon answers and runs jobs.
    std::fs::rename(&db, state.join("damaged.db")).unwrap();
    std::fs::copy(&backup, &db).unwrap();
    c.start_daemon();
    let o = c.run("squeue", &["-h", "-o", "%i"]);
    assert_eq!(stdout(&o).lines().count(), held.len(), "{}", stderr(&o));
    let id = c.sbatch(&["--wrap", "true"]);
    c.wait_state(id, &["COMPLETED"], T);
}
