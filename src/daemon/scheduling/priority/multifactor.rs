//! A job's priority as Slurm's `priority/multifactor` computes it:
//!
//! ```text
//! priority = site + w_age·age + w_fs·fairshare + w_size·job_size + w_part·partition
//!          + w_qos·qos + Σ w_tres·tres − nice
//! ```
//!
//! each factor from 0 to 1, the sum cut to a whole number, at least 1 (0 is a held job's)
//! and at most 2^32 − 1:
//! - age: how long it has been eligible over `priority_max_age`;
//! - fair-share: its user's Fair Tree factor in its account ([`super::fair_tree`]);
//! - job size: Slurm's default (`PriorityFavorSmall=NO`) is (nodes/node count + CPUs/CPU
//!   count) / 2; with `priority_favor_small` the free nodes and CPUs it leaves, likewise;
//! - partition: its partition's `priority_job_factor` over the largest;
//! - QOS: its QOS's priority over the largest (0 when no QOS has a priority);
//! - TRES: for each weighted resource, what it holds over the node's.

use super::billing;
use crate::config::priority::{PrioritySettings, Tres, Weights};
use crate::daemon::model::job::Job;

/// What the node has, for the factors that are parts of it.
#[derive(Debug, Clone, Copy)]
pub struct NodeTotals {
    /// CPUs.
    pub cpus: u32,
    /// Memory, MB.
    pub mem_mb: u64,
    /// GPUs.
    pub gpus: u32,
    /// Shards each GPU is split into (0: none).
    pub shards_per_gpu: u32,
    /// The largest `priority_job_factor` of any partition.
    pub max_job_factor: u32,
}

/// A job's factors, each 0 to 1, and its nice value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Factors {
    /// Age.
    pub age: f64,
    /// Fair-share.
    pub fairshare: f64,
    /// Job size.
    pub job_size: f64,
    /// Partition.
    pub partition: f64,
    /// QOS.
    pub qos: f64,
    /// Each weighted resource's share of the node.
    pub tres: Vec<(Tres, f64)>,
    /// `--nice`, taken off the sum.
    pub nice: i32,
}

impl Factors {
    /// The factors of `job` at `now`, its user's fair-share factor being `fairshare`, its
    /// partition's job factor `job_factor` and its QOS's factor `qos` (its priority over the
    /// largest).
    pub fn of(
        job: &Job,
        fairshare: f64,
        job_factor: u32,
        qos: f64,
        node: &NodeTotals,
        s: &PrioritySettings,
        now: u64,
    ) -> Factors {
        let eligible = job.submit_time.max(job.begin_time);
        let waited = now.saturating_sub(eligible);
        let age = if s.max_age_secs == 0 { 1.0 } else { (waited as f64 / s.max_age_secs as f64).min(1.0) };
        let cpu_part = if node.cpus == 0 { 0.0 } else { job.req.cpus.min(node.cpus) as f64 / node.cpus as f64 };
        // One node, which every job asks for: the node part is 1 when favouring large jobs,
        // 0 (no node left free) when favouring small ones.
        let job_size = if s.favor_small { (1.0 - cpu_part) / 2.0 } else { (1.0 + cpu_part) / 2.0 };
        let partition = if node.max_job_factor == 0 { 0.0 } else { job_factor as f64 / node.max_job_factor as f64 };
        let tres = s
            .weights
            .tres
            .0
            .iter()
            .map(|&(t, _)| {
                let total = match t {
                    Tres::Cpu => node.cpus as f64,
                    Tres::Mem => node.mem_mb as f64,
                    Tres::Gpu => node.gpus as f64,
                    Tres::Node => 1.0,
                };
                let held = billing::amount(&job.req, t, node.shards_per_gpu);
                (t, if total > 0.0 { (held / total).min(1.0) } else { 0.0 })
            })
            .collect();
        Factors { age, fairshare, job_size, partition, qos, tres, nice: job.nice }
    }

    /// The factors times their weights (a factor whose weight is 0 reads 0), as `sprio`
    /// shows them.
    pub fn weighted(&self, w: &Weights) -> Factors {
        Factors {
            age: self.age * w.age as f64,
            fairshare: self.fairshare * w.fairshare as f64,
            job_size: self.job_size * w.job_size as f64,
            partition: self.partition * w.partition as f64,
            qos: self.qos * w.qos as f64,
            tres: self.tres.iter().map(|&(t, f)| (t, f * w.tres.of(t))).collect(),
            nice: self.nice,
        }
    }

    /// The priority these factors give under `w`.
    pub fn priority(&self, w: &Weights) -> u32 {
        self.weighted(w).sum()
    }

    /// The sum of weighted factors, less the nice value, cut to a whole number from 1 to
    /// 2^32 − 1.
    fn sum(&self) -> u32 {
        let sum = self.age
            + self.fairshare
            + self.job_size
            + self.partition
            + self.qos
            + self.tres.iter().map(|(_, v)| v).sum::<f64>()
            - self.nice as f64;
        sum.clamp(1.0, u32::MAX as f64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::Resources;

    const NODE: NodeTotals = NodeTotals { cpus: 32, mem_mb: 256_000, gpus: 8, shards_per_gpu: 0, max_job_factor: 1 };

    fn settings(weights: Weights) -> PrioritySettings {
        PrioritySettings { weights, ..Default::default() }
    }

    /// priority_multifactor.shtml's way: each factor times its weight, added up. A job that
    /// waited half the maximum age, of a user at fair-share 0.5, asking for 8 of 32 CPUs:
    /// age 0.5 · 1000 + fair-share 0.5 · 10000 + size (1 + 8/32)/2 · 100 + partition 1 · 10.
    #[test]
    fn the_priority_is_the_weighted_sum_of_the_factors() {
        let s = settings(Weights { age: 1000, fairshare: 10_000, job_size: 100, partition: 10, ..Default::default() });
        let job = Job { submit_time: 1000, req: Resources { cpus: 8, ..Default::default() }, ..Default::default() };
        let now = 1000 + s.max_age_secs / 2;
        let f = Factors::of(&job, 0.5, 1, 0.0, &NODE, &s, now);
        assert_eq!((f.age, f.fairshare, f.job_size, f.partition), (0.5, 0.5, 0.625, 1.0));
        assert_eq!(f.priority(&s.weights), 500 + 5000 + 62 + 10);
        let nice = Factors { nice: 1000, ..f.clone() };
        assert_eq!(nice.priority(&s.weights), 4572);
    }

    #[test]
    fn age_stops_at_the_maximum_and_counts_from_the_begin_time() {
        let s = settings(Weights { age: 1000, ..Default::default() });
        let job = Job { submit_time: 0, begin_time: 100, ..Default::default() };
        assert_eq!(Factors::of(&job, 0.0, 1, 0.0, &NODE, &s, 100).age, 0.0);
        assert_eq!(Factors::of(&job, 0.0, 1, 0.0, &NODE, &s, 100 + 10 * s.max_age_secs).age, 1.0);
    }

    #[test]
    fn favouring_small_jobs_turns_the_size_factor_round() {
        let mut s = settings(Weights { job_size: 1000, ..Default::default() });
        let big = Job { req: Resources { cpus: 32, ..Default::default() }, ..Default::default() };
        let small = Job { req: Resources { cpus: 1, ..Default::default() }, ..Default::default() };
        assert!(
            Factors::of(&big, 0.0, 1, 0.0, &NODE, &s, 0).job_size
                > Factors::of(&small, 0.0, 1, 0.0, &NODE, &s, 0).job_size
        );
        s.favor_small = true;
        assert!(
            Factors::of(&big, 0.0, 1, 0.0, &NODE, &s, 0).job_size
                < Factors::of(&small, 0.0, 1, 0.0, &NODE, &s, 0).job_size
        );
    }

    #[test]
    fn tres_factors_are_shares_of_the_node() {
        let w = Weights {
            tres: crate::config::priority::TresWeights::parse("k", "GRES/gpu=3000").unwrap(),
            ..Default::default()
        };
        let s = settings(w);
        let job = Job { req: Resources { cpus: 1, gpus: 2, ..Default::default() }, ..Default::default() };
        let f = Factors::of(&job, 0.0, 1, 0.0, &NODE, &s, 0);
        assert_eq!(f.tres, vec![(Tres::Gpu, 0.25)]);
        assert_eq!(f.priority(&s.weights), 750);
    }

    #[test]
    fn all_weights_zero_give_one_and_the_sum_is_held_to_32_bits() {
        let f = Factors { age: 1.0, fairshare: 1.0, job_size: 1.0, partition: 1.0, ..Default::default() };
        assert_eq!(f.priority(&Weights::default()), 1);
        let huge = Weights { age: u32::MAX, fairshare: u32::MAX, ..Default::default() };
        assert_eq!(f.priority(&huge), u32::MAX);
    }
}
