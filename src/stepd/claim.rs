//! Who owns a job: the claim its supervisor makes on `JOBDIR/stepd.pid` before it starts
//! anything, and what a restarted daemon reads from it.
//!
//! A daemon can die between the moment a job's allocation is stored and the moment its
//! supervisor runs, or while the fork server is forking it. The next daemon must then tell
//! a job whose supervisor never took it up (nothing of it ran: it can wait again) from one
//! whose supervisor runs or has died (its processes may run: they are fenced). A pid file
//! alone cannot tell them apart while a supervisor is being forked, so the supervisor:
//!
//! 1. opens `stepd.pid` and takes an exclusive `flock` on it, held until it exits;
//! 2. checks that the daemon that started it still holds the read end of its end pipe (a
//!    pipe's write end reports `POLLERR` once no reader is left), and gives up, running
//!    nothing, when that daemon is gone;
//! 3. only then writes `PID STARTTICKS` into the file.
//!
//! A restarted daemon that finds the lock free and the file empty knows that no supervisor
//! ran the job, and that none will: a late one finds its daemon gone at step 2.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;
use std::time::{Duration, Instant};

/// A supervisor's claim on its job: the locked `stepd.pid`, released when dropped (when the
/// supervisor exits).
pub struct Claim {
    _file: File,
}

/// Claims the job of directory `dir` for this process (see the module's steps). `ended` is
/// the write end of the end pipe of the daemon that started it; `None` when run by hand.
/// `Ok(None)`: that daemon is gone, and this supervisor must not start the job.
pub fn take(dir: &Path, ended: Option<BorrowedFd>) -> io::Result<Option<Claim>> {
    let path = dir.join(super::files::STEPD_PID);
    let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
    // SAFETY: flock on a descriptor owned by `file`.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if ended.is_some_and(reader_gone) {
        return Ok(None);
    }
    let me = std::process::id() as i32;
    let ticks = crate::sys::process_start_ticks(me).unwrap_or(0);
    file.set_len(0)?;
    file.rewind()?;
    // One write, ending with the newline that tells a reader the line is whole.
    file.write_all(format!("{me} {ticks}\n").as_bytes())?;
    Ok(Some(Claim { _file: file }))
}

/// Whether nobody holds the read end of the pipe whose write end is `fd` any more.
fn reader_gone(fd: BorrowedFd) -> bool {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: poll on one valid pollfd, without waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & libc::POLLERR != 0
}

/// What a restarted daemon finds of a job's supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// It runs, with this pid.
    Alive(i32),
    /// It claimed the job and is gone (killed, or exited): this was its pid.
    Died(i32),
    /// No supervisor ever claimed the job, and none will.
    Never,
}

/// How long a daemon waits for a supervisor that holds the claim's lock to write its pid.
const CLAIM_WAIT: Duration = Duration::from_secs(10);

/// Reads the claim on the job of directory `dir`. Called only once the daemon that started
/// the supervisors is gone (by the next one): a supervisor still being forked then finds it
/// gone and never claims the job.
pub fn owner(dir: &Path) -> Owner {
    let path = dir.join(super::files::STEPD_PID);
    let deadline = Instant::now() + CLAIM_WAIT;
    loop {
        let Ok(mut file) = File::open(&path) else { return Owner::Never };
        // SAFETY: flock on a descriptor owned by `file`.
        let free = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        let mut text = String::new();
        let written = file.read_to_string(&mut text).ok().and_then(|_| parse(&text));
        match (free, written) {
            // A supervisor of a version that did not lock the file may still run.
            (true, Some((pid, ticks))) if crate::sys::process_start_ticks(pid) == Some(ticks) => {
                return Owner::Alive(pid)
            }
            (true, Some((pid, _))) => return Owner::Died(pid),
            (true, None) => return Owner::Never,
            (false, Some((pid, _))) => return Owner::Alive(pid),
            // Locked, not yet written: a supervisor between its lock and its write.
            (false, None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            (false, None) => {
                tracing::error!(dir = %dir.display(), "a supervisor holds its job's claim but never wrote its pid");
                return Owner::Died(0);
            }
        }
    }
}

/// `PID STARTTICKS\n`, only once whole.
fn parse(text: &str) -> Option<(i32, u64)> {
    let line = text.strip_suffix('\n')?;
    let (pid, ticks) = line.split_once(' ')?;
    Some((pid.parse().ok()?, ticks.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_seen_alive_then_dead_and_a_late_supervisor_of_a_gone_daemon_claims_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(owner(dir.path()), Owner::Never);
        let (read_end, write_end) = crate::sys::pipe().unwrap();
        {
            use std::os::fd::AsFd;
            let claim = take(dir.path(), Some(write_end.as_fd())).unwrap();
            assert!(claim.is_some());
            assert_eq!(owner(dir.path()), Owner::Alive(std::process::id() as i32));
        }
        // A child another test forks meanwhile holds the claim's descriptor, and so its
        // lock, until it executes: wait for the lock to be free.
        let pid_file = dir.path().join(super::super::files::STEPD_PID);
        let free = || {
            let f = File::open(&pid_file).unwrap();
            // SAFETY: flock on a descriptor owned by `f`.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !free() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // The lock is gone with the claim, the pid is this process's: a supervisor of an
        // older version would have looked the same, so it counts as alive.
        assert_eq!(owner(dir.path()), Owner::Alive(std::process::id() as i32));
        std::fs::write(dir.path().join(super::super::files::STEPD_PID), "999999999 1\n").unwrap();
        assert_eq!(owner(dir.path()), Owner::Died(999_999_999));

        let fresh = tempfile::tempdir().unwrap();
        drop(read_end);
        use std::os::fd::AsFd;
        assert!(take(fresh.path(), Some(write_end.as_fd())).unwrap().is_none(), "the daemon is gone");
        assert_eq!(owner(fresh.path()), Owner::Never);
        assert_eq!(parse("12 34"), None, "a line is read only once whole");
    }
}
