//! Usage that decays: what each user's jobs in each account held over time, in billing
//! units times seconds (Slurm's `RawUsage`), halved every `priority_decay_half_life`.
//!
//! Slurm adds each running job's usage every `PriorityCalcPeriod` and decays the whole
//! sum. Here the decay is continuous and exact: a job with billing `b` that ran `d` seconds
//! and ended at `t` adds `b · h/ln 2 · (1 − 2^(−d/h))` as of `t` (the integral of its
//! usage, each second decayed from when it was used to `t`), and a stored sum decays by
//! `2^(−Δ/h)`. So an ended job's usage is added once, when it ends, and stored with its
//! end ([`crate::daemon::store::usage`]); a running job's counts live, computed from its
//! start. Nothing about running jobs needs to be kept for a restart.

use crate::daemon::store::usage::UsageRow;
use std::collections::HashMap;

/// A sum of usage as of a time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Decayed {
    /// Billing-seconds, as of `as_of`.
    pub value: f64,
    /// UNIX seconds.
    pub as_of: u64,
}

impl Decayed {
    /// What it has decayed to at `now` (never grown: a `now` before `as_of` reads it as is).
    pub fn at(&self, now: u64, half_life: u64) -> f64 {
        self.value * decay(now.saturating_sub(self.as_of), half_life)
    }
}

/// What a unit of usage is worth `secs` after it was used.
pub fn decay(secs: u64, half_life: u64) -> f64 {
    if half_life == 0 || secs == 0 {
        1.0
    } else {
        (-(secs as f64) / half_life as f64).exp2()
    }
}

/// The usage of `secs` seconds at `billing` units a second, as of the end of those seconds.
pub fn run_usage(billing: f64, secs: u64, half_life: u64) -> f64 {
    if half_life == 0 {
        return billing * secs as f64;
    }
    let h = half_life as f64;
    billing * h / std::f64::consts::LN_2 * (1.0 - (-(secs as f64) / h).exp2())
}

/// The decayed usage of every association (account, uid) that has any.
#[derive(Debug, Default)]
pub struct UsageLedger {
    by_assoc: HashMap<(String, u32), Decayed>,
    /// Usage before this (UNIX seconds) is forgotten (`priority_usage_reset_period`).
    pub reset_at: u64,
}

impl UsageLedger {
    /// The ledger as the store kept it.
    pub fn of(rows: Vec<UsageRow>, reset_at: u64) -> UsageLedger {
        let by_assoc =
            rows.into_iter().map(|r| ((r.account, r.uid), Decayed { value: r.usage, as_of: r.as_of })).collect();
        UsageLedger { by_assoc, reset_at }
    }

    /// The usage of `(account, uid)`'s ended jobs at `now`.
    pub fn ended(&self, account: &str, uid: u32, now: u64, half_life: u64) -> f64 {
        self.by_assoc.get(&(account.to_string(), uid)).map_or(0.0, |d| d.at(now, half_life))
    }

    /// Every association with ended usage.
    pub fn associations(&self) -> impl Iterator<Item = &(String, u32)> {
        self.by_assoc.keys()
    }

    /// Adds `usage` (as of `at`) to `(account, uid)`; returns the row to store.
    pub fn add(&mut self, account: &str, uid: u32, usage: f64, at: u64, half_life: u64) -> UsageRow {
        let entry = self.by_assoc.entry((account.to_string(), uid)).or_default();
        // Never moved back: a usage older than the sum is decayed to the sum's time.
        let as_of = at.max(entry.as_of);
        let value = entry.at(as_of, half_life) + usage * decay(as_of - at, half_life);
        *entry = Decayed { value, as_of };
        UsageRow { account: account.to_string(), uid, usage: value, as_of }
    }

    /// Every association's row, to store whole.
    pub fn rows(&self) -> Vec<UsageRow> {
        self.by_assoc
            .iter()
            .map(|((account, uid), d)| UsageRow { account: account.clone(), uid: *uid, usage: d.value, as_of: d.as_of })
            .collect()
    }

    /// Forgets every usage (a reset at `at`).
    pub fn reset(&mut self, at: u64) {
        self.by_assoc.clear();
        self.reset_at = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    #[test]
    fn usage_halves_every_half_life() {
        let d = Decayed { value: 1000.0, as_of: 0 };
        assert_eq!(d.at(7 * DAY, 7 * DAY), 500.0);
        assert_eq!(d.at(14 * DAY, 7 * DAY), 250.0);
        assert_eq!(d.at(14 * DAY, 0), 1000.0, "a half-life of 0 does not decay");
    }

    #[test]
    fn a_short_run_counts_about_its_length_and_a_long_one_less() {
        // An hour at 10 units: 36,000 billing-seconds, barely decayed over a week's half-life.
        let hour = run_usage(10.0, 3600, 7 * DAY);
        assert!((hour - 36_000.0).abs() / 36_000.0 < 0.003, "{hour}");
        // A run of one half-life, as of its end: h/ln2 · (1 − 1/2) per unit.
        let long = run_usage(1.0, 7 * DAY, 7 * DAY);
        assert!((long - 7.0 * DAY as f64 / std::f64::consts::LN_2 / 2.0).abs() < 1e-6);
        assert_eq!(run_usage(2.0, 100, 0), 200.0);
    }

    #[test]
    fn adding_decays_what_was_there_to_the_new_time() {
        let mut ledger = UsageLedger::default();
        ledger.add("lab", 1, 100.0, 0, 10);
        let row = ledger.add("lab", 1, 100.0, 10, 10);
        assert_eq!((row.usage, row.as_of), (150.0, 10));
        // One that ended before the sum's time is decayed to it.
        let row = ledger.add("lab", 1, 100.0, 0, 10);
        assert_eq!((row.usage, row.as_of), (200.0, 10));
        assert_eq!(ledger.ended("lab", 1, 20, 10), 100.0);
        assert_eq!(ledger.ended("lab", 2, 20, 10), 0.0);
    }
}
