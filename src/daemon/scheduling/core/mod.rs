//! The daemon's state and every change to it: submit, schedule, launch, cancel, finish,
//! recover. All methods are synchronous and run under one lock; they return [`Effects`] that
//! the async side carries out (watching new supervisors, arming the begin-time timer).
//!
//! This module holds the state ([`Core`]), its opening and the helpers its parts share;
//! each part adds its methods in a file of its own: `recovery` (re-adoption when the
//! daemon starts), `schedule` (the allocation and start of pending jobs), `lifecycle`
//! (a job's staging, admission and end), `cancel` (cancels and signals),
//! `job_steps` (the steps of running jobs), `cpu_ids` (which of the node's CPUs each job
//! holds), `foreign_gpus` (GPUs in use outside the queue), `priorities` (multifactor
//! priority and fair-share usage) and `overdue` (supervisors that outlive their job's end).

mod cancel;
mod cpu_ids;
mod foreign_gpus;
mod gpu_drains;
mod gpu_health;
mod gpu_holds;
mod gpu_tallies;
mod gpu_watch_state;
mod idle_gpus;
mod job_index;
mod job_steps;
mod lifecycle;
mod notices;
mod overdue;
mod priorities;
mod qos;
mod recovery;
mod reservations;
mod resource_ledger;
mod schedule;

pub use cancel::CancelError;
pub use gpu_holds::GpuHeld;
pub use notices::{Outgoing, TimeMark};
pub use overdue::{Stuck, GRACE};

use crate::config::Config;
use crate::daemon::model::job::{Job, JobState, Resources};
use crate::daemon::model::machine::Machine;
use crate::daemon::model::text;
use crate::daemon::scheduling::depend;
use crate::daemon::scheduling::limits;
use crate::daemon::scheduling::steps;
use crate::daemon::store::writer::{Durable, Writer};
use crate::daemon::store::{Store, StoreError};
use crate::stepd;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Work for the async side after a state change.
#[derive(Debug, Default)]
pub struct Effects {
    /// Supervisors to watch.
    pub watch: Vec<Watch>,
    /// Jobs given resources whose supervisors start once that is durable: the daemon starts
    /// each (its `launch`) after the [`Durable`] resolves.
    pub launch: Vec<(u32, Durable)>,
    /// The last change written; the caller waits for it before answering a client.
    pub durable: Option<Durable>,
    /// Something changed that may let a pending job start: run a scheduling pass (passes
    /// asked for in a burst are run once).
    pub reschedule: bool,
    /// The earliest future time at which a pending job becomes eligible.
    pub wake_at: Option<u64>,
    /// Cancelled jobs whose supervisor (job, pid) is told once the job's steps have ended:
    /// the steps first, then the batch script, as Slurm does.
    pub end_after_steps: Vec<(u32, i32)>,
}

impl Effects {
    /// Only a scheduling pass.
    pub fn reschedule() -> Effects {
        Effects { reschedule: true, ..Default::default() }
    }

    /// Adds what `more` asks for (its `durable`, written later, replaces ours).
    pub fn merge(&mut self, more: Effects) {
        self.watch.extend(more.watch);
        self.launch.extend(more.launch);
        self.end_after_steps.extend(more.end_after_steps);
        self.reschedule |= more.reschedule;
        if more.durable.is_some() {
            self.durable = more.durable;
        }
        self.wake_at = match (self.wake_at, more.wake_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// A supervisor to watch.
#[derive(Debug)]
pub struct Watch {
    /// Its job.
    pub job: u32,
    /// Its step, for a step's supervisor.
    pub step: Option<u32>,
    /// Its pid.
    pub pid: i32,
    /// For a supervisor this daemon started: the read end of the pipe it closes once the
    /// job's end is in `status.json` (see
    /// [`crate::daemon::supervision::launch::Prepared::start`]). The end is then recorded
    /// without waiting for the supervisor to make the file durable and exit.
    pub ended: Option<std::os::fd::OwnedFd>,
    /// A pidfd for it, when it is not the daemon's child (see
    /// [`crate::daemon::supervision::launch::Started`]).
    pub pidfd: Option<std::os::fd::OwnedFd>,
}

/// A job (or the tasks of an array) checked and numbered, counted against its user, whose
/// paths are still to be checked (see [`Core::reserve`]).
pub struct Reserved {
    /// The job, or the array's tasks in index order, with their ids.
    pub jobs: Vec<Job>,
    /// Script, environment, arguments, stored with it.
    pub payload: crate::daemon::store::Payload,
    /// Notices for the submitter.
    pub warnings: Vec<String>,
    /// The ids set aside.
    pub ids: std::ops::Range<u32>,
}

/// A job (or the tasks of an array) whose insert is queued (see [`Core::stage`]);
/// [`Core::admit`] it once durable.
pub struct Staged {
    /// The job, or the array's tasks in index order (the first one's id is the array's).
    pub jobs: Vec<Job>,
    /// Notices for the submitter.
    pub warnings: Vec<String>,
    /// Resolves when the job is stored.
    pub durable: Durable,
}

/// The daemon's state.
pub struct Core {
    /// The configuration.
    pub config: Config,
    /// What the daemon found of the machine at its start.
    pub machine: Machine,
    store: Store,
    pub(in crate::daemon) writer: Writer,
    /// Jobs that are active or ended within MinJobAge, by id.
    pub jobs: BTreeMap<u32, Job>,
    /// The queue, the jobs holding resources and those waiting on a dependency.
    pub(in crate::daemon) index: job_index::JobIndex,
    next_id: u32,
    /// What jobs hold of the node's CPUs, memory and GPUs.
    resources: resource_ledger::ResourceLedger,
    /// What the GPU watch's looks found.
    gpu_watch: gpu_watch_state::GpuWatchState,
    exe: PathBuf,
    jobs_dir: PathBuf,
    /// When the daemon started.
    pub started_at: u64,
    /// Bumped whenever a job ends, for waiters (`sbatch --wait`).
    pub ended: tokio::sync::watch::Sender<u64>,
    /// The running steps of each job.
    pub(in crate::daemon) steps: steps::Steps,
    /// Each user's pending and running jobs, for the submit limit.
    active: limits::Active,
    /// The second of the last [`Core::purge`]: MinJobAge is counted in seconds, so one walk
    /// over the jobs a second is enough, however often they are listed.
    purged_at: u64,
    /// The jobs being ended, to find supervisors that outlive their end (see `overdue`).
    overdue: overdue::Overdue,
    /// Fair-share usage and what the queue's priorities were computed with.
    priorities: crate::daemon::scheduling::priority::Priorities,
    /// The notices of job events waiting for the runtime to send them.
    outbox: notices::Outbox,
    /// The advance reservations.
    reservation_book: reservations::ReservationBook,
}

impl Core {
    /// Opens the store under the configured state directory and loads recent jobs, for a
    /// daemon on `machine`.
    pub fn open(config: Config, machine: Machine) -> Result<Core, StoreError> {
        let jobs_dir = config.state_dir.join("jobs");
        let _ = std::fs::create_dir_all(&jobs_dir);
        if config.mode == crate::config::Mode::System {
            // Users pass through it to their own job's script.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&jobs_dir, std::fs::Permissions::from_mode(0o711));
        }
        let db = config.state_dir.join("slurmlet.db");
        Core::on_store(config, machine, &db, jobs_dir)
    }

    /// A core whose store lives in memory only, for as long as the core: nothing is read
    /// from or written to a file, and no job directory is made (a job that starts would
    /// name one under the configured state directory). The scheduler's unit tests build
    /// one in well under a millisecond.
    pub fn in_memory(config: Config) -> Core {
        let db = Store::memory_path();
        let jobs_dir = config.state_dir.join("jobs");
        Core::on_store(config, Machine::default(), &db, jobs_dir).expect("a store in memory opens")
    }

    /// A second core on this one's store, as the daemon started again finds it once all
    /// that was queued is durable (the first core keeps a store in memory alive).
    #[cfg(test)]
    pub(crate) fn restarted(&self) -> Core {
        self.flush();
        let (config, db) = (self.config.clone(), self.store.path().to_path_buf());
        Core::on_store(config, Machine::default(), &db, self.jobs_dir.clone()).expect("the store opens again")
    }

    /// Where this core's store is (a file, or a [`Store::memory_path`]).
    #[cfg(test)]
    pub(crate) fn store_path(&self) -> PathBuf {
        self.store.path().to_path_buf()
    }

    /// A core on the store at `db` (a file, or a [`Store::memory_path`]), loading its
    /// recent jobs; the jobs' directories are under `jobs_dir`.
    fn on_store(config: Config, machine: Machine, db: &Path, jobs_dir: PathBuf) -> Result<Core, StoreError> {
        let store = Store::open(db)?;
        let writer = Writer::start(db)?;
        let now = crate::sys::now();
        let next_id = store.next_job_id().map_err(StoreError::found_at_start)?;
        // Read before anything is queued for the writer: a store in memory (the unit tests')
        // locks a table that its writer is writing.
        let failed_gpus = store.failed_gpus().map_err(StoreError::found_at_start)?;
        let reservation_book =
            reservations::ReservationBook::of(store.reservations().map_err(StoreError::found_at_start)?, now);
        let jobs: BTreeMap<u32, Job> = store
            .load_recent(now.saturating_sub(config.min_job_age as u64))
            .map_err(StoreError::found_at_start)?
            .into_iter()
            .map(|j| (j.id, j))
            .collect();
        let index = job_index::JobIndex::of(&jobs, Self::queued, Self::waits_on_dependency);
        let mut active = limits::Active::default();
        for j in jobs.values().filter(|j| !j.state().is_finished()) {
            active.add(j.uid, &j.qos);
        }
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("slurmlet"));
        let ledger = priorities::open_usage(&store, &writer, &config, now).map_err(StoreError::found_at_start)?;
        let seen = jobs.values().filter(|j| !j.state().is_finished()).map(|j| (j.account.to_string(), j.uid)).collect();
        let mut gpu_watch = gpu_watch_state::GpuWatchState::new(config.gpu_history_resolution);
        gpu_watch.failed = failed_gpus;
        Ok(Core {
            machine,
            resources: resource_ledger::ResourceLedger::new(&config),
            gpu_watch,
            config,
            store,
            writer,
            jobs,
            index,
            next_id,
            exe,
            jobs_dir,
            started_at: now,
            ended: tokio::sync::watch::channel(0).0,
            steps: Default::default(),
            active,
            purged_at: 0,
            overdue: Default::default(),
            priorities: crate::daemon::scheduling::priority::Priorities { ledger, seen, ..Default::default() },
            outbox: Default::default(),
            reservation_book,
        })
    }

    /// The directory of the current run of job `id` (each run of a requeued job has its
    /// own, so that the removal of the last run's never meets the next run's files).
    pub fn job_dir(&self, id: u32) -> PathBuf {
        stepd::job_dir(&self.jobs_dir, id, self.jobs.get(&id).map_or(0, |j| j.restarts))
    }

    /// Whether a job waits in the scheduling queue: pending and not held.
    pub(in crate::daemon) fn queued(job: &Job) -> bool {
        job.state() == JobState::Pending && !job.held
    }

    /// Whether `job` is pending with a dependency yet to be satisfied.
    fn waits_on_dependency(job: &Job) -> bool {
        job.state() == JobState::Pending && !job.dependency.is_empty()
    }

    /// Notes that `job` (new, or its dependency changed) may wait on a dependency.
    pub(in crate::daemon) fn track_dependency(&mut self, job: &Job) {
        if Self::waits_on_dependency(job) {
            self.index.dependent.insert(job.id);
        }
    }

    /// The jobs as a dependency reads them: in memory, else in the store.
    pub(in crate::daemon) fn lookup(&self) -> depend::Known<'_> {
        depend::Known { jobs: &self.jobs, store: &self.store }
    }

    /// The ids of the jobs `r` names: the job; every task in memory of the array `r.job`;
    /// or task `r.task` of that array. Empty when none is known. An array's tasks have the
    /// ids from the array's on, so they are found even once its first task has left memory.
    pub fn ids_named(&self, r: crate::daemon::model::job_ref::JobRef) -> Vec<u32> {
        let of_array = |j: &Job| j.array.is_some_and(|a| a.job_id == r.job);
        let tasks: Vec<(u32, u32)> = self
            .jobs
            .range(r.job..)
            .take_while(|(_, j)| of_array(j))
            .filter_map(|(id, j)| j.array.map(|a| (*id, a.task_id)))
            .collect();
        if tasks.is_empty() {
            let plain = r.task.is_none() && self.jobs.contains_key(&r.job);
            return if plain { vec![r.job] } else { Vec::new() };
        }
        tasks.into_iter().filter(|(_, t)| r.task.is_none_or(|want| want == *t)).map(|(id, _)| id).collect()
    }

    /// The jobs that hold resources.
    pub(in crate::daemon) fn holding(&self) -> impl Iterator<Item = &Job> {
        self.index.holding.iter().map(|id| &self.jobs[id])
    }

    /// The node's GPU with device index `index` (an NVIDIA GPU known by its index alone when
    /// the node no longer lists it).
    fn node_gpu(&self, index: u32) -> crate::gpu::Gpu {
        self.config.gpus.iter().find(|g| g.index == index).cloned().unwrap_or_else(|| crate::gpu::Gpu::nvidia(index))
    }

    /// The supervisors of job `id` still running: its steps', then its own.
    pub(in crate::daemon) fn running_supervisors(&self, id: u32) -> Vec<i32> {
        let mut pids = self.steps.supervisors(id);
        pids.extend(self.jobs.get(&id).and_then(|j| j.stepd_pid));
        pids
    }

    /// Counts a job of `uid` that is pending or running again (requeued).
    pub(in crate::daemon) fn count_active(&mut self, uid: u32, qos: &str) {
        self.active.add(uid, qos);
    }

    /// Takes the keys of `new` that a reload may change (see [`Config::reloaded`]); returns
    /// those that changed but wait for the next start.
    pub fn reload(&mut self, new: Config) -> Vec<&'static str> {
        let reloaded = self.config.reloaded(new);
        self.config = reloaded.config;
        // Weights, shares or accounts may have changed: the next pass computes every
        // priority again.
        self.priorities.computed_at = None;
        reloaded.restart_only
    }

    /// Drops finished jobs older than MinJobAge from memory (they stay in the store).
    pub fn purge(&mut self, now: u64) {
        if now == self.purged_at {
            return;
        }
        self.purged_at = now;
        let age = self.config.min_job_age as u64;
        let before = self.jobs.len();
        self.jobs.retain(|_, j| !j.state().is_finished() || j.end_time + age >= now);
        if self.jobs.len() < before {
            text::Text::forget_unused();
        }
    }

    /// Resolves once every change queued so far is in the store.
    pub fn stored(&self) -> Durable {
        self.writer.barrier()
    }

    /// Waits until every queued change is durable.
    pub fn flush(&self) {
        self.writer.flush();
    }

    /// The change counter (see [`Writer::changes`]).
    pub fn changes(&self) -> std::sync::Arc<tokio::sync::watch::Sender<u64>> {
        self.writer.changes()
    }

    /// Moves the change counter: something the board shows has changed.
    pub(in crate::daemon) fn changed(&self) {
        self.writer.changed();
    }

    /// Queues the removal of the history older than `history_days` (none when it is not
    /// set); jobs still shown by squeue (MinJobAge) are kept. The GPU samples older than
    /// `gpu_history_days` go too.
    pub fn purge_history(&self, now: u64) {
        let keep = self.config.gpu_history_days as u64 * 86400;
        drop(self.writer.prune_gpu_samples(now.saturating_sub(keep) as i64));
        if let Some(days) = self.config.history_days {
            let before =
                now.saturating_sub(days as u64 * 86400).min(now.saturating_sub(self.config.min_job_age as u64));
            drop(self.writer.purge(before));
        }
    }

    /// The binary supervisors are started from.
    pub fn exe(&self) -> &std::path::Path {
        &self.exe
    }

    /// Resources in use by running jobs.
    pub fn used(&self) -> Resources {
        self.resources.used
    }
}
