//! What the core keeps of the GPU watch's looks, apart from the jobs: the processes outside
//! the queue it found, the GPUs drained for their MPS servers, each running job's and
//! step's GPU use so far, each job's memory against its share, the last look itself, and
//! the samples of the open step of the board's history. The scheduler reads it to keep jobs
//! off GPUs; the views show it.

use crate::daemon::gpu_use::{ForeignProcess, GpuHistory, GpuTally, Owner, ShareWatch};
use std::collections::{BTreeMap, HashMap};

/// The GPU watch's state in the core.
pub(in crate::daemon) struct GpuWatchState {
    /// The processes outside the queue that the last look at the GPUs found.
    pub foreign_processes: Vec<ForeignProcess>,
    /// When those last changed (UNIX seconds).
    pub foreign_processes_since: u64,
    /// The GPUs kept from new jobs because their MPS server could not be started or quit,
    /// and why.
    pub drains: BTreeMap<u32, String>,
    /// When those last changed (UNIX seconds).
    pub drains_since: u64,
    /// The GPUs out of service for what their driver reported, and why, until an
    /// administrator puts them back (kept in the store).
    pub failed: BTreeMap<u32, String>,
    /// When those last changed (UNIX seconds).
    pub failed_since: u64,
    /// Each running job's and step's GPU use so far, while the GPUs are looked at.
    pub tallies: HashMap<Owner, GpuTally>,
    /// What the last look at the GPUs saw, and when (UNIX seconds).
    pub sample: Option<(u64, crate::gpu::GpuSample)>,
    /// Each job's GPU memory at the last look, and the shard jobs over their share.
    pub shares: ShareWatch,
    /// The GPU samples of the step still open, and of the one closed last.
    pub history: GpuHistory,
    /// The running jobs whose GPUs are idle, and since when (`[idle_gpus]`).
    pub idle: crate::daemon::gpu_use::idle::IdleClocks,
}

impl GpuWatchState {
    /// Nothing seen yet; the board's samples averaged over `resolution` seconds.
    pub fn new(resolution: u64) -> GpuWatchState {
        GpuWatchState {
            foreign_processes: Vec::new(),
            foreign_processes_since: 0,
            drains: BTreeMap::new(),
            drains_since: 0,
            failed: BTreeMap::new(),
            failed_since: 0,
            tallies: HashMap::new(),
            sample: None,
            shares: ShareWatch::default(),
            history: GpuHistory::new(resolution),
            idle: Default::default(),
        }
    }
}
