//! What a step of a job is given of its job's resources: its share, as the step ledger grants
//! it and the step's supervisor is told of it.

use crate::daemon::model::step_record::StepRecord;

/// A step given its share of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// Its id.
    pub step_id: u32,
    /// Its task count.
    pub ntasks: u32,
    /// The GPUs its tasks see.
    pub gpus: Vec<crate::gpu::Gpu>,
    /// What it holds so that other steps cannot have it.
    pub held: Held,
    /// Its accounting record (not yet started).
    pub record: StepRecord,
}

/// The part of a job a step holds, kept in `STEPDIR/held.json` so that a restarted daemon
/// knows it again.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Held {
    /// The job's CPUs it counts as its own (a count: its tasks are not pinned within the job).
    pub cpus: u32,
    /// The indices of the job's GPUs it holds, which no other step of the job is given.
    pub gpus: Vec<u32>,
}
