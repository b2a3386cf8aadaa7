//! The durable job store: one SQLite file in WAL mode.
//!
//! Every state change is written here before anyone is told about it: a submit is committed
//! (and fsynced) before the client hears its job id. Reads use [`Store`]; writes go through
//! the group-committing [`crate::daemon::store::writer::Writer`].
//!
//! The store's layout and its versions are in [`schema`]; its writer in [`writer`]; the GPU
//! samples it keeps in [`gpu_samples`]; the fair-share usage in [`usage`]; the copies kept beside it in [`copies`]; what is done
//! with a damaged one in [`damage`].

pub mod copies;
pub mod damage;
pub mod durable;
pub mod failed_gpus;
pub mod gpu_samples;
pub mod reservations;
pub mod schema;
pub mod usage;
pub mod writer;

pub use copies::{backup_path, write_backup};
pub use damage::Seen;

use crate::api::acct::{GpuUse, Usage};
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::step_record::StepRecord;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The stored states of jobs that have not ended, as an SQL list.
pub const ACTIVE_STATES: &str = "('PENDING','RUNNING','SUSPENDED','COMPLETING')";

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
    /// The file is not a readable SQLite database, or SQLite's check finds it damaged: the
    /// daemon refuses to start on it (it would otherwise lose jobs in it), and leaves it as
    /// it is (see [`damage`]).
    #[error("{}", damage::text(.path, .report, *.seen))]
    Damaged {
        /// The database file.
        path: String,
        /// What SQLite reported.
        report: String,
        /// When it was found.
        seen: Seen,
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
    /// The store was written by a newer slurmlet, whose layout this one does not know: the
    /// daemon refuses to start on it, and leaves it as it is.
    #[error(
        "the job store {path} has schema version {found}; this slurmletd (slurmlet {version}) reads up to version {latest}: upgrade slurmlet, or move the store away (it was left as it is)",
        version = env!("CARGO_PKG_VERSION")
    )]
    TooNew {
        /// The database file.
        path: String,
        /// Its version.
        found: u32,
        /// The latest version this build reads.
        latest: u32,
    },
    /// The store is at an older version than this build reads, and only the daemon migrates
    /// it (when it starts).
    #[error(
        "the job store {path} has schema version {found}; this slurmlet reads version {latest}, to which the daemon brings it when it starts"
    )]
    NotMigrated {
        /// The database file.
        path: String,
        /// Its version.
        found: u32,
        /// The version this build reads.
        latest: u32,
    },
    /// A migration failed: the store is still at the version it was, and the daemon does not
    /// start on it.
    #[error(
        "the job store {path} could not be migrated to version {to} ({what}): {source}; it is still at its earlier version, unchanged, and the daemon will not start on it"
    )]
    Migration {
        /// The database file.
        path: String,
        /// The version the failed migration leads to.
        to: u32,
        /// What that migration changes.
        what: &'static str,
        /// SQLite's error.
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
    /// A job's stored CPU ids (`jobs.cpu_ids`) no longer parse.
    #[error("job store: the CPU ids of job {id} are unreadable: {source}")]
    CpuIds {
        /// Job id.
        id: u32,
        /// Why.
        source: serde_json::Error,
    },
}

/// A job's CPU ids as the `cpu_ids` column of `jobs` keeps them: a JSON list (`[0,1,4]`),
/// NULL when it holds none.
pub(super) fn cpu_ids_text(ids: &[u32]) -> Option<String> {
    (!ids.is_empty()).then(|| serde_json::to_string(ids).expect("ids serialize"))
}

/// Job `id` from its stored record and CPU ids (the `record` and `cpu_ids` columns).
fn stored_job(id: u32, record: &str, cpu_ids: Option<&str>) -> Result<Job, StoreError> {
    let mut job: Job = serde_json::from_str(record).map_err(|source| StoreError::Record { id, source })?;
    if let Some(text) = cpu_ids {
        job.cpu_ids = serde_json::from_str(text).map_err(|source| StoreError::CpuIds { id, source })?;
    }
    Ok(job)
}

impl StoreError {
    /// SQLite's error `source` on the store at `path`, met when `seen` says:
    /// [`StoreError::Damaged`] when it says the file is not a usable database.
    pub(super) fn of(path: &str, source: rusqlite::Error, seen: Seen) -> StoreError {
        if damage::is_damage(&source) {
            StoreError::Damaged { path: path.to_string(), report: source.to_string(), seen }
        } else {
            StoreError::Sql { path: path.to_string(), source }
        }
    }

    /// The same error, met at the daemon's start (the reads that load the jobs): damage then
    /// means the daemon does not start.
    pub fn found_at_start(self) -> StoreError {
        match self {
            StoreError::Damaged { path, report, .. } => StoreError::Damaged { path, report, seen: Seen::AtStart },
            other => other,
        }
    }
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
    /// Opens (creating if needed) the store at `path` at the daemon's start, for reading;
    /// changes go through a [`crate::daemon::store::writer::Writer`]. A store of a newer
    /// layout, or one SQLite's check finds damaged ([`damage::check_intact`]), is refused
    /// before anything is written to it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Ok(Store { conn: Store::connect_with(path, true)?, path: path.display().to_string() })
    }

    /// Where this store is: its file, or the URI of a store in memory.
    pub fn path(&self) -> &Path {
        Path::new(&self.path)
    }

    /// The path of a new store that lives in memory only, shared by the connections that
    /// open it (the reader's and the writer's) and gone when the last of them closes: a
    /// SQLite URI naming a memory database of its own.
    pub fn memory_path() -> PathBuf {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PathBuf::from(format!("file:slurmlet-{}-{n}?mode=memory&cache=shared", std::process::id()))
    }

    /// A connection to the store at `path`, its layout brought to [`schema::LATEST`] (its
    /// tables created in a new file); a store of a newer layout is refused. The store is
    /// taken as intact: the daemon has checked it in [`Store::open`].
    pub fn connect(path: &Path) -> Result<Connection, StoreError> {
        Store::connect_with(path, false)
    }

    /// [`Store::connect`], checking first that the store is intact when `check` says so.
    fn connect_with(path: &Path, check: bool) -> Result<Connection, StoreError> {
        let p = path.display().to_string();
        let wrap = |source| StoreError::of(&p, source, Seen::AtStart);
        let log_found = damage::log_path(path).exists();
        let mut conn = Connection::open(path).map_err(wrap)?;
        // Before anything writes to it (even the journal mode): a newer or damaged store
        // stays as it is, its write-ahead log too.
        let readable = conn
            .execute_batch("PRAGMA busy_timeout=5000;")
            .map_err(wrap)
            .and_then(|()| schema::version(&conn).map_err(wrap))
            .and_then(|found| schema::check_not_newer(path, found, schema::LATEST))
            .and_then(|()| if check { damage::check_intact(&conn, path) } else { Ok(()) });
        if let Err(refused) = readable {
            damage::close_as_found(conn, log_found);
            return Err(refused);
        }
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;",
        )
        .map_err(wrap)?;
        schema::migrate(&mut conn, path)?;
        Ok(conn)
    }

    /// Opens the store at `path` for reading only (accounting queries, beside the daemon's
    /// own connections). It never migrates: the daemon has brought the store to
    /// [`schema::LATEST`] before it reads; a store at another version is refused
    /// ([`StoreError::TooNew`], [`StoreError::NotMigrated`]) rather than half read.
    pub fn open_reader(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let wrap = |e| StoreError::of(&p, e, Seen::WhileRunning);
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(wrap)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(wrap)?;
        let found = schema::version(&conn).map_err(wrap)?;
        schema::check_not_newer(path, found, schema::LATEST)?;
        if found < schema::LATEST {
            return Err(StoreError::NotMigrated { path: p, found, latest: schema::LATEST });
        }
        Ok(Store { conn, path: p })
    }

    /// The error of a read: damage found by one is found while the daemon runs (the reads
    /// of its start say otherwise, [`StoreError::found_at_start`]).
    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::of(&self.path, source, Seen::WhileRunning)
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
        self.jobs_where(&format!("state IN {ACTIVE_STATES} OR end_time >= ?1"), [ended_since as i64], |_| true)
    }

    /// The jobs that are active or ended at or after `ended_since` (every job: `None`) and
    /// that `wanted` keeps (by id), for accounting.
    pub fn history(&self, ended_since: Option<u64>, wanted: impl FnMut(u32) -> bool) -> Result<Vec<Job>, StoreError> {
        match ended_since {
            Some(t) => self.jobs_where("end_time >= ?1 OR end_time = 0", [t as i64], wanted),
            None => self.jobs_where("?1 = 0", [0i64], wanted),
        }
    }

    /// The jobs whose ids are `ids` (those in the store).
    pub fn jobs_by_id(&self, ids: &[u32]) -> Result<Vec<Job>, StoreError> {
        let mut jobs = Vec::new();
        let mut stmt =
            self.conn.prepare_cached("SELECT record, cpu_ids FROM jobs WHERE id = ?1").map_err(|e| self.sql(e))?;
        for &id in ids {
            let row: Option<(String, Option<String>)> =
                stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))).optional().map_err(|e| self.sql(e))?;
            if let Some((record, cpu_ids)) = row {
                jobs.push(stored_job(id, &record, cpu_ids.as_deref())?);
            }
        }
        Ok(jobs)
    }

    /// The jobs matching the SQL condition `cond` (with parameter `arg`) whose ids `wanted`
    /// keeps, in id order; the records of the others are never parsed.
    fn jobs_where(
        &self,
        cond: &str,
        arg: [i64; 1],
        mut wanted: impl FnMut(u32) -> bool,
    ) -> Result<Vec<Job>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT id, record, cpu_ids FROM jobs WHERE {cond} ORDER BY id"))
            .map_err(|e| self.sql(e))?;
        let mut rows = stmt.query(arg).map_err(|e| self.sql(e))?;
        let mut jobs = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.sql(e))? {
            let id: u32 = row.get(0).map_err(|e| self.sql(e))?;
            if !wanted(id) {
                continue;
            }
            let record: String = row.get(1).map_err(|e| self.sql(e))?;
            let cpu_ids: Option<String> = row.get(2).map_err(|e| self.sql(e))?;
            jobs.push(stored_job(id, &record, cpu_ids.as_deref())?);
        }
        Ok(jobs)
    }

    /// The earlier runs of requeued job `job`, first run first, each as it ended.
    pub fn runs(&self, job: u32) -> Result<Vec<Job>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT record FROM runs WHERE job_id = ?1 ORDER BY restart")
            .map_err(|e| self.sql(e))?;
        let records: Vec<String> =
            stmt.query_map([job], |r| r.get(0)).and_then(Iterator::collect).map_err(|e| self.sql(e))?;
        records
            .iter()
            .map(|r| serde_json::from_str(r).map_err(|source| StoreError::Record { id: job, source }))
            .collect()
    }

    /// Whether step `step` of job `job` is recorded.
    pub fn has_step(&self, job: u32, step: u32) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached("SELECT 1 FROM steps WHERE job_id = ?1 AND step_id = ?2")
            .and_then(|mut s| s.exists(params![job, step]))
            .map_err(|e| self.sql(e))
    }

    /// The recorded steps of job `job`, by step id.
    pub fn steps(&self, job: u32) -> Result<Vec<StepRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT step_id, name, state, start_time, end_time, exit_status, ntasks, cpus, gpus, mem_mb,
                        time_limit, cancelled_by, user_usec, sys_usec, max_rss_kb,
                        gpu_mem_max, gpu_mem_ave, gpu_util_max, gpu_util_ave, ave_rss_kb
                 FROM steps WHERE job_id = ?1 ORDER BY step_id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([job], |r| {
                let usage =
                    match (r.get::<_, Option<i64>>(12)?, r.get::<_, Option<i64>>(13)?, r.get::<_, Option<i64>>(14)?) {
                        (Some(u), Some(s), Some(m)) => Some(Usage {
                            user_usec: u as u64,
                            sys_usec: s as u64,
                            max_rss_kb: m as u64,
                            ave_rss_kb: r.get::<_, Option<i64>>(19)?.unwrap_or(0) as u64,
                        }),
                        _ => None,
                    };
                let gpu_use = match (
                    r.get::<_, Option<i64>>(15)?,
                    r.get::<_, Option<i64>>(16)?,
                    r.get::<_, Option<i64>>(17)?,
                    r.get::<_, Option<i64>>(18)?,
                ) {
                    (Some(mem_max), Some(mem_ave), Some(util_max), Some(util_ave)) => Some(GpuUse {
                        mem_max: mem_max as u64,
                        mem_ave: mem_ave as u64,
                        util_max: util_max as u32,
                        util_ave: util_ave as u32,
                    }),
                    _ => None,
                };
                Ok(StepRecord {
                    job,
                    step: r.get(0)?,
                    name: r.get(1)?,
                    state: JobState::from_name(&r.get::<_, String>(2)?).unwrap_or(JobState::Failed),
                    start: r.get::<_, i64>(3)? as u64,
                    end: r.get::<_, i64>(4)? as u64,
                    exit_status: r.get(5)?,
                    ntasks: r.get(6)?,
                    cpus: r.get(7)?,
                    gpus: r.get(8)?,
                    mem_mb: r.get::<_, i64>(9)? as u64,
                    time_limit: r.get(10)?,
                    cancelled_by: r.get(11)?,
                    usage,
                    gpu_use,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.sql(e))
    }
}

/// Replaces the document kept in `meta` under `key`.
fn write_meta(tx: &rusqlite::Transaction, key: &str, text: &str) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?
        .execute(rusqlite::params![key, text])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::Resources;
    use crate::stepd::WarnSignal;

    /// A record as version 1 stored it (job 3 of `tests/fixtures/stores/v1-2026-11-25.db`).
    const V1_RECORD: &str = r#"{"id":3,"name":"requeued","uid":0,"gid":0,"partition":"gpu","state":"COMPLETED","reason":"None","priority":1,"held":false,"submit_time":1795643446,"begin_time":0,"start_time":1795643446,"end_time":1795643446,"time_limit":null,"req":{"cpus":1,"mem_mb":0,"gpus":0},"ntasks":1,"cpus_per_task":1,"cpus_per_task_set":false,"mem_per_cpu":null,"tres_per_node":"","tres_per_job":"","gpu_ids":[],"stdout":"rq.out","stderr":"","stdin":"","append":true,"cwd":"/tmp/tmp.et2doxyXfn/work","command":"","comment":"","wckey":"","account":"default","qos":"","nice":0,"warn_signal":{"signal":10,"seconds":60,"batch_only":true},"submit_host":"vm","wait_status":0,"end_cause":"exited","cancelled_by":null,"stepd_pid":null,"interactive":false,"reason_prev":"None","batch_usage":{"user_usec":1025,"sys_usec":0,"max_rss_kb":2140},"array":{"job_id":3,"task_id":0,"count":1,"min":0,"max":0,"step":1,"max_running":0},"dependency":"","kill_on_invalid_dep":false,"requeue":true,"restarts":1,"requeue_on_end":false,"suspend_time":0,"suspended_secs":0,"pre_sus_secs":0}"#;

    /// `V1_RECORD` as a store written before some of its fields existed has it: those
    /// fields, and some of the structs' it holds, are missing.
    fn record_without_later_fields() -> String {
        let mut v: serde_json::Value = serde_json::from_str(V1_RECORD).unwrap();
        let o = v.as_object_mut().unwrap();
        for field in ["restarts", "requeue", "suspended_secs", "batch_usage", "account"] {
            o.remove(field).unwrap();
        }
        o["req"].as_object_mut().unwrap().remove("gpus").unwrap();
        o["warn_signal"].as_object_mut().unwrap().remove("batch_only").unwrap();
        o["array"].as_object_mut().unwrap().remove("max_running").unwrap();
        // And a field of a newer version, which this one does not know.
        o.insert("gpu_usage".into(), serde_json::json!({"gpu_util": 93}));
        serde_json::to_string(&v).unwrap()
    }

    #[test]
    fn cpu_ids_are_kept_in_a_version_2_store_once_migrated_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        // A version 2 store holding a running job.
        let mut conn = Connection::open(&path).unwrap();
        schema::migrate_with(&mut conn, &path, &schema::MIGRATIONS[..2]).unwrap();
        let record = V1_RECORD.replace("\"COMPLETED\"", "\"RUNNING\"");
        conn.execute("INSERT INTO jobs (id, state, end_time, record) VALUES (3, 'RUNNING', 0, ?1)", [&record]).unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        let jobs = store.load_recent(0).unwrap();
        assert_eq!((jobs.len(), jobs[0].cpu_ids.len()), (1, 0), "stored before CPUs had ids");
        let writer = writer::Writer::start(&path).unwrap();
        let mut job = jobs[0].clone();
        job.cpu_ids = vec![0, 2, 3];
        writer.update(&job).wait().unwrap();
        let mut new = Job { id: 4, state: Some(JobState::Running), cpu_ids: vec![1], ..Default::default() };
        writer.insert_all(std::slice::from_ref(&new), Payload::default()).wait().unwrap();
        new.cpu_ids.clear();
        new.state = Some(JobState::Pending);
        writer.update(&new).wait().unwrap();
        drop((store, writer));
        let store = Store::open(&path).unwrap();
        let recent: Vec<(u32, Vec<u32>)> =
            store.load_recent(0).unwrap().into_iter().map(|j| (j.id, j.cpu_ids)).collect();
        assert_eq!(recent, vec![(3, vec![0, 2, 3]), (4, vec![])]);
        assert_eq!(store.jobs_by_id(&[3]).unwrap()[0].cpu_ids, vec![0, 2, 3]);
        let text: String = store.conn.query_row("SELECT cpu_ids FROM jobs WHERE id = 3", [], |r| r.get(0)).unwrap();
        assert_eq!(text, "[0,2,3]");
        assert!(!store
            .conn
            .query_row("SELECT record FROM jobs WHERE id = 3", [], |r| r.get::<_, String>(0))
            .unwrap()
            .contains("cpu_ids"));
    }

    #[test]
    fn unreadable_cpu_ids_are_refused_with_their_job() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        let conn = Store::connect(&path).unwrap();
        conn.execute(
            "INSERT INTO jobs (id, state, end_time, record, cpu_ids) VALUES (3, 'RUNNING', 0, ?1, 'x')",
            [V1_RECORD],
        )
        .unwrap();
        let e = Store::open(&path).unwrap().jobs_by_id(&[3]).unwrap_err();
        assert!(e.to_string().starts_with("job store: the CPU ids of job 3 are unreadable: "), "{e}");
    }

    #[test]
    fn a_record_missing_newer_fields_reads_with_their_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        let conn = Store::connect(&path).unwrap();
        for (id, record) in [(3, record_without_later_fields()), (4, V1_RECORD.replace("\"id\":3", "\"id\":4"))] {
            conn.execute(
                "INSERT INTO jobs (id, state, end_time, record) VALUES (?1, 'COMPLETED', 1, ?2)",
                params![id, record],
            )
            .unwrap();
        }
        let store = Store::open_reader(&path).unwrap();
        let jobs = store.jobs_by_id(&[3, 4]).unwrap();
        let (old, whole) = (&jobs[0], &jobs[1]);
        assert_eq!((old.id, whole.id), (3, 4));
        // The missing fields read as their defaults…
        assert_eq!((old.restarts, old.requeue, old.suspended_secs), (0, false, 0));
        assert_eq!(old.batch_usage, None);
        assert_eq!(old.account, "");
        assert_eq!(old.req, Resources { cpus: 1, mem_mb: 0, gpus: 0, shards: 0, gpu_type: None });
        assert_eq!(old.warn_signal, Some(WarnSignal { signal: 10, seconds: 60, batch_only: false }));
        assert_eq!(old.array.map(|a| (a.job_id, a.step, a.max_running)), Some((3, 1, 0)));
        // …and the others as they were stored.
        assert_eq!((old.name.as_str(), old.stdout.as_str(), old.end_time), ("requeued", "rq.out", 1795643446));
        assert_eq!(old.state(), JobState::Completed);
        assert_eq!((whole.restarts, whole.requeue, whole.account.as_str()), (1, true, "default"));
        assert!(whole.warn_signal.is_some_and(|w| w.batch_only));
    }
}
