//! Descriptors passed over a Unix socket with a message (`SCM_RIGHTS`).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

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
            msg.msg_controllen = libc::CMSG_SPACE(size) as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(size) as _;
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
        msg.msg_controllen = control.len() as _;
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
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<i32>();
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
