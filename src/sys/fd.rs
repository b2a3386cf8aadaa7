//! Descriptors: pipes and socket pairs, waiting for one to be readable or closed, their
//! flags (close-on-exec, non-blocking), and how many a process may have open.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

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
