//! `[idle_gpus]`: what happens to a job whose GPUs stay idle. Off unless the table is
//! there:
//!
//! ```toml
//! [idle_gpus]
//! after = "1h"        # how long every GPU of the job must stay below `below`
//! below = 5           # percent of the GPU kept busy
//! action = "warn"     # or "cancel"
//! exempt_qos = ["interactive"]
//! exempt_partitions = ["debug"]
//! ```

use serde::Deserialize;

/// The table as written.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdleGpusTable {
    /// How long (`90s`, `30m`, `1h`, `2d`, or a Slurm time such as `1:00:00`).
    pub after: Option<String>,
    /// Percent of the GPU kept busy below which a look counts as idle.
    pub below: Option<i64>,
    /// What is done once a job was idle that long.
    pub action: Option<IdleAction>,
    /// QOS whose jobs are never touched.
    pub exempt_qos: Option<Vec<String>>,
    /// Partitions whose jobs are never touched.
    pub exempt_partitions: Option<Vec<String>>,
}

/// What is done to a job whose GPUs stayed idle.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum IdleAction {
    /// One line in its error output; it is marked as idle on the board and in `slurmlet gpus`.
    #[default]
    Warn,
    /// The line, then the job is cancelled, with the reason in its record.
    Cancel,
}

impl IdleAction {
    /// The configuration's word for it.
    pub fn name(self) -> &'static str {
        match self {
            IdleAction::Warn => "warn",
            IdleAction::Cancel => "cancel",
        }
    }
}

/// The resolved policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleGpus {
    /// Seconds every GPU of a job must stay below `below`.
    pub after_secs: u64,
    /// Percent.
    pub below: u32,
    /// What is done then.
    pub action: IdleAction,
    /// QOS never touched.
    pub exempt_qos: Vec<String>,
    /// Partitions never touched.
    pub exempt_partitions: Vec<String>,
}

/// The default `after`: an hour.
pub const DEFAULT_AFTER_SECS: u64 = 3600;

/// The default `below`: 5 percent.
pub const DEFAULT_BELOW: u32 = 5;

/// The longest `after` taken: a year.
const LONGEST_SECS: u64 = 365 * 86_400;

impl IdleGpus {
    /// Reads the table; a refusal names the key and the value.
    pub fn read(table: IdleGpusTable) -> Result<IdleGpus, String> {
        let after_secs = match table.after.as_deref() {
            None => DEFAULT_AFTER_SECS,
            Some(text) => parse_duration(text).ok_or_else(|| {
                format!("idle_gpus.after: '{text}' is no duration (90s, 30m, 1h, 2d, or a Slurm time such as 1:00:00)")
            })?,
        };
        if after_secs == 0 || after_secs > LONGEST_SECS {
            return Err(format!("idle_gpus.after: {after_secs} s is out of range (1 s to 365 days)"));
        }
        let below = match table.below {
            None => DEFAULT_BELOW,
            Some(b @ 1..=100) => b as u32,
            Some(b) => return Err(format!("idle_gpus.below: {b} is out of range (1 to 100 percent)")),
        };
        Ok(IdleGpus {
            after_secs,
            below,
            action: table.action.unwrap_or_default(),
            exempt_qos: table.exempt_qos.unwrap_or_default(),
            exempt_partitions: table.exempt_partitions.unwrap_or_default(),
        })
    }

    /// Whether a job of `qos` in `partition` is left alone.
    pub fn exempts(&self, qos: &str, partition: &str) -> bool {
        self.exempt_qos.iter().any(|q| q == qos) || self.exempt_partitions.iter().any(|p| p == partition)
    }
}

/// `90s`, `30m`, `1h`, `2d` (one number and a unit), or a Slurm time (`1:00:00`, `1-0`,
/// minutes alone), in seconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let unit = |c: char| match c {
        's' => Some(1),
        'm' => Some(60),
        'h' => Some(3600),
        'd' => Some(86_400),
        _ => None,
    };
    if let Some(last) = text.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let n: u64 = text[..text.len() - 1].parse().ok()?;
        return n.checked_mul(unit(last)?);
    }
    crate::options::time::parse_time_secs(text, "after").ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_a_unit_or_as_slurm_times() {
        assert_eq!(parse_duration("90s"), Some(90));
        assert_eq!(parse_duration("30m"), Some(1800));
        assert_eq!(parse_duration("1h"), Some(3600));
        assert_eq!(parse_duration("2d"), Some(172_800));
        assert_eq!(parse_duration("1:00:00"), Some(3600));
        assert_eq!(parse_duration("45"), Some(2700));
        assert_eq!(parse_duration("1x"), None);
        assert_eq!(parse_duration("h"), None);
    }

    #[test]
    fn the_table_is_read_with_its_defaults_and_bounds() {
        let p = IdleGpus::read(IdleGpusTable::default()).unwrap();
        assert_eq!((p.after_secs, p.below, p.action), (3600, 5, IdleAction::Warn));
        let bad = |t: IdleGpusTable| IdleGpus::read(t).unwrap_err();
        assert!(bad(IdleGpusTable { below: Some(0), ..Default::default() }).starts_with("idle_gpus.below: 0"));
        assert!(bad(IdleGpusTable { after: Some("soon".into()), ..Default::default() })
            .starts_with("idle_gpus.after: 'soon'"));
        assert!(bad(IdleGpusTable { after: Some("0s".into()), ..Default::default() }).contains("out of range"));
        let p = IdleGpus::read(IdleGpusTable { exempt_qos: Some(vec!["debug".into()]), ..Default::default() }).unwrap();
        assert!(p.exempts("debug", "gpu") && !p.exempts("normal", "gpu"));
    }
}
