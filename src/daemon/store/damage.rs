//! A damaged store: found at the daemon's start, before anything is written to it
//! ([`check_intact`], SQLite's `PRAGMA quick_check`), or by a read while the daemon runs on
//! it; and what to say of it, which depends on when it was found ([`Seen`]).
//!
//! Before the check, a store damaged in a page the start does not read (a job's record, a
//! payload, an index) went unnoticed until a write met it: the daemon took a submit and
//! then failed to store it. A store that fails the check is refused as a store of a newer
//! version is: the daemon does not start, the file stays as it is, and the message says
//! what SQLite found and how to go back to the copy kept beside it.

use super::copies::backup_path;
use super::StoreError;
use rusqlite::Connection;
use std::path::Path;

/// When the damage was found, which decides what is said of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// At the daemon's start: it does not start on the store.
    AtStart,
    /// By a read while the daemon runs on the store (an accounting query, a job's payload):
    /// the daemon goes on, and the store is refused at its next start.
    WhileRunning,
}

/// How many of the problems SQLite finds are reported: the first ones say enough.
const REPORTED_PROBLEMS: u32 = 5;

/// Refuses the store on `conn` (at `path`) when SQLite's `quick_check` finds it damaged:
/// every page of every table and index is read and checked, without comparing the indexes'
/// contents with their tables' (which `integrity_check` adds, at several times the cost).
/// Nothing is written.
pub fn check_intact(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let p = path.display().to_string();
    let started = std::time::Instant::now();
    let mut stmt = conn
        .prepare(&format!("PRAGMA quick_check({REPORTED_PROBLEMS})"))
        .map_err(|e| StoreError::of(&p, e, Seen::AtStart))?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| StoreError::of(&p, e, Seen::AtStart))?;
    // Its cost grows with the store (it reads every page): the log says what it was.
    tracing::debug!(store = %p, ms = started.elapsed().as_millis() as u64, "job store checked");
    if rows.len() == 1 && rows[0] == "ok" {
        return Ok(());
    }
    let report = rows.iter().map(|r| r.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>();
    Err(StoreError::Damaged {
        path: p,
        report: format!("SQLite's quick_check: {}", report.join("; ")),
        seen: Seen::AtStart,
    })
}

/// The write-ahead log of the store at `path` (`slurmlet.db-wal`).
pub fn log_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    name.into()
}

/// Closes `conn`, a connection to a store that is refused, leaving the store's files as they
/// were found: SQLite folds the write-ahead log into the store when its last connection
/// closes, and removes it; a log that was there before the connection (a daemon killed with
/// changes not yet folded in) is left as it is instead. A log the connection made (reading a
/// store in WAL mode makes one, empty) is removed as usual.
pub fn close_as_found(conn: Connection, log_found: bool) {
    if log_found {
        let _ = conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
    }
    drop(conn);
}

/// Whether SQLite's error says the file is not a usable database.
pub fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt))
}

/// What to say of the store at `path`, damaged as SQLite's `report` says, found when `seen`
/// says: what is wrong, what the daemon does about it, and the ways back.
pub fn text(path: &str, report: &str, seen: Seen) -> String {
    let backup = backup_path(Path::new(path));
    let aside = format!("{path}, {path}-wal and {path}-shm");
    let way_back = if backup.exists() {
        format!(
            "A copy made when the daemon last started on it is {b}. To go back to it (jobs changed since are lost), move {aside} aside, then `cp {b} {path}`.",
            b = backup.display()
        )
    } else {
        format!("There is no backup copy ({} is made each time the daemon starts).", backup.display())
    };
    let what = match seen {
        Seen::AtStart => "the daemon will not start on it, so as not to lose its jobs, and left it as it is",
        Seen::WhileRunning => {
            "the daemon running on it cannot read all of it. Stop the daemon; it will not start on the store again as it is"
        }
    };
    format!(
        "job store {path} is damaged ({report}); {what}. {way_back} To start with an empty store instead, move {aside} aside."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_said_follows_when_the_damage_was_found() {
        let start = text("/s/slurmlet.db", "x", Seen::AtStart);
        assert!(
            start.starts_with("job store /s/slurmlet.db is damaged (x); the daemon will not start on it"),
            "{start}"
        );
        let running = text("/s/slurmlet.db", "x", Seen::WhileRunning);
        assert!(running.contains("the daemon running on it cannot read all of it. Stop the daemon"), "{running}");
        assert!(!running.contains("will not start on it,"), "{running}");
        for t in [start, running] {
            assert!(t.contains("There is no backup copy (/s/slurmlet.db.bak"), "{t}");
        }
    }

    /// A store with jobs and payloads over several pages, written through the daemon's own
    /// connection, its write-ahead log folded in and closed; the path.
    fn store_with_payloads(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("slurmlet.db");
        let conn = super::super::Store::connect(&path).unwrap();
        for id in 1..=40 {
            conn.execute(
                "INSERT INTO payloads (id, script, environment, argv) VALUES (?1, ?2, '[]', '[]')",
                rusqlite::params![id, "#!/bin/sh\necho hello\n".repeat(40)],
            )
            .unwrap();
        }
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
        drop(conn);
        path
    }

    /// Overwrites the start of the root page of `table` in the store at `path`.
    fn damage_table(path: &Path, table: &str) {
        use std::io::{Seek, SeekFrom, Write};
        let conn = Connection::open(path).unwrap();
        let page: u64 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap();
        let size: u64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        drop(conn);
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
        f.write_all(&[0xa5; 256]).unwrap();
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_damaged_page_the_start_would_not_read_is_found_and_the_store_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_with_payloads(dir.path());
        damage_table(&path, "payloads");
        let (bytes, files) = (std::fs::read(&path).unwrap(), names(dir.path()));
        let e = super::super::Store::open(&path).err().expect("a damaged store is refused");
        let text = e.to_string();
        assert!(matches!(e, StoreError::Damaged { seen: Seen::AtStart, .. }), "{text}");
        assert!(
            text.starts_with(&format!("job store {} is damaged (SQLite's quick_check: ", path.display())),
            "{text}"
        );
        assert!(text.contains("the daemon will not start on it"), "{text}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing is written");
        assert_eq!(names(dir.path()), files, "no file is left beside it");
    }

    #[test]
    fn a_write_ahead_log_found_beside_a_damaged_store_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_with_payloads(dir.path());
        damage_table(&path, "payloads");
        // A change not yet folded into the store, as a daemon killed with SIGKILL leaves it.
        let conn = Connection::open(&path).unwrap();
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).unwrap();
        conn.execute("INSERT INTO meta (key, value) VALUES ('next_job_id', 50)", []).unwrap();
        drop(conn);
        let log = log_path(&path);
        let (bytes, logged, files) = (std::fs::read(&path).unwrap(), std::fs::read(&log).unwrap(), names(dir.path()));
        assert!(!logged.is_empty() && files.contains(&"slurmlet.db-wal".to_string()), "{files:?}");
        let e = super::super::Store::open(&path).err().expect("a damaged store is refused");
        assert!(matches!(e, StoreError::Damaged { seen: Seen::AtStart, .. }), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the log is not folded into the store");
        assert_eq!(std::fs::read(&log).unwrap(), logged, "the log is as it was");
        assert_eq!(names(dir.path()), files);
    }

    #[test]
    fn damage_met_by_a_read_while_the_daemon_runs_is_told_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_with_payloads(dir.path());
        let reader = super::super::Store::open_reader(&path).unwrap();
        damage_table(&path, "payloads");
        let text = reader.payload(1).unwrap_err().to_string();
        assert!(text.contains("the daemon running on it cannot read all of it. Stop the daemon"), "{text}");
        assert!(!text.contains("will not start on it,"), "{text}");
    }

    #[test]
    fn an_intact_store_passes_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('a');").unwrap();
        check_intact(&conn, &path).unwrap();
    }
}
