//! The local terminal under `srun --pty`: its size, raw mode for the length of the step, and
//! line ends for srun's own messages while it is raw.

use crate::api::stream::WinSize;
use std::io::{self, Write};

/// The size of the terminal on standard input, else on standard output; `None` when neither
/// is a terminal.
pub fn terminal_size() -> Option<WinSize> {
    [libc::STDIN_FILENO, libc::STDOUT_FILENO].into_iter().find_map(|fd| {
        let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCGWINSZ writes one winsize structure into a valid local.
        let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
        (rc == 0).then_some(WinSize { rows: ws.ws_row, cols: ws.ws_col })
    })
}

/// The terminal on standard input in raw mode (as `cfmakeraw` sets it, like srun's): its
/// former settings come back when this is dropped, on every way out, unwinding included.
pub struct RawTerminal {
    saved: libc::termios,
}

impl RawTerminal {
    /// Puts the terminal on standard input in raw mode; `None` when standard input is not a
    /// terminal.
    pub fn enter() -> io::Result<Option<RawTerminal>> {
        // SAFETY: isatty has no memory preconditions.
        if unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
            return Ok(None);
        }
        // SAFETY: termios is plain data; tcgetattr fills it, cfmakeraw edits a valid copy and
        // tcsetattr reads it.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(libc::STDIN_FILENO, &mut saved) != 0 {
                return Err(io::Error::last_os_error());
            }
            let mut raw = saved;
            libc::cfmakeraw(&mut raw);
            if libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &raw) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Some(RawTerminal { saved }))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        // SAFETY: tcsetattr reads the settings saved by `enter`.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.saved) };
    }
}

/// Writes through to `W` with every `\n` turned into `\r\n`: srun's own lines while the
/// terminal is raw (output post-processing off) still start at the left margin.
pub struct CrLf<W>(pub W);

impl<W: Write> Write for CrLf<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if !buf.contains(&b'\n') {
            return self.0.write_all(buf);
        }
        let mut out = Vec::with_capacity(buf.len() + 16);
        let mut prev = 0u8;
        for &b in buf {
            if b == b'\n' && prev != b'\r' {
                out.push(b'\r');
            }
            out.push(b);
            prev = b;
        }
        self.0.write_all(&out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_get_a_carriage_return_once() {
        let mut w = CrLf(Vec::new());
        w.write_all(b"a\nb\r\nc").unwrap();
        assert_eq!(w.0, b"a\r\nb\r\nc");
    }

    #[test]
    fn raw_mode_is_skipped_without_a_terminal_and_the_size_is_optional() {
        // Under the test harness standard input is rarely a terminal; either way nothing
        // may fail, and a guard that was made restores on drop.
        let guard = RawTerminal::enter().unwrap();
        drop(guard);
        let _ = terminal_size();
    }
}
