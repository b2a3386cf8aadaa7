//! Small wrappers over the Linux calls the daemon and the job supervisor need.

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
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces; field 3 starts after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(n.checked_sub(3)?).map(str::to_string)
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

/// Formats a UNIX time as local `YYYY-MM-DDTHH:MM:SS`, as Slurm prints times.
pub fn format_local_time(ts: u64) -> String {
    // SAFETY: localtime_r fills a zeroed tm from a valid time_t.
    let tm = unsafe {
        let t = ts as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Writes `data` to `path` atomically and durably: a temporary file, fsync, rename, fsync of
/// the directory.
pub fn write_durably(path: &std::path::Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Waits (asynchronously) until process `pid` exits. Returns at once if it is already gone.
pub async fn wait_exit(pid: i32) -> io::Result<()> {
    let fd = match pidfd_open(pid) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
        Err(e) => return Err(e),
    };
    // SAFETY: the AsyncFd owns the descriptor, so it stays open for as long as it is registered.
    let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    let _ = afd.readable().await?;
    Ok(())
}
