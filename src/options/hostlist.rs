//! Slurm hostlists: `node[01-03,7],gpu1`.

use super::OptionError;

/// Expands a hostlist expression into host names.
pub fn expand(text: &str) -> Result<Vec<String>, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "nodelist", value: text.to_string() };
    let mut hosts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    for item in items.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
        match item.find('[') {
            None => hosts.push(item.to_string()),
            Some(open) => {
                let close = item.rfind(']').ok_or_else(bad)?;
                let (prefix, suffix) = (&item[..open], &item[close + 1..]);
                for range in item[open + 1..close].split(',') {
                    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                    let width = lo.len();
                    let (a, b): (u64, u64) = (lo.parse().map_err(|_| bad())?, hi.parse().map_err(|_| bad())?);
                    if b < a {
                        return Err(bad());
                    }
                    for n in a..=b {
                        hosts.push(format!("{prefix}{n:0width$}{suffix}"));
                    }
                }
            }
        }
    }
    Ok(hosts)
}

/// Compresses host names into a hostlist expression (`n[1-3]`).
pub fn compress(hosts: &[String]) -> String {
    hosts.join(",")
}
