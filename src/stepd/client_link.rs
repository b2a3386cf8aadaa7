//! An interactive allocation's client connection (salloc, or srun outside a job) as its
//! supervisor uses it: never waiting on the client.
//!
//! The client is the job's owner's process: stopped (`kill -STOP`, Ctrl-Z), or one that
//! simply does not read, it would hold a blocking send for good, and with it the
//! supervisor's cancel and time limit. Frames go out with `send(MSG_DONTWAIT)` (the step
//! supervisors' [`Sink`]): what the socket does not take waits in a backlog, which is sent
//! as the client reads ([`ClientLink::flush_due`] says when to try again). Frames come in as
//! their bytes arrive, read without waiting ([`FrameBuffer`]): a client that stops half-way
//! through a frame holds nothing up either.

use super::step::sink::Sink;
use crate::api::stream::{Frame, FrameBuffer};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// How often a backlog is offered to the socket again.
pub const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// The most bytes read from the client at one turn of the supervisor's loop.
const READ_AT_ONCE: usize = 1 << 20;

/// What the client sent.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A whole frame.
    Frame(Frame),
    /// Its stream ended (or can no longer be read: an error, a malformed frame).
    Ended,
}

/// The client's connection.
pub struct ClientLink {
    sink: Sink,
    conn: UnixStream,
    incoming: FrameBuffer,
}

impl ClientLink {
    /// Takes over `conn`.
    pub fn new(conn: UnixStream) -> std::io::Result<ClientLink> {
        Ok(ClientLink { sink: Sink::new(conn.try_clone()?), conn, incoming: FrameBuffer::default() })
    }

    /// The connection, to watch for what the client sends.
    pub fn stream(&self) -> &UnixStream {
        &self.conn
    }

    /// Sends `frame`, or queues what the socket does not take now.
    pub fn send(&mut self, frame: &Frame) {
        self.sink.frame(frame);
    }

    /// Sends what it can of the backlog.
    pub fn flush(&mut self) {
        self.sink.flush();
    }

    /// When to [`ClientLink::flush`] again: while a backlog waits.
    pub fn flush_due(&self) -> Option<Instant> {
        (self.sink.backlogged() && !self.sink.dead()).then(|| Instant::now() + FLUSH_EVERY)
    }

    /// What the client has sent so far, whole frames in order, without waiting;
    /// [`Incoming::Ended`] last once its stream ended.
    pub fn receive(&mut self) -> Vec<Incoming> {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        let mut read = 0;
        while read < READ_AT_ONCE {
            // SAFETY: recv writes at most buf.len() bytes into the buffer.
            let n =
                unsafe { libc::recv(self.conn.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
            if n == 0 {
                got.push(Incoming::Ended);
                return got;
            }
            if n < 0 {
                match std::io::Error::last_os_error().kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    std::io::ErrorKind::WouldBlock => break,
                    _ => {
                        got.push(Incoming::Ended);
                        return got;
                    }
                }
            }
            read += n as usize;
            self.incoming.push(&buf[..n as usize]);
            loop {
                match self.incoming.next_frame() {
                    Ok(Some(frame)) => got.push(Incoming::Frame(frame)),
                    Ok(None) => break,
                    Err(_) => {
                        got.push(Incoming::Ended);
                        return got;
                    }
                }
            }
        }
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_client_that_does_not_read_never_holds_a_send() {
        let (client, ours) = UnixStream::pair().unwrap();
        let mut link = ClientLink::new(ours).unwrap();
        let begun = Instant::now();
        // Far more than any socket buffer holds.
        for _ in 0..64 {
            link.send(&Frame::Message("x".repeat(64 << 10)));
        }
        assert!(begun.elapsed() < Duration::from_secs(10));
        assert!(link.flush_due().is_some(), "a backlog waits");
        drop(client);
        link.flush();
        assert_eq!(link.flush_due(), None, "nobody to send it to");
    }

    #[test]
    fn frames_come_in_whole_and_half_a_frame_waits_for_the_rest() {
        let (mut client, ours) = UnixStream::pair().unwrap();
        let mut link = ClientLink::new(ours).unwrap();
        let mut wire = Vec::new();
        Frame::Detach.write_to(&mut wire).unwrap();
        Frame::Release(5 << 8).write_to(&mut wire).unwrap();
        client.write_all(&wire[..wire.len() - 2]).unwrap();
        assert_eq!(link.receive(), vec![Incoming::Frame(Frame::Detach)]);
        assert_eq!(link.receive(), vec![]);
        client.write_all(&wire[wire.len() - 2..]).unwrap();
        drop(client);
        assert_eq!(link.receive(), vec![Incoming::Frame(Frame::Release(5 << 8)), Incoming::Ended]);
    }
}
