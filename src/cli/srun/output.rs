//! How task output is cut and labelled before srun writes it, as Slurm's srun does.
//!
//! By default output is line-buffered per task and channel: a partial line is held until its
//! newline (or the end), so that lines of different tasks never mix. With `-u` chunks are
//! written as they come. With `-l` every line starts with the task number, right-aligned to
//! the width of the largest one (`%*d: `), and a piece that does not end a line is closed
//! with a newline, as Slurm's `write_labelled_message` does.

use crate::api::stream::Channel;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The most a held partial line may grow to before it is written anyway.
const HOLD_MAX: usize = 1 << 20;

/// The digits of the largest task number of `ntasks` tasks (Slurm's `_wid`).
pub fn label_width(ntasks: u32) -> usize {
    ntasks.saturating_sub(1).max(1).to_string().len()
}

/// Line buffers and labels for every task and channel of a step.
#[derive(Debug)]
pub struct Lines {
    label_width: Option<usize>,
    unbuffered: bool,
    held: BTreeMap<(u32, bool), Vec<u8>>,
}

fn key(task: u32, channel: Channel) -> (u32, bool) {
    (task, channel == Channel::Stderr)
}

impl Lines {
    /// `label`: `-l`; `unbuffered`: `-u` (or `--pty`); `ntasks`: the step's task count, for
    /// the label width.
    pub fn new(label: bool, unbuffered: bool, ntasks: u32) -> Lines {
        Lines { label_width: label.then(|| label_width(ntasks)), unbuffered, held: BTreeMap::new() }
    }

    fn prefix(&self, task: u32) -> Option<String> {
        self.label_width.map(|w| format!("{task:>w$}: "))
    }

    /// Writes to `w` what is to be written now of a chunk of `task`'s output on `channel`.
    pub fn push(&mut self, task: u32, channel: Channel, data: &[u8], w: &mut impl Write) -> io::Result<()> {
        let prefix = self.prefix(task);
        if self.unbuffered {
            return match &prefix {
                None => w.write_all(data),
                Some(p) => write_labelled(w, p.as_bytes(), &[], data, true),
            };
        }
        let held = self.held.entry(key(task, channel)).or_default();
        let Some(last) = data.iter().rposition(|&b| b == b'\n') else {
            held.extend_from_slice(data);
            if held.len() >= HOLD_MAX {
                let r = match &prefix {
                    None => w.write_all(held),
                    Some(p) => write_labelled(w, p.as_bytes(), &[], held, true),
                };
                held.clear();
                return r;
            }
            return Ok(());
        };
        let (complete, rest) = data.split_at(last + 1);
        let r = match &prefix {
            None => {
                let r = if held.is_empty() { Ok(()) } else { w.write_all(held) };
                r.and_then(|()| w.write_all(complete))
            }
            Some(p) => write_labelled(w, p.as_bytes(), held, complete, false),
        };
        held.clear();
        held.extend_from_slice(rest);
        r
    }

    /// Hands every held partial line to `emit` (its channel and the bytes to write), in task
    /// order, and forgets them: the end of the output.
    pub fn finish(&mut self, mut emit: impl FnMut(Channel, &[u8])) {
        let held = std::mem::take(&mut self.held);
        for ((task, is_err), bytes) in held {
            if bytes.is_empty() {
                continue;
            }
            let channel = if is_err { Channel::Stderr } else { Channel::Stdout };
            let mut out = Vec::with_capacity(bytes.len() + 8);
            match self.prefix(task) {
                None => out.extend_from_slice(&bytes),
                Some(p) => {
                    let _ = write_labelled(&mut out, p.as_bytes(), &[], &bytes, true);
                }
            }
            emit(channel, &out);
        }
    }
}

/// Writes `head` + `data` as labelled lines: `prefix` before each; a last piece without its
/// newline gets one when `close_partial` (else there is none: `data` ends with a newline).
fn write_labelled(w: &mut impl Write, prefix: &[u8], head: &[u8], data: &[u8], close_partial: bool) -> io::Result<()> {
    let mut first = true;
    let mut rest = data;
    while !rest.is_empty() || (first && !head.is_empty()) {
        let end = rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        w.write_all(prefix)?;
        if first {
            w.write_all(head)?;
            first = false;
        }
        w.write_all(line)?;
        if close_partial && !line.ends_with(b"\n") {
            w.write_all(b"\n")?;
        }
        rest = tail;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(l: &mut Lines, task: u32, data: &[u8]) -> String {
        let mut out = Vec::new();
        l.push(task, Channel::Stdout, data, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn finish(l: &mut Lines) -> String {
        let mut out = Vec::new();
        l.finish(|_, b| out.extend_from_slice(b));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_label_is_as_wide_as_the_largest_task_number() {
        assert_eq!(label_width(1), 1);
        assert_eq!(label_width(10), 1);
        assert_eq!(label_width(11), 2);
        assert_eq!(label_width(101), 3);
        let mut l = Lines::new(true, false, 12);
        assert_eq!(push(&mut l, 3, b"x\ny\n"), " 3: x\n 3: y\n");
    }

    #[test]
    fn partial_lines_wait_for_their_newline() {
        let mut l = Lines::new(false, false, 2);
        assert_eq!(push(&mut l, 0, b"hel"), "");
        assert_eq!(push(&mut l, 1, b"other\npart"), "other\n");
        assert_eq!(push(&mut l, 0, b"lo\nwor"), "hello\n");
        assert_eq!(finish(&mut l), "wor".to_string() + "part");
        assert_eq!(finish(&mut l), "");
    }

    #[test]
    fn labelled_lines_close_a_final_partial_line() {
        let mut l = Lines::new(true, false, 2);
        assert_eq!(push(&mut l, 1, b"a"), "");
        assert_eq!(push(&mut l, 1, b"b\nc\nd"), "1: ab\n1: c\n");
        assert_eq!(finish(&mut l), "1: d\n");
    }

    #[test]
    fn unbuffered_output_goes_out_at_once() {
        let mut l = Lines::new(false, true, 2);
        assert_eq!(push(&mut l, 0, b"ab"), "ab");
        assert_eq!(finish(&mut l), "");
        let mut l = Lines::new(true, true, 2);
        assert_eq!(push(&mut l, 0, b"ab\ncd"), "0: ab\n0: cd\n");
    }

    #[test]
    fn channels_are_held_apart() {
        let mut l = Lines::new(false, false, 1);
        let mut out = Vec::new();
        l.push(0, Channel::Stdout, b"o", &mut out).unwrap();
        l.push(0, Channel::Stderr, b"e", &mut out).unwrap();
        let mut got = Vec::new();
        l.finish(|c, b| got.push((c, b.to_vec())));
        assert_eq!(got, [(Channel::Stdout, b"o".to_vec()), (Channel::Stderr, b"e".to_vec())]);
    }

    #[test]
    fn a_huge_line_is_not_held_forever() {
        let mut l = Lines::new(false, false, 1);
        let big = vec![b'x'; HOLD_MAX];
        let mut out = Vec::new();
        l.push(0, Channel::Stdout, &big, &mut out).unwrap();
        assert_eq!(out.len(), HOLD_MAX);
    }
}
