//! The results table: one row per figure, with the baseline and real Slurm beside it, and the
//! targets each row is held to.

use crate::stats::Summary;
use serde_json::json;

/// What a row's numbers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds (lower is better).
    Ms,
    /// Operations per second (higher is better).
    PerSec,
    /// Mebibytes (lower is better).
    MiB,
}

impl Unit {
    /// A value with its unit.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Ms if v < 10.0 => format!("{v:.2} ms"),
            Unit::Ms if v < 1000.0 => format!("{v:.1} ms"),
            Unit::Ms => format!("{:.2} s", v / 1e3),
            Unit::PerSec if v < 10.0 => format!("{v:.2}/s"),
            Unit::PerSec => format!("{v:.0}/s"),
            Unit::MiB => format!("{v:.1} MiB"),
        }
    }

    /// The cost of one operation relative to another's, from two values of this unit:
    /// time or size divided, or rates inverted.
    fn cost_ratio(self, ours: f64, other: f64) -> Option<f64> {
        let r = match self {
            Unit::Ms | Unit::MiB => ours / other,
            Unit::PerSec => other / ours,
        };
        r.is_finite().then_some(r)
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::PerSec => "per_s",
            Unit::MiB => "MiB",
        }
    }
}

/// A measured value: a median and (for repeated timings) a 99th percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    /// The median, or the single value.
    pub median: f64,
    /// The 99th percentile, when the value comes from repeated samples.
    pub p99: Option<f64>,
}

impl Value {
    /// A single value (a rate, a size).
    pub fn one(v: f64) -> Value {
        Value { median: v, p99: None }
    }

    /// The median and p99 of samples.
    pub fn of(s: &Summary) -> Value {
        Value { median: s.median, p99: Some(s.p99) }
    }
}

/// The real-Slurm cell of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Real {
    /// This figure is not compared with real Slurm.
    NotCompared,
    /// Compared, but not measured this run; the reason.
    Skipped(String),
    /// Measured in this run.
    Measured(Value),
}

/// A target a row is held to, and whether this run met it (`None`: cannot tell this run).
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The target in words (`p50 ≤ 2.5 ms`).
    pub text: String,
    /// Met, missed, or not measurable this run.
    pub met: Option<bool>,
}

impl Target {
    /// A target with its verdict.
    pub fn new(text: impl Into<String>, met: Option<bool>) -> Target {
        Target { text: text.into(), met }
    }
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The figure number and what is measured.
    pub figure: String,
    /// The unit of `ours`, `base` and `real`.
    pub unit: Unit,
    /// slurmlet's value.
    pub ours: Value,
    /// The baseline measured in the same run, if any.
    pub base: Option<f64>,
    /// What the baseline is.
    pub base_what: String,
    /// Real Slurm's value.
    pub real: Real,
    /// The targets of this row.
    pub targets: Vec<Target>,
}

impl Row {
    /// A row without baseline, real Slurm or targets yet.
    pub fn new(figure: impl Into<String>, unit: Unit, ours: Value) -> Row {
        Row {
            figure: figure.into(),
            unit,
            ours,
            base: None,
            base_what: String::new(),
            real: Real::NotCompared,
            targets: Vec::new(),
        }
    }

    /// Sets the baseline.
    pub fn base(mut self, value: f64, what: impl Into<String>) -> Row {
        self.base = Some(value);
        self.base_what = what.into();
        self
    }

    /// Sets the real-Slurm cell.
    pub fn real(mut self, real: Real) -> Row {
        self.real = real;
        self
    }

    /// Adds a target.
    pub fn target(mut self, text: impl Into<String>, met: Option<bool>) -> Row {
        self.targets.push(Target::new(text, met));
        self
    }

    /// Our cost per operation relative to the baseline's (lower is better).
    pub fn base_ratio(&self) -> Option<f64> {
        self.unit.cost_ratio(self.ours.median, self.base?)
    }

    /// Real Slurm's cost per operation relative to ours: how many times faster we are.
    pub fn real_speedup(&self) -> Option<f64> {
        match &self.real {
            Real::Measured(v) => self.unit.cost_ratio(v.median, self.ours.median),
            _ => None,
        }
    }

    /// Adds the target "≥ `times`× faster than real Slurm", judged when it was measured.
    pub fn faster_than_slurm(self, times: f64) -> Row {
        let met = self.real_speedup().map(|r| r >= times);
        self.target(format!(">={times}x Slurm"), met)
    }

    fn cells(&self) -> Vec<String> {
        let dash = || "-".to_string();
        let ratio = |r: Option<f64>| r.map(|r| format!("{r:.2}x")).unwrap_or_else(dash);
        let real = match &self.real {
            Real::NotCompared => dash(),
            Real::Skipped(_) => "not run".into(),
            Real::Measured(v) => self.unit.show(v.median),
        };
        let met = |t: &Target| match t.met {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "?",
        };
        vec![
            self.figure.clone(),
            self.unit.show(self.ours.median),
            self.ours.p99.map(|v| self.unit.show(v)).unwrap_or_else(dash),
            self.base.map(|v| self.unit.show(v)).unwrap_or_else(dash),
            ratio(self.base_ratio()),
            real,
            ratio(self.real_speedup()),
            if self.targets.is_empty() {
                dash()
            } else {
                self.targets.iter().map(|t| t.text.as_str()).collect::<Vec<_>>().join(", ")
            },
            if self.targets.is_empty() { dash() } else { self.targets.iter().map(met).collect::<Vec<_>>().join(" ") },
        ]
    }

    /// The row as JSON.
    pub fn json(&self) -> serde_json::Value {
        let real = match &self.real {
            Real::NotCompared => json!(null),
            Real::Skipped(why) => json!({ "skipped": why }),
            Real::Measured(v) => json!({ "median": v.median, "p99": v.p99 }),
        };
        json!({
            "figure": self.figure,
            "unit": self.unit.name(),
            "ours": { "median": self.ours.median, "p99": self.ours.p99 },
            "baseline": self.base,
            "baseline_what": self.base_what,
            "cost_vs_baseline": self.base_ratio(),
            "real_slurm": real,
            "speedup_vs_real_slurm": self.real_speedup(),
            "targets": self.targets.iter().map(|t| json!({ "target": t.text, "met": t.met })).collect::<Vec<_>>(),
        })
    }
}

const HEADER: [&str; 9] =
    ["figure", "ours p50", "ours p99", "baseline", "ours/base", "real Slurm", "Slurm/ours", "target", "met?"];

/// The rows as an aligned plain-text table.
pub fn table(rows: &[Row]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(Row::cells).collect();
    let mut widths: Vec<usize> = HEADER.iter().map(|h| h.chars().count()).collect();
    for r in &cells {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |r: &[String]| -> String {
        let mut s = String::new();
        for (i, (c, w)) in r.iter().zip(&widths).enumerate() {
            let pad = w - c.chars().count();
            // Text columns left-aligned, numbers right-aligned.
            if i == 0 || i >= 7 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    let mut out = line(&header);
    out.push_str(&line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>()));
    for r in &cells {
        out.push_str(&line(r));
    }
    out
}

/// The rows as a Markdown table (for docs/performance.md).
pub fn markdown(rows: &[Row]) -> String {
    let mut out = format!("| {} |\n|{}\n", HEADER.join(" | "), "---|".repeat(HEADER.len()));
    for r in rows {
        out.push_str(&format!("| {} |\n", r.cells().join(" | ").replace(">=", "≥").replace("<=", "≤")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_compare_cost_per_operation() {
        let r = Row::new("x", Unit::Ms, Value::one(2.0)).base(1.0, "b").real(Real::Measured(Value::one(5.0)));
        assert_eq!(r.base_ratio(), Some(2.0));
        assert_eq!(r.real_speedup(), Some(2.5));
        let r =
            Row::new("y", Unit::PerSec, Value::one(600.0)).base(1200.0, "b").real(Real::Measured(Value::one(300.0)));
        assert_eq!(r.base_ratio(), Some(2.0));
        assert_eq!(r.real_speedup(), Some(2.0));
        assert_eq!(r.faster_than_slurm(2.0).targets[0].met, Some(true));
    }

    #[test]
    fn table_is_aligned() {
        let rows = vec![
            Row::new("1 short", Unit::Ms, Value::one(1.0)).target("p50 <=2.5 ms", Some(true)),
            Row::new("2 a longer figure", Unit::PerSec, Value::one(12345.0)),
        ];
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[2].starts_with("1 short          "));
        assert!(lines[3].contains("12345/s"));
    }
}
