//! The `Key=Value` records of `scontrol show job|node|partition`, and the value formats they
//! share.
//!
//! A record is a run of lines of `Key=Value` pairs. As Slurm builds it, each line ends with
//! `"\n   "` (so the next line is indented by three spaces), or with a single space under
//! `-o/--oneliner`; the record then ends with `"\n\n"` (a blank line before the next one), or
//! `"\n"` under `-o`. Whatever trailing spaces Slurm's pieces carry are kept, since scripts
//! that split on them see the same fields.

use std::fmt;

/// One record being written.
#[derive(Debug)]
pub struct Record {
    out: String,
    one_liner: bool,
}

impl Record {
    /// An empty record; `one_liner` is `-o`.
    pub fn new(one_liner: bool) -> Record {
        Record { out: String::new(), one_liner }
    }

    /// Ends the current line (Slurm's `line_end`).
    pub fn end_line(&mut self) {
        self.out.push_str(if self.one_liner { " " } else { "\n   " });
    }

    /// The record's text, ended as Slurm ends a record.
    pub fn finish(mut self) -> String {
        self.out.push_str(if self.one_liner { "\n" } else { "\n\n" });
        self.out
    }
}

impl fmt::Write for Record {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.out.push_str(s);
        Ok(())
    }
}

/// `text`, or `(null)` when it is empty (what Slurm prints for an unset string).
pub fn or_null(text: &str) -> &str {
    if text.is_empty() {
        "(null)"
    } else {
        text
    }
}

/// A UNIX time as Slurm prints it in records (`2026-11-22T01:40:32`, local time); `Unknown`
/// when unset or 0.
pub fn time(t: Option<u64>) -> String {
    match t {
        Some(t) if t > 0 => crate::sys::format_local_time(t),
        _ => "Unknown".into(),
    }
}

/// A size in MB as Slurm's exact unit conversion prints it: divided by 1024 while it divides
/// evenly, with the unit letter (`1000M`, `1G`, `1536M`, `32G`); `0` without a unit.
pub fn megabytes(mb: u64) -> String {
    if mb == 0 {
        return "0".into();
    }
    const UNITS: [char; 5] = ['M', 'G', 'T', 'P', 'E'];
    let (mut n, mut unit) = (mb, 0);
    while n % 1024 == 0 && unit + 1 < UNITS.len() {
        n /= 1024;
        unit += 1;
    }
    format!("{n}{}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn lines_end_as_slurm_ends_them() {
        let mut r = Record::new(false);
        write!(r, "A=1 ").unwrap();
        r.end_line();
        write!(r, "B=2").unwrap();
        r.end_line();
        assert_eq!(r.finish(), "A=1 \n   B=2\n   \n\n");
        let mut r = Record::new(true);
        write!(r, "A=1 ").unwrap();
        r.end_line();
        write!(r, "B=2").unwrap();
        r.end_line();
        assert_eq!(r.finish(), "A=1  B=2 \n");
    }

    #[test]
    fn values_in_slurm_formats() {
        assert_eq!(or_null(""), "(null)");
        assert_eq!(or_null("x"), "x");
        assert_eq!(time(None), "Unknown");
        assert_eq!(time(Some(0)), "Unknown");
        assert_eq!(megabytes(0), "0");
        assert_eq!(megabytes(1000), "1000M");
        assert_eq!(megabytes(1024), "1G");
        assert_eq!(megabytes(1536), "1536M");
        assert_eq!(megabytes(32768), "32G");
        assert_eq!(megabytes(1024 * 1024), "1T");
    }
}
