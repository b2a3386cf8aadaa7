//! The reader thread: reads the client's frames and feeds the tasks' standard input.
//!
//! It runs apart from the relay so that a task that does not read its input can never stall
//! the output relay. Input is written without blocking: what a task's pipe does not take
//! waits in a backlog of that task, and the thread stops reading the client while one
//! backlog is over [`BACKLOG_MAX`] (so a task that reads no input holds back the others
//! only that far). What the relay must act on (cancel, signals, the client gone) goes to it
//! as [`Wake`] messages over a pipe.

use super::stdio::Target;
use crate::api::stream::Frame;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// The most input bytes kept for one task before the client is read no further.
pub const BACKLOG_MAX: usize = 1 << 20;

/// What the reader thread tells the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The client asked to cancel the step.
    Cancel,
    /// The client's connection ended.
    Gone,
    /// The client asked to send this signal to every task.
    Signal(i32),
}

impl Wake {
    /// The bytes of one message on the wake pipe (written at once, so never split).
    pub const SIZE: usize = 5;

    fn encode(self) -> [u8; Wake::SIZE] {
        let (tag, n) = match self {
            Wake::Cancel => (b'C', 0),
            Wake::Gone => (b'G', 0),
            Wake::Signal(sig) => (b'S', sig),
        };
        let n = n.to_le_bytes();
        [tag, n[0], n[1], n[2], n[3]]
    }

    /// Reads the messages in `bytes` (a whole number of them).
    pub fn decode(bytes: &[u8]) -> Vec<Wake> {
        bytes
            .chunks_exact(Wake::SIZE)
            .filter_map(|m| match m[0] {
                b'C' => Some(Wake::Cancel),
                b'G' => Some(Wake::Gone),
                b'S' => Some(Wake::Signal(i32::from_le_bytes([m[1], m[2], m[3], m[4]]))),
                _ => None,
            })
            .collect()
    }
}

/// One task's input and what it has not yet taken.
struct Dest {
    fd: Arc<OwnedFd>,
    pty: bool,
    backlog: Vec<u8>,
    sent: usize,
    /// The input ended: close once the backlog is written.
    closing: bool,
}

impl Dest {
    fn pending(&self) -> usize {
        self.backlog.len() - self.sent
    }

    /// Writes what the descriptor takes now, of the backlog and then of `data`, and keeps
    /// the rest; `false` when the task's input is gone (it closed it, or exited).
    fn write(&mut self, data: &[u8]) -> bool {
        if self.pending() > 0 {
            self.backlog.extend_from_slice(data);
            return self.flush();
        }
        match write_some(self.fd.as_fd(), data) {
            Some(n) => {
                self.backlog.clear();
                self.sent = 0;
                self.backlog.extend_from_slice(&data[n..]);
                true
            }
            None => false,
        }
    }

    /// Writes what it can of the backlog; `false` when the task's input is gone.
    fn flush(&mut self) -> bool {
        while self.pending() > 0 {
            match write_some(self.fd.as_fd(), &self.backlog[self.sent..]) {
                Some(0) => return true,
                Some(n) => self.sent += n,
                None => return false,
            }
        }
        self.backlog.clear();
        self.sent = 0;
        true
    }
}

/// Writes as much of `data` as the non-blocking `fd` takes now; `None` on an error (EPIPE:
/// the task closed its input).
fn write_some(fd: std::os::fd::BorrowedFd, data: &[u8]) -> Option<usize> {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: write reads at most the remaining bytes of a valid slice.
        let n = unsafe { libc::write(fd.as_raw_fd(), data[done..].as_ptr().cast(), data.len() - done) };
        if n >= 0 {
            done += n as usize;
            continue;
        }
        match io::Error::last_os_error().kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => break,
            _ => return None,
        }
    }
    Some(done)
}

/// Starts the reader thread on `conn` (a clone of the client's connection), feeding
/// `targets` and telling the relay through the pipe `wake`.
pub fn spawn(conn: UnixStream, targets: Vec<Target>, wake: OwnedFd) -> io::Result<std::thread::JoinHandle<()>> {
    let dests = targets
        .into_iter()
        .map(|t| Some(Dest { fd: t.fd, pty: t.pty, backlog: Vec::new(), sent: 0, closing: false }))
        .collect();
    std::thread::Builder::new().name("step-input".into()).spawn(move || run(conn, dests, std::fs::File::from(wake)))
}

fn run(mut conn: UnixStream, mut dests: Vec<Option<Dest>>, mut wake: std::fs::File) {
    let mut tell = |w: Wake| {
        let _ = wake.write_all(&w.encode());
    };
    loop {
        // Drop the inputs that are gone, or ended and written out.
        for slot in dests.iter_mut() {
            if slot.as_ref().is_some_and(|d| d.closing && d.pending() == 0) {
                *slot = None;
            }
        }
        let full = dests.iter().flatten().any(|d| d.pending() >= BACKLOG_MAX);
        let mut fds =
            vec![libc::pollfd { fd: if full { -1 } else { conn.as_raw_fd() }, events: libc::POLLIN, revents: 0 }];
        let waiting: Vec<usize> =
            (0..dests.len()).filter(|&i| dests[i].as_ref().is_some_and(|d| d.pending() > 0)).collect();
        for &i in &waiting {
            let fd = dests[i].as_ref().expect("waiting").fd.as_raw_fd();
            fds.push(libc::pollfd { fd, events: libc::POLLOUT, revents: 0 });
        }
        // SAFETY: fds is a valid array of fds.len() pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            tell(Wake::Gone);
            return;
        }
        for (k, &i) in waiting.iter().enumerate() {
            if fds[k + 1].revents != 0 && !dests[i].as_mut().expect("waiting").flush() {
                dests[i] = None;
            }
        }
        if fds[0].revents == 0 {
            continue;
        }
        let frame = match Frame::read_from(&mut conn) {
            Ok(Some(f)) => f,
            Ok(None) | Err(_) => {
                tell(Wake::Gone);
                return;
            }
        };
        match frame {
            Frame::Input(data) => {
                for slot in dests.iter_mut() {
                    if slot.as_mut().is_some_and(|d| !d.closing && !d.write(&data)) {
                        *slot = None;
                    }
                }
            }
            Frame::InputEof => {
                // A terminal has no end of input: its task reads the client's ^D instead.
                for d in dests.iter_mut().flatten().filter(|d| !d.pty) {
                    d.closing = true;
                }
            }
            Frame::Signal(sig) => tell(Wake::Signal(sig)),
            Frame::Cancel => tell(Wake::Cancel),
            Frame::Resize(ws) => {
                for d in dests.iter().flatten().filter(|d| d.pty) {
                    let _ = crate::sys::set_winsize(d.fd.as_fd(), ws.rows, ws.cols);
                }
            }
            // Nothing else is for a step's supervisor.
            _ => {}
        }
    }
}
