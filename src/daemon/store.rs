//! The durable job store: one SQLite file in WAL mode.
//!
//! Every state change is written here before anyone is told about it: a submit is committed
//! (and fsynced) before the client hears its job id.

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
    /// A stored record no longer parses.
    #[error("job store: record of job {id} is unreadable: {source}")]
    Record {
        /// Job id.
        id: u32,
        /// Why.
        source: serde_json::Error,
    },
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
    /// Opens (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let wrap = |source| StoreError::Sql { path: p.clone(), source };
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
             CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
             CREATE TABLE IF NOT EXISTS payloads (
                 id INTEGER PRIMARY KEY,
                 script TEXT NOT NULL,
                 environment TEXT NOT NULL,
                 argv TEXT NOT NULL
             );",
        )
        .map_err(wrap)?;
        Ok(Store { conn, path: p })
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql { path: self.path.clone(), source }
    }

    /// The next job id to hand out (ids are never reused, even across restarts).
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

    /// Inserts a new job with its payload, and advances the id counter, in one transaction.
    pub fn insert(&mut self, job: &Job, payload: &Payload) -> Result<(), StoreError> {
        let record = serde_json::to_string(job).expect("jobs serialize");
        let path = self.path.clone();
        let wrap = |source| StoreError::Sql { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(wrap)?;
        let res = (|| {
            tx.execute(
                "INSERT INTO jobs (id, state, end_time, record) VALUES (?1, ?2, ?3, ?4)",
                params![job.id, job.state().name(), job.end_time as i64, record],
            )?;
            tx.execute(
                "INSERT INTO payloads (id, script, environment, argv) VALUES (?1, ?2, ?3, ?4)",
                params![
                    job.id,
                    payload.script,
                    serde_json::to_string(&payload.environment).expect("strings serialize"),
                    serde_json::to_string(&payload.argv).expect("strings serialize"),
                ],
            )?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('next_job_id', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![job.id as i64 + 1],
            )?;
            Ok(())
        })();
        res.map_err(wrap)?;
        tx.commit().map_err(wrap)
    }

    /// Writes a job's current record.
    pub fn update(&self, job: &Job) -> Result<(), StoreError> {
        let record = serde_json::to_string(job).expect("jobs serialize");
        self.conn
            .prepare_cached("UPDATE jobs SET state = ?2, end_time = ?3, record = ?4 WHERE id = ?1")
            .and_then(|mut s| s.execute(params![job.id, job.state().name(), job.end_time as i64, record]))
            .map_err(|e| self.sql(e))?;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::job::JobState;

    #[test]
    fn ids_are_monotonic_and_records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.next_job_id().unwrap(), 1);
        let mut job = Job { id: 1, name: "a".into(), state: Some(JobState::Pending), ..Default::default() };
        store.insert(&job, &Payload { script: "#!/bin/sh\n".into(), ..Default::default() }).unwrap();
        job.state = Some(JobState::Completed);
        job.end_time = 10;
        store.update(&job).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.next_job_id().unwrap(), 2);
        let jobs = store.load_recent(5).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].state(), JobState::Completed);
        assert!(store.load_recent(11).unwrap().is_empty());
        assert_eq!(store.payload(1).unwrap().script, "#!/bin/sh\n");
    }
}
