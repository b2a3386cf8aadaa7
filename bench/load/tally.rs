//! What the load's clients measured, by kind of request: how many, how fast, which failed.

use crate::stats::Summary;

/// The kinds of request the load sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `POST /slurm/v0.0.43/job/submit`.
    Submit,
    /// `POST /slurmlet/v1/jobs/query` as plain `squeue` sends it (laid out by the daemon).
    Squeue,
    /// `GET /slurm/v0.0.43/jobs`: every job the daemon holds, as JSON.
    Jobs,
    /// `GET /slurm/v0.0.43/job/{id}`.
    Job,
    /// `DELETE /slurm/v0.0.43/job/{id}`.
    Cancel,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 5] = [Kind::Submit, Kind::Squeue, Kind::Jobs, Kind::Job, Kind::Cancel];

    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Submit => "submit (POST job/submit)",
            Kind::Squeue => "squeue (POST jobs/query)",
            Kind::Jobs => "list (GET jobs)",
            Kind::Job => "one job (GET job/{id})",
            Kind::Cancel => "cancel (DELETE job/{id})",
        }
    }

    fn index(self) -> usize {
        Kind::ALL.iter().position(|k| *k == self).expect("every kind is listed")
    }
}

/// One client's (or, merged, every client's) requests.
#[derive(Debug, Default)]
pub struct Tally {
    /// Latencies in ms, by kind.
    latencies: [Vec<f64>; 5],
    /// Failed requests, by kind.
    errors: [usize; 5],
    /// The first few failures' texts.
    pub samples: Vec<String>,
}

impl Tally {
    /// Records a request of `kind` that took `ms` and failed with `error`, if it did.
    pub fn record(&mut self, kind: Kind, ms: f64, error: Option<String>) {
        self.latencies[kind.index()].push(ms);
        if let Some(e) = error {
            self.errors[kind.index()] += 1;
            if self.samples.len() < 10 {
                self.samples.push(format!("{}: {e}", kind.name()));
            }
        }
    }

    /// Adds another client's requests.
    pub fn merge(&mut self, other: Tally) {
        for (mine, theirs) in self.latencies.iter_mut().zip(other.latencies) {
            mine.extend(theirs);
        }
        for (mine, theirs) in self.errors.iter_mut().zip(other.errors) {
            *mine += theirs;
        }
        self.samples.extend(other.samples.into_iter().take(10usize.saturating_sub(self.samples.len())));
    }

    /// Requests of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.latencies[kind.index()].len()
    }

    /// Failed requests of `kind`.
    pub fn errors(&self, kind: Kind) -> usize {
        self.errors[kind.index()]
    }

    /// Latencies of `kind` summarised.
    pub fn summary(&self, kind: Kind) -> Option<Summary> {
        Summary::of(&self.latencies[kind.index()])
    }

    /// Every request.
    pub fn total(&self) -> usize {
        self.latencies.iter().map(Vec::len).sum()
    }

    /// Every failed request.
    pub fn total_errors(&self) -> usize {
        self.errors.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_merge_by_kind() {
        let mut a = Tally::default();
        a.record(Kind::Submit, 1.0, None);
        a.record(Kind::Cancel, 3.0, Some("refused".into()));
        let mut b = Tally::default();
        b.record(Kind::Submit, 2.0, None);
        a.merge(b);
        assert_eq!((a.count(Kind::Submit), a.errors(Kind::Submit)), (2, 0));
        assert_eq!((a.count(Kind::Cancel), a.errors(Kind::Cancel)), (1, 1));
        assert_eq!(a.summary(Kind::Submit).unwrap().median, 1.5);
        assert_eq!((a.total(), a.total_errors()), (3, 1));
        assert_eq!(a.samples, vec!["cancel (DELETE job/{id}): refused"]);
    }
}
