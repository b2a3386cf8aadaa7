//! What squeue, sinfo and the other listings print with: the `%`-format engine (from the
//! shared [`crate::format`]), the `-l` date line, and writing to stdout.

pub use crate::format::{parse, parse_long, push_justified, render, Field, Token};

/// The `-l` date line: `Sun Nov 22 01:40:31 2026` in local time.
pub fn date_line(ts: u64) -> String {
    let tm = crate::sys::local_tm(ts as i64);
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// Writes one line to stdout, ignoring a closed pipe (`squeue | head`).
pub fn emit(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes()).and_then(|_| out.write_all(b"\n"));
}

/// Writes `text` to stdout as it is, ignoring a closed pipe.
pub fn emit_text(text: &str) {
    emit_bytes(text.as_bytes());
}

/// Writes `bytes` to stdout as they are, ignoring a closed pipe.
pub fn emit_bytes(bytes: &[u8]) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(bytes);
}
