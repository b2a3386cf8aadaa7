//! `slurmlet-bench stamp FILE LABEL [TAG]`: appends `LABEL TAG NANOSECONDS` (CLOCK_MONOTONIC)
//! to FILE in one write. Jobs of the dispatch figure run it first and last thing.

use std::ffi::OsString;
use std::io::Write;

/// The monotonic clock in nanoseconds.
pub fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

/// Runs the `stamp` command with `args` (after `stamp`); returns the exit code.
pub fn run(args: &[OsString]) -> i32 {
    let ns = monotonic_ns();
    let [file, label, rest @ ..] = args else {
        eprintln!("usage: slurmlet-bench stamp FILE LABEL [TAG]");
        return 2;
    };
    let tag = rest.first().map(|t| t.to_string_lossy().into_owned()).unwrap_or_else(|| "-".into());
    let tag = if tag.is_empty() { "-".to_string() } else { tag };
    let line = format!("{} {tag} {ns}\n", label.to_string_lossy());
    let written =
        std::fs::OpenOptions::new().create(true).append(true).open(file).and_then(|mut f| f.write_all(line.as_bytes()));
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("slurmlet-bench stamp: {}: {e}", file.to_string_lossy());
            1
        }
    }
}

/// One line of a stamp file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// What happened (`start`, `end`).
    pub label: String,
    /// Which GPU (or other slot).
    pub tag: String,
    /// When, in monotonic nanoseconds.
    pub ns: u128,
}

/// Reads the lines of a stamp file, skipping malformed ones.
pub fn parse(text: &str) -> Vec<Stamp> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (label, tag, ns) = (w.next()?, w.next()?, w.next()?.parse().ok()?);
            Some(Stamp { label: label.into(), tag: tag.into(), ns })
        })
        .collect()
}

/// Gaps in ms between each `start` and the latest `end` with the same tag before it (each
/// end pairs with at most one start). Starts with no end before them are not counted.
pub fn gaps_ms(stamps: &[Stamp]) -> Vec<f64> {
    let mut sorted: Vec<&Stamp> = stamps.iter().collect();
    sorted.sort_by_key(|s| s.ns);
    let mut last_end: std::collections::HashMap<&str, u128> = std::collections::HashMap::new();
    let mut gaps = Vec::new();
    for s in sorted {
        match s.label.as_str() {
            "end" => {
                last_end.insert(&s.tag, s.ns);
            }
            "start" => {
                if let Some(end) = last_end.remove(s.tag.as_str()) {
                    gaps.push((s.ns - end) as f64 / 1e6);
                }
            }
            _ => {}
        }
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_each_start_with_the_latest_end_on_its_slot() {
        let text =
            "start 0 100\nstart 1 100\nend 0 1000000\nend 1 2000000\nstart 1 3000000\nstart 0 5000000\nbad line\n";
        let gaps = gaps_ms(&parse(text));
        assert_eq!(gaps, vec![1.0, 4.0]);
    }
}
