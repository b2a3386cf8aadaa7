//! The accounting history sacct and `GET /slurmdb/…/jobs` read: every job in the store with
//! its steps, and the daemon's own copies of the jobs it holds in memory, which are fresher.
//!
//! A query takes a [`Snapshot`] of the in-memory jobs under the daemon's lock, then reads
//! the store on a connection of its own, without the lock, skipping the jobs the snapshot
//! has.

use crate::api::acct::{self, AcctJob, HistoryQuery};
use crate::config::Config;
use crate::daemon::accounting;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::Job;
use crate::daemon::model::step_record::StepRecord;
use crate::daemon::scheduling::core::Core;
use crate::daemon::store::{Payload, Store, StoreError};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Read connections to the store, opened as queries need them and kept for the next ones.
pub struct History {
    path: PathBuf,
    idle: Mutex<Vec<Store>>,
}

/// What a query needs from the daemon's memory, copied under its lock.
pub struct Snapshot {
    /// The in-memory jobs the query matches, with their running steps' records.
    jobs: Vec<(Job, Vec<StepRecord>)>,
    /// The ids of every in-memory job, sorted: the store's copies of these are older.
    in_memory: Vec<u32>,
    /// The configuration.
    config: Config,
    /// Who asks.
    caller: Caller,
}

impl Snapshot {
    /// Copies what query `q` of `caller` needs from `core`.
    pub fn take(core: &Core, q: &HistoryQuery, caller: Caller) -> Snapshot {
        let jobs = core
            .jobs
            .values()
            .filter(|j| caller.may_see(j, &core.config) && accounting::matches(j, q, &core.config.node_name))
            .map(|j| (j.clone(), core.running_step_records(j.id)))
            .collect();
        Snapshot { jobs, in_memory: core.jobs.keys().copied().collect(), config: core.config.clone(), caller }
    }
}

impl History {
    /// The history of the store at `path`.
    pub fn new(path: PathBuf) -> History {
        History { path, idle: Mutex::new(Vec::new()) }
    }

    /// The jobs `q` asks for, in sacct's order (by submit time), with their steps.
    pub fn query(&self, q: &HistoryQuery, snapshot: Snapshot) -> Result<Vec<AcctJob>, StoreError> {
        self.read(|store| select(store, q, snapshot))
    }

    /// The payload (batch script, environment, arguments) stored under job id `id`.
    pub fn payload(&self, id: u32) -> Result<Payload, StoreError> {
        self.read(|store| store.payload(id))
    }

    /// Runs `read` on an idle read connection (a new one when none is idle), which is kept
    /// for the next read unless the read failed.
    pub fn read<T>(&self, read: impl FnOnce(&Store) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let store = match self.idle.lock().expect("history pool").pop() {
            Some(s) => s,
            None => Store::open_reader(&self.path)?,
        };
        let result = read(&store);
        if result.is_ok() {
            self.idle.lock().expect("history pool").push(store);
        }
        result
    }
}

/// Reads the jobs `q` asks for from `store`, merged with the `snapshot`'s.
fn select(store: &Store, q: &HistoryQuery, snapshot: Snapshot) -> Result<Vec<AcctJob>, StoreError> {
    let Snapshot { jobs: mut found, in_memory, config, caller } = snapshot;
    if !accounting::cluster_wanted(q, &config.cluster_name) {
        return Ok(Vec::new());
    }
    let stored = |id: u32| in_memory.binary_search(&id).is_err();
    let from_store = if q.selections.is_empty() {
        store.history(q.window.map(|(start, _)| start), stored)?
    } else {
        let mut ids: Vec<u32> = q.selections.iter().map(|s| s.job).filter(|&id| stored(id)).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut named = store.jobs_by_id(&ids)?;
        // An array's id names its tasks, numbered from it.
        let tasks: Vec<u32> = named
            .iter()
            .filter_map(|j| j.array.filter(|a| a.job_id == j.id))
            .flat_map(|a| a.job_id + 1..a.job_id.saturating_add(a.count))
            .filter(|&id| stored(id))
            .collect();
        named.extend(store.jobs_by_id(&tasks)?);
        named
    };
    found.extend(
        from_store
            .into_iter()
            .filter(|j| caller.may_see(j, &config) && accounting::matches(j, q, &config.node_name))
            .map(|j| (j, Vec::new())),
    );
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut groups: HashMap<u32, String> = HashMap::new();
    let mut jobs = Vec::with_capacity(found.len());
    for (job, running) in found {
        let mut steps = store.steps(job.id)?;
        // The daemon's copy of a running step is the fresher, unless the store has its end.
        for r in running {
            match steps.iter_mut().find(|s| s.step == r.step) {
                Some(s) if s.end == 0 => *s = r,
                Some(_) => {}
                None => steps.push(r),
            }
        }
        steps.sort_by_key(|s| s.step);
        let user = names.entry(job.uid).or_insert_with(|| crate::identity::user_name(job.uid));
        let group = groups.entry(job.gid).or_insert_with(|| crate::identity::group_name(job.gid));
        let mut acct = accounting::acct_job(&job, &steps, &config, user, group);
        if let Some(only) = accounting::only_steps(q, &job) {
            acct.show_full = false;
            acct.steps.retain(|s| only.contains(&s.id));
        }
        if q.skip_steps {
            acct.steps.clear();
        }
        if let (true, Some(window)) = (q.truncate, q.window) {
            acct.truncate(window, crate::sys::now());
        }
        if q.duplicates && job.restarts > 0 {
            for mut run in earlier_runs(store, &job, &config, user, group)? {
                if q.skip_steps {
                    run.steps.clear();
                }
                jobs.push(run);
            }
        }
        jobs.push(acct);
    }
    acct::sort_as_sacct(&mut jobs);
    Ok(jobs)
}

/// The earlier runs of requeued `job`, each as it ended, in the state Slurm's accounting
/// gives them: REQUEUED, or PREEMPTED for a run ended by preemption.
fn earlier_runs(
    store: &Store,
    job: &Job,
    config: &Config,
    user: &str,
    group: &str,
) -> Result<Vec<AcctJob>, StoreError> {
    Ok(store
        .runs(job.id)?
        .iter()
        .map(|run| {
            let state = if run.preempted { "PREEMPTED" } else { "REQUEUED" };
            AcctJob { state: state.into(), ..accounting::acct_job(run, &[], config, user, group) }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::JobState;
    use crate::daemon::store::writer::Writer;
    use crate::daemon::store::Payload;

    fn config() -> Config {
        let file = toml::from_str("node_name = \"node1\"\ngpus = 2\ncpus = 8\nmemory = 4096\n").unwrap();
        Config::resolve(file, std::path::Path::new("test.toml")).unwrap()
    }

    fn job(id: u32, state: JobState, end: u64) -> Job {
        Job {
            id,
            name: format!("j{id}").as_str().into(),
            state: Some(state),
            submit_time: 100 + id as u64,
            start_time: 100 + id as u64,
            end_time: end,
            end_cause: (end > 0).then_some(crate::stepd::EndCause::Exited),
            wait_status: (end > 0).then_some(if state == JobState::Failed { 1 << 8 } else { 0 }),
            ..Default::default()
        }
    }

    fn step(job: u32, step: u32, state: JobState) -> StepRecord {
        StepRecord {
            job,
            step,
            name: "hostname".into(),
            state,
            start: 120,
            end: 0,
            exit_status: None,
            ntasks: 1,
            cpus: 1,
            gpus: 0,
            mem_mb: 0,
            time_limit: None,
            cancelled_by: None,
            usage: None,
            gpu_use: None,
        }
    }

    #[test]
    fn the_store_and_memory_merge_memory_first_in_submit_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let _store = Store::open(&path).unwrap();
        let writer = Writer::start(&path).unwrap();
        for j in [job(1, JobState::Completed, 150), job(2, JobState::Running, 0), job(3, JobState::Failed, 160)] {
            writer.insert(&j, Payload::default());
        }
        writer.step_started(step(2, 0, JobState::Running));
        writer.flush();
        let caller = Caller { uid: crate::identity::uid(), gid: 0 };
        // Job 2 is in memory, and has ended there since the store saw it.
        let fresher = job(2, JobState::Completed, 170);
        let mut ended = step(2, 0, JobState::Completed);
        ended.end = 165;
        ended.exit_status = Some(0);
        let snapshot = |q: &HistoryQuery| Snapshot {
            jobs: if accounting::matches(&fresher, q, "node1") {
                vec![(fresher.clone(), vec![ended.clone()])]
            } else {
                vec![]
            },
            in_memory: vec![2],
            config: config(),
            caller,
        };
        let history = History::new(path);
        let q = HistoryQuery { window: Some((0, 1000)), ..Default::default() };
        let jobs = history.query(&q, snapshot(&q)).unwrap();
        let seen: Vec<(u32, &str)> = jobs.iter().map(|j| (j.id, j.state.as_str())).collect();
        assert_eq!(seen, vec![(1, "COMPLETED"), (2, "COMPLETED"), (3, "FAILED")]);
        let steps: Vec<String> = jobs[1].steps.iter().map(|s| format!("{}:{}", s.id, s.state)).collect();
        assert_eq!(steps, vec!["batch:COMPLETED", "0:COMPLETED"]);
        // The job ended at 170 in memory: a window after the store's stale copy finds it.
        let q = HistoryQuery { window: Some((168, 1000)), ..Default::default() };
        let ids: Vec<u32> = history.query(&q, snapshot(&q)).unwrap().iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![2]);
        let q = HistoryQuery { states: Some(vec!["FAILED".into()]), window: Some((0, 1000)), ..Default::default() };
        let ids: Vec<u32> = history.query(&q, snapshot(&q)).unwrap().iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![3]);
    }
}
