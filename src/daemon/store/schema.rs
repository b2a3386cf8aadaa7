//! The job store's layout and its versions.
//!
//! A store records the version of its layout in SQLite's `PRAGMA user_version`. The daemon
//! brings an older store up to [`LATEST`] when it opens it, through [`MIGRATIONS`] (version
//! N to N + 1, in order), all in one transaction: a migration that fails leaves the store at
//! its old version, and the daemon does not start. A store of a newer version than this
//! build reads is refused, untouched. Before a store that already held jobs is migrated, a
//! copy of it is kept beside it ([`pre_migration_copy`]).
//!
//! Stores written before versions existed have `user_version` 0 and version 1's tables:
//! they are version 1, and are stamped so. A new, empty file gets every migration.

use crate::daemon::store::StoreError;
use rusqlite::{Connection, Transaction};
use std::path::{Path, PathBuf};

/// One step of the store's layout: from version `to - 1` to version `to`.
#[derive(Clone, Copy)]
pub struct Migration {
    /// The version the store is at once it is applied.
    pub to: u32,
    /// What it changes, for the log.
    pub what: &'static str,
    /// Applies it (inside the transaction that applies the others and stamps the version).
    pub apply: fn(&Transaction) -> rusqlite::Result<()>,
}

/// Every migration, in order: the store's latest version is the last one's `to`.
pub const MIGRATIONS: &[Migration] = &[
    Migration { to: 1, what: "jobs, payloads, steps, earlier runs and the id mark", apply: create_v1 },
    Migration { to: 2, what: "the GPU use of steps", apply: add_step_gpu_use },
    Migration { to: 3, what: "the CPU ids of jobs", apply: add_job_cpu_ids },
    Migration { to: 4, what: "the average memory of steps", apply: add_step_ave_rss },
    Migration { to: 5, what: "the GPU samples of the GPUs and of the jobs", apply: add_gpu_samples },
    Migration { to: 6, what: "the fair-share usage of each account and user", apply: super::usage::create_table },
];

/// The version of the layout this build writes and reads.
pub const LATEST: u32 = MIGRATIONS.len() as u32;

/// Version 1: the first layout. Every statement allows for the tables being there already,
/// as they are in stores written before versions existed.
fn create_v1(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
         CREATE TABLE IF NOT EXISTS jobs (
             id INTEGER PRIMARY KEY,
             state TEXT NOT NULL,
             end_time INTEGER NOT NULL DEFAULT 0,
             record TEXT NOT NULL
         );
         -- An index on state, which no query used, cost every commit a page.
         DROP INDEX IF EXISTS jobs_state;
         CREATE TABLE IF NOT EXISTS payloads (
             id INTEGER PRIMARY KEY,
             script TEXT NOT NULL,
             environment TEXT NOT NULL,
             argv TEXT NOT NULL
         );
         -- The srun steps of each job, for accounting (sacct).
         CREATE TABLE IF NOT EXISTS steps (
             job_id INTEGER NOT NULL,
             step_id INTEGER NOT NULL,
             name TEXT NOT NULL,
             state TEXT NOT NULL,
             start_time INTEGER NOT NULL,
             end_time INTEGER NOT NULL DEFAULT 0,
             exit_status INTEGER,
             ntasks INTEGER NOT NULL,
             cpus INTEGER NOT NULL,
             gpus INTEGER NOT NULL,
             mem_mb INTEGER NOT NULL,
             time_limit INTEGER,
             cancelled_by INTEGER,
             user_usec INTEGER,
             sys_usec INTEGER,
             max_rss_kb INTEGER,
             PRIMARY KEY (job_id, step_id)
         ) WITHOUT ROWID;
         -- The earlier runs of requeued jobs, as each ended (sacct --duplicates).
         CREATE TABLE IF NOT EXISTS runs (
             job_id INTEGER NOT NULL,
             restart INTEGER NOT NULL,
             record TEXT NOT NULL,
             PRIMARY KEY (job_id, restart)
         ) WITHOUT ROWID;",
    )
}

/// Version 2: each step's GPU use (bytes and percent; NULL where none was seen).
fn add_step_gpu_use(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE steps ADD COLUMN gpu_mem_max INTEGER;
         ALTER TABLE steps ADD COLUMN gpu_mem_ave INTEGER;
         ALTER TABLE steps ADD COLUMN gpu_util_max INTEGER;
         ALTER TABLE steps ADD COLUMN gpu_util_ave INTEGER;",
    )
}

/// Version 3: the ids of the node's CPUs each job was given, a JSON list (NULL: none, as
/// for every job stored before).
fn add_job_cpu_ids(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch("ALTER TABLE jobs ADD COLUMN cpu_ids TEXT;")
}

/// Version 4: each step's average resident memory, KiB (NULL: not measured, as for every
/// step stored before).
fn add_step_ave_rss(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch("ALTER TABLE steps ADD COLUMN ave_rss_kb INTEGER;")
}

/// Version 5: the GPU samples the daemon keeps (`gpu_history_days`): one row per GPU and
/// one per job using a GPU for each step of `gpu_history_resolution` seconds, the means of
/// the looks within it (bytes, percent). The time index lets the hourly pruning of old job
/// rows go without a walk over the table.
fn add_gpu_samples(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE gpu_samples (
             time INTEGER NOT NULL,
             gpu INTEGER NOT NULL,
             memory_used INTEGER NOT NULL,
             utilization INTEGER NOT NULL,
             PRIMARY KEY (time, gpu)
         ) WITHOUT ROWID;
         CREATE TABLE job_gpu_samples (
             job_id INTEGER NOT NULL,
             time INTEGER NOT NULL,
             memory_used INTEGER NOT NULL,
             utilization INTEGER NOT NULL,
             PRIMARY KEY (job_id, time)
         ) WITHOUT ROWID;
         CREATE INDEX job_gpu_samples_time ON job_gpu_samples (time);",
    )
}

/// Where the copy of a store at version `version` is kept before it is migrated:
/// `slurmlet.db.v1.bak` (the daemon's regular copy, `slurmlet.db.bak`, is rewritten at each
/// start, so it would soon hold the migrated store).
pub fn pre_migration_copy(path: &Path, version: u32) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".v{version}.bak"));
    name.into()
}

/// The version the store on `conn` is at: its `user_version`, or 1 for a store with tables
/// and no version (written before versions existed). 0: an empty store.
pub fn version(conn: &Connection) -> rusqlite::Result<u32> {
    let stamped: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if stamped != 0 {
        return Ok(stamped);
    }
    let tables: i64 = conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))?;
    Ok(if tables > 0 { 1 } else { 0 })
}

/// The refusal of a store at `found`, newer than the `latest` this build reads, or `Ok`.
pub fn check_not_newer(path: &Path, found: u32, latest: u32) -> Result<(), StoreError> {
    if found > latest {
        return Err(StoreError::TooNew { path: path.display().to_string(), found, latest });
    }
    Ok(())
}

/// Brings the store at `path` (open on `conn`) to [`LATEST`].
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    migrate_with(conn, path, MIGRATIONS)
}

/// Brings the store at `path` (open on `conn`) to the last of `migrations`, all in one
/// transaction, after keeping a copy of a store that held jobs; refuses a newer store.
pub fn migrate_with(conn: &mut Connection, path: &Path, migrations: &[Migration]) -> Result<(), StoreError> {
    let p = path.display().to_string();
    let sql = |source| StoreError::of(&p, source, crate::daemon::store::Seen::AtStart);
    let latest = migrations.len() as u32;
    let stamped: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
    let found = version(conn).map_err(sql)?;
    check_not_newer(path, found, latest)?;
    if stamped == latest {
        return Ok(());
    }
    if found >= 1 && found < latest {
        keep_copy(conn, path, found)?;
    }
    // Immediate: no other connection writes between reading the version and stamping it.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
    // A store without a stamp but with tables is version 1 already: version 1's statements
    // allow for that, and fill in any of its tables an older store lacks.
    for m in migrations.iter().filter(|m| m.to > stamped) {
        (m.apply)(&tx).map_err(|source| StoreError::Migration { path: p.clone(), to: m.to, what: m.what, source })?;
    }
    tx.pragma_update(None, "user_version", latest).map_err(sql)?;
    tx.commit().map_err(sql)?;
    if found >= 1 && found < latest {
        tracing::info!(store = %p, from = found, to = latest, "job store migrated");
    }
    Ok(())
}

/// Writes a copy of the store at `path`, at version `version`, to [`pre_migration_copy`].
fn keep_copy(conn: &Connection, path: &Path, version: u32) -> Result<(), StoreError> {
    crate::daemon::store::copies::copy_to(conn, path, &pre_migration_copy(path, version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    fn add_note(tx: &Transaction) -> rusqlite::Result<()> {
        tx.execute_batch("ALTER TABLE jobs ADD COLUMN note TEXT NOT NULL DEFAULT ''")
    }

    fn fail(tx: &Transaction) -> rusqlite::Result<()> {
        tx.execute_batch("CREATE TABLE half_done (x); SELECT * FROM no_such_table;")
    }

    const WITH_NOTE: &[Migration] = &[MIGRATIONS[0], Migration { to: 2, what: "a note on each job", apply: add_note }];
    const FAILING: &[Migration] = &[
        MIGRATIONS[0],
        Migration { to: 2, what: "a note on each job", apply: add_note },
        Migration { to: 3, what: "a step that fails", apply: fail },
    ];

    fn stamp(conn: &Connection) -> u32 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    }

    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        let mut s = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
        s.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    /// A store as today's layout writes it, unstamped (as before versions), with one job.
    fn unversioned_store(dir: &Path) -> (PathBuf, Connection) {
        let path = dir.join("slurmlet.db");
        let mut conn = Connection::open(&path).unwrap();
        let tx = conn.transaction().unwrap();
        create_v1(&tx).unwrap();
        tx.commit().unwrap();
        conn.execute("INSERT INTO jobs (id, state, record) VALUES (7, 'PENDING', '{\"id\":7}')", []).unwrap();
        assert_eq!(stamp(&conn), 0);
        (path, conn)
    }

    #[test]
    fn the_migrations_are_numbered_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.to as usize, i + 1, "{}", m.what);
        }
        assert_eq!(LATEST, 6);
    }

    #[test]
    fn version_5_adds_the_gpu_samples() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        migrate_with(&mut conn, &path, &MIGRATIONS[..4]).unwrap();
        assert!(columns(&conn, "gpu_samples").is_empty());
        migrate_with(&mut conn, &path, &MIGRATIONS[..5]).unwrap();
        assert_eq!(stamp(&conn), 5);
        assert_eq!(columns(&conn, "gpu_samples"), ["time", "gpu", "memory_used", "utilization"]);
        assert_eq!(columns(&conn, "job_gpu_samples"), ["job_id", "time", "memory_used", "utilization"]);
        let jobs: i64 = conn.query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0)).unwrap();
        assert_eq!(jobs, 1, "the jobs stay");
        let copy = Connection::open(pre_migration_copy(&path, 4)).unwrap();
        assert_eq!(stamp(&copy), 4, "the store as it was is kept");
    }

    #[test]
    fn version_6_adds_the_usage_of_associations() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        migrate_with(&mut conn, &path, &MIGRATIONS[..5]).unwrap();
        assert!(columns(&conn, "usage").is_empty());
        migrate(&mut conn, &path).unwrap();
        assert_eq!(stamp(&conn), 6);
        assert_eq!(columns(&conn, "usage"), ["account", "uid", "usage", "as_of"]);
        let kept: Option<i64> =
            conn.query_row("SELECT value FROM meta WHERE key = 'usage_reset_at'", [], |r| r.get(0)).optional().unwrap();
        assert_eq!(kept, None, "a migrated store keeps no usage yet: the daemon rebuilds it from its jobs");
    }

    #[test]
    fn version_2_gives_steps_their_gpu_use() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        assert!(!columns(&conn, "steps").contains(&"gpu_mem_max".to_string()));
        migrate(&mut conn, &path).unwrap();
        let steps = columns(&conn, "steps");
        for column in ["gpu_mem_max", "gpu_mem_ave", "gpu_util_max", "gpu_util_ave"] {
            assert!(steps.contains(&column.to_string()), "{column} in {steps:?}");
        }
    }

    #[test]
    fn version_4_gives_steps_their_average_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        migrate_with(&mut conn, &path, &MIGRATIONS[..3]).unwrap();
        assert!(!columns(&conn, "steps").contains(&"ave_rss_kb".to_string()));
        migrate(&mut conn, &path).unwrap();
        assert_eq!(stamp(&conn), LATEST);
        assert!(columns(&conn, "steps").contains(&"ave_rss_kb".to_string()));
        let copy = Connection::open(pre_migration_copy(&path, 3)).unwrap();
        assert_eq!(stamp(&copy), 3, "the store as it was is kept");
    }

    #[test]
    fn version_3_gives_jobs_their_cpu_ids() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        migrate_with(&mut conn, &path, &MIGRATIONS[..2]).unwrap();
        assert_eq!(stamp(&conn), 2);
        assert!(!columns(&conn, "jobs").contains(&"cpu_ids".to_string()));
        migrate_with(&mut conn, &path, &MIGRATIONS[..3]).unwrap();
        assert_eq!(stamp(&conn), 3);
        assert!(columns(&conn, "jobs").contains(&"cpu_ids".to_string()));
        let ids: Option<String> = conn.query_row("SELECT cpu_ids FROM jobs WHERE id = 7", [], |r| r.get(0)).unwrap();
        assert_eq!(ids, None, "a job stored before holds none");
        // The store as it was is kept: version 2, without the column.
        let copy = Connection::open(pre_migration_copy(&path, 2)).unwrap();
        assert_eq!(stamp(&copy), 2);
        assert!(!columns(&copy, "jobs").contains(&"cpu_ids".to_string()));
    }

    #[test]
    fn a_new_store_gets_the_latest_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        let mut conn = Connection::open(&path).unwrap();
        assert_eq!(version(&conn).unwrap(), 0);
        migrate_with(&mut conn, &path, WITH_NOTE).unwrap();
        assert_eq!(stamp(&conn), 2);
        assert!(columns(&conn, "jobs").contains(&"note".to_string()));
        // Nothing to copy: it held no jobs.
        assert!(!pre_migration_copy(&path, 0).exists());
    }

    #[test]
    fn an_unversioned_store_is_version_1_and_is_stamped() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        assert_eq!(version(&conn).unwrap(), 1);
        migrate(&mut conn, &path).unwrap();
        assert_eq!(stamp(&conn), LATEST);
        let jobs: i64 = conn.query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0)).unwrap();
        assert_eq!(jobs, 1);
        // Opening it again changes nothing.
        migrate(&mut conn, &path).unwrap();
        assert_eq!(stamp(&conn), LATEST);
    }

    #[test]
    fn an_older_store_is_copied_then_migrated_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        migrate_with(&mut conn, &path, WITH_NOTE).unwrap();
        assert_eq!(stamp(&conn), 2);
        let note: String = conn.query_row("SELECT note FROM jobs WHERE id = 7", [], |r| r.get(0)).unwrap();
        assert_eq!(note, "");
        // The copy is the store as it was: version 1, no note.
        let copy = Connection::open(pre_migration_copy(&path, 1)).unwrap();
        assert_eq!(version(&copy).unwrap(), 1);
        assert!(!columns(&copy, "jobs").contains(&"note".to_string()));
    }

    #[test]
    fn a_failing_migration_leaves_the_store_at_its_old_version() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut conn) = unversioned_store(dir.path());
        let e = migrate_with(&mut conn, &path, FAILING).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, StoreError::Migration { to: 3, .. }), "{text}");
        assert!(text.contains("to version 3 (a step that fails)"), "{text}");
        assert!(text.contains("no such table: no_such_table"), "{text}");
        assert!(text.contains("still at its earlier version"), "{text}");
        // Nothing of migrations 2 and 3 stayed, nor the stamp.
        assert_eq!(stamp(&conn), 0);
        assert_eq!(version(&conn).unwrap(), 1);
        assert!(!columns(&conn, "jobs").contains(&"note".to_string()));
        assert!(columns(&conn, "half_done").is_empty());
        // Today's list still opens it.
        migrate(&mut conn, &path).unwrap();
        assert_eq!(stamp(&conn), LATEST);
    }

    #[test]
    fn a_newer_store_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let (path, conn) = unversioned_store(dir.path());
        conn.pragma_update(None, "user_version", 3).unwrap();
        drop(conn);
        let before = std::fs::read(&path).unwrap();
        let mut conn = Connection::open(&path).unwrap();
        let e = migrate_with(&mut conn, &path, WITH_NOTE).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&format!("{} has schema version 3;", path.display())), "{text}");
        assert!(text.contains("reads up to version 2"), "{text}");
        drop(conn);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
