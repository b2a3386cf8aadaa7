//! Scheduling: the passes that settle dependencies, give pending jobs their resources and
//! record why the others wait; the start of a job's supervisor once its allocation is
//! durable; and `--test-only`'s estimate of when a job would start.

use super::{Core, Effects, Watch};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState, Resources};
use crate::daemon::model::refusal::Refusal;
use crate::daemon::scheduling::array;
use crate::daemon::scheduling::depend;
use crate::daemon::scheduling::limits;
use crate::daemon::scheduling::plan::{Disregard, GpuUnits, Hold, Plan, Verdict};
use crate::daemon::scheduling::qos_limits::QosHeld;
use crate::daemon::scheduling::submit;
use crate::daemon::store::writer::Durable;
use crate::daemon::store::StoreError;
use crate::daemon::supervision::launch;
use crate::stepd::{EndCause, EndStatus};
use std::cmp::Reverse;

/// The pending reason of a job that would start but for the GPUs that processes outside
/// the queue use.
pub const GPUS_BUSY_OUTSIDE_QUEUE: &str = "GpusBusyOutsideQueue";

/// The pending reason of a shard job that would start but for the MPS servers of other
/// users on the GPUs with room (a GPU's MPS server serves one user at a time).
pub const MPS_SERVER_OF_OTHER_USER: &str = "GpuMpsServerOfOtherUser";

/// How long the plan counts a running job without a time limit to run, as Slurm's backfill
/// does (a year): a job waiting for its resources gets a reservation then, so that jobs
/// behind it that would hold what it waits for as long wait too, and it is not starved.
const UNLIMITED_RUN_SECS: u64 = 365 * 86_400;

/// When running job `j` is expected to end, as of `now`: at its time limit, or a year on for
/// one without.
pub(super) fn expected_end(j: &Job, now: u64) -> u64 {
    j.limit_end(now).unwrap_or_else(|| j.start_time.saturating_add(UNLIMITED_RUN_SECS))
}

/// How many waiting jobs get a reservation in one pass; later ones may still start now if
/// they fit around the reservations.
const MAX_RESERVATIONS: usize = 256;

/// How far ahead an expected start is shown (Slurm's default `bf_window`, a day): a start
/// the plan puts later rests on guesses (jobs without a time limit counted as running a
/// year), and Slurm's backfill shows none past its window either.
const EXPECTED_START_WINDOW_SECS: u64 = 86_400;

/// Whether a job that does not fit now would, but for the GPUs in use outside the queue
/// (`gpus`) or other users' MPS servers (`by_mps`).
#[derive(Clone, Copy)]
struct KeptOff {
    gpus: bool,
    by_mps: bool,
}

/// What the waiting jobs of a pass so far leave to those behind them.
struct Waiting {
    /// A job ahead waits for resources.
    behind: bool,
    /// Running jobs preempted for jobs ahead.
    victims: Vec<u32>,
    /// Whether priorities are computed.
    multifactor: bool,
    /// Whether jobs may preempt others.
    preemption: bool,
}

/// What the jobs holding resources count against the limits on starts, kept up to date as
/// a pass starts more: per user (`[limits]`), per array (its task throttle) and per QOS.
struct Counts {
    limits: crate::config::UserLimits,
    held: std::collections::HashMap<u32, limits::Held>,
    arrays: std::collections::HashMap<u32, u32>,
    qos: Option<QosHeld>,
    shards_per_gpu: u32,
}

impl Counts {
    fn of(core: &Core) -> Counts {
        let limits = core.config.limits;
        let shards_per_gpu = core.config.shards_per_gpu;
        Counts {
            held: if limits.limits_starts() { limits::held(core.holding()) } else { Default::default() },
            arrays: array::running(core.holding()),
            qos: core.qos_limits_starts().then(|| QosHeld::of(core.holding(), shards_per_gpu)),
            limits,
            shards_per_gpu,
        }
    }

    /// Slurm's reason when a limit holds `job` back.
    fn blocked(&self, core: &Core, job: &Job) -> Option<&'static str> {
        if array::throttled(job, &self.arrays) {
            return Some("JobArrayTaskLimit");
        }
        if self.limits.limits_starts() {
            if let Some(r) = limits::blocked(&self.limits, self.held.get(&job.uid).copied().unwrap_or_default(), job) {
                return Some(r);
            }
        }
        self.qos.as_ref().and_then(|held| core.qos_blocked(job, held))
    }

    /// Counts `job` in: it starts.
    fn started(&mut self, job: &Job) {
        if self.limits.limits_starts() {
            self.held.entry(job.uid).or_default().add(job);
        }
        if let Some(held) = self.qos.as_mut() {
            held.add(job, self.shards_per_gpu);
        }
        if let Some(a) = job.array {
            *self.arrays.entry(a.job_id).or_default() += 1;
        }
    }
}

impl Core {
    /// The availability profile now: free resources, and running jobs' releases at their
    /// time limits.
    /// GPUs in use outside the queue are left out of what is free.
    fn plan(&self, now: u64) -> Plan {
        let releases: Vec<(u64, Hold)> = self
            .holding()
            .map(|j| (expected_end(j, now), Hold { resources: j.req, gpus: self.gpu_units_of(j) }))
            .collect();
        let free = Resources { cpus: self.config.cpus, mem_mb: self.config.memory, ..Default::default() }
            .minus(&self.resources.used);
        Plan::new(now, free.cpus, free.mem_mb, self.gpu_start(), releases)
    }

    /// Pending, not held job ids in scheduling order: priority, then submit order.
    fn pending_in_order(&self) -> Vec<u32> {
        self.index.queue.iter().map(|(_, id)| *id).collect()
    }

    /// One scheduling pass: settles dependencies, starts what may start now, records
    /// pending reasons.
    pub fn schedule(&mut self) -> Effects {
        tracing::debug!(queued = self.index.queue.len(), "scheduling pass");
        let now = crate::sys::now();
        let mut effects = Effects::default();
        let waiting_on_deps = self.settle_dependencies(now, &mut effects);
        self.end_preempted_due(now, &mut effects);
        self.reprioritize(now, &mut effects);
        if let Some(at) = self.advance_reservations(now, &mut effects) {
            effects.wake_at = Some(effects.wake_at.map_or(at, |w| w.min(at)));
        }
        let mut plans = super::reservations::Plans::new(self.plan(now), self.reservation_windows(), &self.config, now);
        let mut reservations = 0;
        let mut to_start = Vec::new();
        let mut counts = Counts::of(self);
        let mut waiting = Waiting {
            behind: false,
            victims: Vec::new(),
            multifactor: self.multifactor(),
            preemption: self.config.preempt_mode != crate::config::qos::PreemptMode::Off,
        };
        let mut reasons_changed = false;
        for id in self.pending_in_order() {
            let job = &self.jobs[&id];
            let mut expected = 0;
            let reason = if let Some(r) = waiting_on_deps.get(&id) {
                Some(*r)
            } else if job.begin_time > now {
                effects.wake_at = Some(effects.wake_at.map_or(job.begin_time, |w| w.min(job.begin_time)));
                Some("BeginTime")
            } else if self.exceeds_partition_limit(job) {
                Some("PartitionTimeLimit")
            } else {
                counts.blocked(self, job)
            };
            let reason = match reason {
                Some(r) => r,
                None if !job.reservation.is_empty() => match plans.place_inside(job) {
                    super::reservations::Inside::Start(gpus, end) => {
                        counts.started(job);
                        to_start.push((id, gpus, end));
                        continue;
                    }
                    super::reservations::Inside::Wait(reason, expected_start) => {
                        expected = expected_start.filter(|&t| t <= now + EXPECTED_START_WINDOW_SECS).unwrap_or(0);
                        reason
                    }
                    // Its reservation went while the pass ran: the next pass holds it.
                    super::reservations::Inside::Gone => continue,
                },
                None => {
                    let reserve = reservations < MAX_RESERVATIONS;
                    // What it waits for when it does not fit now: the GPUs in use outside the
                    // queue, or other users' MPS servers.
                    let fits_without = |disregard| {
                        !plans.outside.fits_now(&job.req, job.uid, Disregard::default())
                            && plans.outside.fits_now(&job.req, job.uid, disregard)
                    };
                    let kept_off = KeptOff {
                        gpus: fits_without(Disregard { blocked: true, owners: false }),
                        by_mps: self.config.mps
                            && job.req.shards > 0
                            && fits_without(Disregard { blocked: false, owners: true }),
                    };
                    match plans.outside.place(&job.req, job.uid, job.limit_secs(), reserve) {
                        Verdict::StartNow(gpus) => {
                            plans.started(job, &gpus, job.limit_secs(), None);
                            counts.started(job);
                            to_start.push((id, gpus, 0));
                            continue;
                        }
                        Verdict::Wait { fits_now, expected: expected_start } => {
                            reservations += 1;
                            expected = expected_start.filter(|&t| t <= now + EXPECTED_START_WINDOW_SECS).unwrap_or(0);
                            match plans.kept_off(job) {
                                Some(reason) => reason,
                                None => self.why_waiting(id, fits_now, kept_off, now, &mut waiting),
                            }
                        }
                    }
                }
            };
            let job = &self.jobs[&id];
            if job.reason != reason || job.expected_start != expected {
                let job = self.jobs.get_mut(&id).expect("pending job exists");
                job.reason = reason.into();
                job.expected_start = expected;
                reasons_changed = true;
            }
        }
        if reasons_changed {
            self.changed();
        }
        // A job that starts now may be what an `after` dependency waits for.
        effects.reschedule |= !to_start.is_empty() && !waiting_on_deps.is_empty();
        for (id, gpus, resv_end) in to_start {
            if let Some(job) = self.jobs.get_mut(&id) {
                job.resv_end = resv_end;
            }
            effects.launch.push((id, self.allocate(id, &gpus, now)));
        }
        for id in waiting.victims {
            effects.merge(self.preempt(id, now));
        }
        effects
    }

    /// Why job `id`, placed by the plan to start later, waits: for a job ahead of it
    /// (`Priority`), for GPUs kept off by what `kept_off` says, for the jobs it preempts, or
    /// for resources. `waiting` carries what the jobs ahead of it in this pass left.
    fn why_waiting(&self, id: u32, fits_now: bool, kept_off: KeptOff, now: u64, waiting: &mut Waiting) -> &'static str {
        if fits_now {
            "Priority"
        } else if kept_off.gpus && !self.gpu_drains().is_empty() && self.foreign_gpu_processes().is_empty() {
            super::gpu_drains::GPU_MPS_SERVER_FAILED
        } else if kept_off.gpus && self.foreign_gpu_processes().is_empty() {
            // Kept off failed GPUs alone: they are out of service, as a down node's are.
            "Resources"
        } else if kept_off.gpus {
            GPUS_BUSY_OUTSIDE_QUEUE
        } else if kept_off.by_mps {
            MPS_SERVER_OF_OTHER_USER
        } else if waiting.preemption && {
            let more = self.victims_for(id, now, &waiting.victims);
            let found = !more.is_empty();
            waiting.victims.extend(more);
            found
        } {
            // It waits for the jobs it preempts to end.
            waiting.behind = waiting.multifactor;
            "Resources"
        } else if waiting.behind {
            "Priority"
        } else {
            // With priorities computed, the jobs behind one that waits for resources wait
            // for it, as Slurm's say: `Priority`.
            waiting.behind = waiting.multifactor;
            "Resources"
        }
    }

    /// Re-reads the dependencies of the queued jobs that have one: a satisfied one is
    /// cleared (and stored so), one that can never be satisfied cancels its job when it asked
    /// for that (`--kill-on-invalid-dep=yes`). Returns the jobs that must go on waiting,
    /// with their pending reason.
    fn settle_dependencies(&mut self, now: u64, effects: &mut Effects) -> std::collections::HashMap<u32, &'static str> {
        use depend::Standing;
        // Those no longer pending, or whose dependency is gone, leave the set; held ones stay
        // in it, unread until they are released.
        self.index.dependent.retain(|id| self.jobs.get(id).is_some_and(Self::waits_on_dependency));
        let queued: Vec<u32> = self.index.dependent.iter().copied().filter(|id| Self::queued(&self.jobs[id])).collect();
        let mut waiting = std::collections::HashMap::new();
        for id in queued {
            let job = &self.jobs[&id];
            let Some(spec) = depend::spec_of(job) else { continue };
            let (standing, text) = depend::evaluate(job, &spec, &self.lookup(), now);
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
                    self.notify_invalid_dependency(id);
                    self.end_pending(id, "DependencyNeverSatisfied", None);
                    effects.reschedule = true;
                }
                Standing::Never => {
                    self.notify_invalid_dependency(id);
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

    /// Gives a pending job its resources (the GPUs the plan chose, whole or in shards, and
    /// CPUs by id) and records it as running. Its supervisor starts once that record is
    /// durable ([`Core::start_supervisor`]).
    fn allocate(&mut self, id: u32, units: &GpuUnits, now: u64) -> Durable {
        tracing::debug!(job = id, "allocating");
        let gpus = units.iter().filter_map(|&(slot, _)| self.config.gpus.get(slot).cloned()).collect();
        let cpu_ids = self.take_cpu_ids(self.jobs[&id].req.cpus);
        let job = self.jobs.get_mut(&id).expect("launching a known job");
        self.index.queue.remove(&(Reverse(job.priority), id));
        self.index.holding.insert(id);
        job.gpus = gpus;
        job.cpu_ids = cpu_ids;
        job.state = Some(JobState::Running);
        job.start_time = now;
        job.requeued_by_preemption = false;
        job.reason_prev = job.reason.clone();
        job.reason = "None".into();
        self.resources.used = self.resources.used.plus(&job.req);
        let durable = self.writer.update(job);
        self.hold_gpus(id);
        self.notify_start(id, now);
        durable
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
        payload: Result<crate::daemon::store::Payload, StoreError>,
    ) -> Result<launch::Prepared, Effects> {
        self.confirm_launch(id)?;
        let job = &self.jobs[&id];
        match payload {
            Ok(p) => {
                let env = if job.interactive {
                    launch::allocation_env(job, &self.config, &self.machine)
                } else {
                    launch::batch_env(job, &self.config, &self.machine, &p.environment)
                };
                Ok(launch::prepare(job, &self.config, &self.machine, &p, env, &self.exe, &self.job_dir(id)))
            }
            Err(e) => Err(self.launch_failed(id, &e.to_string())),
        }
    }

    /// Whether job `id`, given resources, may still start its supervisor: it is running and
    /// has none yet. A job cancelled before its supervisor started ends here. `Err`: it does
    /// not start.
    pub fn confirm_launch(&mut self, id: u32) -> Result<(), Effects> {
        let now = crate::sys::now();
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
    pub fn supervisor_started(&mut self, id: u32, result: std::io::Result<launch::Started>) -> Effects {
        match result {
            Ok(launch::Started { pid, ended, pidfd }) => {
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

    /// Job `id`, given resources, could not be started for a reason of the node's, not its
    /// own (`why`: its GPU's MPS server could not be made ready): it goes back to the queue
    /// as it was before, with no run recorded, and the next pass places it again. One that
    /// was cancelled meanwhile ends.
    pub fn launch_deferred(&mut self, id: u32, why: &str) -> Effects {
        if let Err(effects) = self.confirm_launch(id) {
            return effects;
        }
        tracing::warn!(job = id, "not starting the job now: {why}; it waits again");
        self.requeue_unstarted(id);
        Effects::reschedule()
    }

    /// Job `id` could not be started (`why`): it ends as failed.
    pub fn launch_failed(&mut self, id: u32, why: &str) -> Effects {
        tracing::error!(job = id, "cannot start the job: {why}");
        let now = crate::sys::now();
        self.finish(
            id,
            Some(EndStatus { wait_status: 1 << 8, cause: EndCause::LaunchFailed, end_time: now, usage: None }),
        );
        Effects::reschedule()
    }

    /// `sbatch --test-only`: checks a job and estimates when it would start, without
    /// submitting it. Returns the id it would get, the start time, CPUs and partition.
    pub fn test_only(
        &self,
        desc: &crate::api::types::JobDescMsg,
        top_script: Option<&str>,
        caller: Caller,
    ) -> Result<Job, Refusal> {
        let now = crate::sys::now();
        // Without a script it is an allocation's (srun or salloc --test-only).
        let interactive = desc.script.is_none() && top_script.is_none();
        let mut job = submit::build(desc, top_script, caller, &self.config, now, interactive)?.job;
        job.id = self.next_id;
        let mut plan = super::reservations::outside(self.plan(now), &self.reservation_windows());
        let eligible =
            self.pending_in_order().into_iter().map(|id| &self.jobs[&id]).filter(|j| j.reservation.is_empty());
        for p in eligible.take(MAX_RESERVATIONS) {
            plan.place(&p.req, p.uid, p.limit_secs(), true);
        }
        job.start_time = plan.earliest_start(&job.req, job.uid, job.limit_secs()).unwrap_or(0).max(job.begin_time);
        Ok(job)
    }
}
