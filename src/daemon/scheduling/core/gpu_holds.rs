//! Which of the node's GPUs jobs hold, and how: whole, or in shards (`--gres=shard:N`). A
//! GPU is counted in units: one per shard where GPUs are split, else one; a job given it
//! whole holds every unit. The scheduler's plan starts from these counts.

use super::Core;
use crate::daemon::model::gres_type::GresType;
use crate::daemon::model::job::Job;
use crate::daemon::scheduling::plan::{GpuStart, GpuUnits};

/// What jobs hold of one GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GpuHeld {
    /// Nothing: it is free.
    #[default]
    Free,
    /// A job holds it whole.
    Whole,
    /// Shard jobs hold this many of its shards.
    Shards(u32),
}

/// What jobs hold of each of the node's GPUs, by slot (the GPU's place in the node's list).
#[derive(Debug, Clone)]
pub(in crate::daemon) struct GpuHolds {
    units: u32,
    held: Vec<GpuHeld>,
    /// The shard jobs on each GPU and their user (one user's at a time under MPS).
    shard_jobs: Vec<(u32, Option<u32>)>,
}

impl GpuHolds {
    /// `slots` free GPUs of `units` units each.
    pub fn new(slots: usize, units: u32) -> GpuHolds {
        GpuHolds { units: units.max(1), held: vec![GpuHeld::Free; slots], shard_jobs: vec![(0, None); slots] }
    }

    /// What jobs hold of the GPU in `slot`.
    pub fn held(&self, slot: usize) -> GpuHeld {
        self.held.get(slot).copied().unwrap_or_default()
    }

    /// The free units of the GPU in `slot`.
    fn free_units(&self, slot: usize) -> u32 {
        match self.held(slot) {
            GpuHeld::Free => self.units,
            GpuHeld::Whole => 0,
            GpuHeld::Shards(n) => self.units.saturating_sub(n),
        }
    }

    /// The user whose shard jobs the GPU in `slot` serves, if any.
    pub fn shard_user(&self, slot: usize) -> Option<u32> {
        self.shard_jobs.get(slot).and_then(|(_, uid)| *uid)
    }

    /// Records that a job of `uid` holds `units` (whole GPUs, or shards when `shards`).
    fn take(&mut self, units: &GpuUnits, shards: bool, uid: u32) {
        for &(slot, n) in units {
            let Some(held) = self.held.get_mut(slot) else { continue };
            *held = match (shards, *held) {
                (false, _) => GpuHeld::Whole,
                (true, GpuHeld::Shards(m)) => GpuHeld::Shards(m + n),
                (true, _) => GpuHeld::Shards(n),
            };
            if shards {
                let (jobs, user) = &mut self.shard_jobs[slot];
                *jobs += 1;
                *user = Some(uid);
            }
        }
    }

    /// Records that a job gave `units` back.
    fn give_back(&mut self, units: &GpuUnits, shards: bool) {
        for &(slot, n) in units {
            let Some(held) = self.held.get_mut(slot) else { continue };
            *held = match *held {
                GpuHeld::Shards(m) if shards && m > n => GpuHeld::Shards(m - n),
                _ => GpuHeld::Free,
            };
            if shards {
                let (jobs, user) = &mut self.shard_jobs[slot];
                *jobs = jobs.saturating_sub(1);
                if *jobs == 0 {
                    *user = None;
                }
            }
        }
    }
}

impl Core {
    /// The slot of the node's GPU with device index `index`.
    pub(in crate::daemon) fn gpu_slot(&self, index: u32) -> Option<usize> {
        self.config.gpus.iter().position(|g| g.index == index)
    }

    /// The units `job` holds of each of its GPUs.
    pub(in crate::daemon) fn gpu_units_of(&self, job: &Job) -> GpuUnits {
        let units = if job.req.shards > 0 { job.req.shards } else { self.config.gpu_units() };
        job.gpus.iter().filter_map(|g| self.gpu_slot(g.index)).map(|slot| (slot, units)).collect()
    }

    /// Records that `job` holds its GPUs (given now, or re-adopted).
    pub(super) fn hold_gpus(&mut self, id: u32) {
        let Some(job) = self.jobs.get(&id) else { return };
        let (units, shards, uid) = (self.gpu_units_of(job), job.req.shards > 0, job.uid);
        self.resources.gpus.take(&units, shards, uid);
    }

    /// Gives back what job `id` held of the GPUs (the job keeps its list, for the views of
    /// its end).
    pub(super) fn release_gpus(&mut self, id: u32) {
        let Some(job) = self.jobs.get(&id) else { return };
        let (units, shards) = (self.gpu_units_of(job), job.req.shards > 0);
        self.resources.gpus.give_back(&units, shards);
    }

    /// The GPUs as the scheduling plan starts from them: each one's free units, those in
    /// use outside the queue, (under MPS) each one's shard user, and each one's type.
    pub(super) fn gpu_start(&self) -> GpuStart {
        let avoided = self.avoided_gpus();
        let slots = self.config.gpus.len();
        GpuStart {
            units: self.config.gpu_units(),
            free: (0..slots).map(|s| self.resources.gpus.free_units(s)).collect(),
            blocked: self.config.gpus.iter().map(|g| avoided.contains(&g.index)).collect(),
            owners: self.config.mps.then(|| (0..slots).map(|s| self.resources.gpus.shard_user(s)).collect()),
            kinds: self.config.gpus.iter().map(|g| g.gres_type.as_deref().and_then(GresType::new)).collect(),
        }
    }

    /// The user whose shard jobs hold shards of the node's GPU with device index `index`,
    /// if any.
    pub fn shard_user(&self, index: u32) -> Option<u32> {
        self.gpu_slot(index).and_then(|s| self.resources.gpus.shard_user(s))
    }

    /// What jobs hold of the node's GPU with device index `index`.
    pub fn gpu_held(&self, index: u32) -> GpuHeld {
        self.gpu_slot(index).map_or(GpuHeld::Free, |s| self.resources.gpus.held(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_is_held_whole_or_in_shards_and_freed_by_the_last_shard_job() {
        let mut holds = GpuHolds::new(2, 8);
        holds.take(&vec![(0, 3)], true, 1000);
        holds.take(&vec![(0, 2)], true, 1000);
        holds.take(&vec![(1, 8)], false, 1001);
        assert_eq!((holds.held(0), holds.free_units(0), holds.shard_user(0)), (GpuHeld::Shards(5), 3, Some(1000)));
        assert_eq!((holds.held(1), holds.free_units(1), holds.shard_user(1)), (GpuHeld::Whole, 0, None));
        holds.give_back(&vec![(0, 3)], true);
        assert_eq!((holds.held(0), holds.shard_user(0)), (GpuHeld::Shards(2), Some(1000)));
        holds.give_back(&vec![(0, 2)], true);
        holds.give_back(&vec![(1, 8)], false);
        assert_eq!((holds.held(0), holds.shard_user(0), holds.held(1)), (GpuHeld::Free, None, GpuHeld::Free));
    }
}
