//! The writing side of the client's connection, which never blocks the supervisor.
//!
//! Frames are sent with `send(MSG_DONTWAIT)`: what the socket does not take at once waits in
//! a backlog, which the relay flushes when the socket becomes writable, and the relay reads
//! no more task output while there is one (so the backlog stays about one chunk long). The
//! flag is per call, so the reader thread's blocking reads on a clone of the same socket are
//! not affected. Once the client is gone (a send fails), everything is discarded.

use crate::api::stream::{self, Channel, Frame};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;

/// The connection and its backlog.
struct Conn {
    stream: UnixStream,
    /// Bytes not yet sent, from `sent` on.
    backlog: Vec<u8>,
    sent: usize,
    /// A send failed: the client is gone.
    dead: bool,
}

/// One non-blocking send on socket `fd`; `Ok(0)` when the socket is full.
fn send_now(fd: BorrowedFd, data: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: send reads at most data.len() bytes from a valid slice.
        let n = unsafe {
            libc::send(fd.as_raw_fd(), data.as_ptr().cast(), data.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => return Ok(0),
            _ => return Err(e),
        }
    }
}

impl Conn {
    fn pending(&self) -> bool {
        self.sent < self.backlog.len()
    }
}

impl Write for Conn {
    /// Takes all of `data`: sends what the socket accepts now and keeps the rest.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.dead {
            return Ok(data.len());
        }
        if self.pending() {
            self.backlog.extend_from_slice(data);
            return Ok(data.len());
        }
        match send_now(self.stream.as_fd(), data) {
            Ok(n) if n == data.len() => {}
            Ok(n) => {
                self.backlog.clear();
                self.sent = 0;
                self.backlog.extend_from_slice(&data[n..]);
            }
            Err(_) => self.dead = true,
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Frames for the client.
pub struct Sink {
    conn: Conn,
    /// The reused buffer of output frames.
    scratch: Vec<u8>,
}

impl Sink {
    /// Writes to `stream` from now on.
    pub fn new(stream: UnixStream) -> Sink {
        Sink {
            conn: Conn { stream, backlog: Vec::new(), sent: 0, dead: false },
            scratch: Vec::with_capacity(stream::CHUNK + 16),
        }
    }

    /// Queues or sends `frame`.
    pub fn frame(&mut self, frame: &Frame) {
        let _ = frame.write_to(&mut self.conn);
    }

    /// Queues or sends one output chunk (at most [`stream::CHUNK`] bytes).
    pub fn output(&mut self, task: u32, channel: Channel, data: &[u8]) {
        let _ = stream::write_output(&mut self.conn, &mut self.scratch, task, channel, data);
    }

    /// Whether bytes wait for the socket to become writable.
    pub fn backlogged(&self) -> bool {
        self.conn.pending()
    }

    /// Whether the client is gone (a send failed).
    pub fn dead(&self) -> bool {
        self.conn.dead
    }

    /// The socket, to poll for `POLLOUT` while backlogged.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.conn.stream.as_fd()
    }

    /// Sends as much of the backlog as the socket takes now.
    pub fn flush(&mut self) {
        while self.conn.pending() && !self.conn.dead {
            match send_now(self.conn.stream.as_fd(), &self.conn.backlog[self.conn.sent..]) {
                Ok(0) => return,
                Ok(n) => self.conn.sent += n,
                Err(_) => self.conn.dead = true,
            }
        }
        if !self.conn.pending() || self.conn.dead {
            self.conn.backlog.clear();
            self.conn.sent = 0;
        }
    }

    /// Sends the whole backlog, waiting for the client to take it (unless `stop` becomes
    /// readable first: a SIGTERM for the supervisor), then ends the stream on our side.
    pub fn finish(mut self, stop: Option<RawFd>) {
        while self.backlogged() && !self.dead() {
            let mut fds = [
                libc::pollfd { fd: self.conn.stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 },
                libc::pollfd { fd: stop.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: fds is a valid array of two pollfd structures.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[1].revents != 0 {
                break;
            }
            self.flush();
        }
        let _ = self.conn.stream.shutdown(std::net::Shutdown::Write);
    }
}
