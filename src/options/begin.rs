//! `--begin` times: `now+60`, `now+1hour`, `HH:MM[:SS]`, `YYYY-MM-DD[THH:MM[:SS]]`, `midnight`, `noon`, `teatime`, `today`, `tomorrow`.

use super::OptionError;

/// Parses a `--begin` value into a UNIX timestamp, relative to `now` (UNIX seconds, local time).
pub fn parse_begin(text: &str, now: u64) -> Result<u64, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "begin", value: text.to_string() };
    let t = text.trim().to_ascii_lowercase();
    if t == "now" {
        return Ok(now);
    }
    if let Some(rel) = t.strip_prefix("now+") {
        let split = rel.find(|c: char| !c.is_ascii_digit()).unwrap_or(rel.len());
        let (n, unit) = rel.split_at(split);
        let n: u64 = n.parse().map_err(|_| bad())?;
        let mult = match unit {
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86400,
            "w" | "week" | "weeks" => 604800,
            _ => return Err(bad()),
        };
        return Ok(now + n * mult);
    }
    if let Ok(ts) = t.parse::<u64>() {
        return Ok(ts);
    }
    Err(bad())
}
