//! The durable job store: one SQLite file in WAL mode.
//!
//! Every state change is written here before anyone is told about it: a submit is committed
//! (and fsynced) before the client hears its job id. Reads use [`Store`]; writes go through
//! the group-committing [`super::writer::Writer`].

use super::job::Job;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;
use thiserror::Error;

/// A store operation that failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("job store {path}: {source}")]
    Sql {
        /// The database file.
        path: String,
        /// The error.
        source: rusqlite::Error,
    },
    /// The file is not a readable SQLite database: the daemon refuses to start on it (it
    /// would otherwise lose every job in it).
    #[error("{}", damaged_text(.path, .source))]
    Damaged {
        /// The database file.
        path: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The backup copy could not be put in place.
    #[error("job store backup {path}: {source}")]
    Backup {
        /// The backup file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The writer thread could not be started.
    #[error("job store: cannot start the writer thread: {0}")]
    Thread(String),
    /// A stored record no longer parses.
    #[error("job store: record of job {id} is unreadable: {source}")]
    Record {
        /// Job id.
        id: u32,
        /// Why.
        source: serde_json::Error,
    },
}

impl StoreError {
    /// SQLite's error `source` on the store at `path`: [`StoreError::Damaged`] when it says
    /// the file is not a usable database.
    fn of(path: &str, source: rusqlite::Error) -> StoreError {
        if is_damage(&source) {
            StoreError::Damaged { path: path.to_string(), source }
        } else {
            StoreError::Sql { path: path.to_string(), source }
        }
    }
}

/// What to say of a damaged store: what is wrong, and the ways back.
fn damaged_text(path: &str, source: &rusqlite::Error) -> String {
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
    format!(
        "job store {path} is damaged ({source}); the daemon will not start on it, so as not to lose its jobs. {way_back} To start with an empty store instead, move {aside} aside."
    )
}

/// Whether SQLite's error says the file is not a usable database.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt))
}

/// Where a copy of the store at `path` is kept: `slurmlet.db.bak`.
pub fn backup_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".bak");
    name.into()
}

/// Writes a consistent copy of the store at `path` to [`backup_path`] (into a temporary
/// file, then renamed over the old copy, so that a crash midway leaves the old copy whole).
pub fn write_backup(path: &Path) -> Result<(), StoreError> {
    let p = path.display().to_string();
    let wrap = |source| StoreError::Sql { path: p.clone(), source };
    let backup = backup_path(path);
    let mut tmp = backup.clone().into_os_string();
    tmp.push(".tmp");
    let _ = std::fs::remove_file(&tmp);
    let conn = Connection::open(path).map_err(wrap)?;
    conn.execute("VACUUM INTO ?1", params![tmp.to_string_lossy()]).map_err(wrap)?;
    std::fs::rename(&tmp, &backup)
        .map_err(|source| StoreError::Backup { path: backup.display().to_string(), source })?;
    Ok(())
}

/// The script and environment of a job, kept out of memory until launch.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    /// The batch script.
    pub script: String,
    /// `NAME=value` entries.
    pub environment: Vec<String>,
    /// Script arguments (`argv[1..]`).
    pub argv: Vec<String>,
}

/// The SQLite store.
pub struct Store {
    conn: Connection,
    path: String,
}

impl Store {
    /// Opens (creating if needed) the store at `path`, for reading; changes go through a
    /// [`super::writer::Writer`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Ok(Store { conn: Store::connect(path)?, path: path.display().to_string() })
    }

    /// A connection to the store at `path`, creating its tables if needed.
    pub fn connect(path: &Path) -> Result<Connection, StoreError> {
        let p = path.display().to_string();
        let wrap = |source| StoreError::of(&p, source);
        let conn = Connection::open(path).map_err(wrap)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;
             PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
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
             );",
        )
        .map_err(wrap)?;
        Ok(conn)
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::of(&self.path, source)
    }

    /// The next job id to hand out (ids are never reused, even across restarts): past the
    /// highest job in the store, whose rows are never deleted. The `meta` table's
    /// `next_job_id` holds a high-water mark that whatever comes to delete job rows must
    /// raise first; stores written before commits stopped updating it still have theirs.
    pub fn next_job_id(&self) -> Result<u32, StoreError> {
        let stored: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'next_job_id'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        let max: Option<i64> =
            self.conn.query_row("SELECT MAX(id) FROM jobs", [], |r| r.get(0)).map_err(|e| self.sql(e))?;
        Ok(stored.unwrap_or(1).max(max.unwrap_or(0) + 1) as u32)
    }

    /// Loads a job's script, environment and arguments.
    pub fn payload(&self, id: u32) -> Result<Payload, StoreError> {
        self.conn
            .query_row("SELECT script, environment, argv FROM payloads WHERE id = ?1", params![id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
            })
            .map(|(script, env, argv)| Payload {
                script,
                environment: serde_json::from_str(&env).unwrap_or_default(),
                argv: serde_json::from_str(&argv).unwrap_or_default(),
            })
            .map_err(|e| self.sql(e))
    }

    /// Loads jobs that are active, or that ended at or after `ended_since`.
    pub fn load_recent(&self, ended_since: u64) -> Result<Vec<Job>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, record FROM jobs WHERE state IN ('PENDING','RUNNING','COMPLETING') OR end_time >= ?1 ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![ended_since as i64], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        let mut jobs = Vec::new();
        for row in rows {
            let (id, record) = row.map_err(|e| self.sql(e))?;
            jobs.push(serde_json::from_str(&record).map_err(|source| StoreError::Record { id, source })?);
        }
        Ok(jobs)
    }
}
