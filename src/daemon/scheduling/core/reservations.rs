//! Advance reservations: their making, changing and removal (root and operators only), the
//! check of a job that names one, and their windows moving on or closing as time passes.
//! How the scheduling pass keeps other jobs off what they hold, and starts the jobs in them,
//! is `schedule`'s (see [`Core::reservation_windows`]).

use super::{Core, Effects};
use crate::api::reservations::ReservationDesc;
use crate::api::types::errno;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::model::reservation::{Flag, Reservation};
use crate::daemon::scheduling::reservation_desc::{self, Busy, Setting};
use crate::daemon::store::reservations::{self as reservations_kept, Kept};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// The pending reason of a job that waits for its reservation's window to open.
pub const WAITS_FOR_RESERVATION: &str = "Reservation";

/// The pending reason of a job outside a maintenance reservation that would run into it
/// (Slurm's `WAIT_NODE_NOT_AVAIL` with this description).
pub const RESERVED_FOR_MAINTENANCE: &str = "ReqNodeNotAvail, Reserved for maintenance";

/// The pending reason of a job outside a reservation of the node named (`Nodes=`, not all of
/// them) that it would run into.
pub const MAY_BE_RESERVED: &str = "ReqNodeNotAvail, May be reserved for other job";

/// The pending reason of a job outside a reservation of CPUs or GPUs that it would run into.
pub const KEPT_OFF_BY_RESERVATION: &str = "Resources";

/// The pending reason of a job held because reservation `name`, which it named, ended
/// (Slurm's `WAIT_RESV_DELETED` text).
fn deleted_reason(name: &str) -> String {
    format!("Reservation {name} was deleted")
}

/// The reservations, by name.
#[derive(Debug, Default)]
pub struct ReservationBook {
    /// The number in the next made-up name.
    pub next_id: u32,
    /// The reservations.
    pub by_name: BTreeMap<String, Reservation>,
    /// When they last changed (slurmrestd's `last_update`).
    pub changed_at: u64,
}

impl ReservationBook {
    /// The book as the store kept it.
    pub fn of(kept: Kept, now: u64) -> ReservationBook {
        ReservationBook {
            next_id: kept.next_id.max(1),
            by_name: kept.reservations.into_iter().map(|r| (r.name.clone(), r)).collect(),
            changed_at: now,
        }
    }

    fn kept(&self) -> Kept {
        Kept { next_id: self.next_id, reservations: self.by_name.values().cloned().collect() }
    }
}

/// What is refused to a caller who is not root or an operator.
fn not_privileged(what: &str) -> Refusal {
    Refusal::new(Kind::Forbidden, errno::USER_ID_MISSING, "Invalid user id", "slurm_create_reservation()")
        .saying(format!("only root and the operators may {what} reservations"))
}

fn no_such(name: &str) -> Refusal {
    Refusal::new(Kind::NotFound, errno::RESERVATION_INVALID, "Requested reservation is invalid", "slurm_reservation()")
        .saying(format!("there is no reservation named {name}"))
}

impl Core {
    /// The reservations, in the order they were made.
    pub fn reservations(&self) -> Vec<&Reservation> {
        let mut all: Vec<&Reservation> = self.reservation_book.by_name.values().collect();
        all.sort_by_key(|r| r.seq);
        all
    }

    /// When the reservations last changed.
    pub fn reservations_changed_at(&self) -> u64 {
        self.reservation_book.changed_at
    }

    /// What a request is read against: the node, the other reservations, the running jobs.
    fn reservation_setting(&self, now: u64) -> Setting<'_> {
        let busy = self
            .holding()
            .map(|j| Busy {
                gpus: j.gpus.iter().map(|g| g.index).collect(),
                cpus: j.req.cpus,
                until: super::schedule::expected_end(j, now),
                reservation: j.reservation.to_string(),
            })
            .collect();
        Setting {
            config: &self.config,
            others: self.reservation_book.by_name.values().collect(),
            busy,
            failed_gpus: self.failed_gpus().keys().copied().collect(),
            now,
        }
    }

    /// Makes the reservation `desc` asks for (`scontrol create reservation`); with `upsert`
    /// (slurmrestd's `POST /reservation`), one of a name that exists is updated instead.
    pub fn create_reservation(
        &mut self,
        desc: &ReservationDesc,
        caller: Caller,
        upsert: bool,
    ) -> Result<(Reservation, Effects), Refusal> {
        if !caller.privileged(&self.config) {
            return Err(not_privileged("create"));
        }
        if upsert {
            if let Some(name) = desc.name.as_deref().filter(|n| self.reservation_book.by_name.contains_key(*n)) {
                let name = name.to_string();
                return self.update_reservation(&name, desc, caller);
            }
        }
        let now = crate::sys::now();
        let book = &self.reservation_book;
        let mut next_id = book.next_id;
        // A made-up name that is taken moves the number on, as Slurm's does.
        while book.by_name.keys().any(|n| n.ends_with(&format!("_{next_id}"))) {
            next_id += 1;
        }
        let mut made = reservation_desc::read_create(desc, &self.reservation_setting(now), next_id)?;
        made.seq = book.by_name.values().map(|r| r.seq).max().unwrap_or(0) + 1;
        self.reservation_book.next_id = next_id + 1;
        tracing::info!(uid = caller.uid, name = %made.name, start = made.start, end = made.end, gpus = ?made.gpus, "reservation created");
        self.reservation_book.by_name.insert(made.name.clone(), made.clone());
        Ok((made, self.reservations_changed(now)))
    }

    /// Changes reservation `name` as `desc` asks (`scontrol update reservation`). The jobs
    /// running in it are given its new end.
    pub fn update_reservation(
        &mut self,
        name: &str,
        desc: &ReservationDesc,
        caller: Caller,
    ) -> Result<(Reservation, Effects), Refusal> {
        if !caller.privileged(&self.config) {
            return Err(not_privileged("update"));
        }
        let now = crate::sys::now();
        let existing = self.reservation_book.by_name.get(name).ok_or_else(|| no_such(name))?;
        let setting = self.reservation_setting(now);
        let others = setting.others.iter().copied().filter(|o| o.name != name).collect();
        let changed = reservation_desc::read_update(existing, desc, &Setting { others, ..setting })?;
        tracing::info!(uid = caller.uid, name, start = changed.start, end = changed.end, "reservation updated");
        self.reservation_book.by_name.insert(name.to_string(), changed.clone());
        let mut effects = self.reservations_changed(now);
        self.move_running_ends(&changed);
        effects.reschedule = true;
        Ok((changed, effects))
    }

    /// Removes reservation `name` (`scontrol delete reservation`): refused while jobs run in
    /// it, as Slurm's is; the pending jobs that named it are held (see
    /// `Core::release_reservation_jobs`).
    pub fn delete_reservation(&mut self, name: &str, caller: Caller) -> Result<Effects, Refusal> {
        if !caller.privileged(&self.config) {
            return Err(not_privileged("delete"));
        }
        if !self.reservation_book.by_name.contains_key(name) {
            return Err(no_such(name));
        }
        // Pending jobs count too, as in Slurm.
        let using: Vec<u32> =
            self.jobs.values().filter(|j| !j.state().is_finished() && &*j.reservation == name).map(|j| j.id).collect();
        if !using.is_empty() {
            let ids = using.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            return Err(Refusal::new(
                Kind::Invalid,
                errno::RESERVATION_BUSY,
                "Requested reservation is in use",
                "slurm_delete_reservation()",
            )
            .saying(format!("jobs {ids} are in reservation {name}; cancel them or let them end first")));
        }
        let gone = self.reservation_book.by_name.remove(name).expect("checked above");
        tracing::info!(uid = caller.uid, name, "reservation deleted");
        self.release_reservation_jobs(&gone);
        Ok(self.reservations_changed(crate::sys::now()))
    }

    /// Whether `job`, which names a reservation, may be queued in it: the reservation exists
    /// and admits its user and account. Slurm's texts.
    pub(in crate::daemon) fn check_reservation_access(&self, job: &Job) -> Result<(), Refusal> {
        if job.reservation.is_empty() {
            return Ok(());
        }
        let source = "slurm_submit_batch_job()";
        let Some(r) = self.reservation_book.by_name.get(&*job.reservation) else {
            return Err(Refusal::new(
                Kind::Invalid,
                errno::RESERVATION_INVALID,
                "Requested reservation is invalid",
                source,
            )
            .saying(format!("there is no reservation named {}", job.reservation)));
        };
        let user = crate::identity::user_name(job.uid);
        if !r.admits(&user, &job.account) {
            return Err(Refusal::new(
                Kind::Forbidden,
                errno::RESERVATION_ACCESS,
                "Access denied to requested reservation",
                source,
            )
            .saying(format!(
                "reservation {} admits users {} and accounts {}; not user {user} with account {}",
                r.name,
                r.users.shown(),
                r.accounts.shown(),
                job.account
            )));
        }
        let gpus_asked = job.req.gpus.max(u32::from(job.req.shards > 0));
        if gpus_asked as usize > r.gpus.len() || job.req.cpus > r.cpus {
            // Slurm takes such a job and leaves it pending for ever.
            return Err(Refusal::new(
                Kind::Invalid,
                errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
                "Requested node configuration is not available",
                source,
            )
            .saying(format!(
                "reservation {} holds {} CPUs and {} GPUs; the job asks for {} CPUs and {gpus_asked} GPUs, more than it can ever be given there",
                r.name,
                r.cpus,
                r.gpus.len(),
                job.req.cpus
            )));
        }
        if !r.partition.is_empty() && r.partition != *job.partition {
            return Err(Refusal::new(
                Kind::Invalid,
                errno::RESERVATION_INVALID,
                "Requested reservation is invalid",
                source,
            )
            .saying(format!(
                "reservation {} is for partition {}; the job is in {}",
                r.name, r.partition, job.partition
            )));
        }
        Ok(())
    }

    /// Moves on the windows that have closed by `now`: a repeating reservation to its next
    /// window, another one away (its pending jobs held). Returns when the next window opens
    /// or closes, for the pass's wake-up.
    pub(in crate::daemon) fn advance_reservations(&mut self, now: u64, effects: &mut Effects) -> Option<u64> {
        let closed: Vec<String> =
            self.reservation_book.by_name.values().filter(|r| r.end <= now).map(|r| r.name.clone()).collect();
        if !closed.is_empty() {
            for name in closed {
                let r = self.reservation_book.by_name.get_mut(&name).expect("listed above");
                let mut moved = false;
                while r.end <= now {
                    let Some(step) = r.repeat_step(crate::sys::local_weekday(r.start)) else { break };
                    r.start += step;
                    r.end += step;
                    moved = true;
                    // Each new window takes a number, as Slurm's reservation ids do.
                    self.reservation_book.next_id += 1;
                }
                if moved {
                    tracing::info!(name, start = r.start, "reservation moved on to its next window");
                    continue;
                }
                let gone = self.reservation_book.by_name.remove(&name).expect("listed above");
                tracing::info!(name, "reservation ended");
                self.release_reservation_jobs(&gone);
            }
            effects.merge(self.reservations_changed(now));
        }
        self.reservation_book.by_name.values().flat_map(|r| [r.start, r.end]).filter(|&t| t > now).min()
    }

    /// The pending jobs that named reservation `gone`, now deleted or ended: held with
    /// `ReservationDeleted`, unless it had `NO_HOLD_JOBS_AFTER_END`; either way they no
    /// longer name it.
    fn release_reservation_jobs(&mut self, gone: &Reservation) {
        let hold = !gone.has(Flag::NoHoldJobsAfterEnd);
        let pending: Vec<u32> = self
            .jobs
            .values()
            .filter(|j| j.state() == JobState::Pending && *j.reservation == gone.name)
            .map(|j| j.id)
            .collect();
        for id in pending {
            let job = self.jobs.get_mut(&id).expect("listed above");
            if Self::queued(job) && hold {
                self.index.queue.remove(&(Reverse(job.priority), id));
            }
            job.reservation = "".into();
            if hold {
                job.held = true;
                job.reason = deleted_reason(&gone.name).as_str().into();
            }
            tracing::info!(job = id, reservation = %gone.name, held = hold, "the job's reservation is gone");
            drop(self.writer.update(job));
        }
    }

    /// The jobs running in `r` end with its (new) window.
    fn move_running_ends(&mut self, r: &Reservation) {
        let ids: Vec<u32> =
            self.holding().filter(|j| *j.reservation == r.name && j.resv_end != 0).map(|j| j.id).collect();
        for id in ids {
            let job = self.jobs.get_mut(&id).expect("listed above");
            if job.resv_end == r.end {
                continue;
            }
            job.resv_end = r.end;
            drop(self.writer.update(job));
            self.tell_supervisors(id);
        }
    }

    /// Stores the reservations and tells the board.
    fn reservations_changed(&mut self, now: u64) -> Effects {
        self.reservation_book.changed_at = now;
        self.changed();
        let durable = self.writer.meta(reservations_kept::KEY, reservations_kept::text(&self.reservation_book.kept()));
        Effects { durable: Some(durable), reschedule: true, ..Default::default() }
    }
}

/// What a job outside `r` that would run into it waits for, as Slurm's `job_test_resv` and
/// `select_nodes` say it: a maintenance reservation, or one of all the node (`Nodes=ALL`, or
/// made in the job's partition), is `Reserved for maintenance`; one of the node named `May
/// be reserved for other job`; one of CPUs or GPUs `Resources`.
fn kept_off_reason(r: &Reservation) -> &'static str {
    if r.has(Flag::Maint) || (r.whole_node && (r.has(Flag::AllNodes) || !r.has(Flag::SpecNodes))) {
        RESERVED_FOR_MAINTENANCE
    } else if r.whole_node {
        MAY_BE_RESERVED
    } else {
        KEPT_OFF_BY_RESERVATION
    }
}

/// What a reservation holds, as a scheduling pass reads it.
#[derive(Debug, Clone)]
pub(super) struct Window {
    /// Its name.
    pub name: String,
    /// When it opens.
    pub start: u64,
    /// When it closes.
    pub end: u64,
    /// CPUs it holds.
    pub cpus: u32,
    /// The plan's slots of the GPUs it holds.
    pub slots: Vec<usize>,
    /// What a job outside it that would run into it waits for.
    pub reason: &'static str,
}

impl Core {
    /// The reservations' windows, for a scheduling pass.
    pub(super) fn reservation_windows(&self) -> Vec<Window> {
        self.reservation_book
            .by_name
            .values()
            .map(|r| Window {
                name: r.name.clone(),
                start: r.start,
                end: r.end,
                cpus: r.cpus,
                slots: r.gpus.iter().filter_map(|&g| self.gpu_slot(g)).collect(),
                reason: kept_off_reason(r),
            })
            .collect()
    }

    /// The reservation named `name`.
    pub fn reservation(&self, name: &str) -> Option<&Reservation> {
        self.reservation_book.by_name.get(name)
    }
}

use crate::daemon::scheduling::plan::{GpuUnits, Plan, Verdict, NEVER};

/// `base` as the jobs outside every reservation see it: what each reservation holds is
/// unavailable over its window.
pub(super) fn outside(mut base: Plan, windows: &[Window]) -> Plan {
    for w in windows {
        base.block(w.start, w.end, w.cpus, &w.slots);
    }
    base
}

/// `base` as the jobs in reservation `w` see it: only its GPUs, and nothing outside its
/// window (`cpus`: the node's, all taken away outside it). Within it the CPUs and memory are
/// the node's; a job started from here is booked into every other plan of the pass too.
fn inside(mut base: Plan, w: &Window, slots: usize, cpus: u32, now: u64) -> Plan {
    let others: Vec<usize> = (0..slots).filter(|s| !w.slots.contains(s)).collect();
    base.block(now, NEVER, 0, &others);
    base.block(now, w.start, cpus, &w.slots);
    base.block(w.end, NEVER, cpus, &w.slots);
    base
}

/// What the plan of a reservation says about a job in it.
pub(super) enum Inside {
    /// Start it now on these GPUs; it ends with the window (its end).
    Start(GpuUnits, u64),
    /// It waits, for this reason, expected to start then.
    Wait(&'static str, Option<u64>),
    /// Its reservation is gone.
    Gone,
}

/// The plans of one scheduling pass: the node as the jobs outside every reservation see it
/// (`outside`), as the jobs in each reservation see it, and (when there are reservations)
/// as it is with only the jobs this pass starts, to tell a job kept off by a reservation.
pub(super) struct Plans {
    /// The plan of the jobs outside every reservation.
    pub outside: Plan,
    /// The node as it is with the jobs this pass starts (made only when there are
    /// reservations): what the plan of a reservation is made from when its first job is read.
    open: Option<Plan>,
    inside: std::collections::HashMap<String, Plan>,
    windows: Vec<Window>,
    slots: usize,
    cpus: u32,
    now: u64,
}

impl Plans {
    /// The plans of a pass at `now` from the node's plan `base`.
    pub fn new(base: Plan, windows: Vec<Window>, config: &crate::config::Config, now: u64) -> Plans {
        Plans {
            open: (!windows.is_empty()).then(|| base.clone()),
            outside: outside(base, &windows),
            inside: Default::default(),
            windows,
            slots: config.gpus.len(),
            cpus: config.cpus,
            now,
        }
    }

    /// Places `job`, which names a reservation, in that reservation's plan.
    pub fn place_inside(&mut self, job: &Job) -> Inside {
        let Some(w) = self.windows.iter().find(|w| *w.name == *job.reservation).cloned() else { return Inside::Gone };
        let Some(open) = &self.open else { return Inside::Gone };
        let (slots, cpus, now) = (self.slots, self.cpus, self.now);
        // Made from the node as the jobs started so far in this pass left it.
        let here = self.inside.entry(w.name.clone()).or_insert_with(|| inside(open.clone(), &w, slots, cpus, now));
        // It ends with the window at the latest.
        let left = w.end.saturating_sub(now.max(w.start));
        let duration = Some(job.limit_secs().map_or(left, |l| l.min(left)));
        match here.place(&job.req, job.uid, duration, true) {
            Verdict::StartNow(gpus) => {
                self.started(job, &gpus, duration, Some(&w.name));
                Inside::Start(gpus, w.end)
            }
            Verdict::Wait { fits_now, expected } => {
                let reason = if w.start > now {
                    WAITS_FOR_RESERVATION
                } else if fits_now {
                    "Priority"
                } else {
                    "Resources"
                };
                Inside::Wait(reason, expected)
            }
        }
    }

    /// Books `job`, started now on `gpus` from the plan of reservation `from` (`None`: the
    /// plan outside), into every other plan.
    pub fn started(&mut self, job: &Job, gpus: &GpuUnits, duration: Option<u64>, from: Option<&str>) {
        for (_, plan) in self.inside.iter_mut().filter(|(n, _)| Some(n.as_str()) != from) {
            plan.take_now(&job.req, job.uid, gpus, duration);
        }
        if from.is_some() {
            self.outside.take_now(&job.req, job.uid, gpus, duration);
        }
        if let Some(open) = self.open.as_mut() {
            open.take_now(&job.req, job.uid, gpus, duration);
        }
    }

    /// Why `job`, outside every reservation, waits when a reservation keeps it off: it would
    /// start now but for a window it would run into. `None` when none does.
    pub fn kept_off(&self, job: &Job) -> Option<&'static str> {
        let open = self.open.as_ref()?;
        let duration = job.limit_secs();
        let end = duration.map_or(NEVER, |d| self.now.saturating_add(d.max(1)));
        let blocking: Vec<&Window> = self.windows.iter().filter(|w| w.start < end && self.now < w.end).collect();
        if blocking.is_empty() || open.earliest_start(&job.req, job.uid, duration) != Some(self.now) {
            return None;
        }
        // The strongest of the reasons of the windows it would run into.
        let order = [RESERVED_FOR_MAINTENANCE, MAY_BE_RESERVED, KEPT_OFF_BY_RESERVATION];
        order.into_iter().find(|reason| blocking.iter().any(|w| w.reason == *reason))
    }
}
