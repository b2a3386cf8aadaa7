//! Small wrappers over the Linux calls the daemon, the job supervisor and the commands need.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// An error as C programs print it (`%m`, `strerror`): without Rust's ` (os error N)`.
pub fn c_error_text(e: &io::Error) -> String {
    let full = e.to_string();
    match full.rfind(" (os error ") {
        Some(at) => full[..at].to_string(),
        None => full,
    }
}

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

/// The monotonic instant at which the wall clock reads UNIX second `unix` (now, if it has
/// passed). Computed from the exact time, so that the supervisors of a job and of its steps
/// reach the same time limit at the same moment.
pub fn instant_at(unix: u64) -> std::time::Instant {
    let target = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix);
    let left = target.duration_since(std::time::SystemTime::now()).unwrap_or_default();
    std::time::Instant::now() + left
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

/// 00:00:00 of the local day of UNIX time `now`.
pub fn local_midnight(now: u64) -> u64 {
    // SAFETY: localtime_r fills a zeroed tm from a valid time_t; mktime reads and normalises it.
    let t = unsafe {
        let t = now as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm.tm_hour = 0;
        tm.tm_min = 0;
        tm.tm_sec = 0;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm)
    };
    if t < 0 {
        now
    } else {
        t as u64
    }
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

/// Writes `data` to `path` atomically (a temporary file renamed over it), calls `published`
/// once the file is in place, and only then makes it durable (fsync of the file, then of its
/// directory). Whoever `published` tells may read the file at once; after a crash of the
/// machine before the fsyncs, the file may be missing or empty, as if the write had not
/// happened.
pub fn write_atomically(path: &std::path::Path, data: &[u8], published: impl FnOnce()) -> io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(data)?;
    std::fs::rename(&tmp, path)?;
    published();
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        match std::fs::File::open(dir) {
            Ok(d) => d.sync_all()?,
            // Whoever was told may have removed the directory already, which it does only
            // once it holds the data durably itself.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A pipe, both ends close-on-exec and non-blocking: `(read end, write end)`.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits (asynchronously) until every write end of the pipe whose non-blocking read end is
/// `fd` is closed. Anything written to it is read and ignored.
pub async fn wait_closed(fd: OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the AsyncFd owns the descriptor, so it stays open for as long as it is registered.
    let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|e| io::Error::other(e.to_string()))?;
    let mut buf = [0u8; 64];
    loop {
        let mut ready = afd.readable().await?;
        // SAFETY: read into a valid local buffer of the given length.
        let n = unsafe { libc::read(afd.get_ref().as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => return Ok(()),
            n if n > 0 => continue,
            _ => {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => ready.clear_ready(),
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(e),
                }
            }
        }
    }
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

/// Marks every descriptor above stderr close-on-exec, so that none of those this process
/// was started with is passed on to what it starts.
pub fn close_inherited_on_exec() {
    // SAFETY: close_range only changes descriptor flags; it has no memory preconditions.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        return;
    }
    // Kernels before 5.11: one descriptor at a time.
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<i32> = dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        // SAFETY: fcntl on a descriptor number; one that is already closed only fails.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// A pair of connected `SOCK_SEQPACKET` Unix sockets (message boundaries kept), both
/// close-on-exec.
pub fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into the array.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits until one of `fds` is readable (data or its end) or `timeout` passes (`None`:
/// no limit); returns the index of the first readable one.
pub fn poll_readable(fds: &[std::os::fd::RawFd], timeout: Option<std::time::Duration>) -> io::Result<Option<usize>> {
    let mut polled: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
    loop {
        // SAFETY: `polled` is a valid array of pollfd structures of the length given.
        let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) };
        if n >= 0 {
            return Ok(polled.iter().position(|p| p.revents != 0));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Whether `fd` is readable (data or its end) within `timeout`.
pub fn wait_readable(fd: &impl std::os::fd::AsRawFd, timeout: std::time::Duration) -> io::Result<bool> {
    Ok(poll_readable(&[fd.as_raw_fd()], Some(timeout))?.is_some())
}

/// The process umask (read by setting and restoring it).
pub fn current_umask() -> u32 {
    // SAFETY: umask has no memory preconditions; the old mask is restored at once.
    unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask as u32
    }
}

/// Gives the calling thread a umask of its own, `mask`, and leaves every other thread's as
/// it was. Threads share one umask (with their directory) unless one unshares it
/// (`CLONE_FS`): a root daemon's private umask must not be what another user's files are
/// made with, nor may that user's umask reach the daemon's own files.
pub fn set_thread_umask(mask: u32) -> io::Result<()> {
    // SAFETY: unshare and umask have no memory preconditions; CLONE_FS affects this thread
    // alone.
    unsafe {
        if libc::unshare(libc::CLONE_FS) != 0 {
            return Err(io::Error::last_os_error());
        }
        libc::umask((mask & 0o777) as libc::mode_t);
    }
    Ok(())
}

/// How many descriptors this process may have open (`RLIMIT_NOFILE`'s soft limit; systemd's
/// `LimitNOFILE`); `None` when it cannot be read or is unlimited.
pub fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given, which lives on this stack.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Marks `fd` close-on-exec.
pub fn set_cloexec(fd: &impl std::os::fd::AsRawFd) {
    // SAFETY: fcntl on a descriptor the caller holds; no memory is involved.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
}

/// The most descriptors one message carries.
pub const MAX_FDS: usize = 4;

/// Room for [`MAX_FDS`] descriptors in a control message.
const FD_SPACE: usize = 64;

/// Sends `data` over Unix socket `sock` as one message, with descriptors `fds` (at most
/// [`MAX_FDS`]).
pub fn send_with_fds(sock: std::os::fd::BorrowedFd, data: &[u8], fds: &[std::os::fd::BorrowedFd]) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    if fds.len() > MAX_FDS {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many descriptors for one message"));
    }
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    let mut control = [0u8; FD_SPACE];
    let size = (std::mem::size_of::<i32>() * fds.len()) as u32;
    // SAFETY: msghdr is plain data; every pointer set below points at a live local, and the
    // CMSG macros stay within `control`, which CMSG_SPACE of MAX_FDS ints fits.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(size) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(size) as usize;
            let data = libc::CMSG_DATA(cmsg).cast::<i32>();
            for (i, fd) in fds.iter().enumerate() {
                std::ptr::write_unaligned(data.add(i), fd.as_raw_fd());
            }
        }
        loop {
            if libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Receives one message of at most `buf.len()` bytes from Unix socket `sock`, and the
/// descriptors sent with it (close-on-exec). `(0, [])` when the other end is closed.
pub fn recv_with_fds(sock: std::os::fd::BorrowedFd, buf: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    use std::os::fd::AsRawFd;
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = [0u8; FD_SPACE];
    // SAFETY: as in send_with_fds; the kernel writes at most msg_controllen bytes of control
    // data and at most buf.len() bytes of data, and every descriptor it passes is taken.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len();
        let n = loop {
            let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        let mut fds = Vec::new();
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let count = ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<i32>();
                let data = libc::CMSG_DATA(cmsg).cast::<i32>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        Ok((n, fds))
    }
}

/// A signal blocked in the calling thread and read from a signalfd instead of handled.
pub struct SignalFd {
    fd: OwnedFd,
    old_mask: libc::sigset_t,
}

impl SignalFd {
    /// Blocks `signal` in this thread and opens a non-blocking, close-on-exec signalfd for it.
    pub fn block(signal: i32) -> io::Result<SignalFd> {
        SignalFd::block_all(&[signal])
    }

    /// Blocks every signal of `signals` in this thread (threads it starts afterwards inherit
    /// the mask) and opens one non-blocking, close-on-exec signalfd for all of them.
    pub fn block_all(signals: &[i32]) -> io::Result<SignalFd> {
        // SAFETY: the sets are initialised by sigemptyset/sigaddset before use; signalfd
        // returns a new descriptor that the OwnedFd then owns.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &signal in signals {
                libc::sigaddset(&mut set, signal);
            }
            let mut old_mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask);
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(SignalFd { fd: OwnedFd::from_raw_fd(fd), old_mask })
        }
    }

    /// The thread's signal mask before [`SignalFd::block`].
    pub fn old_mask(&self) -> &libc::sigset_t {
        &self.old_mask
    }

    /// The next queued signal's number, or `None` when none is queued.
    pub fn next(&self) -> Option<i32> {
        use std::os::fd::AsRawFd;
        let mut info = std::mem::MaybeUninit::<libc::signalfd_siginfo>::uninit();
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        loop {
            // SAFETY: read writes at most `size` bytes into the local buffer; the descriptor
            // is non-blocking.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), info.as_mut_ptr().cast(), size) };
            if n == size as isize {
                // SAFETY: the kernel filled the whole structure.
                return Some(unsafe { info.assume_init() }.ssi_signo as i32);
            }
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
    }

    /// Reads every queued signal, so that the descriptor is quiet again.
    pub fn drain(&self) {
        use std::os::fd::AsRawFd;
        let mut info = std::mem::MaybeUninit::<libc::signalfd_siginfo>::uninit();
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: read writes at most `size` bytes into the local buffer; the descriptor is
        // non-blocking, so the loop ends when nothing is queued.
        while unsafe { libc::read(self.fd.as_raw_fd(), info.as_mut_ptr().cast(), size) } == size as isize {}
    }
}

impl std::os::fd::AsRawFd for SignalFd {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

/// Sets or clears `O_NONBLOCK` on the open file description of `fd`.
pub fn set_nonblocking(fd: std::os::fd::BorrowedFd, on: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a valid descriptor; it has no memory preconditions.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = if on { flags | libc::O_NONBLOCK } else { flags & !libc::O_NONBLOCK };
        if libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Opens a pseudo-terminal: `(master, slave)`, both close-on-exec and blocking; the slave is
/// not made the caller's controlling terminal. The size, if given (`(rows, cols)`), is set
/// on it before it is returned.
pub fn openpty(size: Option<(u16, u16)>) -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::{AsFd, AsRawFd};
    // SAFETY: posix_openpt returns a new descriptor or -1.
    let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    let master = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: grantpt and unlockpt take the master descriptor; ptsname_r writes a
    // NUL-terminated name of at most name.len() bytes into the local buffer.
    unsafe {
        if libc::grantpt(master.as_raw_fd()) != 0 || libc::unlockpt(master.as_raw_fd()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let rc = libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len());
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
    }
    // SAFETY: name is NUL-terminated (ptsname_r succeeded); open returns a new descriptor or -1.
    let fd = unsafe { libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    let slave = unsafe { OwnedFd::from_raw_fd(fd) };
    if let Some((rows, cols)) = size {
        set_winsize(master.as_fd(), rows, cols)?;
    }
    Ok((master, slave))
}

/// Sets the window size of the terminal of `fd` (a pseudo-terminal's master or slave).
pub fn set_winsize(fd: std::os::fd::BorrowedFd, rows: u16, cols: u16) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let ws = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCSWINSZ reads one winsize structure from a valid local.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &ws) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `n` in decimal at `at` followed by a NUL (at most 11 bytes), with no allocation:
/// for a child between `fork` and `execve`.
///
/// # Safety
///
/// `at` must point at 11 writable bytes.
pub unsafe fn write_decimal(at: *mut u8, mut n: u32) {
    let mut tmp = [0u8; 10];
    let mut len = 0;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // SAFETY: a u32 has at most ten digits, so `len` is at most 10 and the writes stay in
    // the 11 bytes the caller promised at `at`.
    unsafe {
        for i in 0..len {
            *at.add(i) = tmp[len - 1 - i];
        }
        *at.add(len) = 0;
    }
}

/// Keeps the daemon's memory from growing with its threads. glibc gives each thread that
/// allocates its own arena, up to eight per CPU, and an arena keeps what was freed in it:
/// large replies built on the runtime's many blocking threads left several copies of their
/// size resident. Two arenas serve a daemon of two worker threads; and buffers of a MiB or
/// more are mapped on their own and given back when freed (a fixed threshold also stops
/// glibc raising it after the first large buffer is freed).
pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets allocator parameters; it is called before other threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Creates `dir` (and parents) with mode 0700 if it does not exist, and makes sure it is a
/// directory of this user's that nobody else may write: in a directory others may write
/// (`/tmp`), another user could have made it first, or put a link there, and would then see
/// or replace what goes in it (the daemon's socket, its start lock).
pub fn create_private_dir(dir: &std::path::Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let refused = |why: String| Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    if meta.file_type().is_symlink() {
        return refused(format!("{} is a symbolic link; remove it", dir.display()));
    }
    if !meta.is_dir() {
        return refused(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != me {
        return refused(format!(
            "{} belongs to {} (uid {}), not to this user; remove it",
            dir.display(),
            crate::identity::user_name(meta.uid()),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return refused(format!("{} may be written by others (mode {:04o})", dir.display(), meta.mode() & 0o7777));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_reader_removed_its_directory_once_published_was_still_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("job");
        std::fs::create_dir(&dir).unwrap();
        let mut seen = String::new();
        write_atomically(&dir.join("status"), b"done", || {
            seen = std::fs::read_to_string(dir.join("status")).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
        })
        .expect("the file was published, so the write succeeded");
        assert_eq!(seen, "done");
    }

    #[test]
    fn a_threads_own_umask_leaves_the_processs_alone() {
        let before = current_umask();
        let theirs = std::thread::spawn(|| {
            set_thread_umask(0o027).unwrap();
            current_umask()
        })
        .join()
        .unwrap();
        assert_eq!((theirs, current_umask()), (0o027, before));
    }
}
