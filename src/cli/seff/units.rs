//! How seff writes its numbers: durations (`time2str`), sizes in KiB (`kbytes2str`) and
//! percentages as Slurm's `contribs/seff/seff` does, and sizes in bytes as Princeton's
//! jobstats does (`human_bytes`). Each rule is kept as the scripts have it, quirks included,
//! so that output compared against theirs matches to the character.

/// A duration in seconds as seff's `time2str` writes it: `HH:MM:SS`, with `D-` in front
/// from one day on (`1-02:03:04`).
pub fn time_text(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (hours, minutes, seconds) = (rest / 3600, rest % 3600 / 60, rest % 60);
    let days = if days < 1 { String::new() } else { format!("{days}-") };
    format!("{days}{hours:02}:{minutes:02}:{seconds:02}")
}

/// A size in KiB as seff's `kbytes2str` writes it: two decimals and the largest power of
/// 1024 that fits (`1.50 GB`); `0.00 MB` for nothing. The power is the integer part of
/// `ln(kb) / ln(1024)`, computed in floating point as the script does, so a size below
/// 1 KiB stays in KB and one from 1024 exabytes on loses its unit letter (`1.00 B`), as
/// there.
pub fn kbytes_text(kb: f64) -> String {
    if kb == 0.0 {
        return "0.00 MB".to_string();
    }
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    // Truncated toward zero, as Perl's int(): below 1 KiB the logarithm is negative and
    // the power is still 0.
    let power = (kb.ln() / 1024f64.ln()) as i32;
    let unit = usize::try_from(power).ok().and_then(|p| UNITS.get(p)).copied().unwrap_or("");
    format!("{:.2} {unit}B", kb / 1024f64.powi(power))
}

/// `part / whole` as a percentage with two decimals (`87.50`), `0.00` when `whole` is 0:
/// seff's CPU and memory efficiencies.
pub fn percent_text(part: f64, whole: f64) -> String {
    let percent = if whole != 0.0 { part / whole * 100.0 } else { 0.0 };
    format!("{percent:.2}")
}

/// A size in bytes as jobstats' `human_bytes` writes it: one decimal and the first unit
/// of B, KB, MB, GB, TB, PB (powers of 1024) under which it is less than 1024
/// (`12.3GB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut size = bytes as f64;
    let mut unit = UNITS[0];
    for name in UNITS {
        unit = name;
        if size < 1024.0 {
            break;
        }
        size /= 1024.0;
    }
    format!("{size:.1}{unit}")
}

/// A GPU's mean utilisation as jobstats prints it: the mean rounded to one decimal
/// (`87.2%`), or without decimals when it is a whole number (`100%`, `0%`), as Prometheus
/// hands jobstats a whole mean without a decimal point.
pub fn utilization_text(mean: f64) -> String {
    if mean.fract() == 0.0 {
        format!("{mean:.0}%")
    } else {
        format!("{mean:.1}%")
    }
}
