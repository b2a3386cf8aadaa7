//! What NVML says is wrong with each whole GPU, looked at with its figures: the critical XID
//! events it raised since the last look (`nvmlEventSetWait_v2` on an event set registered
//! for `nvmlEventTypeXidCriticalError`), memory pages retired or rows remapped that wait for
//! a reset of the GPU, a row remapping that failed. A GPU that is lost altogether is found by
//! the sampler itself (every call on it answers `NVML_ERROR_GPU_IS_LOST`).
//!
//! Only the XIDs after which NVIDIA's catalogue says the GPU needs a reset (or is gone) take
//! it out of service ([`FATAL_XIDS`]); an application's own faults (13, 31, 43, 45…) do not.

use super::sampler::GpuTrouble;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{bitmasks::event::EventTypes, Device, EventSet, Nvml as Library};
use std::sync::Mutex;

/// The XIDs that take a GPU out of service, with what NVIDIA's catalogue calls them.
pub const FATAL_XIDS: &[(u64, &str)] = &[
    (48, "double-bit ECC error"),
    (62, "internal micro-controller halt"),
    (64, "ECC page retirement or row remapping recording failure"),
    (74, "NVLink error"),
    (79, "GPU has fallen off the bus"),
    (95, "uncontained ECC error"),
    (119, "GSP RPC timeout"),
    (120, "GSP error"),
    (140, "unrecovered ECC error"),
];

/// The most events one look takes from the set: a storm is cut short (the rest wait for
/// the next look).
const MAX_EVENTS_PER_LOOK: usize = 64;

/// What a lost GPU's trouble says.
pub const LOST: &str = "the GPU is lost (NVML: GPU is lost): it has fallen off the bus or needs a reset";

/// The node's reason for XID `xid`, when it takes the GPU out of service.
pub fn xid_trouble(xid: u64) -> Option<String> {
    FATAL_XIDS.iter().find(|(x, _)| *x == xid).map(|(x, what)| format!("XID {x}: {what}"))
}

/// The event set, registered once for the GPUs; `None` after NVML refused it (older
/// drivers, some virtual GPUs), when only the state the GPUs report is looked at.
#[derive(Default)]
pub struct Health {
    set: Mutex<Option<Option<EventSet<'static>>>>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").finish_non_exhaustive()
    }
}

impl Health {
    /// What is wrong with `devices` (`(uuid, device)`) now, of `nvml`.
    pub fn troubles(&self, nvml: &'static Library, devices: &[(String, Device<'static>)]) -> Vec<GpuTrouble> {
        let mut troubles = self.events(nvml, devices);
        for (uuid, device) in devices {
            troubles.extend(state_troubles(nvml, device).into_iter().map(|why| GpuTrouble { uuid: uuid.clone(), why }));
        }
        troubles
    }

    /// The fatal XID events raised since the last look.
    fn events(&self, nvml: &'static Library, devices: &[(String, Device<'static>)]) -> Vec<GpuTrouble> {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        let set = set.get_or_insert_with(|| register(nvml, devices));
        let Some(set) = set.as_ref() else { return Vec::new() };
        let mut troubles = Vec::new();
        for _ in 0..MAX_EVENTS_PER_LOOK {
            let event = match set.wait(0) {
                Ok(event) => event,
                Err(NvmlError::Timeout) => break,
                Err(e) => {
                    tracing::debug!("nvmlEventSetWait_v2 failed: {e}");
                    break;
                }
            };
            let Some(XidError::Value(xid)) = event.event_data else { continue };
            let Some(why) = xid_trouble(xid) else {
                tracing::info!(xid, "a GPU raised an XID event that does not take it out of service");
                continue;
            };
            let uuid = event.device.uuid().unwrap_or_default();
            troubles.push(GpuTrouble { uuid, why });
        }
        troubles
    }
}

/// An event set with `devices` registered for critical XID events; `None` when NVML cannot
/// give one (said once, in the log).
fn register(nvml: &'static Library, devices: &[(String, Device<'static>)]) -> Option<EventSet<'static>> {
    let mut set = match nvml.create_event_set() {
        Ok(set) => set,
        Err(e) => {
            tracing::info!("NVML gives no event set ({e}): XID events are not watched");
            return None;
        }
    };
    for (uuid, device) in devices {
        set = match device.register_events(EventTypes::CRITICAL_XID_ERROR, set) {
            Ok(set) => set,
            Err(e) => {
                tracing::info!(gpu = %uuid, "NVML cannot watch the GPU's XID events ({}): they are not watched", e.error);
                return None;
            }
        };
    }
    Some(set)
}

/// What the state `device` reports says is wrong: memory waiting for a reset, a failed
/// row remapping. What the GPU cannot tell (`NVML_ERROR_NOT_SUPPORTED`) says nothing.
fn state_troubles(nvml: &'static Library, device: &Device<'static>) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(true) = device.are_pages_pending_retired() {
        found.push("retired memory pages wait for a reset of the GPU".to_string());
    }
    if let Some(rows) = remapped_rows(nvml, device) {
        if rows.failure {
            found.push("a memory row remapping failed".to_string());
        } else if rows.pending {
            found.push("remapped memory rows wait for a reset of the GPU".to_string());
        }
    }
    found
}

/// `nvmlDeviceGetRemappedRows`, which the wrapper does not offer.
struct RemappedRows {
    pending: bool,
    failure: bool,
}

fn remapped_rows(nvml: &'static Library, device: &Device<'static>) -> Option<RemappedRows> {
    let call = nvml.lib().nvmlDeviceGetRemappedRows.as_ref().ok()?;
    let (mut corrected, mut uncorrected, mut pending, mut failure) = (0, 0, 0, 0);
    // SAFETY: the handle is a live device of this NVML (it lives as long as the library,
    // which is never shut down); the four pointers are to locals the call writes, as
    // `nvml.h` declares it.
    let rc = unsafe { call(device.handle(), &mut corrected, &mut uncorrected, &mut pending, &mut failure) };
    (rc == 0).then_some(RemappedRows { pending: pending != 0, failure: failure != 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_xids_that_need_a_reset_take_a_gpu_out() {
        assert_eq!(xid_trouble(79).as_deref(), Some("XID 79: GPU has fallen off the bus"));
        assert_eq!(xid_trouble(48).as_deref(), Some("XID 48: double-bit ECC error"));
        for application_fault in [13, 31, 43, 45, 94] {
            assert_eq!(xid_trouble(application_fault), None);
        }
    }
}
