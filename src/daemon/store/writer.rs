//! The store's writer: one thread that owns the write connection and commits changes in
//! groups.
//!
//! Every change (a new job, a job's new state) is queued here in order. The thread takes all
//! that is queued, writes it in one transaction and commits once, so one fsync makes a whole
//! burst of submits and state changes durable. Whoever must not go on before a change is
//! durable (a submit before the client hears its id, a launch before its process exists)
//! waits for that change's [`Durable`].

pub use super::durable::{Durable, WriteFailed};
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::step_record::{StepEnding, StepRecord, ENDED_WITH_JOB};
use crate::daemon::store::usage::{self, UsageRow};
use crate::daemon::store::{Payload, Store, StoreError};
use rusqlite::{params, Connection};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use tokio::sync::oneshot;

/// The most changes one transaction takes.
const MAX_GROUP: usize = 4096;

/// How long a change nobody waits for (a job's end) may wait for company before it is
/// committed alone. A job's end is usually followed at once by the start of the next job,
/// whose allocation must be durable: both then take one fsync.
const LAZY_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// A change to write.
enum Change {
    /// New jobs (one, or the tasks of an array) and the payload they share, stored under
    /// the first one's id.
    Insert(Vec<Job>, Payload),
    /// A job's current record, and the usage of its association when it ended.
    Update(Box<Job>, Option<UsageRow>),
    /// Every association's usage, replaced, and the time of the last reset.
    UsageReplaced(Vec<UsageRow>, u64),
    /// A document kept whole in `meta` under its key, replaced (the failed GPUs, the
    /// reservations).
    Meta(&'static str, String),
    /// A run of a job that ended and is requeued: kept as it ended; the run's steps are
    /// dropped, making room for the next run's.
    Requeued(Box<Job>),
    /// A step that started.
    StepStart(Box<StepRecord>),
    /// A step that ended.
    StepEnd(StepEnding),
    /// The end of a job: its steps still recorded as running ended with it (at `end`).
    EndSteps {
        /// The job.
        job: u32,
        /// When it ended.
        end: u64,
    },
    /// Removes the jobs (with their payloads and steps) that ended before `before`.
    Purge {
        /// UNIX seconds.
        before: u64,
    },
    /// The GPU samples of a closed step.
    GpuSamples(Box<super::gpu_samples::StepSamples>),
    /// Removes the GPU samples of the steps that started before `before`.
    PruneGpuSamples {
        /// UNIX seconds.
        before: i64,
    },
    /// Nothing: resolves once everything queued before it is durable.
    Barrier,
}

/// A queued change, what to tell when it is durable, and a directory to remove after.
struct Queued {
    change: Change,
    done: Option<oneshot::Sender<Result<(), WriteFailed>>>,
    remove_after: Option<PathBuf>,
    /// Nobody waits for it: it may wait [`LAZY_WAIT`] for other changes.
    lazy: bool,
}

/// The handle to the writer thread. Dropping it lets the thread finish what is queued and end.
pub struct Writer {
    queue: mpsc::Sender<Queued>,
    /// The change counter: moved whenever a job's record is queued (see [`Writer::changes`]).
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Writer {
    /// Opens a write connection to the store at `path` and starts the writer thread.
    pub fn start(path: &Path) -> Result<Writer, StoreError> {
        let conn = Store::connect(path)?;
        let label = path.display().to_string();
        let (queue, rx) = mpsc::channel();
        let (removals, removals_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("store-remover".into())
            .spawn(move || remove(removals_rx))
            .map_err(|e| StoreError::Thread(e.to_string()))?;
        std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run(conn, label, rx, removals))
            .map_err(|e| StoreError::Thread(e.to_string()))?;
        Ok(Writer { queue, changes: Arc::new(tokio::sync::watch::channel(0).0) })
    }

    fn push(&self, change: Change, remove_after: Option<PathBuf>) -> Durable {
        self.queue_change(change, remove_after, false)
    }

    fn queue_change(&self, change: Change, remove_after: Option<PathBuf>, lazy: bool) -> Durable {
        let (done, durable) = oneshot::channel();
        let queued = Queued { change, done: Some(done), remove_after, lazy };
        if let Err(mpsc::SendError(q)) = self.queue.send(queued) {
            if let Some(done) = q.done {
                let _ = done.send(Err(WriteFailed::Stopped));
            }
        }
        Durable(durable)
    }

    /// The change counter, which moves whenever a job's record is queued (its state or
    /// settings changed) and whenever [`Writer::changed`] is called; for the board's
    /// `GET /slurmlet/v1/changes`. Moving it costs nothing when nobody waits on it.
    pub fn changes(&self) -> Arc<tokio::sync::watch::Sender<u64>> {
        self.changes.clone()
    }

    /// Moves the change counter.
    pub fn changed(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// Queues a new job with its payload.
    pub fn insert(&self, job: &Job, payload: Payload) -> Durable {
        self.insert_all(std::slice::from_ref(job), payload)
    }

    /// Queues new jobs (the tasks of an array) that share one payload, stored under the
    /// first one's id: all of them are stored, or none.
    pub fn insert_all(&self, jobs: &[Job], payload: Payload) -> Durable {
        self.push(Change::Insert(jobs.to_vec(), payload), None)
    }

    /// Queues the record of a run of `job` that ended and is requeued.
    pub fn requeued(&self, job: &Job) -> Durable {
        self.changed();
        self.push(Change::Requeued(Box::new(job.clone())), None)
    }

    /// Queues a job's current record.
    pub fn update(&self, job: &Job) -> Durable {
        self.changed();
        self.push(Change::Update(Box::new(job.clone()), None), None)
    }

    /// Replaces the usage kept (rebuilt, or reset at `reset_at`).
    pub fn replace_usage(&self, rows: Vec<UsageRow>, reset_at: u64) -> Durable {
        self.push(Change::UsageReplaced(rows, reset_at), None)
    }

    /// Replaces the document kept in `meta` under `key` (the failed GPUs, the reservations).
    pub fn meta(&self, key: &'static str, text: String) -> Durable {
        self.push(Change::Meta(key, text), None)
    }

    /// Queues the record of a step that started (nobody waits for it: it may wait for
    /// company).
    pub fn step_started(&self, step: StepRecord) -> Durable {
        self.queue_change(Change::StepStart(Box::new(step)), None, true)
    }

    /// Queues the end of a step.
    pub fn step_ended(&self, end: StepEnding) -> Durable {
        self.queue_change(Change::StepEnd(end), None, true)
    }

    /// Queues the end, at `end`, of the steps of job `job` still recorded as running.
    pub fn end_steps(&self, job: u32, end: u64) -> Durable {
        self.queue_change(Change::EndSteps { job, end }, None, true)
    }

    /// Queues the GPU samples of a closed step (nobody waits for them).
    pub fn gpu_samples(&self, step: super::gpu_samples::StepSamples) -> Durable {
        self.queue_change(Change::GpuSamples(Box::new(step)), None, true)
    }

    /// Queues the removal of the GPU samples of the steps that started before `before`
    /// (UNIX seconds).
    pub fn prune_gpu_samples(&self, before: i64) -> Durable {
        self.queue_change(Change::PruneGpuSamples { before }, None, true)
    }

    /// Queues the removal of the jobs that ended before `before` (UNIX seconds). Job ids are
    /// never reused: the store's high-water mark is raised past them first.
    pub fn purge(&self, before: u64) -> Durable {
        self.queue_change(Change::Purge { before }, None, true)
    }

    /// Resolves once everything queued so far is durable (readers of the store then see it).
    pub fn barrier(&self) -> Durable {
        self.push(Change::Barrier, None)
    }

    /// Blocks until everything queued so far is durable and the directories it frees are
    /// removed (before the daemon exits).
    pub fn flush(&self) {
        let _ = self.barrier().wait();
    }

    /// Queues a job's current record, and removes `dir` once it is durable (the job's
    /// directory holds what recovery would need until then). The change may wait a little for
    /// others to share its commit.
    /// `usage` is the row of the job's association with the job's usage in it, written in
    /// the same transaction.
    pub fn update_then_remove(&self, job: &Job, usage: Option<UsageRow>, dir: PathBuf) -> Durable {
        self.changed();
        self.queue_change(Change::Update(Box::new(job.clone()), usage), Some(dir), true)
    }
}

/// Work for the remover thread, in commit order.
enum Removal {
    /// A directory whose job's end is committed.
    Dir(PathBuf),
    /// Resolves once every directory sent before it is removed (a barrier: the daemon exits
    /// with no directory of an ended job left behind).
    Done(oneshot::Sender<Result<(), WriteFailed>>),
}

/// The remover thread: removes the directories of jobs whose end is committed. Unlinking
/// files can take milliseconds (a filesystem mounted with `discard` discards the freed
/// blocks synchronously), which must not hold up the next commit, on which the next job's
/// start waits.
fn remove(rx: mpsc::Receiver<Removal>) {
    for r in rx {
        match r {
            Removal::Dir(dir) => {
                crate::stepd::containment::remove_job_groups(&dir);
                let _ = std::fs::remove_dir_all(dir);
            }
            Removal::Done(done) => {
                let _ = done.send(Ok(()));
            }
        }
    }
}

/// The writer thread: waits for a change, takes all that is queued behind it, commits them
/// together, then reports; directories to remove after the commit go to the remover thread.
fn run(mut conn: Connection, label: String, rx: mpsc::Receiver<Queued>, removals: mpsc::Sender<Removal>) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        let mut deadline = None;
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(q) => group.push(q),
                Err(mpsc::TryRecvError::Disconnected) => break,
                Err(mpsc::TryRecvError::Empty) => {
                    if group.iter().any(|q| !q.lazy) {
                        break;
                    }
                    let until = *deadline.get_or_insert_with(|| std::time::Instant::now() + LAZY_WAIT);
                    match rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now())) {
                        Ok(q) => group.push(q),
                        Err(_) => break,
                    }
                }
            }
        }
        let results: Vec<Result<(), String>> = match write_group(&mut conn, &group) {
            Ok(()) => vec![Ok(()); group.len()],
            // One bad change must not sink the others: write them one by one.
            Err(_) if group.len() > 1 => group
                .iter()
                .map(|q| write_group(&mut conn, std::slice::from_ref(q)).map_err(|e| format!("job store {label}: {e}")))
                .collect(),
            Err(e) => vec![Err(format!("job store {label}: {e}"))],
        };
        for (q, result) in group.into_iter().zip(results) {
            if let Err(e) = &result {
                tracing::error!("{e}");
            }
            if result.is_ok() {
                if let Some(dir) = q.remove_after {
                    let _ = removals.send(Removal::Dir(dir));
                }
            }
            match (q.done, &q.change) {
                (Some(done), Change::Barrier) if result.is_ok() => {
                    if let Err(mpsc::SendError(Removal::Done(done))) = removals.send(Removal::Done(done)) {
                        let _ = done.send(Ok(()));
                    }
                }
                (Some(done), _) => {
                    let _ = done.send(result.map_err(WriteFailed::Refused));
                }
                (None, _) => {}
            }
        }
    }
}

/// Runs `sql` (an insert or update of the jobs table) with a job's id, state, end time,
/// record and CPU ids.
fn write_record(tx: &rusqlite::Transaction, sql: &str, job: &Job) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params![
        job.id,
        job.state().name(),
        job.end_time as i64,
        serde_json::to_string(job).expect("jobs serialize"),
        super::cpu_ids_text(&job.cpu_ids),
    ])
}

fn write_group(conn: &mut Connection, group: &[Queued]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for q in group {
        match &q.change {
            Change::Insert(jobs, payload) => {
                for job in jobs {
                    write_record(
                        &tx,
                        "INSERT INTO jobs (id, state, end_time, record, cpu_ids) VALUES (?1, ?2, ?3, ?4, ?5)",
                        job,
                    )?;
                }
                let Some(first) = jobs.first() else { continue };
                tx.prepare_cached("INSERT INTO payloads (id, script, environment, argv) VALUES (?1, ?2, ?3, ?4)")?
                    .execute(params![
                        first.id,
                        payload.script,
                        serde_json::to_string(&payload.environment).expect("strings serialize"),
                        serde_json::to_string(&payload.argv).expect("strings serialize"),
                    ])?;
            }
            Change::Barrier => {}
            Change::Update(job, row) => {
                write_record(
                    &tx,
                    "UPDATE jobs SET state = ?2, end_time = ?3, record = ?4, cpu_ids = ?5 WHERE id = ?1",
                    job,
                )?;
                if let Some(row) = row {
                    usage::write_row(&tx, row)?;
                }
            }
            Change::UsageReplaced(rows, reset_at) => usage::write_all(&tx, rows, *reset_at)?,
            Change::Meta(key, text) => super::write_meta(&tx, key, text)?,
            Change::Requeued(job) => {
                tx.prepare_cached("INSERT OR REPLACE INTO runs (job_id, restart, record) VALUES (?1, ?2, ?3)")?
                    .execute(params![job.id, job.restarts, serde_json::to_string(job).expect("jobs serialize")])?;
                tx.prepare_cached("DELETE FROM steps WHERE job_id = ?1")?.execute([job.id])?;
            }
            Change::StepStart(step) => {
                write_step(&tx, step)?;
            }
            Change::StepEnd(end) => {
                let usage = usage_columns(end.usage);
                let gpu = gpu_columns(end.gpu_use);
                tx.prepare_cached(
                    "UPDATE steps SET state = ?3, end_time = ?4, exit_status = ?5, cancelled_by = ?6,
                         user_usec = ?7, sys_usec = ?8, max_rss_kb = ?9,
                         gpu_mem_max = ?10, gpu_mem_ave = ?11, gpu_util_max = ?12, gpu_util_ave = ?13,
                         ave_rss_kb = ?14
                     WHERE job_id = ?1 AND step_id = ?2 AND state = 'RUNNING'",
                )?
                .execute(params![
                    end.job,
                    end.step,
                    end.state.name(),
                    end.end as i64,
                    end.exit_status,
                    end.cancelled_by,
                    usage.map(|u| u.0),
                    usage.map(|u| u.1),
                    usage.map(|u| u.2),
                    gpu.map(|g| g.0),
                    gpu.map(|g| g.1),
                    gpu.map(|g| g.2),
                    gpu.map(|g| g.3),
                    usage.map(|u| u.3),
                ])?;
            }
            Change::EndSteps { job, end } => {
                tx.prepare_cached(
                    "UPDATE steps SET state = ?2, end_time = ?3, exit_status = ?4 WHERE job_id = ?1 AND state = 'RUNNING'",
                )?
                .execute(params![job, JobState::Cancelled.name(), *end as i64, ENDED_WITH_JOB])?;
            }
            Change::Purge { before } => purge(&tx, *before)?,
            Change::GpuSamples(step) => super::gpu_samples::write(&tx, step)?,
            Change::PruneGpuSamples { before } => super::gpu_samples::prune(&tx, *before)?,
        }
    }
    tx.commit()
}

/// A step's usage as the `steps` table's columns (`user_usec`, `sys_usec`, `max_rss_kb`,
/// `ave_rss_kb`).
fn usage_columns(usage: Option<crate::api::acct::Usage>) -> Option<(i64, i64, i64, i64)> {
    usage.map(|u| (u.user_usec as i64, u.sys_usec as i64, u.max_rss_kb as i64, u.ave_rss_kb as i64))
}

/// A step's GPU use as the `steps` table's columns (`gpu_mem_max`, `gpu_mem_ave`,
/// `gpu_util_max`, `gpu_util_ave`).
fn gpu_columns(gpu_use: Option<crate::api::acct::GpuUse>) -> Option<(i64, i64, i64, i64)> {
    gpu_use.map(|g| (g.mem_max as i64, g.mem_ave as i64, g.util_max as i64, g.util_ave as i64))
}

/// Inserts (or replaces) a step's record.
fn write_step(tx: &rusqlite::Transaction, step: &StepRecord) -> rusqlite::Result<usize> {
    let usage = usage_columns(step.usage);
    let gpu = gpu_columns(step.gpu_use);
    tx.prepare_cached(
        "INSERT OR REPLACE INTO steps (job_id, step_id, name, state, start_time, end_time, exit_status, ntasks,
             cpus, gpus, mem_mb, time_limit, cancelled_by, user_usec, sys_usec, max_rss_kb,
             gpu_mem_max, gpu_mem_ave, gpu_util_max, gpu_util_ave, ave_rss_kb)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?
    .execute(params![
        step.job,
        step.step,
        step.name,
        step.state.name(),
        step.start as i64,
        step.end as i64,
        step.exit_status,
        step.ntasks,
        step.cpus,
        step.gpus,
        step.mem_mb as i64,
        step.time_limit,
        step.cancelled_by,
        usage.map(|u| u.0),
        usage.map(|u| u.1),
        usage.map(|u| u.2),
        gpu.map(|g| g.0),
        gpu.map(|g| g.1),
        gpu.map(|g| g.2),
        gpu.map(|g| g.3),
        usage.map(|u| u.3),
    ])
}

/// Removes the finished jobs that ended before `before`, their payloads and their steps,
/// after raising the `next_job_id` high-water mark past every id in the store.
fn purge(tx: &rusqlite::Transaction, before: u64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO meta (key, value) SELECT 'next_job_id', COALESCE(MAX(id), 0) + 1 FROM jobs WHERE true
         ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)",
        [],
    )?;
    let active = crate::daemon::store::ACTIVE_STATES;
    let old = format!("SELECT id FROM jobs WHERE state NOT IN {active} AND end_time < ?1");
    let before = before as i64;
    let steps = tx.execute(&format!("DELETE FROM steps WHERE job_id IN ({old})"), [before])?;
    tx.execute(&format!("DELETE FROM runs WHERE job_id IN ({old})"), [before])?;
    // An array's payload is its first task's: kept while any task of the array is active.
    tx.execute(
        &format!(
            "DELETE FROM payloads WHERE id IN ({old}) AND id NOT IN (
                 SELECT json_extract(record, '$.array.job_id') FROM jobs
                 WHERE state IN {active} AND json_extract(record, '$.array') IS NOT NULL)"
        ),
        [before],
    )?;
    let jobs = tx.execute(&format!("DELETE FROM jobs WHERE state NOT IN {active} AND end_time < ?1"), [before])?;
    if jobs > 0 {
        tracing::info!(jobs, steps, "job history older than the retention removed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::{GpuUse, Usage};

    #[test]
    fn ids_are_monotonic_and_records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::open(&path).unwrap();
        let writer = Writer::start(&path).unwrap();
        assert_eq!(store.next_job_id().unwrap(), 1);
        let mut job = Job { id: 1, name: "a".into(), state: Some(JobState::Pending), ..Default::default() };
        let first = writer.insert(&job, Payload { script: "#!/bin/sh\n".into(), ..Default::default() });
        job.state = Some(JobState::Completed);
        job.end_time = 10;
        let job_dir = dir.path().join("job1");
        std::fs::create_dir(&job_dir).unwrap();
        let second = writer.update_then_remove(&job, None, job_dir.clone());
        assert_eq!(first.wait(), Ok(()));
        assert_eq!(second.wait(), Ok(()));
        // The remover thread takes the directory after the commit; a flush waits for it.
        writer.flush();
        assert!(!job_dir.exists(), "the directory goes once the end is durable");
        drop((store, writer));
        let store = Store::open(&path).unwrap();
        assert_eq!(store.next_job_id().unwrap(), 2);
        let jobs = store.load_recent(5).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].state(), JobState::Completed);
        assert!(store.load_recent(11).unwrap().is_empty());
        assert_eq!(store.payload(1).unwrap().script, "#!/bin/sh\n");
    }

    fn step(job: u32, step: u32) -> StepRecord {
        StepRecord {
            job,
            step,
            name: "hostname".into(),
            state: JobState::Running,
            start: 150,
            end: 0,
            exit_status: None,
            ntasks: 2,
            cpus: 2,
            gpus: 1,
            mem_mb: 1000,
            time_limit: Some(5),
            cancelled_by: None,
            usage: None,
            gpu_use: None,
        }
    }

    #[test]
    fn steps_are_recorded_ended_and_purged_with_their_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::open(&path).unwrap();
        let writer = Writer::start(&path).unwrap();
        let job =
            |id: u32, state: JobState, end: u64| Job { id, state: Some(state), end_time: end, ..Default::default() };
        for j in [job(1, JobState::Completed, 100), job(2, JobState::Completed, 5000), job(3, JobState::Running, 0)] {
            writer.insert(&j, Payload::default());
        }
        writer.insert(&job(4, JobState::Failed, 100), Payload::default());
        writer.step_started(step(1, 0));
        writer.step_started(step(3, 0));
        writer.step_started(step(3, 1));
        let usage = Usage { user_usec: 1, sys_usec: 2, max_rss_kb: 3, ave_rss_kb: 2 };
        let gpu_use = GpuUse { mem_max: 5 << 30, mem_ave: 3 << 30, util_max: 180, util_ave: 90 };
        let ended = StepEnding {
            job: 3,
            step: 0,
            state: JobState::Completed,
            end: 200,
            exit_status: 0,
            cancelled_by: None,
            usage: Some(usage),
            gpu_use: Some(gpu_use),
        };
        writer.step_ended(ended);
        // The job ends: its step still running ends with it; the one that ended stays as it was.
        writer.end_steps(3, 300);
        writer.step_ended(StepEnding { state: JobState::Failed, exit_status: 1 << 8, ..ended });
        writer.flush();
        let steps = store.steps(3).unwrap();
        assert_eq!(
            steps[0],
            StepRecord {
                state: JobState::Completed,
                end: 200,
                exit_status: Some(0),
                usage: Some(usage),
                gpu_use: Some(gpu_use),
                ..step(3, 0)
            }
        );
        assert_eq!(
            steps[1],
            StepRecord { state: JobState::Cancelled, end: 300, exit_status: Some(ENDED_WITH_JOB), ..step(3, 1) }
        );
        assert!(store.has_step(1, 0).unwrap());
        // Jobs that ended before 1000 go, with their steps and payloads; ids are not reused.
        assert_eq!(writer.purge(1000).wait(), Ok(()));
        let left: Vec<u32> = store.history(None, |_| true).unwrap().iter().map(|j| j.id).collect();
        assert_eq!(left, vec![2, 3]);
        assert!(!store.has_step(1, 0).unwrap());
        assert!(store.payload(1).is_err());
        assert_eq!(store.next_job_id().unwrap(), 5);
    }

    #[test]
    fn a_failed_write_is_reported_to_its_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let _store = Store::open(&path).unwrap();
        let writer = Writer::start(&path).unwrap();
        let job = Job { id: 7, state: Some(JobState::Pending), ..Default::default() };
        assert_eq!(writer.insert(&job, Payload::default()).wait(), Ok(()));
        let again = writer.insert(&job, Payload::default()).wait();
        assert!(again.unwrap_err().to_string().contains("UNIQUE"), "a duplicate id is refused");
    }
}
