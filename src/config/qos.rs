//! Qualities of service, as Slurm's QOS: `[qos.NAME]` tables with a priority, limits per
//! user and for the whole QOS, a usage factor, `DenyOnLimit`, and which QOS its jobs may
//! preempt (`preempt`, with `preempt_mode` and `grace_time`). A QOS `normal` (priority 0, no
//! limit) always exists, as in Slurm; a job that names none runs in its user's or
//! account's `default_qos`, else `normal`.
//!
//! ```toml
//! preempt_type = "preempt/qos"
//! preempt_mode = "REQUEUE"
//! [qos.high]
//! priority = 100
//! preempt = ["scavenger"]
//! [qos.scavenger]
//! usage_factor = 0.0
//! max_tres_per_user = "gres/gpu=2"
//! flags = ["DenyOnLimit"]
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;

/// The QOS every job may run in, and the default one.
pub const NORMAL: &str = "normal";

/// The most of anything a limit may say (a count, MB, minutes).
const MOST: u64 = 1 << 40;

/// Limits on trackable resources (`gres/gpu=2,cpu=16,mem=64G,node=1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TresLimits {
    /// CPUs.
    pub cpu: Option<u64>,
    /// Memory, MB.
    pub mem_mb: Option<u64>,
    /// GPUs (a shard counts its part of one).
    pub gpus: Option<u64>,
    /// Nodes (one machine: 0 or 1 means anything).
    pub nodes: Option<u64>,
}

impl TresLimits {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == TresLimits::default()
    }

    /// Reads `gres/gpu=2,cpu=16,mem=64G`; `Err` says what is wrong, naming `key`.
    pub fn parse(key: &str, text: &str) -> Result<TresLimits, String> {
        let mut limits = TresLimits::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!("{key}: '{item}' is not TRES=COUNT"));
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            let number = |text: &str, scale: u64| -> Result<u64, String> {
                let n: u64 = text.parse().map_err(|_| format!("{key}: {name}'s limit '{value}' is no whole number"))?;
                n.checked_mul(scale)
                    .filter(|&v| v <= MOST)
                    .ok_or_else(|| format!("{key}: {name}'s limit {value} is out of range: 0 to {MOST}"))
            };
            let slot = match name.as_str() {
                "cpu" => &mut limits.cpu,
                "mem" => &mut limits.mem_mb,
                "gres/gpu" => &mut limits.gpus,
                "node" => &mut limits.nodes,
                _ => return Err(format!("{key}: unknown TRES '{name}' (known: cpu, mem, gres/gpu, node)")),
            };
            if slot.is_some() {
                return Err(format!("{key}: {name} is given twice"));
            }
            *slot = Some(if name == "mem" {
                let (digits, scale) = match value.char_indices().last() {
                    Some((at, 'K' | 'k')) => (&value[..at], 0),
                    Some((at, 'M' | 'm')) => (&value[..at], 1),
                    Some((at, 'G' | 'g')) => (&value[..at], 1024),
                    Some((at, 'T' | 't')) => (&value[..at], 1024 * 1024),
                    _ => (value, 1),
                };
                if scale == 0 {
                    number(digits, 1)?.div_ceil(1024)
                } else {
                    number(digits, scale)?
                }
            } else {
                number(value, 1)?
            });
        }
        Ok(limits)
    }

    /// As Slurm writes them (`cpu=16,mem=64G,node=1,gres/gpu=2`).
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.cpu {
            parts.push(format!("cpu={n}"));
        }
        if let Some(mb) = self.mem_mb {
            parts.push(if mb % 1024 == 0 { format!("mem={}G", mb / 1024) } else { format!("mem={mb}M") });
        }
        if let Some(n) = self.nodes {
            parts.push(format!("node={n}"));
        }
        if let Some(n) = self.gpus {
            parts.push(format!("gres/gpu={n}"));
        }
        parts.join(",")
    }
}

/// What happens to a preempted job (Slurm's `PreemptMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreemptMode {
    /// Nothing is preempted.
    #[default]
    Off,
    /// It is ended and goes back to the queue (a job that may not be requeued is cancelled).
    Requeue,
    /// It is cancelled.
    Cancel,
}

impl PreemptMode {
    /// Slurm's word (`REQUEUE`).
    pub fn name(self) -> &'static str {
        match self {
            PreemptMode::Off => "OFF",
            PreemptMode::Requeue => "REQUEUE",
            PreemptMode::Cancel => "CANCEL",
        }
    }

    /// Reads Slurm's word; `Err` names `key`.
    pub fn parse(key: &str, text: &str) -> Result<PreemptMode, String> {
        match text.to_ascii_uppercase().as_str() {
            "OFF" => Ok(PreemptMode::Off),
            "REQUEUE" => Ok(PreemptMode::Requeue),
            "CANCEL" => Ok(PreemptMode::Cancel),
            "SUSPEND" | "GANG" | "PRIORITY" | "WITHIN" => Err(format!(
                "{key}: '{text}' is not offered: a preempted job is requeued (REQUEUE) or cancelled (CANCEL)"
            )),
            _ => Err(format!("{key}: '{text}' is none of OFF, REQUEUE, CANCEL")),
        }
    }
}

/// One QOS.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Qos {
    /// Its priority (the QOS factor is this over the largest of any QOS).
    pub priority: u32,
    /// The longest time limit of its jobs, minutes (`MaxWall`); a job without one gets it.
    pub max_wall_minutes: Option<u32>,
    /// What one user's running jobs in it may hold (`MaxTRESPerUser`).
    pub max_tres_per_user: TresLimits,
    /// What all its running jobs may hold (`GrpTRES`).
    pub grp_tres: TresLimits,
    /// How many of one user's jobs may run (`MaxJobsPerUser`).
    pub max_jobs_per_user: Option<u32>,
    /// How many of one user's jobs may be pending or running (`MaxSubmitJobsPerUser`).
    pub max_submit_jobs_per_user: Option<u32>,
    /// What its jobs' usage is multiplied by for fair-share (`UsageFactor`, 1 by default).
    pub usage_factor: f64,
    /// A job over a limit is refused at submit rather than left pending (`DenyOnLimit`).
    pub deny_on_limit: bool,
    /// The QOS whose running jobs its jobs may preempt (`Preempt`).
    pub preempt: Vec<String>,
    /// What happens to its jobs when they are preempted (`PreemptMode`; `None`: the
    /// configuration's `preempt_mode`).
    pub preempt_mode: Option<PreemptMode>,
    /// Seconds a preempted job of it has, after its signal, before it is ended (`GraceTime`).
    pub grace_time_secs: u32,
    /// sacctmgr's `Descr`.
    pub description: String,
}

/// A `[qos.NAME]` table as written.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QosTable {
    /// [`Qos::priority`].
    pub priority: Option<i64>,
    /// [`Qos::max_wall_minutes`] (a Slurm time).
    pub max_wall: Option<String>,
    /// [`Qos::max_tres_per_user`].
    pub max_tres_per_user: Option<String>,
    /// [`Qos::grp_tres`].
    pub grp_tres: Option<String>,
    /// [`Qos::max_jobs_per_user`].
    pub max_jobs_per_user: Option<i64>,
    /// [`Qos::max_submit_jobs_per_user`].
    pub max_submit_jobs_per_user: Option<i64>,
    /// [`Qos::usage_factor`].
    pub usage_factor: Option<f64>,
    /// `["DenyOnLimit"]`.
    pub flags: Option<Vec<String>>,
    /// [`Qos::preempt`].
    pub preempt: Option<Vec<String>>,
    /// [`Qos::preempt_mode`].
    pub preempt_mode: Option<String>,
    /// [`Qos::grace_time_secs`].
    pub grace_time: Option<i64>,
    /// [`Qos::description`].
    pub description: Option<String>,
}

/// Every QOS by name, `normal` among them, and their order: `normal` first, then the
/// others in the file's order (as sacctmgr lists them, in the order they were made).
#[derive(Debug, Clone, PartialEq)]
pub struct QosList(pub BTreeMap<String, Qos>, pub Vec<String>);

impl Default for QosList {
    fn default() -> Self {
        QosList(BTreeMap::from([(NORMAL.to_string(), Qos::normal())]), vec![NORMAL.to_string()])
    }
}

impl Qos {
    fn normal() -> Qos {
        Qos { usage_factor: 1.0, description: "Normal QOS default".into(), ..Default::default() }
    }
}

impl QosList {
    /// The QOS named `name`.
    pub fn get(&self, name: &str) -> Option<&Qos> {
        self.0.get(name)
    }

    /// The largest priority of any QOS (the QOS factor's denominator).
    pub fn max_priority(&self) -> u32 {
        self.0.values().map(|q| q.priority).max().unwrap_or(0)
    }

    /// The names, `normal` first, then in the file's order.
    pub fn names(&self) -> &[String] {
        &self.1
    }

    /// Reads the `qos` tables, in the file's order; `Err` names the key.
    pub fn read(written: toml::Table) -> Result<QosList, String> {
        let mut tables: Vec<(String, QosTable)> = Vec::new();
        for (name, value) in written {
            let table: QosTable = value.try_into().map_err(|e| format!("qos.{name}: {}", e.to_string().trim()))?;
            tables.push((name, table));
        }
        let mut list = QosList::default();
        for (name, t) in &tables {
            if name.is_empty() || name.contains([',', ' ', '\'', '"', '=']) {
                return Err(format!("qos.{name}: '{name}' is no QOS name"));
            }
            let key = |k: &str| format!("qos.{name}.{k}");
            let count = |k: &str, v: Option<i64>| -> Result<Option<u32>, String> {
                v.map(|n| u32::try_from(n).map_err(|_| format!("{} = {n} is out of range: 0 to {}", key(k), u32::MAX)))
                    .transpose()
            };
            let mut qos = if name == NORMAL { Qos::normal() } else { Qos { usage_factor: 1.0, ..Default::default() } };
            qos.description = t.description.clone().unwrap_or_else(|| {
                if name == NORMAL {
                    qos.description.clone()
                } else {
                    name.clone()
                }
            });
            qos.priority = count("priority", t.priority)?.unwrap_or(0);
            qos.max_jobs_per_user = count("max_jobs_per_user", t.max_jobs_per_user)?;
            qos.max_submit_jobs_per_user = count("max_submit_jobs_per_user", t.max_submit_jobs_per_user)?;
            qos.grace_time_secs = count("grace_time", t.grace_time)?.unwrap_or(0);
            if let Some(wall) = &t.max_wall {
                let secs = crate::options::time::parse_time_secs(wall, "time")
                    .map_err(|_| format!("{}: '{wall}' is no Slurm time (such as 1-0, 4:00:00)", key("max_wall")))?;
                qos.max_wall_minutes = secs.map(|s| s.div_ceil(60).min(crate::options::time::MAX_MINUTES) as u32);
            }
            if let Some(text) = &t.max_tres_per_user {
                qos.max_tres_per_user = TresLimits::parse(&key("max_tres_per_user"), text)?;
            }
            if let Some(text) = &t.grp_tres {
                qos.grp_tres = TresLimits::parse(&key("grp_tres"), text)?;
            }
            if let Some(f) = t.usage_factor {
                if !f.is_finite() || !(0.0..=1e6).contains(&f) {
                    return Err(format!("{} = {f} is out of range: 0 to 1000000", key("usage_factor")));
                }
                qos.usage_factor = f;
            }
            for flag in t.flags.iter().flatten() {
                match flag.to_ascii_lowercase().as_str() {
                    "denyonlimit" => qos.deny_on_limit = true,
                    _ => return Err(format!("{}: unknown flag '{flag}' (known: DenyOnLimit)", key("flags"))),
                }
            }
            if let Some(mode) = &t.preempt_mode {
                qos.preempt_mode = Some(PreemptMode::parse(&key("preempt_mode"), mode)?);
            }
            qos.preempt = t.preempt.clone().unwrap_or_default();
            list.0.insert(name.clone(), qos);
            if !list.1.contains(name) {
                list.1.push(name.clone());
            }
        }
        list.check_preemption()?;
        Ok(list)
    }

    /// Every preempted QOS exists, none preempts itself, and no chain of preemption comes
    /// back to where it started.
    fn check_preemption(&self) -> Result<(), String> {
        for (name, qos) in &self.0 {
            for target in &qos.preempt {
                if target == name {
                    return Err(format!("qos.{name}.preempt: a QOS cannot preempt itself"));
                }
                if !self.0.contains_key(target) {
                    return Err(format!("qos.{name}.preempt: '{target}' is no QOS"));
                }
            }
        }
        for start in self.0.keys() {
            let mut path = vec![start.as_str()];
            if let Some(cycle) = self.cycle_from(start, &mut path) {
                return Err(format!("qos.{start}.preempt: a cycle, {cycle}"));
            }
        }
        Ok(())
    }

    fn cycle_from<'a>(&'a self, at: &'a str, path: &mut Vec<&'a str>) -> Option<String> {
        for next in &self.0[at].preempt {
            if next == path[0] {
                return Some(format!("{} → {next}", path.join(" → ")));
            }
            if path.contains(&next.as_str()) {
                continue;
            }
            path.push(next);
            if let Some(c) = self.cycle_from(next, path) {
                return Some(c);
            }
            path.pop();
        }
        None
    }

    /// Whether a job of QOS `by` may preempt one of QOS `of`.
    pub fn preempts(&self, by: &str, of: &str) -> bool {
        self.get(by).is_some_and(|q| q.preempt.iter().any(|p| p == of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<QosList, String> {
        QosList::read(toml::from_str(text).expect("valid TOML"))
    }

    #[test]
    fn qos_tables_read_with_limits_and_normal_is_always_there() {
        let q = read(
            "[high]\npriority = 100\npreempt = [\"scavenger\"]\n\
             [scavenger]\nusage_factor = 0.5\nmax_tres_per_user = \"gres/gpu=2,mem=64G\"\nmax_wall = \"1-0\"\nflags = [\"DenyOnLimit\"]",
        )
        .unwrap();
        assert_eq!(q.get("high").unwrap().priority, 100);
        let s = q.get("scavenger").unwrap();
        assert_eq!(s.max_tres_per_user, TresLimits { gpus: Some(2), mem_mb: Some(65_536), ..Default::default() });
        assert_eq!(s.max_wall_minutes, Some(1440));
        assert!(s.deny_on_limit);
        assert_eq!(s.max_tres_per_user.text(), "mem=64G,gres/gpu=2");
        assert!(q.get(NORMAL).is_some());
        assert!(q.preempts("high", "scavenger") && !q.preempts("scavenger", "high"));
        assert_eq!(q.max_priority(), 100);
        assert_eq!(q.names(), ["normal", "high", "scavenger"], "normal, then the file's order");
    }

    #[test]
    fn qos_that_make_no_sense_are_refused_naming_the_key() {
        for (text, says) in [
            ("[a]\npreempt = [\"a\"]", "qos.a.preempt: a QOS cannot preempt itself"),
            ("[a]\npreempt = [\"b\"]\n[b]\npreempt = [\"a\"]", "qos.a.preempt: a cycle, a → b → a"),
            ("[a]\npreempt = [\"nowhere\"]", "qos.a.preempt: 'nowhere' is no QOS"),
            ("[a]\npriority = -1", "qos.a.priority = -1 is out of range"),
            ("[a]\nmax_tres_per_user = \"gres/gpu=-2\"", "gres/gpu's limit '-2' is no whole number"),
            ("[a]\nmax_tres_per_user = \"license/x=1\"", "unknown TRES 'license/x'"),
            ("[a]\nusage_factor = -1.0", "qos.a.usage_factor = -1 is out of range"),
            ("[a]\nflags = [\"NoReserve\"]", "unknown flag 'NoReserve'"),
            ("[a]\npreempt_mode = \"SUSPEND\"", "'SUSPEND' is not offered"),
            ("[a]\nmax_wall = \"soon\"", "qos.a.max_wall: 'soon' is no Slurm time"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
