//! The seven figures of the benchmark, one module each, and what they share.

pub mod dispatch;
pub mod pass;
pub mod sbatch;
pub mod squeue;
pub mod srun;
pub mod store;
pub mod submit;
pub mod trivial;

use crate::cluster::Cluster;
use crate::counts::Counts;
use crate::error::Result;
use crate::real::RealSlurm;
use crate::report::Row;
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Instant;

/// A figure: its number, title and measuring function.
pub struct Figure {
    /// Its number in the table.
    pub number: u32,
    /// What it measures.
    pub title: &'static str,
    /// Measures it and returns its rows.
    pub run: fn(&Ctx) -> Result<Vec<Row>>,
}

/// Every figure, in order.
pub const FIGURES: &[Figure] = &[
    Figure { number: 1, title: "sbatch latency", run: sbatch::run },
    Figure { number: 2, title: "submit throughput", run: submit::run },
    Figure { number: 3, title: "dispatch latency", run: dispatch::run },
    Figure { number: 4, title: "trivial-job throughput", run: trivial::run },
    Figure { number: 5, title: "squeue with a large store", run: squeue::run },
    Figure { number: 6, title: "daemon memory and restart", run: store::run },
    Figure { number: 7, title: "scheduler pass", run: pass::run },
    Figure { number: 8, title: "srun: start and output throughput", run: srun::run },
];

/// The figures in the order they run: figure 5 first. It compares `squeue` at equal queue
/// lengths, and real Slurm keeps the jobs other figures submitted and cancelled for its
/// MinJobAge (5 minutes here), its `squeue` reading through all of them.
pub fn in_run_order() -> impl Iterator<Item = &'static Figure> {
    FIGURES.iter().filter(|f| f.number == 5).chain(FIGURES.iter().filter(|f| f.number != 5))
}

/// What every figure gets: where things are, how big to make them, real Slurm, and where
/// to put stage timings and notes.
pub struct Ctx {
    /// The `slurmlet` binary under test.
    pub slurmlet: PathBuf,
    /// This harness's own binary (jobs run its `stamp` command).
    pub bench_exe: PathBuf,
    /// Where temporary cluster directories go.
    pub parent: PathBuf,
    /// Sizes.
    pub counts: Counts,
    /// Real Slurm, when found.
    pub real: Option<RealSlurm>,
    /// Why real Slurm is not compared, when it is not.
    pub real_absent: Option<String>,
    /// When the run started.
    pub start: Instant,
    stages: RefCell<Vec<(String, f64)>>,
    notes: RefCell<Vec<String>>,
    raw: RefCell<serde_json::Map<String, serde_json::Value>>,
}

impl Ctx {
    /// A context for one run.
    pub fn new(
        slurmlet: PathBuf,
        bench_exe: PathBuf,
        parent: PathBuf,
        counts: Counts,
        real: std::result::Result<RealSlurm, String>,
    ) -> Ctx {
        let (real, real_absent) = match real {
            Ok(r) => (Some(r), None),
            Err(why) => (None, Some(why)),
        };
        Ctx {
            slurmlet,
            bench_exe,
            parent,
            counts,
            real,
            real_absent,
            start: Instant::now(),
            stages: RefCell::new(Vec::new()),
            notes: RefCell::new(Vec::new()),
            raw: RefCell::new(serde_json::Map::new()),
        }
    }

    /// A fresh daemon with the configured GPUs.
    pub fn cluster(&self, label: &str) -> Result<Cluster> {
        Cluster::start(&self.slurmlet, &self.parent, label, self.counts.gpus)
    }

    /// Runs one stage of a figure, printing its duration to stderr and recording it.
    pub fn stage<T>(&self, what: impl Into<String>, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let what = what.into();
        let t = Instant::now();
        let r = f();
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "[{:7.1} s] {what}: {secs:.1} s{}",
            self.start.elapsed().as_secs_f64(),
            if r.is_err() { " (failed)" } else { "" }
        );
        self.stages.borrow_mut().push((what, secs));
        r
    }

    /// Adds a line to the notes printed under the table.
    pub fn note(&self, text: impl Into<String>) {
        self.notes.borrow_mut().push(text.into());
    }

    /// Records raw numbers for `--json`.
    pub fn raw(&self, key: &str, value: serde_json::Value) {
        self.raw.borrow_mut().insert(key.to_string(), value);
    }

    /// The stages so far: what and seconds.
    pub fn stages(&self) -> Vec<(String, f64)> {
        self.stages.borrow().clone()
    }

    /// The notes so far.
    pub fn notes(&self) -> Vec<String> {
        self.notes.borrow().clone()
    }

    /// The raw numbers so far.
    pub fn raw_numbers(&self) -> serde_json::Value {
        serde_json::Value::Object(self.raw.borrow().clone())
    }

    /// The real-Slurm cell for a figure that real Slurm was not run for.
    pub fn real_skipped(&self) -> crate::report::Real {
        crate::report::Real::Skipped(self.real_absent.clone().unwrap_or_else(|| "not run".into()))
    }
}

/// `12345` → `"12,345"`.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The median and p99 of samples, for a row.
pub fn summary(samples: &[f64]) -> Result<crate::stats::Summary> {
    crate::stats::Summary::of(samples).ok_or_else(|| crate::error::failed("no samples"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_have_separators() {
        assert_eq!(super::count(7), "7");
        assert_eq!(super::count(1000), "1,000");
        assert_eq!(super::count(100_000), "100,000");
    }
}
