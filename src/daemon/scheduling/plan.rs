//! Backfill planning over time: which pending jobs may start now without delaying any job
//! ahead of them.
//!
//! The node's free resources are a step function of time: running jobs give theirs back at
//! their time limit, and each pending job that cannot start now reserves what it needs from
//! its earliest possible start for its time limit. A job starts now only if it fits now and
//! for its whole time limit around every reservation made for jobs ahead of it.

use super::job::Resources;
use std::collections::BTreeMap;

/// "Never" on the plan's time axis.
pub const NEVER: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Delta {
    cpus: i64,
    mem: i64,
    gpus: i64,
}

/// The availability profile of one scheduling pass.
#[derive(Debug, Clone)]
pub struct Plan {
    now: u64,
    free_now: Resources,
    deltas: BTreeMap<u64, Delta>,
}

/// What the plan says about a pending job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Start it now.
    StartNow,
    /// It waits; `fits_now` says whether free resources alone would have allowed it
    /// (then it waits for jobs ahead of it: `Priority`; otherwise `Resources`).
    Wait {
        /// Free resources cover it, but reservations for earlier jobs do not allow it.
        fits_now: bool,
    },
}

impl Plan {
    /// A plan at `now` with `free_now` available and the given releases `(time, resources)`
    /// of running jobs.
    pub fn new(now: u64, free_now: Resources, releases: impl IntoIterator<Item = (u64, Resources)>) -> Plan {
        let mut plan = Plan { now, free_now, deltas: BTreeMap::new() };
        for (t, r) in releases {
            if t != NEVER {
                plan.add(t.max(now), &r, 1);
            }
        }
        plan
    }

    /// What is free now, less what jobs starting in this pass have booked.
    pub fn free_now(&self) -> Resources {
        self.free_now
    }

    fn add(&mut self, t: u64, r: &Resources, sign: i64) {
        let d = self.deltas.entry(t).or_default();
        d.cpus += sign * r.cpus as i64;
        d.mem += sign * r.mem_mb as i64;
        d.gpus += sign * r.gpus as i64;
    }

    /// Whether `need` is available throughout `[start, end)`.
    fn fits(&self, need: &Resources, start: u64, end: u64) -> bool {
        let mut cpus = self.free_now.cpus as i64;
        let mut mem = self.free_now.mem_mb as i64;
        let mut gpus = self.free_now.gpus as i64;
        let ok = |c: i64, m: i64, g: i64| c >= need.cpus as i64 && m >= need.mem_mb as i64 && g >= need.gpus as i64;
        let mut checked_start = false;
        for (&t, d) in &self.deltas {
            if t > start && !checked_start {
                if !ok(cpus, mem, gpus) {
                    return false;
                }
                checked_start = true;
            }
            if t >= end {
                break;
            }
            cpus += d.cpus;
            mem += d.mem;
            gpus += d.gpus;
            if t >= start && !ok(cpus, mem, gpus) {
                return false;
            }
        }
        checked_start || ok(cpus, mem, gpus)
    }

    /// The earliest time at or after now when `need` fits for `duration` seconds, if ever.
    pub fn earliest_start(&self, need: &Resources, duration: Option<u64>) -> Option<u64> {
        let candidates = std::iter::once(self.now).chain(self.deltas.keys().copied().filter(|&t| t > self.now));
        for start in candidates {
            let end = duration.map(|d| start.saturating_add(d.max(1))).unwrap_or(NEVER);
            if self.fits(need, start, end) {
                return Some(start);
            }
        }
        None
    }

    /// Decides about the next pending job (in priority order) and books it into the plan:
    /// resources from now if it starts, a reservation at its earliest start otherwise
    /// (when `reserve` is true).
    pub fn place(&mut self, need: &Resources, duration: Option<u64>, reserve: bool) -> Verdict {
        let fits_now = self.free_now.covers(need);
        if !fits_now && !reserve {
            // It cannot start now, and nothing is to be booked for it: no need to look ahead.
            return Verdict::Wait { fits_now };
        }
        let start = self.earliest_start(need, duration);
        match start {
            Some(s) if s == self.now => {
                self.book(need, s, duration);
                Verdict::StartNow
            }
            Some(s) => {
                if reserve {
                    self.book(need, s, duration);
                }
                Verdict::Wait { fits_now }
            }
            None => Verdict::Wait { fits_now },
        }
    }

    fn book(&mut self, need: &Resources, start: u64, duration: Option<u64>) {
        if start == self.now {
            self.free_now = self.free_now.minus(need);
        } else {
            self.add(start, need, -1);
        }
        if let Some(d) = duration {
            self.add(start.saturating_add(d.max(1)), need, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(n: u32) -> Resources {
        Resources { cpus: 1, mem_mb: 0, gpus: n }
    }

    #[test]
    fn starts_what_fits_and_reserves_for_the_head() {
        // 4 GPUs, one job with 2 GPUs running until t=100.
        let free = Resources { cpus: 7, mem_mb: 0, gpus: 2 };
        let mut plan = Plan::new(0, free, [(100, gpus(2))]);
        // Head needs 4 GPUs: waits (Resources), reserved at 100.
        assert_eq!(plan.place(&gpus(4), Some(50), true), Verdict::Wait { fits_now: false });
        // A 1-GPU job ending by 100 may backfill.
        assert_eq!(plan.place(&gpus(1), Some(60), true), Verdict::StartNow);
        // A 1-GPU job running past 100 would delay the head: it waits (Priority).
        assert_eq!(plan.place(&gpus(1), Some(200), true), Verdict::Wait { fits_now: true });
        // Unlimited jobs would delay it too.
        assert_eq!(plan.place(&gpus(1), None, true), Verdict::Wait { fits_now: true });
    }

    #[test]
    fn unlimited_running_jobs_never_release() {
        let free = Resources { cpus: 7, mem_mb: 0, gpus: 2 };
        let mut plan = Plan::new(0, free, [(NEVER, gpus(2))]);
        assert_eq!(plan.place(&gpus(4), None, true), Verdict::Wait { fits_now: false });
        assert_eq!(plan.earliest_start(&gpus(4), None), None);
        // Nothing is reserved for a job that can never start, so smaller ones go ahead.
        assert_eq!(plan.place(&gpus(2), None, true), Verdict::StartNow);
    }

    #[test]
    fn fifo_when_everything_fits() {
        let mut plan = Plan::new(0, gpus(4).plus(&Resources { cpus: 3, ..Default::default() }), []);
        assert_eq!(plan.place(&gpus(2), None, true), Verdict::StartNow);
        assert_eq!(plan.place(&gpus(2), None, true), Verdict::StartNow);
        assert_eq!(plan.place(&gpus(1), None, true), Verdict::Wait { fits_now: false });
    }
}
