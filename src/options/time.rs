//! Time specifications: `--time`, `--time-min` and the durations squeue prints.

use super::OptionError;

/// A time limit in minutes; `None` is INFINITE/UNLIMITED.
pub type LimitMinutes = Option<u32>;

/// Parses a Slurm time limit: `minutes`, `minutes:seconds`, `hours:minutes:seconds`,
/// `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`, or
/// `INFINITE`/`UNLIMITED`/`-1`. Seconds round up to the next minute, as Slurm does.
pub fn parse_time_limit(text: &str) -> Result<LimitMinutes, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "time", value: text.to_string() };
    let t = text.trim();
    if t.eq_ignore_ascii_case("infinite") || t.eq_ignore_ascii_case("unlimited") || t == "-1" {
        return Ok(None);
    }
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (Some(d.parse::<u64>().map_err(|_| bad())?), r),
        None => (None, t),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(|p| p.parse::<u64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let seconds = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86400 + h * 3600,
        (Some(d), [h, m]) => d * 86400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86400 + h * 3600 + m * 60 + s,
        _ => return Err(bad()),
    };
    Ok(Some(seconds.div_ceil(60).min(u32::MAX as u64 - 1) as u32))
}

/// Formats an elapsed time in seconds the way squeue's TIME column does:
/// `M:SS`, `H:MM:SS`, `D-HH:MM:SS`.
pub fn format_elapsed(seconds: u64) -> String {
    let (d, h, m, s) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// Formats a limit in minutes as squeue's TIME_LIMIT column (`UNLIMITED` when none).
pub fn format_limit(limit: LimitMinutes) -> String {
    match limit {
        None => "UNLIMITED".to_string(),
        Some(m) => format_elapsed(m as u64 * 60),
    }
}

/// Formats a limit as scontrol and sinfo -l do: `HH:MM:SS` / `D-HH:MM:SS`, `UNLIMITED`.
pub fn format_limit_long(limit: LimitMinutes) -> String {
    match limit {
        None => "UNLIMITED".to_string(),
        Some(m) => format_hms(m as u64 * 60),
    }
}

/// `HH:MM:SS`, or `D-HH:MM:SS` past a day (scontrol's RunTime and TimeLimit, sacct's Elapsed).
pub fn format_hms(seconds: u64) -> String {
    let (d, h, m, s) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}
