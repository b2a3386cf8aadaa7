//! What the supervisor waits for, without a runtime: the batch shell's exit (a pidfd) or an
//! interactive client's next message, a
//! cancel (SIGTERM, kept blocked and read from a signalfd) and the next deadline (the poll
//! timeout). One `poll` call covers all three.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

/// One thing that happened.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// The batch shell exited (it is not yet reaped).
    Exited,
    /// SIGTERM arrived: the job is being cancelled.
    Terminate,
    /// The daemon changed the job's timing (see [`super::timing`]).
    Notify,
    /// The deadline passed.
    Deadline,
}

/// The descriptors waited on.
pub struct Events {
    exit: Option<OwnedFd>,
    term: crate::sys::SignalFd,
    notify: crate::sys::SignalFd,
    /// The watched descriptor is no longer of interest (see [`Events::forget_source`]).
    forgotten: bool,
}

impl Events {
    /// Watches process `pid` (our child) and SIGTERM. SIGTERM must be blocked in this thread
    /// (the daemon starts the supervisor with it blocked), so that it queues for the signalfd.
    pub fn new(pid: i32) -> io::Result<Events> {
        let exit = match crate::sys::pidfd_open(pid) {
            Ok(fd) => Some(fd),
            // Already gone: it exited before we looked.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => None,
            Err(e) => return Err(e),
        };
        Events::with_source(exit)
    }

    fn with_source(exit: Option<OwnedFd>) -> io::Result<Events> {
        let term = crate::sys::SignalFd::block(libc::SIGTERM)?;
        let notify = crate::sys::SignalFd::block(super::timing::NOTIFY)?;
        Ok(Events { exit, term, notify, forgotten: false })
    }

    /// Watches descriptor `fd` instead of a child: [`Event::Exited`] then means that it is
    /// readable (data, or its end), and is reported each time it is.
    pub fn on_readable(fd: OwnedFd) -> io::Result<Events> {
        Events::with_source(Some(fd))
    }

    /// Stops watching the child or descriptor: from now on only signals and deadlines
    /// count.
    pub fn forget_source(&mut self) {
        self.forgotten = true;
    }

    /// Waits until the child exits, SIGTERM or [`super::timing::NOTIFY`] arrives or
    /// `deadline` passes (`None`: no deadline), whichever is first; an exit wins over a
    /// signal that came with it, and SIGTERM over a notice.
    pub fn next(&mut self, deadline: Option<Instant>) -> io::Result<Event> {
        let Some(exit) = &self.exit else { return Ok(Event::Exited) };
        loop {
            let timeout = match deadline {
                None => -1,
                Some(at) => {
                    let left = at.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(Event::Deadline);
                    }
                    // Round up, so that a wake-up never comes before the deadline.
                    left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
                }
            };
            let mut fds = [
                // poll skips a negative descriptor.
                libc::pollfd {
                    fd: if self.forgotten { -1 } else { exit.as_raw_fd() },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd { fd: self.term.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.notify.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: fds is a valid array of three pollfd structures.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if fds[0].revents != 0 {
                return Ok(Event::Exited);
            }
            if fds[1].revents != 0 {
                self.term.drain();
                return Ok(Event::Terminate);
            }
            if fds[2].revents != 0 {
                self.notify.drain();
                return Ok(Event::Notify);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadlines_signals_and_exits_are_told_apart() {
        // This test's thread blocks SIGTERM before it starts a child, so that the signal it
        // sends itself queues for the signalfd instead of ending the test process.
        let handle = std::thread::spawn(|| {
            // A child that cannot exit before its input ends, which is ours to close.
            let mut child = std::process::Command::new("cat").stdin(std::process::Stdio::piped()).spawn().unwrap();
            let mut events = Events::new(child.id() as i32).unwrap();
            let soon = Instant::now() + Duration::from_millis(20);
            assert_eq!(events.next(Some(soon)).unwrap(), Event::Deadline);
            assert!(Instant::now() >= soon);
            // SAFETY: tgkill to this very thread, whose SIGTERM is blocked.
            unsafe {
                libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), libc::SIGTERM);
            }
            assert_eq!(events.next(None).unwrap(), Event::Terminate);
            drop(child.stdin.take());
            assert_eq!(events.next(None).unwrap(), Event::Exited);
            child.wait().unwrap();
        });
        handle.join().unwrap();
    }
}
