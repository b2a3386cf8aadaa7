//! What of the node's resources jobs hold: the sum of what they were given, the CPUs by
//! id that no job holds, and what jobs hold of each GPU. A job's start takes from it and
//! its end gives back; a scheduling pass reads it.

use super::gpu_holds::GpuHolds;
use crate::config::Config;
use crate::daemon::model::job::Resources;
use std::collections::BTreeSet;

/// The node's resources held by jobs.
pub(in crate::daemon) struct ResourceLedger {
    /// The sum of what the jobs holding resources were given.
    pub used: Resources,
    /// The ids of the node's CPUs no job holds (see `cpu_ids`).
    pub free_cpus: BTreeSet<u32>,
    /// What jobs hold of each of the node's GPUs (see `gpu_holds`).
    pub gpus: GpuHolds,
}

impl ResourceLedger {
    /// Nothing held of the node `config` describes.
    pub fn new(config: &Config) -> ResourceLedger {
        ResourceLedger {
            used: Resources::default(),
            free_cpus: (0..config.cpus).collect(),
            gpus: GpuHolds::new(config.gpus.len(), config.gpu_units()),
        }
    }
}
