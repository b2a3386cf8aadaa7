//! Signals read from a signalfd instead of handled.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

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
