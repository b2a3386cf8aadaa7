//! The core's priorities and fair-share usage: the usage of ended jobs loaded (or rebuilt
//! from the jobs the store holds) at the start, each ended run charged to its association
//! in the same write as its end, usage forgotten at the configured resets, and the queued
//! jobs' priorities computed again when the calculation period is over or the fair-share
//! factors move (a job started or ended, a user appeared). With every weight 0 priorities
//! are left as they are (the queue's first-come order) and only usage is kept.

use super::{Core, Effects};
use crate::config::priority::UsageReset;
use crate::config::Config;
use crate::daemon::model::job::Job;
use crate::daemon::scheduling::priority::multifactor::{Factors, NodeTotals};
use crate::daemon::scheduling::priority::usage::{run_usage, UsageLedger};
use crate::daemon::scheduling::priority::{billing, reset, AssocKey, Shares};
use crate::daemon::store::usage::UsageRow;
use crate::daemon::store::writer::Writer;
use crate::daemon::store::{Store, StoreError};
use std::cmp::Reverse;
use std::collections::HashMap;

/// The seconds of `job`'s last run that count as usage: from its start (or the last reset)
/// to its end (`until`, for one still running), less the time it was suspended.
fn counted_secs(job: &Job, reset_at: u64, until: u64) -> u64 {
    if job.start_time == 0 {
        return 0;
    }
    let end = if job.end_time > 0 { job.end_time } else { until };
    end.saturating_sub(job.start_time.max(reset_at)).saturating_sub(job.suspended_secs)
}

/// The usage of `job`'s last run, ended or at `until` (a running one).
fn usage_of(job: &Job, config: &Config, reset_at: u64, until: u64) -> f64 {
    let p = &config.priority;
    // A QOS's usage factor scales what its jobs are charged (0: nothing, as a scavenger's).
    let factor = config.qos.get(&job.qos).map_or(1.0, |q| q.usage_factor);
    let b = billing::billing(&job.req, &p.billing, config.shards_per_gpu) * factor;
    run_usage(b, counted_secs(job, reset_at, until), p.decay_half_life_secs)
}

/// The usage the store keeps, rebuilt from the runs it holds when it keeps none yet (a
/// store from before usage was kept, or one whose usage was lost), and reset when the
/// settings say a reset is due.
pub(super) fn open_usage(store: &Store, writer: &Writer, config: &Config, now: u64) -> Result<UsageLedger, StoreError> {
    let half_life = config.priority.decay_half_life_secs;
    let mut ledger = match store.usage()? {
        Some((rows, reset_at)) => UsageLedger::of(rows, reset_at),
        None => {
            let mut ledger = UsageLedger::default();
            let runs = store.ended_runs()?;
            for job in &runs {
                let used = usage_of(job, config, 0, job.end_time);
                if used > 0.0 {
                    ledger.add(&job.account, job.uid, used, job.end_time, half_life);
                }
            }
            tracing::info!(runs = runs.len(), "fair-share usage rebuilt from the jobs in the store");
            drop(writer.replace_usage(ledger.rows(), 0));
            ledger
        }
    };
    if config.priority.usage_reset == UsageReset::Now {
        tracing::info!("priority_usage_reset_period = NOW: usage reset at the start");
        ledger.reset(now);
        drop(writer.replace_usage(Vec::new(), now));
    }
    Ok(ledger)
}

impl Core {
    /// Whether priorities are computed (some weight is not 0).
    pub fn multifactor(&self) -> bool {
        !self.config.priority.weights.all_zero()
    }

    /// When the queue's priorities were last computed.
    pub fn priorities_computed_at(&self) -> Option<u64> {
        self.priorities.computed_at
    }

    /// What the node has, for the factors that are parts of it.
    fn node_totals(&self) -> NodeTotals {
        NodeTotals {
            cpus: self.config.cpus,
            mem_mb: self.config.memory,
            gpus: self.config.gpus.len() as u32,
            shards_per_gpu: self.config.shards_per_gpu,
            max_job_factor: self.config.partitions.iter().map(|p| p.priority_job_factor).max().unwrap_or(0),
        }
    }

    /// Each association's usage at `now`: its ended jobs', decayed, and its running jobs'.
    pub fn usage_now(&self, now: u64) -> HashMap<AssocKey, f64> {
        let (ledger, half_life) = (&self.priorities.ledger, self.config.priority.decay_half_life_secs);
        let mut usage: HashMap<AssocKey, f64> =
            ledger.associations().map(|(a, u)| ((a.clone(), *u), ledger.ended(a, *u, now, half_life))).collect();
        for job in self.holding() {
            *usage.entry((job.account.to_string(), job.uid)).or_default() +=
                usage_of(job, &self.config, ledger.reset_at, now);
        }
        usage
    }

    /// What `job`'s hold of the node costs a second (its `billing`).
    pub fn billing_of(&self, job: &Job) -> f64 {
        billing::billing(&job.req, &self.config.priority.billing, self.config.shards_per_gpu)
    }

    /// The fair-share tree at `now`.
    pub fn fair_shares(&self, now: u64) -> Shares {
        Shares::of(&self.config.account_tree, &self.priorities.seen, &self.usage_now(now))
    }

    /// The factors of `job`'s priority at `now`, with the fair-share factors of the last
    /// computation.
    pub fn priority_factors(&self, job: &Job, now: u64) -> Factors {
        self.factors_on(job, &self.node_totals(), self.config.qos.max_priority(), now)
    }

    /// [`Core::priority_factors`] with what every job shares worked out once: the node's
    /// totals and the largest QOS priority.
    fn factors_on(&self, job: &Job, node: &NodeTotals, max_qos: u32, now: u64) -> Factors {
        let fairshare = self.priorities.factors.get(&(job.account.to_string(), job.uid)).copied().unwrap_or(0.0);
        let job_factor =
            self.config.partitions.iter().find(|p| job.partition == p.name).map_or(0, |p| p.priority_job_factor);
        let qos = match self.config.qos.get(&job.qos) {
            Some(q) if max_qos > 0 => q.priority as f64 / max_qos as f64,
            _ => 0.0,
        };
        Factors::of(job, fairshare, job_factor, qos, node, &self.config.priority, now)
    }

    /// Notes a new job's association, and gives it its priority (when priorities are
    /// computed and it was not set by hand).
    pub(super) fn prioritize_new(&mut self, job: &mut Job, now: u64) {
        let key = (job.account.to_string(), job.uid);
        if !self.priorities.seen.contains(&key) {
            self.priorities.seen.insert(key);
        }
        if self.multifactor() && !job.priority_set {
            job.priority = self.priority_factors(job, now).priority(&self.config.priority.weights);
        }
    }

    /// Computes every queued job's priority again when it is due (see
    /// [`crate::daemon::scheduling::priority::Priorities::due`]), re-ordering the queue, and
    /// asks for a pass at the end of the calculation period while jobs wait. Forgets usage
    /// when a reset is due.
    pub(super) fn reprioritize(&mut self, now: u64, effects: &mut Effects) {
        self.reset_usage_if_due(now);
        if !self.multifactor() {
            return;
        }
        let factors = self.fair_shares(now).factors();
        let period = self.config.priority.calc_period_secs;
        if self.priorities.due(now, period, &factors) {
            self.priorities.factors = factors;
            self.priorities.computed_at = Some(now);
            let weights = self.config.priority.weights.clone();
            let (node, max_qos) = (self.node_totals(), self.config.qos.max_priority());
            let ids: Vec<u32> = self.index.queue.iter().map(|(_, id)| *id).collect();
            let mut queue = std::collections::BTreeSet::new();
            let mut moved = false;
            for id in ids {
                let job = &self.jobs[&id];
                let priority = if job.priority_set {
                    job.priority
                } else {
                    self.factors_on(job, &node, max_qos, now).priority(&weights)
                };
                let job = self.jobs.get_mut(&id).expect("a queued job exists");
                moved |= job.priority != priority;
                job.priority = priority;
                queue.insert((Reverse(priority), id));
            }
            self.index.queue = queue;
            if moved {
                self.changed();
            }
        }
        if !self.index.queue.is_empty() {
            let next = self.priorities.computed_at.unwrap_or(now).saturating_add(period);
            effects.wake_at = Some(effects.wake_at.map_or(next, |w| w.min(next)));
        }
    }

    /// Has the next pass compute every queued job's priority again.
    #[cfg(test)]
    pub(crate) fn priorities_due_now(&mut self) {
        self.priorities.computed_at = None;
    }

    /// Forgets every usage when the reset period's boundary has passed.
    fn reset_usage_if_due(&mut self, now: u64) {
        let Some(at) = reset::next_after(self.config.priority.usage_reset, self.priorities.ledger.reset_at.max(1))
        else {
            return;
        };
        if at <= now {
            tracing::info!(at, "usage reset ({})", self.config.priority.usage_reset.name());
            self.priorities.ledger.reset(at);
            drop(self.writer.replace_usage(Vec::new(), at));
        }
    }

    /// Charges the run of job `id` that just ended to its association; returns the row to
    /// store with the job's end.
    pub(super) fn charge(&mut self, id: u32) -> Option<UsageRow> {
        let job = self.jobs.get(&id)?;
        let used = usage_of(job, &self.config, self.priorities.ledger.reset_at, job.end_time);
        let half_life = self.config.priority.decay_half_life_secs;
        (used > 0.0).then(|| self.priorities.ledger.add(&job.account, job.uid, used, job.end_time, half_life))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_counts_from_its_start_or_the_reset_less_its_suspension() {
        let job = Job { start_time: 100, end_time: 400, suspended_secs: 50, ..Default::default() };
        assert_eq!(counted_secs(&job, 0, 0), 250);
        assert_eq!(counted_secs(&job, 300, 0), 50);
        assert_eq!(counted_secs(&Job { end_time: 400, ..Default::default() }, 0, 0), 0, "never started");
    }
}
