//! The daemon's backstop for supervisors that do not end their job (see
//! [`crate::daemon::scheduling::core::Stuck`]): it looks for them when the first could be
//! overdue, and again whenever a job changes (a cancel, a start, a new time limit may bring
//! that time forward), never on a tick; and kills each with its steps' supervisors and every
//! process of its job, then records the job's end and gives its resources to the next job.
//! Killing and waiting run on a blocking thread, never under the daemon's lock.

use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::core::Stuck;
use crate::daemon::supervision::{fence, step_spec};
use crate::stepd::containment;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long a killed supervisor is waited for. SIGKILL ends a process at once unless it
/// sleeps uninterruptibly in the kernel; past this its job is fenced anyway.
const GONE_WITHIN: Duration = Duration::from_secs(2);

/// Looks for stuck supervisors for as long as the daemon runs.
pub async fn watch(daemon: Arc<Daemon>) {
    let mut changes = daemon.changes.subscribe();
    loop {
        let now = crate::sys::now();
        let (stuck, next) = {
            let mut core = daemon.core.lock();
            (core.stuck_supervisors(now), core.next_stuck_check(now))
        };
        let due = async move {
            match next {
                // A second past it, so that the look finds it overdue.
                Some(at) => tokio::time::sleep_until(crate::sys::instant_at(at.max(now) + 1).into()).await,
                None => std::future::pending().await,
            }
        };
        for s in stuck {
            let daemon = daemon.clone();
            tokio::task::spawn_blocking(move || {
                kill(&s);
                let effects = daemon.core.lock().end_stuck(&s);
                daemon.apply(effects);
            });
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = due => {}
        }
    }
}

/// Kills the stuck supervisor of `s`, its steps' supervisors and their tasks, and every
/// process of its job, and waits until they are gone.
fn kill(s: &Stuck) {
    for &(step, pid) in &s.steps {
        let dir = step_spec::step_dir(&s.dir, step);
        // Its tasks are found through it: taken before it dies.
        let tasks = containment::of_step(pid);
        if let Some(pidfd) = kill_supervisor(&dir, pid) {
            wait_gone(&pidfd);
        }
        let _ = tasks.signal_all(libc::SIGKILL);
    }
    if let Some(pidfd) = kill_supervisor(&s.dir, s.pid) {
        wait_gone(&pidfd);
    }
    // The supervisor is gone: the whole of its session goes with its job.
    fence::kill_job(&s.dir, Some(s.pid));
}

/// Sends SIGKILL to supervisor `pid` of directory `dir`, once its pid file shows it is that
/// supervisor and not a later process with its pid; returns a pidfd for it.
fn kill_supervisor(dir: &Path, pid: i32) -> Option<OwnedFd> {
    let (recorded, ticks) = crate::stepd::read_stepd_pid(dir)?;
    if recorded != pid {
        return None;
    }
    let pidfd = crate::sys::pidfd_open(pid).ok()?;
    // Checked once the pidfd holds the process: the pid cannot change hands after this.
    if crate::sys::process_start_ticks(pid) != Some(ticks) {
        return None;
    }
    if let Err(e) = crate::sys::pidfd_send_signal(pidfd.as_fd(), libc::SIGKILL) {
        tracing::error!(pid, dir = %dir.display(), "cannot kill a stuck supervisor: {e}");
    }
    Some(pidfd)
}

/// Waits until the process of `pidfd` has exited, at most [`GONE_WITHIN`].
fn wait_gone(pidfd: &OwnedFd) {
    if !crate::sys::wait_readable(pidfd, GONE_WITHIN).unwrap_or(false) {
        tracing::error!("a stuck supervisor outlives SIGKILL; fencing its job anyway");
    }
}
