//! The multifactor priority's settings, with slurm.conf's names: the weight of each factor
//! (`priority_weight_age`, `priority_weight_fairshare`, …), how old a job must be for its
//! age factor to be full (`priority_max_age`), which job sizes are favoured
//! (`priority_favor_small`), how often priorities are computed again
//! (`priority_calc_period`), how fast usage decays (`priority_decay_half_life`) and when it
//! is reset (`priority_usage_reset_period`), and what a job's use of each resource costs
//! (`tres_billing_weights`). With every weight 0 (the default) the queue keeps its
//! first-come order, as before multifactor priority existed.

use super::bounds::{self, Bounds};
use serde::Deserialize;

/// A duration as slurm.conf writes it: an integer counts minutes (`priority_calc_period =
/// 5`), a string is a Slurm time (`"7-0"`, `"0:30"`, `"UNLIMITED"`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SlurmDuration {
    /// Minutes.
    Minutes(i64),
    /// A Slurm time specification.
    Text(String),
}

/// A priority factor's weight: 0 to 2^32 − 1, as Slurm's are (the sum is held to a `u32`).
pub const WEIGHT: Bounds<i64> = Bounds { min: 0, max: u32::MAX as i64, unit: "" };

/// The longest duration a priority setting takes: ten years, so that seconds of it added
/// to a UNIX time cannot overflow.
const LONGEST_SECS: u64 = 3650 * 86_400;

/// When accumulated usage is forgotten (Slurm's `PriorityUsageResetPeriod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageReset {
    /// Never: usage only decays.
    #[default]
    None,
    /// At the next start of the daemon (Slurm's `NOW`: once, when the setting is read).
    Now,
    /// At midnight.
    Daily,
    /// On Mondays at midnight.
    Weekly,
    /// On the first day of each month.
    Monthly,
    /// On the first day of each quarter.
    Quarterly,
    /// On the first day of each year.
    Yearly,
}

impl UsageReset {
    /// The setting's slurm.conf word.
    pub fn name(self) -> &'static str {
        match self {
            UsageReset::None => "NONE",
            UsageReset::Now => "NOW",
            UsageReset::Daily => "DAILY",
            UsageReset::Weekly => "WEEKLY",
            UsageReset::Monthly => "MONTHLY",
            UsageReset::Quarterly => "QUARTERLY",
            UsageReset::Yearly => "YEARLY",
        }
    }

    fn parse(text: &str) -> Option<UsageReset> {
        Some(match text.to_ascii_uppercase().as_str() {
            "NONE" => UsageReset::None,
            "NOW" => UsageReset::Now,
            "DAILY" => UsageReset::Daily,
            "WEEKLY" => UsageReset::Weekly,
            "MONTHLY" => UsageReset::Monthly,
            "QUARTERLY" => UsageReset::Quarterly,
            "YEARLY" => UsageReset::Yearly,
            _ => return None,
        })
    }
}

/// A trackable resource a weight is given to, as Slurm names them in `tres_billing_weights`
/// and `priority_weight_tres`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tres {
    /// `CPU`.
    Cpu,
    /// `Mem`, counted in MB (a weight written with a `G` suffix counts GB).
    Mem,
    /// `GRES/gpu`; a shard counts its part of its GPU.
    Gpu,
    /// `Node`: every job holds the one node.
    Node,
}

impl Tres {
    /// Slurm's name of it (`CPU`, `Mem`, `GRES/gpu`, `Node`).
    pub fn name(self) -> &'static str {
        match self {
            Tres::Cpu => "CPU",
            Tres::Mem => "Mem",
            Tres::Gpu => "GRES/gpu",
            Tres::Node => "Node",
        }
    }

    fn parse(name: &str) -> Option<Tres> {
        Some(match name.to_ascii_lowercase().as_str() {
            "cpu" => Tres::Cpu,
            "mem" => Tres::Mem,
            "gres/gpu" => Tres::Gpu,
            "node" => Tres::Node,
            _ => return None,
        })
    }
}

/// Weights by resource (`CPU=1.0,Mem=0.25G,GRES/gpu=10`), memory's per MB.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TresWeights(pub Vec<(Tres, f64)>);

impl TresWeights {
    /// The weight of `tres`, 0 when none is given.
    pub fn of(&self, tres: Tres) -> f64 {
        self.0.iter().find(|(t, _)| *t == tres).map_or(0.0, |(_, w)| *w)
    }

    /// Whether no weight is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Reads `CPU=1.0,Mem=0.25G,GRES/gpu=10` for `key`: each resource once, each weight a
    /// finite number from 0 to 2^32 − 1; a memory weight may end in `K`, `M`, `G` or `T`
    /// (per KB, MB, GB, TB; per MB without one).
    pub fn parse(key: &str, text: &str) -> Result<TresWeights, String> {
        let mut weights: Vec<(Tres, f64)> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!("{key}: '{item}' is not NAME=WEIGHT"));
            };
            let tres = Tres::parse(name.trim()).ok_or_else(|| {
                format!("{key}: unknown resource '{}' (known: CPU, Mem, GRES/gpu, Node)", name.trim())
            })?;
            let (number, per_mb) = match (tres, value.trim().char_indices().last()) {
                (Tres::Mem, Some((at, unit @ ('K' | 'k' | 'M' | 'm' | 'G' | 'g' | 'T' | 't')))) => {
                    let scale = match unit.to_ascii_uppercase() {
                        'K' => 1024.0,
                        'M' => 1.0,
                        'G' => 1.0 / 1024.0,
                        _ => 1.0 / (1024.0 * 1024.0),
                    };
                    (&value.trim()[..at], scale)
                }
                _ => (value.trim(), 1.0),
            };
            let weight: f64 =
                number.parse().map_err(|_| format!("{key}: {}'s weight '{value}' is no number", tres.name()))?;
            if !weight.is_finite() || !(0.0..=u32::MAX as f64).contains(&weight) {
                return Err(format!("{key}: {}'s weight {value} is out of range: 0 to {}", tres.name(), u32::MAX));
            }
            if weights.iter().any(|(t, _)| *t == tres) {
                return Err(format!("{key}: {} is given twice", tres.name()));
            }
            weights.push((tres, weight * per_mb));
        }
        Ok(TresWeights(weights))
    }
}

/// The weights of the factors (slurm.conf's `PriorityWeight*`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights {
    /// `priority_weight_age`.
    pub age: u32,
    /// `priority_weight_fairshare`.
    pub fairshare: u32,
    /// `priority_weight_job_size`.
    pub job_size: u32,
    /// `priority_weight_partition`.
    pub partition: u32,
    /// `priority_weight_qos`.
    pub qos: u32,
    /// `priority_weight_tres`, per resource.
    pub tres: TresWeights,
}

impl Weights {
    /// Whether every weight is 0: priorities are then not computed, and the queue keeps its
    /// first-come order.
    pub fn all_zero(&self) -> bool {
        self.age == 0
            && self.fairshare == 0
            && self.job_size == 0
            && self.partition == 0
            && self.qos == 0
            && self.tres.0.iter().all(|(_, w)| *w == 0.0)
    }
}

/// The multifactor priority's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PrioritySettings {
    /// The factors' weights.
    pub weights: Weights,
    /// Seconds of waiting after which the age factor is full (`priority_max_age`, 7 days).
    pub max_age_secs: u64,
    /// Whether small jobs get the larger job-size factor (`priority_favor_small`).
    pub favor_small: bool,
    /// Seconds between two computations of every pending job's priority
    /// (`priority_calc_period`, 5 minutes); fair-share also moves at once when a job starts
    /// or ends.
    pub calc_period_secs: u64,
    /// Seconds in which usage decays to half (`priority_decay_half_life`, 7 days); 0: it
    /// never decays.
    pub decay_half_life_secs: u64,
    /// When usage is forgotten (`priority_usage_reset_period`).
    pub usage_reset: UsageReset,
    /// What a second of each resource costs (`tres_billing_weights`); none: a job's billing
    /// is its CPUs, as Slurm's is.
    pub billing: TresWeights,
}

impl Default for PrioritySettings {
    fn default() -> Self {
        PrioritySettings {
            weights: Weights::default(),
            max_age_secs: 7 * 86_400,
            favor_small: false,
            calc_period_secs: 300,
            decay_half_life_secs: 7 * 86_400,
            usage_reset: UsageReset::None,
            billing: TresWeights::default(),
        }
    }
}

/// The priority keys as the file writes them.
#[derive(Debug, Clone, Default)]
pub struct PriorityKeys {
    /// `priority_weight_age`.
    pub weight_age: Option<i64>,
    /// `priority_weight_fairshare`.
    pub weight_fairshare: Option<i64>,
    /// `priority_weight_job_size`.
    pub weight_job_size: Option<i64>,
    /// `priority_weight_partition`.
    pub weight_partition: Option<i64>,
    /// `priority_weight_qos`.
    pub weight_qos: Option<i64>,
    /// `priority_weight_tres`.
    pub weight_tres: Option<String>,
    /// `priority_max_age`.
    pub max_age: Option<SlurmDuration>,
    /// `priority_favor_small`.
    pub favor_small: Option<bool>,
    /// `priority_calc_period`.
    pub calc_period: Option<SlurmDuration>,
    /// `priority_decay_half_life`.
    pub decay_half_life: Option<SlurmDuration>,
    /// `priority_usage_reset_period`.
    pub usage_reset_period: Option<String>,
    /// `tres_billing_weights`.
    pub tres_billing_weights: Option<String>,
}

/// Why a priority key was refused.
#[derive(Debug)]
pub enum PriorityRefusal {
    /// A number outside its range.
    OutOfRange(bounds::OutOfRange),
    /// Something else, said whole.
    Invalid(String),
}

impl PriorityKeys {
    /// The settings these keys make, each checked; a refusal names the key and the value.
    pub fn resolve(self) -> Result<PrioritySettings, PriorityRefusal> {
        let weight = |key: &str, v: Option<i64>| -> Result<u32, PriorityRefusal> {
            Ok(WEIGHT.read_opt(key, v).map_err(PriorityRefusal::OutOfRange)?.unwrap_or(0))
        };
        let tres = |key: &str, v: Option<String>| -> Result<TresWeights, PriorityRefusal> {
            v.map_or(Ok(TresWeights::default()), |t| TresWeights::parse(key, &t).map_err(PriorityRefusal::Invalid))
        };
        let defaults = PrioritySettings::default();
        let calc_period_secs = duration("priority_calc_period", self.calc_period, defaults.calc_period_secs)?;
        if calc_period_secs == 0 {
            return Err(PriorityRefusal::Invalid(
                "priority_calc_period: 0 is no period: give a time of a second or more".into(),
            ));
        }
        let usage_reset = match self.usage_reset_period {
            None => UsageReset::None,
            Some(text) => UsageReset::parse(&text).ok_or_else(|| {
                PriorityRefusal::Invalid(format!(
                    "priority_usage_reset_period: '{text}' is none of NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY"
                ))
            })?,
        };
        Ok(PrioritySettings {
            weights: Weights {
                age: weight("priority_weight_age", self.weight_age)?,
                fairshare: weight("priority_weight_fairshare", self.weight_fairshare)?,
                job_size: weight("priority_weight_job_size", self.weight_job_size)?,
                partition: weight("priority_weight_partition", self.weight_partition)?,
                qos: weight("priority_weight_qos", self.weight_qos)?,
                tres: tres("priority_weight_tres", self.weight_tres)?,
            },
            max_age_secs: duration("priority_max_age", self.max_age, defaults.max_age_secs)?,
            favor_small: self.favor_small.unwrap_or(false),
            calc_period_secs,
            decay_half_life_secs: duration(
                "priority_decay_half_life",
                self.decay_half_life,
                defaults.decay_half_life_secs,
            )?,
            usage_reset,
            billing: tres("tres_billing_weights", self.tres_billing_weights)?,
        })
    }
}

/// Seconds of a duration key, `default` when absent; at most ten years (`UNLIMITED` is
/// that too).
fn duration(key: &str, value: Option<SlurmDuration>, default: u64) -> Result<u64, PriorityRefusal> {
    let secs = match value {
        None => return Ok(default),
        Some(SlurmDuration::Minutes(m)) => {
            let minutes: u64 = Bounds { min: 0, max: (LONGEST_SECS / 60) as i64, unit: " minutes" }
                .read(key, m)
                .map_err(PriorityRefusal::OutOfRange)?;
            minutes * 60
        }
        Some(SlurmDuration::Text(t)) => crate::options::time::parse_time_secs(&t, "time")
            .map_err(|_| PriorityRefusal::Invalid(format!("{key}: '{t}' is no Slurm time (such as 7-0, 5, 0:30)")))?
            .unwrap_or(LONGEST_SECS),
    };
    if secs > LONGEST_SECS {
        return Err(PriorityRefusal::Invalid(format!("{key}: longer than ten years")));
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billing_weights_read_as_slurm_writes_them_memory_per_mb() {
        let w = TresWeights::parse("tres_billing_weights", "CPU=1.0,Mem=0.25G,GRES/gpu=10").unwrap();
        assert_eq!(w.of(Tres::Cpu), 1.0);
        assert_eq!(w.of(Tres::Gpu), 10.0);
        assert!((w.of(Tres::Mem) - 0.25 / 1024.0).abs() < 1e-12);
        assert_eq!(w.of(Tres::Node), 0.0);
    }

    #[test]
    fn bad_billing_weights_are_refused_naming_key_and_value() {
        for (text, says) in [
            ("CPU=-1", "CPU's weight -1 is out of range"),
            ("CPU", "'CPU' is not NAME=WEIGHT"),
            ("license/x=1", "unknown resource 'license/x'"),
            ("CPU=1,cpu=2", "CPU is given twice"),
            ("GRES/gpu=lots", "GRES/gpu's weight 'lots' is no number"),
            ("CPU=NaN", "out of range"),
        ] {
            let e = TresWeights::parse("tres_billing_weights", text).unwrap_err();
            assert!(e.starts_with("tres_billing_weights: ") && e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn durations_are_minutes_or_slurm_times() {
        let keys = PriorityKeys {
            calc_period: Some(SlurmDuration::Text("0:2".into())),
            max_age: Some(SlurmDuration::Minutes(60)),
            decay_half_life: Some(SlurmDuration::Text("14-0".into())),
            ..Default::default()
        };
        let s = keys.resolve().unwrap();
        assert_eq!((s.calc_period_secs, s.max_age_secs, s.decay_half_life_secs), (2, 3600, 14 * 86_400));
        let zero = PriorityKeys { calc_period: Some(SlurmDuration::Minutes(0)), ..Default::default() };
        assert!(matches!(zero.resolve(), Err(PriorityRefusal::Invalid(e)) if e.starts_with("priority_calc_period")));
        let negative = PriorityKeys { weight_age: Some(-1), ..Default::default() };
        assert!(matches!(negative.resolve(), Err(PriorityRefusal::OutOfRange(e)) if e.key == "priority_weight_age"));
    }

    #[test]
    fn all_weights_zero_by_default() {
        assert!(PriorityKeys::default().resolve().unwrap().weights.all_zero());
    }
}
