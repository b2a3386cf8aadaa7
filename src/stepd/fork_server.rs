//! The supervisors' fork server (`slurmlet stepd-server FD`).
//!
//! Starting a supervisor by executing this binary costs a process start: the loader, the
//! binary's relocations, the C library's processor probes. The daemon instead starts this
//! small single-threaded process once and asks it, over the `SOCK_SEQPACKET` socket FD, for
//! each supervisor: a message holds the kind (job or step) and directory, and carries the
//! write end of the end pipe (and, for a step or an interactive allocation, the client's
//! connection); the server forks, the child becomes the job's supervisor in a new
//! session (SIGTERM still blocked, as the daemon started the server), and the server answers
//! with the child's pid and a pidfd for it. The server reaps its children and exits when the
//! daemon closes the socket; supervisors live on, as they do when started directly.
//!
//! The same way, a request tagged [`crate::path_looks::TAG`] starts the process that looks
//! at a user's paths as that user: forked from this small process, it costs the daemon no
//! `fork` of its own (whose copy-on-write faults, in a daemon of many threads and mappings,
//! cost more than the rest of a submit).

use super::Kind;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The most bytes a request (a job directory) may have.
pub const MAX_REQUEST: usize = 4096;

/// `slurmlet stepd-server FD`.
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    let Some(fd) = args.get(1).and_then(|a| a.to_str()).and_then(|a| a.parse::<i32>().ok()).filter(|&fd| fd > 2) else {
        eprintln!("usage: slurmlet stepd-server FD (started by the daemon)");
        return 2;
    };
    // SAFETY: the daemon passes this descriptor to this process alone.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    match serve(&sock) {
        Ok(()) => 0,
        // The daemon died with a request under way (killed): as when it closes the socket.
        Err(e) if matches!(e.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset) => 0,
        Err(e) => {
            eprintln!("slurmletd: error: supervisor fork server: {e}");
            1
        }
    }
}

/// Answers requests until the daemon closes the socket.
fn serve(sock: &OwnedFd) -> io::Result<()> {
    let children = ChildSignal::new()?;
    let mut buf = vec![0u8; MAX_REQUEST];
    loop {
        let mut fds = [
            libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: children.0.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: fds is a valid array of two pollfd structures.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if fds[1].revents != 0 {
            children.reap();
        }
        if fds[0].revents == 0 {
            continue;
        }
        let (n, fds) = crate::sys::recv_with_fds(sock.as_fd(), &mut buf)?;
        if n == 0 {
            // The daemon is gone; its supervisors are not ours to end.
            return Ok(());
        }
        let reply = match (Kind::from_tag(buf[0]), fds.is_empty()) {
            (_, true) => Err(io::Error::new(io::ErrorKind::InvalidInput, "a request without descriptors")),
            (Some(kind), false) => {
                let dir = Path::new(OsStr::from_bytes(&buf[1..n]));
                fork_child(fds, sock, &children, |fds| super::supervise_with(kind, dir, fds))
            }
            (None, false) if buf[0] == crate::path_looks::TAG => {
                fork_child(fds, sock, &children, crate::path_looks::answer)
            }
            (None, false) => Err(io::Error::new(io::ErrorKind::InvalidInput, "a request of an unknown kind")),
        };
        match reply {
            Ok((pid, pidfd)) => crate::sys::send_with_fds(sock.as_fd(), &pid.to_ne_bytes(), &[pidfd.as_fd()])?,
            Err(e) => {
                let code = -e.raw_os_error().unwrap_or(libc::EINVAL);
                crate::sys::send_with_fds(sock.as_fd(), &code.to_ne_bytes(), &[])?
            }
        }
    }
}

/// Forks a child that runs `work` on the descriptors passed to it (a supervisor, or the
/// look at a user's paths) and exits with its code; returns its pid and a pidfd for it.
fn fork_child(
    fds: Vec<OwnedFd>,
    sock: &OwnedFd,
    children: &ChildSignal,
    work: impl FnOnce(Vec<OwnedFd>) -> i32,
) -> io::Result<(i32, OwnedFd)> {
    // SAFETY: this process has one thread, so the child may go on running Rust code.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // The child: none of the server's descriptors, its own session, the signal mask
            // the daemon gave the server (SIGTERM blocked), then its work.
            // SAFETY: closing descriptors this child owns; setsid and sigprocmask have no
            // memory preconditions beyond the initialised set.
            unsafe {
                libc::close(sock.as_raw_fd());
                libc::close(children.0.as_raw_fd());
                libc::setsid();
                libc::sigprocmask(libc::SIG_SETMASK, children.0.old_mask(), std::ptr::null_mut());
                // What `ps -o comm` and `top` show, as for Slurm's supervisors.
                libc::prctl(libc::PR_SET_NAME, c"slurmstepd".as_ptr());
            }
            std::process::exit(work(fds));
        }
        pid => {
            drop(fds);
            Ok((pid, crate::sys::pidfd_open(pid)?))
        }
    }
}

/// SIGCHLD, blocked and read from a signalfd, so that exited supervisors are reaped.
struct ChildSignal(crate::sys::SignalFd);

impl ChildSignal {
    fn new() -> io::Result<ChildSignal> {
        crate::sys::SignalFd::block(libc::SIGCHLD).map(ChildSignal)
    }

    /// Drains the signalfd and reaps every exited child.
    fn reap(&self) {
        self.0.drain();
        let mut status = 0;
        // SAFETY: waitpid writes the status into a local.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
    }
}
