//! Faults a test build can be told to cause, to test what the daemon does when its own code
//! fails: `SLURMLET_TEST_FAULT=POINT:NAME` in the daemon's environment makes the code at
//! `POINT` panic when it handles the job called `NAME`. Release builds have none.

/// Panics when the daemon runs as a test build and `SLURMLET_TEST_FAULT` names `point` and
/// `name`.
#[cfg(debug_assertions)]
pub fn inject(point: &str, name: &str) {
    if let Ok(fault) = std::env::var("SLURMLET_TEST_FAULT") {
        if fault.split_once(':') == Some((point, name)) {
            panic!("fault {fault} caused on purpose (SLURMLET_TEST_FAULT)");
        }
    }
}

/// Release builds cause no fault.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn inject(_point: &str, _name: &str) {}
