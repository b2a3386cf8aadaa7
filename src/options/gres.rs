//! Generic resources: `--gres=gpu[:type]:N[,…]` and `--gpus[-per-node]=[type:]N`.

use super::OptionError;

/// One generic-resource request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresRequest {
    /// Resource name (`gpu`).
    pub name: String,
    /// Optional type (`tesla`, `a100`).
    pub kind: Option<String>,
    /// Count per node.
    pub count: u32,
}

/// Parses `--gres` (`gpu`, `gpu:2`, `gpu:tesla:2`, `gres/gpu:2`, comma-separated lists).
/// A count of 0 is allowed (it requests nothing).
pub fn parse_gres(text: &str) -> Result<Vec<GresRequest>, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "gres", value: text.to_string() };
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let item = item.strip_prefix("gres/").or_else(|| item.strip_prefix("gres:")).unwrap_or(item);
        let parts: Vec<&str> = item.split(':').collect();
        let (name, kind, count) = match parts.as_slice() {
            [name] => (*name, None, 1),
            [name, c] if c.chars().all(|c| c.is_ascii_digit()) => (*name, None, c.parse().map_err(|_| bad())?),
            [name, kind] => (*name, Some(kind.to_string()), 1),
            [name, kind, c] => (*name, Some(kind.to_string()), c.parse().map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        if name.is_empty() {
            return Err(bad());
        }
        out.push(GresRequest { name: name.to_string(), kind, count });
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// Parses `--gpus`/`--gpus-per-node` (`N` or `type:N`).
pub fn parse_gpus(text: &str, option: &'static str) -> Result<GresRequest, OptionError> {
    let bad = || OptionError::InvalidSpec { option, value: text.to_string() };
    let (kind, count) = match text.trim().rsplit_once(':') {
        Some((k, c)) => (Some(k.to_string()), c),
        None => (None, text.trim()),
    };
    let count = count.parse().map_err(|_| bad())?;
    Ok(GresRequest { name: "gpu".into(), kind, count })
}

/// Renders requests the way `tres_per_node` carries them (`gres/gpu:2`, `gres/gpu:tesla:2`).
pub fn to_tres(requests: &[GresRequest]) -> String {
    requests
        .iter()
        .map(|r| match &r.kind {
            Some(k) => format!("gres/{}:{}:{}", r.name, k, r.count),
            None => format!("gres/{}:{}", r.name, r.count),
        })
        .collect::<Vec<_>>()
        .join(",")
}
