//! The framed byte stream that a step or an interactive allocation runs over, once its HTTP
//! request has been upgraded (`Upgrade: slurmlet-stream`).
//!
//! After the `101 Switching Protocols` reply, both sides exchange [`Frame`]s: a one-byte tag,
//! a little-endian `u32` payload length, then the payload. Output carries the task number
//! before its bytes; the few frames with structured content carry JSON.
//!
//! The same connection is first held by the daemon (while a step or an allocation waits for
//! resources) and then handed, as a descriptor, to the supervisor that runs the step or holds
//! the allocation. Its I/O then no longer passes through the daemon at all.

use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// The `Upgrade` protocol name of the stream.
pub const PROTOCOL: &str = "slurmlet-stream";

/// The largest payload accepted, in bytes.
pub const MAX_PAYLOAD: usize = 16 << 20;

/// The largest output chunk a supervisor sends in one frame.
pub const CHUNK: usize = 64 << 10;

/// Which output of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A terminal's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WinSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

/// What a granted allocation gives its client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Grant {
    /// The job id.
    pub job_id: u32,
    /// The node list.
    pub nodes: String,
    /// The variables a command run in the allocation gets (`NAME=value`).
    pub env: Vec<String>,
}

/// One message on the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    // Daemon or supervisor → client.
    /// Output of a task.
    Output {
        /// Task number (global rank).
        task: u32,
        /// Which stream.
        channel: Channel,
        /// The bytes.
        data: Vec<u8>,
    },
    /// A task ended, with its raw wait status (`exit(errno)` when its program could not be
    /// executed).
    TaskExit {
        /// Task number.
        task: u32,
        /// Raw wait status.
        wait_status: i32,
    },
    /// A line for the client to print on its standard error as it is (a supervisor's
    /// message: `slurmstepd-NODE: error: execve(): …`, `*** STEP … CANCELLED AT … ***`).
    Message(String),
    /// An allocation was recorded as job N and waits for resources (the reason follows).
    Queued {
        /// The job id.
        job_id: u32,
        /// Slurm's pending reason.
        reason: String,
    },
    /// A step cannot start yet: the job's resources are in use by other steps.
    StepWaiting(String),
    /// The step was created: its id; its tasks start now.
    StepStarted {
        /// The job id.
        job_id: u32,
        /// The step id.
        step_id: u32,
    },
    /// The allocation was granted.
    Granted(Grant),
    /// The allocation ends (time limit, cancel): the client should end what runs in it.
    Revoked(String),
    /// The request failed after the upgrade (the job ended while a step waited, …).
    Error(String),

    // Client → supervisor.
    /// Bytes for the tasks' standard input (or the pseudo-terminal).
    Input(Vec<u8>),
    /// The client's standard input ended.
    InputEof,
    /// Send a signal to every task.
    Signal(i32),
    /// The client's terminal changed size.
    Resize(WinSize),
    /// End the step now (Ctrl-C twice, SIGTERM to srun): SIGCONT, SIGTERM, then SIGKILL
    /// after KillWait.
    Cancel,
    /// The client is done with its allocation; the command it ran ended with this raw wait
    /// status.
    Release(i32),
    /// The client leaves without releasing its allocation (`salloc --no-shell`): it is held
    /// until it is cancelled or reaches its time limit.
    Detach,
}

/// The tag byte of each kind of frame.
mod tag {
    pub const OUTPUT: u8 = 1;
    pub const ERROR_OUTPUT: u8 = 2;
    pub const TASK_EXIT: u8 = 3;
    pub const MESSAGE: u8 = 4;
    pub const QUEUED: u8 = 5;
    pub const STEP_WAITING: u8 = 6;
    pub const STEP_STARTED: u8 = 7;
    pub const GRANTED: u8 = 8;
    pub const REVOKED: u8 = 9;
    pub const ERROR: u8 = 10;
    pub const INPUT: u8 = 20;
    pub const INPUT_EOF: u8 = 21;
    pub const SIGNAL: u8 = 22;
    pub const RESIZE: u8 = 23;
    pub const CANCEL: u8 = 24;
    pub const RELEASE: u8 = 25;
    pub const DETACH: u8 = 26;
}

fn invalid(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

fn u32_at(p: &[u8], at: usize) -> io::Result<u32> {
    p.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).ok_or_else(|| invalid("short frame"))
}

fn text(p: Vec<u8>) -> io::Result<String> {
    String::from_utf8(p).map_err(|_| invalid("frame text is not UTF-8"))
}

fn json<T: serde::de::DeserializeOwned>(p: &[u8]) -> io::Result<T> {
    serde_json::from_slice(p).map_err(|e| invalid(format!("frame content: {e}")))
}

impl Frame {
    /// The tag and payload of this frame.
    fn encode(&self) -> (u8, Vec<u8>) {
        let pair = |a: u32, b: u32| [a.to_le_bytes(), b.to_le_bytes()].concat();
        match self {
            Frame::Output { task, channel, data } => {
                let t = if *channel == Channel::Stdout { tag::OUTPUT } else { tag::ERROR_OUTPUT };
                let mut p = Vec::with_capacity(4 + data.len());
                p.extend_from_slice(&task.to_le_bytes());
                p.extend_from_slice(data);
                (t, p)
            }
            Frame::TaskExit { task, wait_status } => (tag::TASK_EXIT, pair(*task, *wait_status as u32)),
            Frame::Message(m) => (tag::MESSAGE, m.as_bytes().to_vec()),
            Frame::Queued { job_id, reason } => {
                let mut p = job_id.to_le_bytes().to_vec();
                p.extend_from_slice(reason.as_bytes());
                (tag::QUEUED, p)
            }
            Frame::StepWaiting(why) => (tag::STEP_WAITING, why.as_bytes().to_vec()),
            Frame::StepStarted { job_id, step_id } => (tag::STEP_STARTED, pair(*job_id, *step_id)),
            Frame::Granted(g) => (tag::GRANTED, serde_json::to_vec(g).expect("grant serializes")),
            Frame::Revoked(why) => (tag::REVOKED, why.as_bytes().to_vec()),
            Frame::Error(why) => (tag::ERROR, why.as_bytes().to_vec()),
            Frame::Input(data) => (tag::INPUT, data.clone()),
            Frame::InputEof => (tag::INPUT_EOF, Vec::new()),
            Frame::Signal(sig) => (tag::SIGNAL, sig.to_le_bytes().to_vec()),
            Frame::Resize(w) => (tag::RESIZE, pair(w.rows as u32, w.cols as u32)),
            Frame::Cancel => (tag::CANCEL, Vec::new()),
            Frame::Release(ws) => (tag::RELEASE, ws.to_le_bytes().to_vec()),
            Frame::Detach => (tag::DETACH, Vec::new()),
        }
    }

    /// Reads a frame from its tag and payload.
    fn decode(t: u8, p: Vec<u8>) -> io::Result<Frame> {
        Ok(match t {
            tag::OUTPUT | tag::ERROR_OUTPUT => Frame::Output {
                task: u32_at(&p, 0)?,
                channel: if t == tag::OUTPUT { Channel::Stdout } else { Channel::Stderr },
                data: p[4..].to_vec(),
            },
            tag::TASK_EXIT => Frame::TaskExit { task: u32_at(&p, 0)?, wait_status: u32_at(&p, 4)? as i32 },
            tag::MESSAGE => Frame::Message(text(p)?),
            tag::QUEUED => Frame::Queued { job_id: u32_at(&p, 0)?, reason: text(p[4..].to_vec())? },
            tag::STEP_WAITING => Frame::StepWaiting(text(p)?),
            tag::STEP_STARTED => Frame::StepStarted { job_id: u32_at(&p, 0)?, step_id: u32_at(&p, 4)? },
            tag::GRANTED => Frame::Granted(json(&p)?),
            tag::REVOKED => Frame::Revoked(text(p)?),
            tag::ERROR => Frame::Error(text(p)?),
            tag::INPUT => Frame::Input(p),
            tag::INPUT_EOF => Frame::InputEof,
            tag::SIGNAL => Frame::Signal(u32_at(&p, 0)? as i32),
            tag::RESIZE => Frame::Resize(WinSize { rows: u32_at(&p, 0)? as u16, cols: u32_at(&p, 4)? as u16 }),
            tag::CANCEL => Frame::Cancel,
            tag::RELEASE => Frame::Release(u32_at(&p, 0)? as i32),
            tag::DETACH => Frame::Detach,
            other => return Err(invalid(format!("unknown frame tag {other}"))),
        })
    }

    /// Writes this frame to `w` (one `write_all` of header and payload).
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let (t, p) = self.encode();
        let mut buf = Vec::with_capacity(5 + p.len());
        buf.push(t);
        buf.extend_from_slice(&(p.len() as u32).to_le_bytes());
        buf.extend_from_slice(&p);
        w.write_all(&buf)
    }

    /// Reads the next frame from `r`; `Ok(None)` at a clean end of the stream (between
    /// frames).
    pub fn read_from(r: &mut impl Read) -> io::Result<Option<Frame>> {
        let mut head = [0u8; 5];
        let mut got = 0;
        while got < head.len() {
            match r.read(&mut head[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "stream ended inside a frame")),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let len = u32::from_le_bytes(head[1..].try_into().expect("4 bytes")) as usize;
        if len > MAX_PAYLOAD {
            return Err(invalid(format!("frame of {len} bytes is over the limit")));
        }
        let mut p = vec![0u8; len];
        r.read_exact(&mut p)?;
        Frame::decode(head[0], p).map(Some)
    }
}

/// Frames taken from bytes as they arrive, for a reader that must never wait inside a frame
/// (a supervisor whose client may stop, or never send the rest, half-way through one).
#[derive(Debug, Default)]
pub struct FrameBuffer {
    bytes: Vec<u8>,
}

impl FrameBuffer {
    /// Adds bytes read from the stream.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
    }

    /// The next whole frame, if the bytes so far hold one; `Err` for a frame that can never
    /// be read (over [`MAX_PAYLOAD`], or malformed).
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        let Some(head) = self.bytes.get(..5) else { return Ok(None) };
        let len = u32::from_le_bytes(head[1..].try_into().expect("4 bytes")) as usize;
        if len > MAX_PAYLOAD {
            return Err(invalid(format!("frame of {len} bytes is over the limit")));
        }
        if self.bytes.len() < 5 + len {
            return Ok(None);
        }
        let t = self.bytes[0];
        let p = self.bytes[5..5 + len].to_vec();
        self.bytes.drain(..5 + len);
        Frame::decode(t, p).map(Some)
    }

    /// Whether bytes of an unfinished frame are held.
    pub fn partial(&self) -> bool {
        !self.bytes.is_empty()
    }
}

/// Writes frames for output chunks without copying the data twice: the header, then the
/// task number, then the bytes, in one `writev`-like `write_all` of a reused buffer.
pub fn write_output(w: &mut impl Write, buf: &mut Vec<u8>, task: u32, channel: Channel, data: &[u8]) -> io::Result<()> {
    buf.clear();
    buf.push(if channel == Channel::Stdout { tag::OUTPUT } else { tag::ERROR_OUTPUT });
    buf.extend_from_slice(&((data.len() + 4) as u32).to_le_bytes());
    buf.extend_from_slice(&task.to_le_bytes());
    buf.extend_from_slice(data);
    w.write_all(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_buffer_gives_whole_frames_only() {
        let mut wire = Vec::new();
        Frame::Release(3).write_to(&mut wire).unwrap();
        Frame::Message("hello".into()).write_to(&mut wire).unwrap();
        let mut frames = FrameBuffer::default();
        frames.push(&wire[..3]);
        assert_eq!(frames.next_frame().unwrap(), None);
        frames.push(&wire[3..12]);
        assert_eq!(frames.next_frame().unwrap(), Some(Frame::Release(3)));
        assert_eq!(frames.next_frame().unwrap(), None);
        assert!(frames.partial());
        frames.push(&wire[12..]);
        assert_eq!(frames.next_frame().unwrap(), Some(Frame::Message("hello".into())));
        assert!(!frames.partial());
        let mut huge = FrameBuffer::default();
        huge.push(&[tag::INPUT, 0xff, 0xff, 0xff, 0xff]);
        assert!(huge.next_frame().is_err());
    }

    #[test]
    fn every_frame_reads_back_as_written() {
        let frames = vec![
            Frame::Output { task: 3, channel: Channel::Stderr, data: b"err\n".to_vec() },
            Frame::Output { task: 0, channel: Channel::Stdout, data: vec![] },
            Frame::TaskExit { task: 1, wait_status: 9 },
            Frame::Message("slurmstepd: error: x".into()),
            Frame::Queued { job_id: 7, reason: "Resources".into() },
            Frame::StepWaiting("Requested nodes are busy".into()),
            Frame::StepStarted { job_id: 7, step_id: 2 },
            Frame::Granted(Grant { job_id: 7, nodes: "n".into(), env: vec!["A=b".into()] }),
            Frame::Revoked("time limit".into()),
            Frame::Error("gone".into()),
            Frame::Input(b"abc".to_vec()),
            Frame::InputEof,
            Frame::Signal(2),
            Frame::Resize(WinSize { rows: 40, cols: 132 }),
            Frame::Cancel,
            Frame::Release(7 << 8),
            Frame::Detach,
        ];
        let mut wire = Vec::new();
        for f in &frames {
            f.write_to(&mut wire).unwrap();
        }
        let mut buf = Vec::new();
        write_output(&mut buf, &mut Vec::new(), 5, Channel::Stdout, b"direct").unwrap();
        wire.extend_from_slice(&buf);
        let mut r = &wire[..];
        let mut back = Vec::new();
        while let Some(f) = Frame::read_from(&mut r).unwrap() {
            back.push(f);
        }
        let direct = back.pop().unwrap();
        assert_eq!(direct, Frame::Output { task: 5, channel: Channel::Stdout, data: b"direct".to_vec() });
        assert_eq!(back, frames);
    }

    #[test]
    fn a_cut_frame_is_an_error_and_a_bad_tag_is_named() {
        let mut wire = Vec::new();
        Frame::Message("hello".into()).write_to(&mut wire).unwrap();
        let mut cut = &wire[..wire.len() - 1];
        assert!(Frame::read_from(&mut cut).is_err());
        let bad = [99u8, 0, 0, 0, 0];
        let e = Frame::read_from(&mut &bad[..]).unwrap_err();
        assert!(e.to_string().contains("unknown frame tag 99"), "{e}");
    }
}
