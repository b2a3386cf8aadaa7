//! A job store written by an earlier slurmlet, opened by today's daemon: the fixtures in
//! `tests/fixtures/stores/` (see its README) are copied into a fresh cluster's state
//! directory, and the daemon must migrate them and show every job as the old one did; a
//! store of a newer layout than this build reads is refused and left as it is.

use crate::common;
use common::T;

use common::*;
use slurmlet::daemon::schema;
use std::path::{Path, PathBuf};

/// The store written by version 1 (before stores carried a version).
fn v1_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores/v1-2026-11-25.db")
}

/// A cluster, not started, whose state directory holds a copy of the store `fixture`;
/// the copy's path.
fn cluster_on(fixture: &Path) -> (Cluster, PathBuf) {
    let c = Cluster::configure("0", "");
    let state = c.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let db = state.join("slurmlet.db");
    std::fs::copy(fixture, &db).unwrap();
    (c, db)
}

fn user_version(db: &Path) -> u32 {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
}

/// The lines `name args` prints, asserting it succeeds.
fn lines(c: &Cluster, name: &str, args: &[&str]) -> Vec<String> {
    let o = c.run(name, args);
    assert!(o.status.success(), "{name} {args:?}: {}", stderr(&o));
    stdout(&o).lines().map(String::from).collect()
}

#[test]
fn a_version_1_store_is_migrated_and_reads_as_it_did() {
    let (mut c, db) = cluster_on(&v1_fixture());
    assert_eq!(user_version(&db), 0);
    c.start_daemon();
    assert_eq!(user_version(&db), schema::LATEST, "the store is stamped at open");

    // What the daemon that wrote the store printed before it stopped (make-store.sh).
    assert_eq!(lines(&c, "squeue", &["-h", "-o", "%i %j %T %r"]), vec!["5 held PENDING JobHeldUser"]);
    assert_eq!(
        lines(&c, "sacct", &["-D", "-j", "1,2,3,4,5", "-p", "-o", "JobID,JobName,State,ExitCode"]),
        vec![
            "JobID|JobName|State|ExitCode|",
            "1|done|COMPLETED|0:0|",
            "1.batch|batch|COMPLETED|0:0|",
            "2|with-step|COMPLETED|0:0|",
            "2.batch|batch|COMPLETED|0:0|",
            "2.0|hello|COMPLETED|0:0|",
            "3|requeued|REQUEUED|1:0|",
            "3.batch|batch|FAILED|1:0|",
            "3|requeued|COMPLETED|0:0|",
            "3.batch|batch|COMPLETED|0:0|",
            "4|cancelled|CANCELLED by 0|0:0|",
            "4.batch|batch|CANCELLED|0:15|",
            "5|held|PENDING|0:0|",
        ]
    );
    assert_eq!(
        lines(&c, "sacct", &["-a", "-D", "-X", "-S", "2020-01-01", "-p", "-o", "JobID,JobName,State,ExitCode"]),
        vec![
            "JobID|JobName|State|ExitCode|",
            "1|done|COMPLETED|0:0|",
            "2|with-step|COMPLETED|0:0|",
            "3|requeued|REQUEUED|1:0|",
            "3|requeued|COMPLETED|0:0|",
            "4|cancelled|CANCELLED by 0|0:0|",
        ]
    );

    // The migrated store takes new jobs, numbered past the old ones.
    let id = c.sbatch(&["--wrap", "true"]);
    assert_eq!(id, 6);
    c.wait_state(id, &["COMPLETED"], T);

    // And reopens as it is.
    c.kill_daemon();
    c.start_daemon();
    assert_eq!(user_version(&db), schema::LATEST);
    assert_eq!(lines(&c, "sacct", &["-n", "-X", "-P", "-j", "6", "-o", "JobID,State"]), vec!["6|COMPLETED"]);
    assert_eq!(lines(&c, "squeue", &["-h", "-o", "%i %T"]), vec!["5 PENDING"]);
}

#[test]
fn a_store_of_a_newer_version_is_refused_and_left_as_it_is() {
    let (c, db) = cluster_on(&v1_fixture());
    let newer = schema::LATEST + 1;
    rusqlite::Connection::open(&db).unwrap().pragma_update(None, "user_version", newer).unwrap();
    let before = std::fs::read(&db).unwrap();

    let o = c.start_refused();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Its last line (the log may come first).
    assert_eq!(
        stderr(&o).lines().last().unwrap_or_default(),
        format!(
            "slurmletd: error: the job store {} has schema version {newer}; this slurmletd (slurmlet {}) reads up to version {}: upgrade slurmlet, or move the store away (it was left as it is)",
            db.display(),
            env!("CARGO_PKG_VERSION"),
            schema::LATEST
        )
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the store is byte for byte as it was");
    assert!(!c.socket.exists(), "nothing listens");
}
