//! The daemon's state and every change to it: submit, schedule, launch, cancel, finish,
//! recover. All methods are synchronous and run under one lock; they return [`Effects`] that
//! the async side carries out (watching new supervisors, arming the begin-time timer).

use super::caller::Caller;
use super::job::{Job, JobState, Resources};
use super::plan::{Plan, Verdict, NEVER};
use super::step_record::StepEnding;
use super::store::{Store, StoreError};
use super::submit;
use super::writer::{Durable, Writer};
use crate::api::types::{errno, ApiError, SignalScope};
use crate::config::Config;
use crate::stepd::EndCause;
use crate::stepd::{self, containment, EndStatus};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

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
    /// job's end is in `status.json` (see [`super::launch::Prepared::start`]). The end is
    /// then recorded without waiting for the supervisor to make the file durable and exit.
    pub ended: Option<std::os::fd::OwnedFd>,
    /// A pidfd for it, when it is not the daemon's child (see [`super::launch::Started`]).
    pub pidfd: Option<std::os::fd::OwnedFd>,
}

/// A job (or the tasks of an array) checked and numbered, whose insert is queued;
/// [`Core::admit`] it once durable.
pub struct Staged {
    /// The job, or the array's tasks in index order (the first one's id is the array's).
    pub jobs: Vec<Job>,
    /// Notices for the submitter.
    pub warnings: Vec<String>,
    /// Resolves when the job is stored.
    pub durable: Durable,
}

/// How many waiting jobs get a reservation in one pass; later ones may still start now if
/// they fit around the reservations.
const MAX_RESERVATIONS: usize = 256;

/// The daemon's state.
pub struct Core {
    /// The configuration.
    pub config: Config,
    store: Store,
    pub(super) writer: Writer,
    /// Jobs that are active or ended within MinJobAge, by id.
    pub jobs: BTreeMap<u32, Job>,
    /// Pending jobs that are not held, in scheduling order (priority, then submit order).
    pub(super) queue: BTreeSet<(Reverse<u32>, u32)>,
    /// Jobs that hold resources (running or completing): a scheduling pass looks at these
    /// and the queue, never at the finished jobs kept in memory.
    holding: BTreeSet<u32>,
    /// Pending jobs with a dependency yet to be satisfied: a scheduling pass settles these
    /// without reading the whole queue.
    dependent: BTreeSet<u32>,
    next_id: u32,
    free_gpus: BTreeSet<u32>,
    used: Resources,
    exe: PathBuf,
    jobs_dir: PathBuf,
    /// When the daemon started.
    pub started_at: u64,
    /// Bumped whenever a job ends, for waiters (`sbatch --wait`).
    pub ended: tokio::sync::watch::Sender<u64>,
    /// The running steps of each job.
    pub(super) steps: super::steps::Steps,
    /// Each user's pending and running jobs, for the submit limit.
    active: super::limits::Active,
    /// The second of the last [`Core::purge`]: MinJobAge is counted in seconds, so one walk
    /// over the jobs a second is enough, however often they are listed.
    purged_at: u64,
}

/// A cancel/signal request that could not be carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct CancelError {
    /// Slurm's error number.
    pub code: i32,
    /// Slurm's text.
    pub message: String,
}

fn cancel_error(code: i32, message: &str) -> CancelError {
    CancelError { code, message: message.into() }
}

impl Core {
    /// Opens the store under the configured state directory and loads recent jobs.
    pub fn open(config: Config) -> Result<Core, StoreError> {
        let jobs_dir = config.state_dir.join("jobs");
        let _ = std::fs::create_dir_all(&jobs_dir);
        if config.mode == crate::config::Mode::System {
            // Users pass through it to their own job's script.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&jobs_dir, std::fs::Permissions::from_mode(0o711));
        }
        let db = config.state_dir.join("slurmlet.db");
        let store = Store::open(&db)?;
        let writer = Writer::start(&db)?;
        let now = crate::options::now();
        let next_id = store.next_job_id()?;
        let jobs: BTreeMap<u32, Job> =
            store.load_recent(now.saturating_sub(config.min_job_age as u64))?.into_iter().map(|j| (j.id, j)).collect();
        let queue = jobs.values().filter(|j| Self::queued(j)).map(|j| (Reverse(j.priority), j.id)).collect();
        let holding = jobs.values().filter(|j| j.state().holds_resources()).map(|j| j.id).collect();
        let dependent = jobs.values().filter(|j| Self::waits_on_dependency(j)).map(|j| j.id).collect();
        let mut active = super::limits::Active::default();
        for j in jobs.values().filter(|j| !j.state().is_finished()) {
            active.add(j.uid);
        }
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("slurmlet"));
        Ok(Core {
            free_gpus: config.gpus.iter().map(|g| g.index).collect(),
            config,
            store,
            writer,
            jobs,
            queue,
            holding,
            dependent,
            next_id,
            used: Resources::default(),
            exe,
            jobs_dir,
            started_at: now,
            ended: tokio::sync::watch::channel(0).0,
            steps: Default::default(),
            active,
            purged_at: 0,
        })
    }

    fn capacity(&self) -> Resources {
        Resources { cpus: self.config.cpus, mem_mb: self.config.memory, gpus: self.config.gpus.len() as u32 }
    }

    /// The directory of the current run of job `id` (each run of a requeued job has its
    /// own, so that the removal of the last run's never meets the next run's files).
    pub fn job_dir(&self, id: u32) -> PathBuf {
        stepd::job_dir(&self.jobs_dir, id, self.jobs.get(&id).map_or(0, |j| j.restarts))
    }

    /// Re-adopts the jobs that were running when the daemon stopped. Their resources are
    /// fenced (held) until their processes are known to be gone, so no GPU is given twice.
    /// A job whose supervisor died without recording an end is killed and ends NODE_FAIL;
    /// one that no supervisor ever took up (the daemon stopped right after giving it
    /// resources) waits again.
    pub fn recover(&mut self) -> Effects {
        let mut effects = Effects::default();
        let active: Vec<u32> = self.holding.iter().copied().collect();
        for id in &active {
            // The store keeps a job's GPUs as indices: the node's records stand for them.
            let gpus: Vec<crate::gpu::Gpu> = self.jobs[id].gpus.iter().map(|g| self.node_gpu(g.index)).collect();
            let job = self.jobs.get_mut(id).expect("a holding job is known");
            self.used = self.used.plus(&job.req);
            for g in &gpus {
                self.free_gpus.remove(&g.index);
            }
            job.gpus = gpus;
        }
        for id in active {
            let dir = self.job_dir(id);
            self.recover_step_records(id);
            if let Some(status) = stepd::read_status(&dir) {
                self.finish(id, Some(status));
                continue;
            }
            match stepd::claim::owner(&dir) {
                stepd::claim::Owner::Alive(pid) => self.adopt(id, pid, &mut effects),
                stepd::claim::Owner::Never => {
                    tracing::info!(job = id, "its supervisor never started; the job waits again");
                    self.requeue_unstarted(id);
                }
                // It may have written its status between the first look and its exit.
                stepd::claim::Owner::Died(pid) => match stepd::read_status(&dir) {
                    Some(status) => self.finish(id, Some(status)),
                    None => {
                        tracing::warn!(job = id, "supervisor gone without a status; fencing the job");
                        self.fence_and_fail(id, Some(pid));
                    }
                },
            }
        }
        let orphans: Vec<u32> =
            self.jobs.values().filter(|j| j.interactive && j.state() == JobState::Pending).map(|j| j.id).collect();
        for id in orphans {
            tracing::info!(job = id, "cancelling a pending interactive job: its client left with the old daemon");
            let _ = self.cancel_abandoned(id);
        }
        effects.reschedule = true;
        effects
    }

    /// Watches the running supervisor `pid` of job `id` again, and its steps'.
    fn adopt(&mut self, id: u32, pid: i32, effects: &mut Effects) {
        tracing::info!(job = id, pid, "re-adopted running job");
        if let Some(j) = self.jobs.get_mut(&id) {
            j.stepd_pid = Some(pid);
        }
        effects.watch.push(Watch { job: id, step: None, pid, ended: None, pidfd: None });
        let dir = self.job_dir(id);
        let steps_dir = super::step_spec::steps_dir(&dir);
        for found in super::step_spec::running_steps(&dir) {
            let (step, pid) = (found.step, found.pid);
            tracing::info!(job = id, step, pid, "re-adopted running step");
            self.steps.adopt(id, found, &steps_dir);
            effects.watch.push(Watch { job: id, step: Some(step), pid, ended: None, pidfd: None });
        }
        if self.jobs[&id].state() == JobState::Completing {
            // Its cancel may not have reached every supervisor before the old daemon
            // stopped (the batch script waits for the steps): tell them again; a second
            // SIGTERM changes nothing for one that heard it.
            for pid in self.steps.supervisors(id).into_iter().chain(std::iter::once(pid)) {
                let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
            }
        }
        self.tell_supervisors(id);
    }

    /// Puts job `id` back in the queue: it was given resources, but no supervisor took it
    /// up before the daemon stopped, so nothing of it ran (see [`stepd::claim`]). A job
    /// cancelled meanwhile ends cancelled instead.
    fn requeue_unstarted(&mut self, id: u32) {
        let Some(job) = self.jobs.get_mut(&id) else { return };
        if job.state() == JobState::Completing {
            let now = crate::options::now();
            self.finish(id, Some(EndStatus { wait_status: 0, cause: EndCause::Cancelled, end_time: now, usage: None }));
            return;
        }
        self.used = self.used.minus(&job.req);
        self.free_gpus.extend(job.gpus.drain(..).map(|g| g.index));
        self.holding.remove(&id);
        job.state = Some(JobState::Pending);
        job.start_time = 0;
        job.reason = "None".into();
        job.stepd_pid = None;
        // Nobody waits for it: the job's next allocation is written after it.
        drop(self.writer.update(job));
        if Self::queued(job) {
            self.queue.insert((Reverse(job.priority), id));
        }
    }

    /// Whether a job waits in the scheduling queue: pending and not held.
    pub(super) fn queued(job: &Job) -> bool {
        job.state() == JobState::Pending && !job.held
    }

    /// Kills whatever is left of a job whose supervisor (`supervisor`, when known) vanished
    /// and waits until it is gone (see [`super::fence`]), then records the job as failed and
    /// gives its resources back.
    fn fence_and_fail(&mut self, id: u32, supervisor: Option<i32>) {
        super::fence::kill_job(&self.job_dir(id), supervisor);
        self.finish(id, None);
    }

    /// Checks a job, gives it the next id (an array, one id per task), creates its output
    /// directories and queues its insert. The job becomes visible and schedulable with
    /// [`Core::admit`], once the insert is durable.
    pub fn stage(
        &mut self,
        desc: &crate::api::types::JobDescMsg,
        top_script: Option<&str>,
        caller: Caller,
        interactive: bool,
    ) -> Result<Staged, ApiError> {
        let now = crate::options::now();
        let mut new = submit::build(desc, top_script, caller, &self.config, now, interactive)?;
        let array = super::array::requested(desc, &self.config)?;
        if let Some(text) = desc.dependency.as_deref().filter(|d| !d.is_empty()) {
            new.job.dependency = super::depend::on_submit(text, &self.lookup())?.as_str().into();
        }
        let count = array.as_ref().map_or(1, |a| a.indices.len() as u32);
        let active = self.active.of(caller.uid).saturating_add(count - 1);
        super::limits::check_submit(&self.config.limits, &new.job, active)?;
        if new.job.held {
            new.job.reason = "JobHeldUser".into();
        }
        let jobs = match &array {
            Some(spec) => {
                if desc.standard_output.as_deref().is_none_or(str::is_empty) {
                    new.job.stdout = super::array::DEFAULT_OUTPUT.into();
                }
                super::array::tasks(&new.job, spec, self.next_id)
            }
            None => vec![Job { id: self.next_id, ..new.job }],
        };
        for job in &jobs {
            submit::prepare_output_dirs_as_owner(job, &self.config.node_name)?;
        }
        self.next_id += count;
        // Counted from now on, so that racing submits cannot pass the limit together.
        for _ in 0..count {
            self.active.add(caller.uid);
        }
        let durable = self.writer.insert_all(&jobs, new.payload);
        Ok(Staged { jobs, warnings: new.warnings, durable })
    }

    /// Staged jobs that could not be stored: they no longer count against their user.
    pub fn unstage(&mut self, jobs: &[Job]) {
        for job in jobs {
            self.active.remove(job.uid);
        }
    }

    /// Adds stored jobs to the queue; a scheduling pass follows.
    pub fn admit(&mut self, jobs: Vec<Job>) -> Effects {
        let mut effects = Effects::default();
        for job in jobs {
            if Self::queued(&job) {
                self.queue.insert((Reverse(job.priority), job.id));
                effects.reschedule = true;
            }
            self.track_dependency(&job);
            self.jobs.insert(job.id, job);
        }
        effects
    }

    /// Whether `job` is pending with a dependency yet to be satisfied.
    fn waits_on_dependency(job: &Job) -> bool {
        job.state() == JobState::Pending && !job.dependency.is_empty()
    }

    /// Notes that `job` (new, or its dependency changed) may wait on a dependency.
    pub(super) fn track_dependency(&mut self, job: &Job) {
        if Self::waits_on_dependency(job) {
            self.dependent.insert(job.id);
        }
    }

    /// The jobs as a dependency reads them: in memory, else in the store.
    pub(super) fn lookup(&self) -> super::depend::Known<'_> {
        super::depend::Known { jobs: &self.jobs, store: &self.store }
    }

    /// The ids of the jobs `r` names: the job; every task in memory of the array `r.job`;
    /// or task `r.task` of that array. Empty when none is known. An array's tasks have the
    /// ids from the array's on, so they are found even once its first task has left memory.
    pub fn ids_named(&self, r: super::request::JobRef) -> Vec<u32> {
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

    /// The availability profile now: free resources, and running jobs' releases at their
    /// time limits.
    fn plan(&self, now: u64) -> Plan {
        let releases = self.holding().map(|j| (j.limit_end(now).unwrap_or(NEVER), j.req));
        Plan::new(now, self.capacity().minus(&self.used), releases)
    }

    /// The jobs that hold resources.
    pub(super) fn holding(&self) -> impl Iterator<Item = &Job> {
        self.holding.iter().map(|id| &self.jobs[id])
    }

    /// Pending, not held job ids in scheduling order: priority, then submit order.
    fn pending_in_order(&self) -> Vec<u32> {
        self.queue.iter().map(|(_, id)| *id).collect()
    }

    /// One scheduling pass: settles dependencies, starts what may start now, records
    /// pending reasons.
    pub fn schedule(&mut self) -> Effects {
        tracing::debug!(queued = self.queue.len(), "scheduling pass");
        let now = crate::options::now();
        let mut effects = Effects::default();
        let waiting_on_deps = self.settle_dependencies(now, &mut effects);
        let mut plan = self.plan(now);
        let mut reservations = 0;
        let mut to_start = Vec::new();
        let limits = self.config.limits;
        let mut held = if limits.limits_starts() { super::limits::held(self.holding()) } else { Default::default() };
        let mut array_running = super::array::running(self.holding());
        for id in self.pending_in_order() {
            let job = &self.jobs[&id];
            let reason = if let Some(r) = waiting_on_deps.get(&id) {
                Some(*r)
            } else if job.begin_time > now {
                effects.wake_at = Some(effects.wake_at.map_or(job.begin_time, |w| w.min(job.begin_time)));
                Some("BeginTime")
            } else if self.exceeds_partition_limit(job) {
                Some("PartitionTimeLimit")
            } else if super::array::throttled(job, &array_running) {
                Some("JobArrayTaskLimit")
            } else if limits.limits_starts() {
                super::limits::blocked(&limits, held.get(&job.uid).copied().unwrap_or_default(), job)
            } else {
                None
            };
            let reason = match reason {
                Some(r) => r,
                None => {
                    let reserve = reservations < MAX_RESERVATIONS;
                    match plan.place(&job.req, job.limit_secs(), reserve) {
                        Verdict::StartNow => {
                            if limits.limits_starts() {
                                held.entry(job.uid).or_default().add(job);
                            }
                            if let Some(a) = job.array {
                                *array_running.entry(a.job_id).or_default() += 1;
                            }
                            to_start.push(id);
                            continue;
                        }
                        Verdict::Wait { fits_now } => {
                            reservations += 1;
                            if fits_now {
                                "Priority"
                            } else {
                                "Resources"
                            }
                        }
                    }
                }
            };
            if self.jobs[&id].reason != reason {
                let job = self.jobs.get_mut(&id).expect("pending job exists");
                job.reason = reason.into();
            }
        }
        // A job that starts now may be what an `after` dependency waits for.
        effects.reschedule |= !to_start.is_empty() && !waiting_on_deps.is_empty();
        for id in to_start {
            effects.launch.push((id, self.allocate(id, now)));
        }
        effects
    }

    /// Re-reads the dependencies of the queued jobs that have one: a satisfied one is
    /// cleared (and stored so), one that can never be satisfied cancels its job when it asked
    /// for that (`--kill-on-invalid-dep=yes`). Returns the jobs that must go on waiting,
    /// with their pending reason.
    fn settle_dependencies(&mut self, now: u64, effects: &mut Effects) -> std::collections::HashMap<u32, &'static str> {
        use super::depend::Standing;
        // Those no longer pending, or whose dependency is gone, leave the set; held ones stay
        // in it, unread until they are released.
        self.dependent.retain(|id| self.jobs.get(id).is_some_and(Self::waits_on_dependency));
        let queued: Vec<u32> = self.dependent.iter().copied().filter(|id| Self::queued(&self.jobs[id])).collect();
        let mut waiting = std::collections::HashMap::new();
        for id in queued {
            let job = &self.jobs[&id];
            let Some(spec) = super::depend::spec_of(job) else { continue };
            let (standing, text) = super::depend::evaluate(job, &spec, &self.lookup(), now);
            let job = self.jobs.get_mut(&id).expect("queued job exists");
            if job.dependency != text.as_str() {
                job.dependency = text.as_str().into();
            }
            match standing {
                Standing::Satisfied => {
                    drop(self.writer.update(job));
                }
                Standing::Waiting(at) => {
                    if let Some(at) = at {
                        effects.wake_at = Some(effects.wake_at.map_or(at, |w| w.min(at)));
                    }
                    waiting.insert(id, "Dependency");
                }
                Standing::Never if job.kill_on_invalid_dep => {
                    tracing::info!(job = id, "its dependency can never be satisfied; cancelling it");
                    self.end_pending(id, "DependencyNeverSatisfied", None);
                    effects.reschedule = true;
                }
                Standing::Never => {
                    waiting.insert(id, "DependencyNeverSatisfied");
                }
            }
        }
        waiting
    }

    fn exceeds_partition_limit(&self, job: &Job) -> bool {
        let Some(p) = self.config.partitions.iter().find(|p| job.partition == p.name) else { return true };
        match (p.max_time, job.time_limit) {
            (Some(max), Some(t)) => t > max,
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// The node's GPU with device index `index` (an NVIDIA GPU known by its index alone when
    /// the node no longer lists it).
    fn node_gpu(&self, index: u32) -> crate::gpu::Gpu {
        self.config.gpus.iter().find(|g| g.index == index).cloned().unwrap_or_else(|| crate::gpu::Gpu::nvidia(index))
    }

    /// Gives a pending job its resources and records it as running. Its supervisor starts
    /// once that record is durable ([`Core::start_supervisor`]).
    fn allocate(&mut self, id: u32, now: u64) -> Durable {
        tracing::debug!(job = id, "allocating");
        let indices: Vec<u32> = self.free_gpus.iter().copied().take(self.jobs[&id].req.gpus as usize).collect();
        for i in &indices {
            self.free_gpus.remove(i);
        }
        let gpus = indices.into_iter().map(|i| self.node_gpu(i)).collect();
        let job = self.jobs.get_mut(&id).expect("launching a known job");
        self.queue.remove(&(Reverse(job.priority), id));
        self.holding.insert(id);
        job.gpus = gpus;
        job.state = Some(JobState::Running);
        job.start_time = now;
        job.reason_prev = job.reason.clone();
        job.reason = "None".into();
        self.used = self.used.plus(&job.req);
        self.writer.update(job)
    }

    /// The id job `id`'s payload (batch script, environment, arguments) is stored under: an
    /// array task's is its array's.
    pub fn payload_id(&self, id: u32) -> u32 {
        self.jobs.get(&id).and_then(|j| j.array).map_or(id, |a| a.job_id)
    }

    /// Gathers what the supervisor of a job given resources needs; the caller writes its
    /// files and, once the allocation is durable and [`Core::confirm_launch`] agrees, starts
    /// it without the lock and reports with [`Core::supervisor_started`]. `Err`: the job does
    /// not start (cancelled meanwhile, or its payload is unreadable).
    /// `payload` is the job's, read without the lock from the id [`Core::payload_id`] gives.
    pub fn prepare_launch(
        &mut self,
        id: u32,
        payload: Result<super::store::Payload, StoreError>,
    ) -> Result<super::launch::Prepared, Effects> {
        self.confirm_launch(id)?;
        let job = &self.jobs[&id];
        match payload {
            Ok(p) => {
                let env = if job.interactive {
                    super::launch::allocation_env(job, &self.config)
                } else {
                    super::launch::batch_env(job, &self.config, &p.environment)
                };
                Ok(super::launch::prepare(job, &self.config, &p.script, &p.argv, env, &self.exe, &self.job_dir(id)))
            }
            Err(e) => Err(self.launch_failed(id, &e.to_string())),
        }
    }

    /// Whether job `id`, given resources, may still start its supervisor: it is running and
    /// has none yet. A job cancelled before its supervisor started ends here. `Err`: it does
    /// not start.
    pub fn confirm_launch(&mut self, id: u32) -> Result<(), Effects> {
        let now = crate::options::now();
        let Some(job) = self.jobs.get(&id) else { return Err(Effects::default()) };
        if job.state() != JobState::Running || job.stepd_pid.is_some() {
            if job.state() == JobState::Completing && job.stepd_pid.is_none() {
                self.finish(
                    id,
                    Some(EndStatus { wait_status: 0, cause: EndCause::Cancelled, end_time: now, usage: None }),
                );
                return Err(Effects::reschedule());
            }
            return Err(Effects::default());
        }
        Ok(())
    }

    /// Records the outcome of starting a job's supervisor: its pid and the read end of its
    /// end pipe.
    pub fn supervisor_started(&mut self, id: u32, result: std::io::Result<super::launch::Started>) -> Effects {
        match result {
            Ok(super::launch::Started { pid, ended, pidfd }) => {
                tracing::debug!(job = id, pid, "supervisor started");
                if let Some(j) = self.jobs.get_mut(&id) {
                    j.stepd_pid = Some(pid);
                    if j.state() == JobState::Completing {
                        // Cancelled while it was starting: the supervisor ends it.
                        let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
                    }
                }
                Effects {
                    watch: vec![Watch { job: id, step: None, pid, ended: Some(ended), pidfd }],
                    ..Default::default()
                }
            }
            Err(e) => self.launch_failed(id, &e.to_string()),
        }
    }

    /// Job `id` could not be started (`why`): it ends as failed.
    pub fn launch_failed(&mut self, id: u32, why: &str) -> Effects {
        tracing::error!(job = id, "cannot start the job: {why}");
        let now = crate::options::now();
        self.finish(
            id,
            Some(EndStatus { wait_status: 1 << 8, cause: EndCause::LaunchFailed, end_time: now, usage: None }),
        );
        Effects::reschedule()
    }

    /// Records the end of a running job from its supervisor's status (`None`: lost), frees
    /// its resources and removes its directory.
    pub fn finish(&mut self, id: u32, status: Option<EndStatus>) {
        tracing::debug!(job = id, "job ended");
        if !self.jobs.get(&id).is_some_and(|j| j.state().holds_resources()) {
            return;
        }
        let end_time = status.as_ref().map(|s| s.end_time).unwrap_or_else(crate::options::now);
        self.record_step_ends(id, end_time);
        let Some(job) = self.jobs.get_mut(&id) else { return };
        let (state, reason) = match &status {
            None => (JobState::NodeFail, "NodeDown"),
            Some(s) => match s.cause {
                EndCause::LaunchFailed => (JobState::Failed, "JobLaunchFailure"),
                EndCause::Cancelled => (JobState::Cancelled, "None"),
                EndCause::TimeLimit => (JobState::Timeout, "TimeLimit"),
                // Cancelled while its script was ending by itself (the cancel waits for the
                // steps first): a cancelled job, as Slurm records it.
                EndCause::Exited if job.cancelled_by.is_some() => (JobState::Cancelled, "None"),
                EndCause::Exited if s.wait_status == 0 => (JobState::Completed, "None"),
                EndCause::Exited => (JobState::Failed, "NonZeroExitCode"),
            },
        };
        job.state = Some(state);
        self.holding.remove(&id);
        self.active.remove(job.uid);
        job.reason = reason.into();
        job.end_time = end_time;
        job.wait_status = status.as_ref().map(|s| s.wait_status);
        job.end_cause = status.as_ref().map(|s| s.cause);
        job.batch_usage = status.as_ref().and_then(|s| s.usage);
        job.stepd_pid = None;
        for pid in self.steps.forget(id) {
            let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
        }
        self.used = self.used.minus(&job.req);
        let gpus: Vec<u32> = job.gpus.iter().map(|g| g.index).collect();
        // The job's directory (its status file) stays until the end is durable.
        let dir = stepd::job_dir(&self.jobs_dir, id, job.restarts);
        // Nobody waits for it: until it is durable, recovery finds the end in the directory.
        drop(self.writer.update_then_remove(job, dir));
        self.free_gpus.extend(gpus);
        if job.requeue_on_end {
            // Its callers schedule next.
            let _ = self.back_to_queue(id);
        }
        self.ended.send_modify(|n| *n += 1);
    }

    /// The supervisors of job `id` still running: its steps', then its own.
    pub(super) fn running_supervisors(&self, id: u32) -> Vec<i32> {
        let mut pids = self.steps.supervisors(id);
        pids.extend(self.jobs.get(&id).and_then(|j| j.stepd_pid));
        pids
    }

    /// Counts a job of `uid` that is pending or running again (requeued).
    pub(super) fn count_active(&mut self, uid: u32) {
        self.active.add(uid);
    }

    /// The supervisor `pid` of job `id` closed its end pipe: if it recorded the job's end
    /// (its processes are gone by then), record it and schedule, before the supervisor has
    /// made the file durable and exited. `None`: nothing recorded (the supervisor died); its
    /// exit decides.
    /// `status` is the job's status file, read without the lock from [`Core::job_dir`].
    pub fn end_recorded(&mut self, id: u32, pid: i32, status: Option<stepd::EndStatus>) -> Option<Effects> {
        if !self.supervises(id, pid) {
            return None;
        }
        let status = status?;
        self.finish(id, Some(status));
        Some(Effects::reschedule())
    }

    /// Whether `pid` is the supervisor of the current run of job `id` (not of a run that
    /// ended before the job was requeued), while it holds resources.
    fn supervises(&self, id: u32, pid: i32) -> bool {
        self.jobs.get(&id).is_some_and(|j| j.state().holds_resources() && j.stepd_pid == Some(pid))
    }

    /// The supervisor `pid` of job `id` exited: record the end, unless it is recorded
    /// already, and schedule. `status` is the job's status file, read without the lock from
    /// [`Core::job_dir`] after the exit.
    pub fn stepd_exited(&mut self, id: u32, pid: i32, status: Option<stepd::EndStatus>) -> Effects {
        if !self.supervises(id, pid) {
            // Ended already (from its status before the exit), or a requeued job's earlier
            // run: its directory, and the process group id in it, belong to the past.
            return Effects::default();
        }
        if status.is_none() {
            self.fence_and_fail(id, Some(pid));
        } else {
            self.finish(id, status);
        }
        Effects::reschedule()
    }

    /// `scancel`: cancels a job (no signal, or SIGKILL) or sends a signal to the processes
    /// `scope` names (the steps, the batch shell, or both and the shell's children).
    pub fn cancel(
        &mut self,
        id: u32,
        signal: Option<i32>,
        scope: SignalScope,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let dir = self.job_dir(id);
        let Some(job) = self.jobs.get_mut(&id) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        let action = if signal.is_some() { "signal" } else { "cancel" };
        if !caller.may_manage(job, &self.config, action) {
            return Err(cancel_error(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        let full_cancel = matches!(signal, None | Some(libc::SIGKILL)) && scope != SignalScope::Batch;
        match job.state() {
            s if s.is_finished() => Err(cancel_error(errno::ALREADY_DONE, "Job/step already completing or completed")),
            JobState::Completing if full_cancel => {
                Err(cancel_error(errno::ALREADY_DONE, "Job/step already completing or completed"))
            }
            JobState::Pending if full_cancel => {
                let reason = job.reason.clone();
                let durable = self.end_pending(id, &reason, Some(caller.uid));
                Ok(Effects { durable: Some(durable), reschedule: true, ..Default::default() })
            }
            JobState::Pending => Err(cancel_error(errno::JOB_PENDING, "Job is pending execution")),
            _ if full_cancel => {
                super::suspend::continue_for_cancel(job, &dir);
                // Its supervisor says it was cancelled even if the script ends by itself first.
                if let Err(e) = std::fs::write(dir.join(stepd::files::CANCELLED), "") {
                    tracing::warn!(job = id, "cannot mark the job as cancelled for its supervisor: {e}");
                }
                job.state = Some(JobState::Completing);
                job.cancelled_by = Some(caller.uid);
                let durable = self.writer.update(job);
                // The steps first, then the batch script, as Slurm does.
                let steps = self.steps.supervisors(id);
                for pid in &steps {
                    let _ = crate::sys::kill_pid(*pid, libc::SIGTERM);
                }
                let mut effects = Effects { durable: Some(durable), ..Default::default() };
                // `-s KILL` does not wait for the steps.
                match job.stepd_pid {
                    Some(pid) if steps.is_empty() || signal == Some(libc::SIGKILL) => {
                        let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
                    }
                    Some(pid) => effects.end_after_steps.push((id, pid)),
                    None => {}
                }
                Ok(effects)
            }
            _ => {
                let sig = signal.unwrap_or(libc::SIGTERM);
                let Some(pgid) = stepd::read_pgid(&dir) else {
                    return Err(cancel_error(errno::ERROR, "Job step not running yet"));
                };
                // The batch shell leads the job's process group.
                let res = match scope {
                    SignalScope::Batch => crate::sys::kill_pid(pgid, sig),
                    SignalScope::Full => containment::of_job(&dir, None).signal_all(sig),
                    SignalScope::Steps => Ok(()),
                };
                res.map_err(|e| cancel_error(errno::ERROR, &e.to_string()))?;
                if scope != SignalScope::Batch {
                    for pid in self.steps.supervisors(id) {
                        let _ = containment::of_step(pid).signal_all(sig);
                    }
                }
                Ok(Effects::default())
            }
        }
    }

    /// Ends pending job `id` as cancelled (by `by`, when a user did it), with `reason`
    /// recorded as what it waited for.
    fn end_pending(&mut self, id: u32, reason: &str, by: Option<u32>) -> Durable {
        let job = self.jobs.get_mut(&id).expect("a pending job exists");
        job.reason_prev = job.reason.clone();
        job.reason = reason.into();
        job.state = Some(JobState::Cancelled);
        self.active.remove(job.uid);
        job.end_time = crate::options::now();
        job.cancelled_by = by;
        job.end_cause = Some(EndCause::Cancelled);
        let key = (Reverse(job.priority), id);
        let durable = self.writer.update(job);
        self.queue.remove(&key);
        self.ended.send_modify(|n| *n += 1);
        durable
    }

    /// `scancel A`, `scancel A_T`: [`Core::cancel`] of the job, or of every task of the array
    /// it names. Tasks it cannot act on (ended, or pending when signalled) are passed over, unless it
    /// can act on none.
    pub fn cancel_named(
        &mut self,
        target: super::request::JobRef,
        signal: Option<i32>,
        scope: SignalScope,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let unknown = cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified");
        self.for_each_named(target, unknown, |core, id| core.cancel(id, signal, scope, caller))
    }

    /// Applies `act` to the job `target` names, or to every task of the array it names.
    /// Tasks it refuses (ended, or not in the state it needs) are passed over, unless it
    /// refuses them all; then its first refusal is the answer. `unknown`: the error when
    /// `target` names no job.
    pub fn for_each_named<E>(
        &mut self,
        target: super::request::JobRef,
        unknown: E,
        mut act: impl FnMut(&mut Core, u32) -> Result<Effects, E>,
    ) -> Result<Effects, E> {
        let ids = self.ids_named(target);
        match ids.as_slice() {
            [] => return Err(unknown),
            [id] => return act(self, *id),
            _ => {}
        }
        let mut effects = Effects::default();
        let mut refusal = None;
        let mut acted = false;
        for id in ids {
            match act(self, id) {
                Ok(more) => {
                    effects.merge(more);
                    acted = true;
                }
                Err(e) => refusal = refusal.or(Some(e)),
            }
        }
        match refusal {
            Some(e) if !acted => Err(e),
            _ => Ok(effects),
        }
    }

    /// Cancels interactive job `id` whose client went away, on its owner's behalf.
    pub fn cancel_abandoned(&mut self, id: u32) -> Option<Effects> {
        let owner = self.jobs.get(&id).map(|j| Caller { uid: j.uid, gid: j.gid })?;
        self.cancel(id, None, SignalScope::Steps, owner).ok()
    }

    /// `scancel JOB.STEP`: ends a step (no signal, or SIGKILL: its supervisor ends its tasks,
    /// SIGKILL after KillWait) or sends its tasks a signal.
    pub fn cancel_step(
        &mut self,
        id: u32,
        step: u32,
        signal: Option<i32>,
        caller: Caller,
    ) -> Result<Effects, CancelError> {
        let Some(job) = self.jobs.get(&id) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        if !caller.may_manage(job, &self.config, "step cancel") {
            return Err(cancel_error(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        let Some(pid) = self.steps.supervisor(id, step) else {
            return Err(cancel_error(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        match signal {
            None | Some(libc::SIGKILL) => {
                self.steps.cancelled(id, step, caller.uid);
                let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
            }
            Some(sig) => {
                let _ = containment::of_step(pid).signal_all(sig);
            }
        }
        Ok(Effects::default())
    }

    /// Applies a re-read configuration. Partitions, KillWait, MinJobAge, history_days,
    /// MaxArraySize, default memory, GPU hiding, per-user limits, operators and private data change at
    /// once; the node's resources, names and paths need a restart: their names are returned
    /// and the old values kept.
    pub fn reload(&mut self, new: Config) -> Vec<&'static str> {
        let old = &self.config;
        let mut kept = Vec::new();
        if new.cpus != old.cpus || new.memory != old.memory {
            kept.push("cpus/memory");
        }
        if new.gpus != old.gpus || new.gpu_type != old.gpu_type {
            kept.push("gpus");
        }
        if new.node_name != old.node_name || new.cluster_name != old.cluster_name {
            kept.push("node_name/cluster_name");
        }
        if new.state_dir != old.state_dir || new.socket != old.socket || new.listen != old.listen {
            kept.push("state_dir/socket/listen");
        }
        self.config.operators = new.operators;
        self.config.private_jobs = new.private_jobs;
        // Jobs queued in a partition that is gone stay pending until it comes back.
        self.config.partitions = new.partitions;
        self.config.kill_wait = new.kill_wait;
        self.config.min_job_age = new.min_job_age;
        self.config.history_days = new.history_days;
        self.config.max_array_size = new.max_array_size;
        self.config.def_mem_per_cpu = new.def_mem_per_cpu;
        self.config.hide_gpus_from_cpu_jobs = new.hide_gpus_from_cpu_jobs;
        self.config.limits = new.limits;
        self.config.default_account = new.default_account;
        self.config.accounts = new.accounts;
        kept
    }

    /// `sbatch --test-only`: checks a job and estimates when it would start, without
    /// submitting it. Returns the id it would get, the start time, CPUs and partition.
    pub fn test_only(
        &self,
        desc: &crate::api::types::JobDescMsg,
        top_script: Option<&str>,
        caller: Caller,
    ) -> Result<Job, ApiError> {
        let now = crate::options::now();
        // Without a script it is an allocation's (srun or salloc --test-only).
        let interactive = desc.script.is_none() && top_script.is_none();
        let mut job = submit::build(desc, top_script, caller, &self.config, now, interactive)?.job;
        job.id = self.next_id;
        let mut plan = self.plan(now);
        let eligible = self.pending_in_order().into_iter().map(|id| &self.jobs[&id]);
        for p in eligible.take(MAX_RESERVATIONS) {
            plan.place(&p.req, p.limit_secs(), true);
        }
        job.start_time = plan.earliest_start(&job.req, job.limit_secs()).unwrap_or(0).max(job.begin_time);
        Ok(job)
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
            super::text::Text::forget_unused();
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

    /// Gives a new step of job `id` its share of the job and writes its spec; returns the
    /// step's directory and spec. The caller starts its supervisor with
    /// [`super::launch::start_supervisor`] and reports with [`Core::step_started`].
    pub fn create_step(
        &mut self,
        id: u32,
        req: &crate::api::step::StepRequest,
        caller: Caller,
    ) -> Result<super::step_spec::NewStep, super::steps::StepRefusal> {
        use super::steps::StepRefusal;
        let job_dir = self.job_dir(id);
        let Some(job) = self.jobs.get(&id) else { return Err(StepRefusal::Fatal("Invalid job id specified".into())) };
        if !caller.may_manage(job, &self.config, "step creation") {
            return Err(StepRefusal::Fatal("Access/permission denied".into()));
        }
        let steps_dir = super::step_spec::steps_dir(&job_dir);
        let granted = self.steps.create(job, req, &self.config, &steps_dir)?;
        let spec = super::step_spec::step_spec(job, &self.config, req, &granted);
        Ok(super::step_spec::NewStep {
            dir: super::step_spec::step_dir(&job_dir, granted.step_id),
            spec,
            held: granted.held,
            record: granted.record,
        })
    }

    /// Records the outcome of starting a step's supervisor.
    pub fn step_started(&mut self, job: u32, step: u32, result: std::io::Result<super::launch::Started>) -> Effects {
        match result {
            Ok(super::launch::Started { pid, ended, pidfd }) => {
                tracing::debug!(job, step, pid, "step supervisor started");
                if let Some(record) = self.steps.started(job, step, pid, crate::options::now()) {
                    drop(self.writer.step_started(record));
                }
                if !self.jobs.get(&job).is_some_and(|j| j.state() == JobState::Running) {
                    // The job ended or is being cancelled while the step started.
                    let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
                }
                Effects {
                    watch: vec![Watch { job, step: Some(step), pid, ended: Some(ended), pidfd }],
                    ..Default::default()
                }
            }
            Err(e) => {
                tracing::error!(job, step, "cannot start the step: {e}");
                self.steps.ended(job, step);
                Effects::default()
            }
        }
    }

    /// Whether job `id` has steps running.
    pub fn has_steps(&self, id: u32) -> bool {
        !self.steps.supervisors(id).is_empty()
    }

    /// A step's tasks are gone: what it held is free for other steps, and its end (as its
    /// supervisor recorded it) goes into the job's accounting.
    pub fn step_ended(&mut self, job: u32, step: u32) {
        tracing::debug!(job, step, "step ended");
        if let Some(cancelled_by) = self.steps.ended(job, step) {
            let dir = super::step_spec::step_dir(&self.job_dir(job), step);
            let end = crate::stepd::step::end::read(&dir);
            let ending = StepEnding::from_status(job, step, end, cancelled_by, crate::options::now());
            drop(self.writer.step_ended(ending));
        }
    }

    /// Job `id` ends at `end`: the steps whose end its supervisor recorded but the daemon
    /// has not heard of yet are recorded as they ended; those still recorded as running,
    /// as ended with the job.
    fn record_step_ends(&mut self, id: u32, end: u64) {
        let job_dir = self.job_dir(id);
        for step in self.steps.running(id) {
            if let Some(ended) = crate::stepd::step::end::read(&super::step_spec::step_dir(&job_dir, step)) {
                let cancelled_by = self.steps.ended(id, step).flatten();
                drop(self.writer.step_ended(StepEnding::from_status(id, step, Some(ended), cancelled_by, end)));
            }
        }
        drop(self.writer.end_steps(id, end));
    }

    /// Completes the accounting of the steps of job `id` from their directories, when the
    /// daemon starts: stores the records of steps whose start the last daemon had not
    /// stored, and the ends of those whose supervisors ended while no daemon ran.
    fn recover_step_records(&mut self, id: u32) {
        let now = crate::options::now();
        for found in super::step_spec::found_steps(&self.job_dir(id)) {
            if let Some(record) = found.record {
                match self.store.has_step(id, found.step) {
                    Ok(true) => {}
                    Ok(false) => drop(self.writer.step_started(record)),
                    Err(e) => tracing::warn!(job = id, step = found.step, "cannot check the step's record: {e}"),
                }
            }
            if !found.alive {
                drop(self.writer.step_ended(StepEnding::from_status(id, found.step, found.end, None, now)));
            }
        }
    }

    /// The running steps' records of job `id` (fresher than the store's).
    pub fn running_step_records(&self, id: u32) -> Vec<super::step_record::StepRecord> {
        self.steps.records(id)
    }

    /// Queues the removal of the history older than `history_days` (none when it is not
    /// set); jobs still shown by squeue (MinJobAge) are kept.
    pub fn purge_history(&self, now: u64) {
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
        self.used
    }
}
