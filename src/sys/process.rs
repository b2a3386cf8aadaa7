//! Processes: pidfds and waiting for their end, signals to a process or a group, and what
//! `/proc` says of a process (its start, group, children, session's members, state).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// Opens a pidfd for `pid` (Linux 5.3+): readable once the process exits.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just returned to us and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Sends `signal` to the process of pidfd `fd`, never to a later process that reuses its
/// pid; one that has exited already is not an error.
pub fn pidfd_send_signal(fd: std::os::fd::BorrowedFd, signal: i32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor, a signal number, no siginfo and no flags.
    let rc = unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), signal, std::ptr::null::<libc::siginfo_t>(), 0)
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// Reaps `pid` if it is our exited child; returns its raw wait status.
pub fn reap(pid: i32) -> Option<i32> {
    let mut status = 0;
    // SAFETY: waitpid writes the status into a valid local.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (rc == pid).then_some(status)
}

/// Sends `signal` to process group `pgid`; a group that no longer exists is not an error.
pub fn kill_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to signal process group <= 1"));
    }
    // SAFETY: kill has no memory preconditions.
    if unsafe { libc::kill(-pgid, signal) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// Sends `signal` to one process; a process that no longer exists is not an error.
pub fn kill_pid(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "refusing to signal pid <= 1"));
    }
    // SAFETY: kill has no memory preconditions.
    if unsafe { libc::kill(pid, signal) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// The start time of `pid` in clock ticks since boot (field 22 of `/proc/PID/stat`), used to
/// tell a process from a later one that reuses its pid.
pub fn process_start_ticks(pid: i32) -> Option<u64> {
    stat_field(pid, 22)?.parse().ok()
}

/// Field `n` (1-based, as in proc(5)) of `/proc/PID/stat`, for fields after the command name.
fn stat_field(pid: i32, n: usize) -> Option<String> {
    read_stat_fields(pid)?.into_iter().nth(n.checked_sub(3)?)
}

/// The fields of `/proc/PID/stat` from field 3 (the state) on. The file is read as bytes:
/// the command name (field 2), which its process sets, may be anything, not valid UTF-8 too,
/// and a process must not hide from the daemon by its name.
pub fn read_stat_fields(pid: i32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&raw).map(|f| f.into_iter().map(str::to_string).collect())
}

/// The fields of a `/proc/PID/stat` text from field 3 (the state) on: the command name
/// (field 2) is in parentheses and may hold anything, spaces and `)` included, so the
/// fields start after its last `)`. `None` for a text without one.
pub fn stat_fields(stat: &[u8]) -> Option<Vec<&str>> {
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    Some(std::str::from_utf8(after).ok()?.split_whitespace().collect())
}

/// The process group of `pid` (field 5 of `/proc/PID/stat`).
pub fn process_group(pid: i32) -> Option<i32> {
    stat_field(pid, 5)?.parse().ok()
}

/// Pids of all processes in process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| process_group(pid) == Some(pgid))
        .collect()
}

/// Whether process `pid` has exited and waits to be reaped (a zombie).
pub fn is_zombie(pid: i32) -> bool {
    stat_field(pid, 3).is_some_and(|state| state == "Z")
}

/// The children of process `pid` (of its main thread).
pub fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|text| text.split_whitespace().filter_map(|c| c.parse().ok()).collect())
        .unwrap_or_default()
}

/// The processes of the sessions `sids`, each as `(pid, process group)`.
pub fn session_members(sids: &[i32]) -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            // Fields 5 and 6: process group, session.
            let fields = read_stat_fields(pid)?;
            let pgid = fields.get(2)?.parse().ok()?;
            let sid: i32 = fields.get(3)?.parse().ok()?;
            sids.contains(&sid).then_some((pid, pgid))
        })
        .collect()
}

/// Waits (asynchronously) until process `pid` exits. Returns at once if it is already gone.
pub async fn wait_exit(pid: i32) -> io::Result<()> {
    match pidfd_open(pid) {
        Ok(fd) => wait_pidfd(fd).await,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Waits (asynchronously) until the process of pidfd `fd` exits.
pub async fn wait_pidfd(fd: OwnedFd) -> io::Result<()> {
    // SAFETY: the AsyncFd owns the descriptor, so it stays open for as long as it is registered.
    let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    let _ = afd.readable().await?;
    Ok(())
}
