//! The daemon's side of the supervisors' fork server (see [`crate::stepd::fork_server`]): started
//! on the first launch, asked for one supervisor per job (and for the looks at a user's
//! paths), replaced when it fails.

use crate::stepd::Kind;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A running fork server and the daemon's end of its socket.
pub struct ForkServer {
    sock: OwnedFd,
    pid: i32,
}

impl ForkServer {
    /// Starts `exe stepd-server` in its own session with SIGTERM blocked (the supervisors
    /// it forks inherit both), its socket as descriptor 3.
    pub fn start(exe: &Path) -> io::Result<ForkServer> {
        let (ours, theirs) = crate::sys::seqpacket_pair()?;
        let fd = super::posix_spawn::PASSED_FD.to_string();
        let argv = ["slurmlet".as_ref(), "stepd-server".as_ref(), fd.as_ref()];
        let pid = super::posix_spawn::supervisor(exe, &argv, &[theirs.as_fd()])?;
        Ok(ForkServer { sock: ours, pid })
    }

    /// Asks for the supervisor of job directory `dir`, handing it `end`, the write end of the
    /// job's end pipe; returns its pid and a pidfd for it.
    pub fn launch(&self, kind: Kind, dir: &Path, fds: &[BorrowedFd]) -> io::Result<(i32, OwnedFd)> {
        self.ask(kind.tag(), dir.as_os_str().as_bytes(), fds)
    }

    /// Asks for the process that looks at a user's paths (see [`crate::path_looks`]),
    /// handing it its request and report descriptors; returns its pid and a pidfd for it.
    pub fn path_check(&self, fds: &[BorrowedFd]) -> io::Result<(i32, OwnedFd)> {
        self.ask(crate::path_looks::TAG, &[], fds)
    }

    /// Asks for the child that `tag` and `text` name, handing it `fds`.
    fn ask(&self, tag: u8, text: &[u8], fds: &[BorrowedFd]) -> io::Result<(i32, OwnedFd)> {
        let mut request = vec![tag];
        request.extend_from_slice(text);
        if request.len() > crate::stepd::fork_server::MAX_REQUEST {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "job directory path too long"));
        }
        crate::sys::send_with_fds(self.sock.as_fd(), &request, fds)?;
        let mut reply = [0u8; 4];
        let (n, fds) = crate::sys::recv_with_fds(self.sock.as_fd(), &mut reply)?;
        let pidfd = fds.into_iter().next();
        if n != reply.len() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the fork server did not answer"));
        }
        match (i32::from_ne_bytes(reply), pidfd) {
            (pid, Some(pidfd)) if pid > 0 => Ok((pid, pidfd)),
            (code, _) if code < 0 => Err(io::Error::from_raw_os_error(-code)),
            _ => Err(io::Error::new(io::ErrorKind::InvalidData, "the fork server's answer has no pidfd")),
        }
    }
}

impl Drop for ForkServer {
    /// Closing the socket ends the server (its supervisors live on); it is then reaped.
    fn drop(&mut self) {
        // SAFETY: shutdown and waitpid take a descriptor and a pid; the status is a local.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::shutdown(self.sock.as_raw_fd(), libc::SHUT_RDWR);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
    }
}
