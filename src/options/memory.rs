//! Memory sizes: `--mem`, `--mem-per-cpu` (`[0-9]+[K|M|G|T]`, default megabytes).

use super::OptionError;

/// Parses a memory size into megabytes (`500`, `500M`, `4G`, `1T`, `2048K`).
pub fn parse_mem_mb(text: &str, option: &'static str) -> Result<u64, OptionError> {
    let bad = || OptionError::InvalidSpec { option, value: text.to_string() };
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let mb = match unit.to_ascii_uppercase().as_str() {
        "" | "M" | "MB" => n,
        "K" | "KB" => n.div_ceil(1024),
        "G" | "GB" => n * 1024,
        "T" | "TB" => n * 1024 * 1024,
        _ => return Err(bad()),
    };
    Ok(mb)
}
