//! Medians and nearest-rank percentiles of samples.

/// What a set of samples comes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median (the mean of the two middle samples when `n` is even).
    pub median: f64,
    /// 99th percentile, nearest rank.
    pub p99: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        Some(Summary { n, median, p99: nearest_rank(&sorted, 99.0), min: sorted[0], max: sorted[n - 1] })
    }

    /// The summary as JSON (`n`, `median`, `p99`, `min`, `max`).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "n": self.n, "median": self.median, "p99": self.p99, "min": self.min, "max": self.max })
    }
}

/// The `p`th percentile of sorted samples by the nearest-rank method: the smallest sample
/// with at least `p` percent of the samples at or below it.
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p99() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.p99, s.min, s.max), (2.0, 3.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(Summary::of(&hundred).unwrap().p99, 99.0);
        let two_hundred: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(Summary::of(&two_hundred).unwrap().p99, 198.0);
        assert!(Summary::of(&[]).is_none());
    }
}
