//! Pseudo-terminals: opening one and setting its window size.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

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
