//! Backfill planning over time: which pending jobs may start now without delaying any job
//! ahead of them, and on which GPUs.
//!
//! The node's free resources are a step function of time: running jobs give theirs back at
//! their time limit, and each pending job that cannot start now reserves what it needs from
//! its earliest possible start for its time limit. A job starts now only if it fits now and
//! for its whole time limit around every reservation made for jobs ahead of it.
//!
//! GPUs are counted one by one, in units: a GPU split into shards has one unit per shard, one
//! that is not has one unit. A job asking for whole GPUs needs GPUs with every unit free
//! throughout its time; one asking for shards needs that many units of one GPU. So a GPU is
//! given whole or in shards, never both at once. A job that names a GPU type is given GPUs
//! of that type only.

use crate::daemon::model::gres_type::GresType;
use crate::daemon::model::job::Resources;
use std::collections::BTreeMap;

/// "Never" on the plan's time axis.
pub const NEVER: u64 = u64::MAX;

/// What a job holds of the node's GPUs: units of each GPU, by its slot (its place in the
/// node's list of GPUs).
pub type GpuUnits = Vec<(usize, u32)>;

/// What a running job gives back when it ends.
#[derive(Debug, Clone, Default)]
pub struct Hold {
    /// CPUs and memory (its `gpus` and `shards` are read from `gpus` below).
    pub resources: Resources,
    /// Its GPUs' units.
    pub gpus: GpuUnits,
}

/// The node's GPUs as the plan starts from them.
#[derive(Debug, Clone, Default)]
pub struct GpuStart {
    /// Units per GPU.
    pub units: u32,
    /// Each GPU's free units now.
    pub free: Vec<u32>,
    /// GPUs no job may be given in this pass (in use outside the queue).
    pub blocked: Vec<bool>,
    /// Where a GPU's shards serve one user at a time (MPS): each GPU's user now, if any.
    pub owners: Option<Vec<Option<u32>>>,
    /// Each GPU's type, if known.
    pub kinds: Vec<Option<GresType>>,
}

#[derive(Debug, Clone, Default)]
struct Delta {
    cpus: i64,
    mem: i64,
    gpus: Vec<(usize, i64)>,
}

/// What is free at one time of the profile.
#[derive(Debug, Clone)]
struct State {
    cpus: i64,
    mem: i64,
    gpus: Vec<i64>,
}

impl State {
    /// The state once `d` has happened.
    fn apply(&mut self, d: &Delta) {
        self.cpus += d.cpus;
        self.mem += d.mem;
        for &(s, n) in &d.gpus {
            self.gpus[s] += n;
        }
    }
}

/// The availability profile of one scheduling pass.
#[derive(Debug, Clone)]
pub struct Plan {
    now: u64,
    cpus_now: i64,
    mem_now: i64,
    units: u32,
    gpus_now: Vec<i64>,
    blocked: Vec<bool>,
    owners: Option<Vec<Option<u32>>>,
    kinds: Vec<Option<GresType>>,
    deltas: BTreeMap<u64, Delta>,
}

/// What the plan says about a pending job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Start it now, on these GPUs' units.
    StartNow(GpuUnits),
    /// It waits; `fits_now` says whether free resources alone would have allowed it
    /// (then it waits for jobs ahead of it: `Priority`; otherwise `Resources`).
    Wait {
        /// Free resources cover it, but reservations for earlier jobs do not allow it.
        fits_now: bool,
        /// When the plan expects it to start (what its reservation is booked from); `None`
        /// when nothing was booked for it or it can never start on this node as it stands.
        expected: Option<u64>,
    },
}

/// What a placement may disregard, to tell why a job does not fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Disregard {
    /// GPUs in use outside the queue.
    pub blocked: bool,
    /// Other users' MPS servers.
    pub owners: bool,
}

impl Plan {
    /// A plan at `now` with `cpus` and `mem_mb` free, the GPUs as `gpus` says, and the given
    /// releases `(time, hold)` of running jobs.
    pub fn new(
        now: u64,
        cpus: u32,
        mem_mb: u64,
        gpus: GpuStart,
        releases: impl IntoIterator<Item = (u64, Hold)>,
    ) -> Plan {
        let slots = gpus.free.len();
        let mut plan = Plan {
            now,
            cpus_now: cpus as i64,
            mem_now: mem_mb as i64,
            units: gpus.units.max(1),
            gpus_now: gpus.free.iter().map(|&f| f as i64).collect(),
            blocked: if gpus.blocked.len() == slots { gpus.blocked } else { vec![false; slots] },
            owners: gpus.owners.filter(|o| o.len() == slots),
            kinds: if gpus.kinds.len() == slots { gpus.kinds } else { vec![None; slots] },
            deltas: BTreeMap::new(),
        };
        for (t, hold) in releases {
            if t != NEVER {
                plan.add(t.max(now), &hold.resources, &hold.gpus, 1);
            }
        }
        plan
    }

    fn add(&mut self, t: u64, r: &Resources, gpus: &[(usize, u32)], sign: i64) {
        let d = self.deltas.entry(t).or_default();
        d.cpus += sign * r.cpus as i64;
        d.mem += sign * r.mem_mb as i64;
        for &(slot, units) in gpus {
            match d.gpus.iter_mut().find(|(s, _)| *s == slot) {
                Some((_, n)) => *n += sign * units as i64,
                None => d.gpus.push((slot, sign * units as i64)),
            }
        }
    }

    /// Makes `cpus` CPUs and every unit of the GPUs in `slots` unavailable over `[from, to)`
    /// (`to` may be [`NEVER`]): what an advance reservation holds, as jobs outside it see it,
    /// or what lies outside a reservation's window, as the jobs in it see it.
    pub fn block(&mut self, from: u64, to: u64, cpus: u32, slots: &[usize]) {
        if from >= to {
            return;
        }
        let gpus: GpuUnits = slots.iter().filter(|&&s| s < self.gpus_now.len()).map(|&s| (s, self.units)).collect();
        let held = Resources { cpus, ..Default::default() };
        if from <= self.now {
            self.cpus_now -= cpus as i64;
            for &(s, n) in &gpus {
                self.gpus_now[s] -= n as i64;
            }
        } else {
            self.add(from, &held, &gpus, -1);
        }
        if to != NEVER {
            self.add(to, &held, &gpus, 1);
        }
    }

    /// Books `need` on `gpus` from now for `duration`: a job that another plan of the same
    /// pass starts now (one in a reservation, or one outside it, as a reservation's plan sees
    /// it).
    pub fn take_now(&mut self, need: &Resources, uid: u32, gpus: &[(usize, u32)], duration: Option<u64>) {
        self.book(need, uid, gpus, self.now, duration);
    }

    /// The GPUs `need` would get from GPUs with `free` units each (throughout its time), or
    /// `None` when they do not cover it. Whole GPUs: the lowest free ones. Shards: the GPU
    /// already most used that still has room, so that whole GPUs stay free for jobs that
    /// need them.
    fn choose(&self, need: &Resources, uid: u32, free: &[i64], disregard: Disregard) -> Option<GpuUnits> {
        let usable = |slot: usize| {
            self.of_kind(need, slot)
                && (disregard.blocked || !self.blocked[slot])
                && (disregard.owners
                    || need.shards == 0
                    || self.owners.as_ref().is_none_or(|o| o[slot].is_none_or(|owner| owner == uid)))
        };
        if need.gpus > 0 {
            let units = self.units as i64;
            let whole: GpuUnits = (0..free.len())
                .filter(|&s| free[s] >= units && usable(s))
                .take(need.gpus as usize)
                .map(|s| (s, self.units))
                .collect();
            return (whole.len() == need.gpus as usize).then_some(whole);
        }
        if need.shards > 0 {
            let slot = (0..free.len())
                .filter(|&s| free[s] >= need.shards as i64 && usable(s))
                .min_by_key(|&s| (free[s], s))?;
            return Some(vec![(slot, need.shards)]);
        }
        Some(Vec::new())
    }

    /// Where `need` fits now, less what jobs starting in this pass have booked.
    pub fn fits_now(&self, need: &Resources, uid: u32, disregard: Disregard) -> bool {
        self.cpus_now >= need.cpus as i64
            && self.mem_now >= need.mem_mb as i64
            && self.choose(need, uid, &self.gpus_now, disregard).is_some()
    }

    /// Whether the GPU in `slot` is of the type `need` names, if it names one.
    fn of_kind(&self, need: &Resources, slot: usize) -> bool {
        need.gpu_type.is_none_or(|t| self.kinds[slot] == Some(t))
    }

    /// How many of the GPUs with `free` units each (by slot) are of `need`'s type and keep
    /// `threshold` units.
    fn with_room(&self, need: &Resources, free: &[i64], threshold: i64) -> usize {
        (0..free.len()).filter(|&s| free[s] >= threshold && self.of_kind(need, s)).count()
    }

    /// What `need` asks of the GPUs: the free units a GPU must keep, and how many such GPUs.
    fn gpu_threshold(&self, need: &Resources) -> (i64, usize) {
        match (need.gpus, need.shards) {
            (0, 0) => (0, 0),
            (0, shards) => (shards as i64, 1),
            (whole, _) => (self.units as i64, whole as usize),
        }
    }

    /// Whether `state` has room for `need` at that instant, GPUs in use outside the queue and
    /// other users' servers aside: a start without it can be passed over unread.
    fn room_at(&self, need: &Resources, state: &State) -> bool {
        let (threshold, wanted) = self.gpu_threshold(need);
        state.cpus >= need.cpus as i64
            && state.mem >= need.mem_mb as i64
            && self.with_room(need, &state.gpus, threshold) >= wanted
    }

    /// The GPUs `need` gets if it is available throughout `[start, end)`, `state` being what
    /// is free at `start`.
    fn fits_from(&self, need: &Resources, uid: u32, state: &State, start: u64, end: u64) -> Option<GpuUnits> {
        if start >= end {
            return None;
        }
        // The least of each over the job's time. The GPUs with enough units left are
        // counted as they drop out, so that a job whose GPUs are taken stops the walk early.
        let (mut cpus, mut mem, mut gpus) = (state.cpus, state.mem, state.gpus.clone());
        let (mut min_cpus, mut min_mem, mut min_gpus) = (cpus, mem, gpus.clone());
        let (threshold, wanted) = self.gpu_threshold(need);
        let mut with_room = self.with_room(need, &min_gpus, threshold);
        if min_cpus < need.cpus as i64 || min_mem < need.mem_mb as i64 || with_room < wanted {
            return None;
        }
        for (_, d) in self.deltas.range(start + 1..end) {
            cpus += d.cpus;
            mem += d.mem;
            min_cpus = min_cpus.min(cpus);
            min_mem = min_mem.min(mem);
            for &(s, n) in &d.gpus {
                gpus[s] += n;
                if gpus[s] < min_gpus[s] {
                    if min_gpus[s] >= threshold && gpus[s] < threshold && self.of_kind(need, s) {
                        with_room -= 1;
                    }
                    min_gpus[s] = gpus[s];
                }
            }
            if min_cpus < need.cpus as i64 || min_mem < need.mem_mb as i64 || with_room < wanted {
                return None;
            }
        }
        self.choose(need, uid, &min_gpus, Disregard::default())
    }

    /// The earliest time at or after now when `need` fits for `duration` seconds, if ever,
    /// with the GPUs it would get. The candidate starts are now and each time the profile
    /// changes; the state is carried from one to the next, and only a start with room at
    /// that instant has its whole time read.
    fn earliest(&self, need: &Resources, uid: u32, duration: Option<u64>) -> Option<(u64, GpuUnits)> {
        let end_of = |start: u64| duration.map(|d| start.saturating_add(d.max(1))).unwrap_or(NEVER);
        let mut state = State { cpus: self.cpus_now, mem: self.mem_now, gpus: self.gpus_now.clone() };
        let mut deltas = self.deltas.iter().peekable();
        // The state now: the changes due at this very second are in it.
        while let Some((_, d)) = deltas.next_if(|(&t, _)| t <= self.now) {
            state.apply(d);
        }
        if self.room_at(need, &state) {
            if let Some(gpus) = self.fits_from(need, uid, &state, self.now, end_of(self.now)) {
                return Some((self.now, gpus));
            }
        }
        for (&start, d) in deltas {
            state.apply(d);
            if self.room_at(need, &state) {
                if let Some(gpus) = self.fits_from(need, uid, &state, start, end_of(start)) {
                    return Some((start, gpus));
                }
            }
        }
        None
    }

    /// The earliest time at or after now when `need` fits for `duration` seconds, if ever.
    pub fn earliest_start(&self, need: &Resources, uid: u32, duration: Option<u64>) -> Option<u64> {
        self.earliest(need, uid, duration).map(|(t, _)| t)
    }

    /// Decides about the next pending job (in priority order) of user `uid` and books it
    /// into the plan: resources from now if it starts, a reservation at its earliest start
    /// otherwise (when `reserve` is true).
    pub fn place(&mut self, need: &Resources, uid: u32, duration: Option<u64>, reserve: bool) -> Verdict {
        let fits_now = self.fits_now(need, uid, Disregard::default());
        if !fits_now && !reserve {
            // It cannot start now, and nothing is to be booked for it: no need to look ahead.
            return Verdict::Wait { fits_now, expected: None };
        }
        match self.earliest(need, uid, duration) {
            Some((s, gpus)) if s == self.now => {
                self.book(need, uid, &gpus, s, duration);
                Verdict::StartNow(gpus)
            }
            Some((s, gpus)) => {
                if reserve {
                    self.book(need, uid, &gpus, s, duration);
                }
                Verdict::Wait { fits_now, expected: reserve.then_some(s) }
            }
            None => Verdict::Wait { fits_now, expected: None },
        }
    }

    fn book(&mut self, need: &Resources, uid: u32, gpus: &[(usize, u32)], start: u64, duration: Option<u64>) {
        if start == self.now {
            self.cpus_now -= need.cpus as i64;
            self.mem_now -= need.mem_mb as i64;
            for &(s, n) in gpus {
                self.gpus_now[s] -= n as i64;
                if need.shards > 0 {
                    if let Some(owners) = &mut self.owners {
                        owners[s] = Some(uid);
                    }
                }
            }
        } else {
            self.add(start, need, gpus, -1);
        }
        if let Some(d) = duration {
            self.add(start.saturating_add(d.max(1)), need, gpus, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(n: u32) -> Resources {
        Resources { cpus: 1, gpus: n, ..Default::default() }
    }

    fn shards(n: u32) -> Resources {
        Resources { cpus: 1, shards: n, ..Default::default() }
    }

    /// `n` GPUs of `units` units, with `free` of each free.
    fn node(units: u32, free: &[u32]) -> GpuStart {
        GpuStart { units, free: free.to_vec(), blocked: vec![false; free.len()], ..Default::default() }
    }

    fn whole(slots: &[usize]) -> Hold {
        Hold { resources: gpus(slots.len() as u32), gpus: slots.iter().map(|&s| (s, 1)).collect() }
    }

    #[test]
    fn starts_what_fits_and_reserves_for_the_head() {
        // 4 GPUs, one job with GPUs 2 and 3 running until t=100.
        let mut plan = Plan::new(0, 7, 0, node(1, &[1, 1, 0, 0]), [(100, whole(&[2, 3]))]);
        // Head needs 4 GPUs: waits (Resources), reserved at 100.
        assert_eq!(plan.place(&gpus(4), 0, Some(50), true), Verdict::Wait { fits_now: false, expected: Some(100) });
        // A 1-GPU job ending by 100 may backfill, on the lowest free GPU.
        assert_eq!(plan.place(&gpus(1), 0, Some(60), true), Verdict::StartNow(vec![(0, 1)]));
        // A 1-GPU job running past 100 would delay the head: it waits (Priority).
        // It is expected once the head's reservation ends (100 + 50).
        assert_eq!(plan.place(&gpus(1), 0, Some(200), true), Verdict::Wait { fits_now: true, expected: Some(150) });
        // Unlimited jobs would delay it too; without a reservation none is expected.
        assert_eq!(plan.place(&gpus(1), 0, None, false), Verdict::Wait { fits_now: true, expected: None });
    }

    #[test]
    fn unlimited_running_jobs_never_release() {
        let mut plan = Plan::new(0, 7, 0, node(1, &[1, 1, 0, 0]), [(NEVER, whole(&[2, 3]))]);
        assert_eq!(plan.place(&gpus(4), 0, None, true), Verdict::Wait { fits_now: false, expected: None });
        assert_eq!(plan.earliest_start(&gpus(4), 0, None), None);
        // Nothing is reserved for a job that can never start, so smaller ones go ahead.
        assert_eq!(plan.place(&gpus(2), 0, None, true), Verdict::StartNow(vec![(0, 1), (1, 1)]));
    }

    #[test]
    fn a_typed_job_gets_gpus_of_its_type_only() {
        // Two A100s and a T4, 4 shards each; the T4 (slot 2) is busy until 100.
        let (a100, t4) = (GresType::new("a100"), GresType::new("tesla_t4"));
        let kinds = vec![a100, a100, t4];
        let start = GpuStart { units: 4, free: vec![4, 4, 0], blocked: vec![false; 3], kinds, ..Default::default() };
        let busy = Hold { resources: gpus(1), gpus: vec![(2, 4)] };
        let mut plan = Plan::new(0, 64, 0, start, [(100, busy)]);
        let of = |need: Resources, kind| Resources { gpu_type: kind, ..need };
        // The T4 job waits for the T4 though two A100s are free, and is expected at 100.
        assert_eq!(plan.earliest_start(&of(gpus(1), t4), 0, Some(10)), Some(100));
        assert_eq!(
            plan.place(&of(gpus(1), t4), 0, Some(10), true),
            Verdict::Wait { fits_now: false, expected: Some(100) }
        );
        assert!(!plan.fits_now(&of(shards(1), t4), 0, Disregard::default()));
        // An A100 job and an untyped one take the A100s; a second A100 job then waits.
        assert_eq!(plan.place(&of(gpus(1), a100), 0, Some(10), true), Verdict::StartNow(vec![(0, 4)]));
        assert_eq!(plan.place(&gpus(1), 0, Some(10), true), Verdict::StartNow(vec![(1, 4)]));
        assert!(matches!(plan.place(&of(gpus(1), a100), 0, Some(10), true), Verdict::Wait { fits_now: false, .. }));
        // Two T4s are never to be had.
        assert_eq!(plan.earliest_start(&of(gpus(2), t4), 0, Some(10)), None);
    }

    #[test]
    fn fifo_when_everything_fits() {
        let mut plan = Plan::new(0, 5, 0, node(1, &[1, 1, 1, 1]), []);
        assert_eq!(plan.place(&gpus(2), 0, None, true), Verdict::StartNow(vec![(0, 1), (1, 1)]));
        assert_eq!(plan.place(&gpus(2), 0, None, true), Verdict::StartNow(vec![(2, 1), (3, 1)]));
        assert!(matches!(plan.place(&gpus(1), 0, None, true), Verdict::Wait { fits_now: false, .. }));
    }

    #[test]
    fn shards_fill_one_gpu_before_the_next_and_never_share_a_whole_one() {
        // 2 GPUs of 8 shards.
        let mut plan = Plan::new(0, 64, 0, node(8, &[8, 8]), []);
        for _ in 0..8 {
            assert_eq!(plan.place(&shards(1), 0, None, true), Verdict::StartNow(vec![(0, 1)]));
        }
        // GPU 0 is full: a whole GPU is GPU 1, and then no shard is left.
        assert_eq!(plan.place(&gpus(1), 0, None, true), Verdict::StartNow(vec![(1, 8)]));
        assert!(matches!(plan.place(&shards(1), 0, None, true), Verdict::Wait { fits_now: false, .. }));
    }

    #[test]
    fn a_whole_gpu_waits_for_every_shard_of_a_gpu_to_end() {
        // One GPU of 8 shards; shard jobs hold 3 of them until 100 and 1 until 200.
        let held = |units| Hold { resources: shards(units), gpus: vec![(0, units)] };
        let mut plan = Plan::new(0, 64, 0, node(8, &[4]), [(100, held(3)), (200, held(1))]);
        assert_eq!(plan.earliest_start(&gpus(1), 0, Some(10)), Some(200));
        // Reserved at 200: a shard job may still run now if it ends by then.
        assert_eq!(plan.place(&gpus(1), 0, Some(10), true), Verdict::Wait { fits_now: false, expected: Some(200) });
        assert_eq!(plan.place(&shards(3), 0, Some(150), true), Verdict::StartNow(vec![(0, 3)]));
        assert!(matches!(plan.place(&shards(1), 0, Some(500), true), Verdict::Wait { fits_now: true, .. }));
    }

    #[test]
    fn a_shard_request_fits_on_one_gpu_only() {
        // Two GPUs with 4 free shards each: 6 shards fit on neither.
        let mut plan = Plan::new(0, 64, 0, node(8, &[4, 4]), []);
        assert!(matches!(plan.place(&shards(6), 0, None, false), Verdict::Wait { fits_now: false, .. }));
        assert_eq!(plan.place(&shards(4), 0, None, false), Verdict::StartNow(vec![(0, 4)]));
    }

    #[test]
    fn blocked_gpus_and_other_users_servers_are_passed_over() {
        let start = GpuStart {
            units: 4,
            free: vec![4, 3],
            blocked: vec![true, false],
            owners: Some(vec![None, Some(7)]),
            ..Default::default()
        };
        let plan = Plan::new(0, 64, 0, start, []);
        assert!(!plan.fits_now(&shards(1), 8, Disregard::default()));
        assert!(plan.fits_now(&shards(1), 7, Disregard::default()));
        assert!(plan.fits_now(&shards(1), 8, Disregard { owners: true, blocked: false }));
        assert!(plan.fits_now(&gpus(1), 8, Disregard { owners: false, blocked: true }));
        assert!(!plan.fits_now(&gpus(1), 8, Disregard { owners: true, blocked: false }));
    }

    /// The earliest start read the slow way: for every candidate, the state at its start
    /// from scratch and the least of each over its time.
    fn earliest_by_hand(plan: &Plan, need: &Resources, uid: u32, duration: Option<u64>) -> Option<(u64, GpuUnits)> {
        let starts = std::iter::once(plan.now).chain(plan.deltas.keys().copied().filter(|&t| t > plan.now));
        for start in starts {
            let end = duration.map(|d| start.saturating_add(d.max(1))).unwrap_or(NEVER);
            let mut state = State { cpus: plan.cpus_now, mem: plan.mem_now, gpus: plan.gpus_now.clone() };
            for (_, d) in plan.deltas.range(..=start) {
                state.apply(d);
            }
            let mut least = state.clone();
            for (_, d) in plan.deltas.range(start + 1..end) {
                state.apply(d);
                least.cpus = least.cpus.min(state.cpus);
                least.mem = least.mem.min(state.mem);
                for (l, g) in least.gpus.iter_mut().zip(&state.gpus) {
                    *l = (*l).min(*g);
                }
            }
            if least.cpus >= need.cpus as i64 && least.mem >= need.mem_mb as i64 {
                if let Some(gpus) = plan.choose(need, uid, &least.gpus, Disregard::default()) {
                    return Some((start, gpus));
                }
            }
        }
        None
    }

    #[test]
    fn the_quick_search_finds_what_reading_every_start_finds() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..300 {
            let units = [1, 4, 8][next(3) as usize] as u32;
            let slots = 1 + next(4) as usize;
            let free: Vec<u32> = (0..slots).map(|_| next(units as u64 + 1) as u32).collect();
            let releases: Vec<(u64, Hold)> = (0..next(6))
                .map(|_| {
                    let slot = next(slots as u64) as usize;
                    let n = 1 + next(units as u64) as u32;
                    let hold = Hold {
                        resources: Resources { cpus: next(3) as u32, ..Default::default() },
                        gpus: vec![(slot, n)],
                    };
                    (1 + next(50), hold)
                })
                .collect();
            let mut plan = Plan::new(0, next(8) as u32, 0, node(units, &free), releases);
            for _ in 0..12 {
                let need = match next(3) {
                    0 => Resources { cpus: next(3) as u32, gpus: 1 + next(slots as u64) as u32, ..Default::default() },
                    1 => {
                        Resources { cpus: next(3) as u32, shards: 1 + next(units as u64) as u32, ..Default::default() }
                    }
                    _ => Resources { cpus: 1 + next(4) as u32, ..Default::default() },
                };
                let duration = [None, Some(1 + next(40))][next(2) as usize];
                assert_eq!(plan.earliest(&need, 0, duration), earliest_by_hand(&plan, &need, 0, duration), "{need:?}");
                plan.place(&need, 0, duration, true);
            }
        }
    }
}
