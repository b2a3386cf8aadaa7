//! How a step ended, as its supervisor records it in `STEPDIR/status.json` once every task is
//! gone; the daemon reads it to record the step in the job's accounting.

use crate::api::acct::Usage;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A step's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEnd {
    /// The step's exit status: the raw wait status that decides it (see [`step_status`]).
    pub wait_status: i32,
    /// When its last task was reaped (UNIX seconds).
    pub end_time: u64,
    /// What its tasks used.
    pub usage: Usage,
}

/// The step's exit status from its tasks' raw wait statuses, in task order, as slurmstepd
/// reports it: the first task killed by a signal decides; otherwise the highest status.
pub fn step_status(statuses: &[i32]) -> i32 {
    statuses
        .iter()
        .copied()
        .find(|&s| libc::WIFSIGNALED(s))
        .unwrap_or_else(|| statuses.iter().copied().max().unwrap_or(0))
}

/// Writes `end` to `dir/status.json` (whole or not at all; not made durable: a step whose
/// end is lost with the machine is recorded as ended with its job).
pub fn write(dir: &Path, end: &StepEnd) -> std::io::Result<()> {
    let path = dir.join(crate::stepd::files::STATUS);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(end).expect("a step end serializes"))?;
    std::fs::rename(&tmp, &path)
}

/// Reads the end recorded in `dir`, if there is one.
pub fn read(dir: &Path) -> Option<StepEnd> {
    serde_json::from_slice(&std::fs::read(dir.join(crate::stepd::files::STATUS)).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_decides_else_the_highest_status() {
        assert_eq!(step_status(&[0, 7 << 8, 1 << 8]), 7 << 8);
        assert_eq!(step_status(&[3 << 8, libc::SIGTERM, libc::SIGKILL]), libc::SIGTERM);
        assert_eq!(step_status(&[]), 0);
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        let end = StepEnd {
            wait_status: 2 << 8,
            end_time: 7,
            usage: Usage { user_usec: 5, sys_usec: 6, max_rss_kb: 9, ave_rss_kb: 8 },
        };
        write(dir.path(), &end).unwrap();
        assert_eq!(read(dir.path()), Some(end));
    }
}
