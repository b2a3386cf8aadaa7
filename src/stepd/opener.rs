//! Opening a job's or a step's files on a thread of their own, as the job's owner and with
//! its umask, while the supervisor waits for them beside whatever may end the job first.
//!
//! The files are the owner's to name and make (see [`super::stream_files`]): a FIFO without
//! its other end is tried again every [`RETRY`] until it is ready, and the supervisor waits
//! for [`Opener::ready`] to become readable together with its cancel signal and the time
//! limit, never inside an `open` call. The thread is never joined: an `open` that a file
//! system never answers (a FUSE server of the owner's that does not reply) must not hold the
//! supervisor; such a thread ends with the process, once the job is ended otherwise.

use crate::identity::{Identity, IdentityError};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a FIFO without its other end is tried again.
pub const RETRY: Duration = Duration::from_millis(100);

/// How long a supervisor told to end the job waits for files still being opened, when none
/// of them waits for a FIFO: a job cancelled just as it starts then ends as a started job
/// does.
pub const SETTLE: Duration = Duration::from_secs(1);

/// The outcome of one try at opening everything.
pub enum Attempt<T> {
    /// Everything is open (or failed for good): the result.
    Done(T),
    /// A FIFO waits for its other end; what it waits for, for the log.
    Waiting(String),
}

/// The result, once the thread has one.
type Slot<T> = Arc<Mutex<Option<Result<T, IdentityError>>>>;

/// Files being opened on a thread of their own.
pub struct Opener<T> {
    /// Readable (its write end closed) once the thread has finished.
    ready: OwnedFd,
    result: Slot<T>,
    /// Tells the thread to stop trying.
    stop: Arc<AtomicBool>,
    /// Set once a try found a FIFO without its other end.
    waiting: Arc<AtomicBool>,
}

impl<T: Send + 'static> Opener<T> {
    /// Starts calling `attempt` on a new thread, with `owner`'s credentials when given and
    /// umask `umask` when given, until it is done or the opener is dropped. What it waits
    /// for is logged once, on the supervisor's standard error (the daemon's log), as
    /// `slurmstepd: WHAT`.
    pub fn start(
        owner: Option<Identity>,
        umask: Option<u32>,
        mut attempt: impl FnMut() -> Attempt<T> + Send + 'static,
    ) -> std::io::Result<Opener<T>> {
        let (ready, finished) = crate::sys::pipe()?;
        let result: Slot<T> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(AtomicBool::new(false));
        let (slot, stopped, waits) = (result.clone(), stop.clone(), waiting.clone());
        let mut work = move || -> Option<T> {
            if let Some(mask) = umask {
                if let Err(e) = crate::sys::set_thread_umask(mask) {
                    eprintln!("slurmstepd: error: cannot take the job's umask {mask:04o}: {e}");
                }
            }
            let mut told = false;
            loop {
                match attempt() {
                    Attempt::Done(t) => return Some(t),
                    Attempt::Waiting(what) if !told => {
                        told = true;
                        waits.store(true, Ordering::Relaxed);
                        eprintln!("slurmstepd: {what}");
                    }
                    Attempt::Waiting(_) => {}
                }
                if stopped.load(Ordering::Relaxed) {
                    return None;
                }
                std::thread::sleep(RETRY);
            }
        };
        std::thread::Builder::new().name("job-files".into()).spawn(move || {
            let outcome = match &owner {
                Some(user) => user.on_thread(work).transpose(),
                None => work().map(Ok),
            };
            if let Some(outcome) = outcome {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            }
            // Closing the pipe's write end makes `ready` readable.
            drop(finished);
        })?;
        Ok(Opener { ready, result, stop, waiting })
    }

    /// Readable once the thread has finished (see [`Opener::take`]).
    pub fn ready(&self) -> BorrowedFd<'_> {
        self.ready.as_fd()
    }

    /// Whether the thread has finished, or finishes within [`SETTLE`] unless it waits for a
    /// FIFO: for a supervisor told to end the job before the files were open.
    pub fn settle(&self) -> bool {
        use std::os::fd::AsRawFd;
        let wait = if self.waiting.load(Ordering::Relaxed) { Duration::ZERO } else { SETTLE };
        crate::sys::poll_readable(&[self.ready.as_raw_fd()], Some(wait)).is_ok_and(|r| r.is_some())
    }

    /// The result, once the thread has one; `Err` when it could not become the owner.
    pub fn take(&self) -> Option<Result<T, IdentityError>> {
        self.result.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl<T> Drop for Opener<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_until_done_and_says_so_through_its_descriptor() {
        let mut left = 3;
        let opener = Opener::start(None, None, move || {
            left -= 1;
            if left == 0 {
                Attempt::Done(7)
            } else {
                Attempt::Waiting("waiting".into())
            }
        })
        .unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&opener.ready());
        assert_eq!(crate::sys::poll_readable(&[fd], Some(Duration::from_secs(10))).unwrap(), Some(0));
        assert_eq!(opener.take().unwrap().unwrap(), 7);
    }

    #[test]
    fn a_dropped_opener_stops_trying() {
        let tries = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = tries.clone();
        let opener = Opener::<()>::start(None, None, move || {
            counted.fetch_add(1, Ordering::Relaxed);
            Attempt::Waiting("never".into())
        })
        .unwrap();
        let ready = opener.ready.try_clone().unwrap();
        drop(opener);
        use std::os::fd::AsRawFd;
        assert_eq!(crate::sys::poll_readable(&[ready.as_raw_fd()], Some(Duration::from_secs(10))).unwrap(), Some(0));
        let after = tries.load(Ordering::Relaxed);
        std::thread::sleep(RETRY * 3);
        assert_eq!(tries.load(Ordering::Relaxed), after);
    }
}
