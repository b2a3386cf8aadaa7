//! Ending what is left of a job whose supervisor is gone: its processes are killed, and the
//! job's resources are given back only once they are gone, so that the next job on its GPUs
//! never runs beside them.

use std::time::{Duration, Instant};

/// How long to wait for killed processes to be gone. SIGKILL takes a process down at once
/// unless it sleeps uninterruptibly in the kernel; past this, the job's resources are given
/// back anyway (the error is logged).
const GONE_WITHIN: Duration = Duration::from_secs(2);

/// Kills the job's process group `pgid` and, when the supervisor `supervisor` is gone, every
/// process of its session (the job's processes before their group was written down), then
/// waits until none of them runs.
pub fn kill_job(pgid: Option<i32>, supervisor: Option<i32>) {
    // A session outlives its leader only while it has members, and a pid still in use as a
    // session id is not handed out again; a live process of that pid is a later one, whose
    // session is not the job's.
    let sid = supervisor.filter(|&p| p > 0 && !running(p));
    let left = || {
        let group = pgid.map(crate::sys::group_members).unwrap_or_default();
        let session = sid.map(|s| crate::sys::session_members(&[s])).unwrap_or_default();
        group.into_iter().chain(session.into_iter().map(|(pid, _)| pid)).filter(|&p| running(p)).collect::<Vec<_>>()
    };
    if let Some(pgid) = pgid {
        let _ = crate::sys::kill_group(pgid, libc::SIGKILL);
    }
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let pids = left();
        if pids.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            tracing::error!(?pids, "processes of a failed job outlive SIGKILL; giving its resources back anyway");
            return;
        }
        for pid in pids {
            let _ = crate::sys::kill_pid(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether process `pid` exists and has not exited (a zombie has).
fn running(pid: i32) -> bool {
    crate::sys::process_start_ticks(pid).is_some() && !crate::sys::is_zombie(pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_killed_group_is_gone_when_kill_job_returns() {
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        kill_job(Some(pid), None);
        // Gone means exited: only the zombie waits for this process to reap it.
        assert!(!running(pid));
        assert!(!child.wait().unwrap().success());
    }
}
