//! GPUs drained by the daemon itself: those whose MPS server could not be started or quit
//! in time (see [`crate::daemon::mps::servers`]). New jobs are kept off them, pending ones
//! that would run but for them say so ([`GPU_MPS_SERVER_FAILED`]), and the node's reason
//! (`sinfo -R`) says why, until the server is dealt with.

use super::{Core, Effects};
use std::collections::BTreeMap;

/// The pending reason of a job that would start but for GPUs drained because their MPS
/// server could not be started or quit.
pub const GPU_MPS_SERVER_FAILED: &str = "GpuMpsServerFailed";

impl Core {
    /// Sets the drained GPUs (device index, why) to `drains`; a scheduling pass is asked
    /// for when they changed.
    pub fn set_gpu_drains(&mut self, drains: BTreeMap<u32, String>) -> Effects {
        if drains == self.gpu_watch.drains {
            return Effects::default();
        }
        for (gpu, why) in &drains {
            if self.gpu_watch.drains.get(gpu) != Some(why) {
                tracing::warn!(gpu, "GPU drained: {why}");
            }
        }
        for gpu in self.gpu_watch.drains.keys().filter(|g| !drains.contains_key(g)) {
            tracing::info!(gpu, "GPU no longer drained");
        }
        self.gpu_watch.drains = drains;
        self.gpu_watch.drains_since = crate::sys::now();
        self.changed();
        Effects::reschedule()
    }

    /// The drained GPUs, by device index, and why.
    pub fn gpu_drains(&self) -> &BTreeMap<u32, String> {
        &self.gpu_watch.drains
    }

    /// When the drained GPUs last changed.
    pub fn gpu_drains_since(&self) -> u64 {
        self.gpu_watch.drains_since
    }

    /// What the node's reason says of a drained GPU.
    pub fn describe_drain(gpu: u32, why: &str) -> String {
        format!("gpu {gpu} drained: {why}")
    }
}
