//! What a job's hold of the node costs a second (Slurm's `billing` TRES): the weighted sum
//! of what it holds (`tres_billing_weights`), or its CPUs when no weight is given, as
//! Slurm's is. A shard counts its part of its GPU, so that a GPU-hour costs a GPU-hour
//! however it was split.

use crate::config::priority::{Tres, TresWeights};
use crate::daemon::model::job::Resources;

/// What `held` costs a second under `weights`, on a node whose GPUs are split into
/// `shards_per_gpu` shards (0: not split).
pub fn billing(held: &Resources, weights: &TresWeights, shards_per_gpu: u32) -> f64 {
    if weights.is_empty() {
        return held.cpus as f64;
    }
    weights.0.iter().map(|&(tres, weight)| weight * amount(held, tres, shards_per_gpu)).sum()
}

/// How much of `tres` `held` holds (GPUs with shards counted as their part of a GPU).
pub fn amount(held: &Resources, tres: Tres, shards_per_gpu: u32) -> f64 {
    match tres {
        Tres::Cpu => held.cpus as f64,
        Tres::Mem => held.mem_mb as f64,
        Tres::Gpu => {
            let shards = if shards_per_gpu == 0 { 0.0 } else { held.shards as f64 / shards_per_gpu as f64 };
            held.gpus as f64 + shards
        }
        Tres::Node => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billing_is_cpus_without_weights_and_the_weighted_sum_with_them() {
        let held = Resources { cpus: 4, mem_mb: 8192, gpus: 2, shards: 0, gpu_type: None };
        assert_eq!(billing(&held, &TresWeights::default(), 0), 4.0);
        let w = TresWeights::parse("k", "CPU=1.0,Mem=0.25G,GRES/gpu=10").unwrap();
        assert_eq!(billing(&held, &w, 0), 4.0 + 2.0 + 20.0);
    }

    #[test]
    fn a_shard_costs_its_part_of_a_gpu() {
        let w = TresWeights::parse("k", "GRES/gpu=10").unwrap();
        let quarter = Resources { cpus: 1, mem_mb: 0, gpus: 0, shards: 2, gpu_type: None };
        assert_eq!(billing(&quarter, &w, 8), 2.5);
    }
}
