//! The supervisor's own lines in the job's error output (`slurmstepd-NODE: error: *** JOB …
//! CANCELLED AT … ***`, the out-of-memory and GPU share notices), written without ever
//! holding the supervisor up.
//!
//! The error output is the owner's file: a FIFO whose reader stopped reading, or a file on a
//! file system that does not answer, would hold a write there for good, and with it the
//! supervisor's cancel, time limit and end. The lines go to a thread of their own, which
//! writes them in order. The supervisor waits for each at most [`WAIT`]: whenever the file
//! takes the line, slurmstepd's order holds (the line, then the signals that end the job);
//! otherwise the supervisor goes on without it. A line still unwritten when the supervisor
//! exits is lost, as the job's own output to that file would be.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

/// How long the supervisor waits for one line to be written.
pub const WAIT: Duration = Duration::from_secs(1);

/// The writer of the job's error output, for the supervisor's lines.
pub struct Notes {
    /// The file, until the writing thread takes it.
    file: Option<File>,
    /// Lines for the thread, once it runs.
    lines: Option<mpsc::Sender<String>>,
    /// One message per line written.
    written: Option<mpsc::Receiver<()>>,
    /// Lines sent and not yet written.
    pending: usize,
}

impl Notes {
    /// Notes for `file` (`None`: they go nowhere).
    pub fn new(file: Option<File>) -> Notes {
        Notes { file, lines: None, written: None, pending: 0 }
    }

    /// Writes `line` and a newline (in one write: the job's steps may be writing to the same
    /// file), waiting for it at most [`WAIT`], and not at all while an earlier line is still
    /// unwritten.
    pub fn write(&mut self, line: &str) {
        self.count_written();
        let Some(lines) = self.sender() else { return };
        if lines.send(format!("{line}\n")).is_err() {
            return;
        }
        self.pending += 1;
        if self.pending == 1 {
            self.wait_for_pending(WAIT);
        }
    }

    /// Waits until every line sent is written, at most [`WAIT`] in all.
    pub fn flush(&mut self) {
        self.count_written();
        if self.pending > 0 {
            self.wait_for_pending(WAIT);
        }
    }

    /// The channel to the writing thread, which starts with the first line.
    fn sender(&mut self) -> Option<&mpsc::Sender<String>> {
        if self.lines.is_none() {
            let mut file = self.file.take()?;
            let (lines, queue) = mpsc::channel::<String>();
            let (done, written) = mpsc::channel();
            let started = std::thread::Builder::new().name("job-notes".into()).spawn(move || {
                for line in queue {
                    let _ = file.write_all(line.as_bytes());
                    if done.send(()).is_err() {
                        return;
                    }
                }
            });
            if started.is_err() {
                return None;
            }
            self.lines = Some(lines);
            self.written = Some(written);
        }
        self.lines.as_ref()
    }

    /// Counts the lines written since the last look, without waiting.
    fn count_written(&mut self) {
        if let Some(written) = &self.written {
            while self.pending > 0 && written.try_recv().is_ok() {
                self.pending -= 1;
            }
        }
    }

    /// Waits until no line is pending, or `limit` passes.
    fn wait_for_pending(&mut self, limit: Duration) {
        let Some(written) = &self.written else { return };
        let until = std::time::Instant::now() + limit;
        while self.pending > 0 {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match written.recv_timeout(left) {
                Ok(()) => self.pending -= 1,
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    #[test]
    fn lines_reach_the_file_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("err");
        let mut notes = Notes::new(Some(File::create(&path).unwrap()));
        notes.write("one");
        notes.write("two");
        notes.flush();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
    }

    #[test]
    fn a_fifo_nobody_reads_holds_the_supervisor_no_longer_than_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("err");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: name is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // A reader that never reads, and a pipe already full.
        let _reader = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        let mut full = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        while full.write(&[0u8; 4096]).is_ok() {}
        let file = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let mut notes = Notes::new(Some(file));
        let begun = std::time::Instant::now();
        notes.write("*** JOB 1 ON n1 CANCELLED AT now ***");
        notes.write("a second line does not wait");
        notes.flush();
        assert!(begun.elapsed() < WAIT * 4, "waited {:?}", begun.elapsed());
    }
}
