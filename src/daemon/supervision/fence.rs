//! Ending what is left of a job whose supervisor is gone: its processes are killed, and the
//! job's resources are given back only once they are gone, so that the next job on its GPUs
//! never runs beside them.

use crate::stepd::containment::{self, Containment};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long to wait for killed processes to be gone. SIGKILL takes a process down at once
/// unless it sleeps uninterruptibly in the kernel; past this, the job's resources are given
/// back anyway (the error is logged).
const GONE_WITHIN: Duration = Duration::from_secs(2);

/// Kills the processes of the job of directory `job_dir` (see [`containment::of_job`]: its
/// process group and, when its supervisor `supervisor` is gone, the processes of that
/// supervisor's session), then waits until none of them runs.
pub fn kill_job(job_dir: &Path, supervisor: Option<i32>) {
    wait_killed(containment::of_job(job_dir, supervisor).as_ref());
}

/// Kills every process of `jail` and waits until none of them runs.
fn wait_killed(jail: &dyn Containment) {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let _ = jail.signal_all(libc::SIGKILL);
        let pids = jail.members();
        if pids.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            tracing::error!(?pids, "processes of a failed job outlive SIGKILL; giving its resources back anyway");
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_killed_group_is_gone_when_kill_job_returns() {
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(crate::stepd::files::PGID), format!("{pid}\n")).unwrap();
        kill_job(dir.path(), None);
        // Gone means exited: only the zombie waits for this process to reap it.
        assert!(crate::sys::is_zombie(pid));
        assert!(!child.wait().unwrap().success());
    }
}
