//! The core's indexes over its jobs, so that a scheduling pass and the listings read only
//! the jobs that matter to them, never every finished job kept in memory: the queue in
//! scheduling order, the jobs that hold resources, and the pending jobs whose dependency is
//! yet to be settled. Each is kept as jobs change state.

use crate::daemon::model::job::Job;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// The indexes over the core's jobs.
#[derive(Default)]
pub(in crate::daemon) struct JobIndex {
    /// Pending jobs that are not held, in scheduling order (priority, then submit order).
    pub queue: BTreeSet<(Reverse<u32>, u32)>,
    /// Jobs that hold resources (running or completing).
    pub holding: BTreeSet<u32>,
    /// Pending jobs with a dependency yet to be satisfied.
    pub dependent: BTreeSet<u32>,
}

impl JobIndex {
    /// The indexes of `jobs`, as loaded at start: `queued` and `waits` say which jobs the
    /// queue and the dependent set take.
    pub fn of(jobs: &BTreeMap<u32, Job>, queued: impl Fn(&Job) -> bool, waits: impl Fn(&Job) -> bool) -> JobIndex {
        JobIndex {
            queue: jobs.values().filter(|j| queued(j)).map(|j| (Reverse(j.priority), j.id)).collect(),
            holding: jobs.values().filter(|j| j.state().holds_resources()).map(|j| j.id).collect(),
            dependent: jobs.values().filter(|j| waits(j)).map(|j| j.id).collect(),
        }
    }
}
