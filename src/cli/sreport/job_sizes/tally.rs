//! The report's numbers: for each row (account) and each size range, the jobs that fell in
//! it and what they held of the report's TRES for the seconds they ran inside the period.
//!
//! As in Slurm, a job is sized by its CPUs whatever TRES is reported (`--tres` changes only
//! what is summed), it counts in every range it falls in (ranges given out of order
//! overlap), and the row's and cluster's totals are the sums over those ranges. Rows with
//! no job are left out; the rest are sorted by name.

use super::bins::Bin;
use super::tree::Rows;
use crate::api::acct::AcctJob;
use crate::cli::sreport::usage::{overlap, TresKind};

/// Jobs and TRES-seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum {
    /// Jobs (a job once per range it falls in).
    pub jobs: u64,
    /// TRES-seconds.
    pub secs: u64,
}

impl Sum {
    fn add(&mut self, secs: u64) {
        self.jobs += 1;
        self.secs += secs;
    }
}

/// One row: an account and its ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcctRow {
    /// The account.
    pub account: String,
    /// Each range's sum, in the order of the ranges.
    pub bins: Vec<Sum>,
    /// The sum over the ranges.
    pub total: Sum,
}

/// The rows and the cluster's total.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// The rows with jobs, by account name.
    pub rows: Vec<AcctRow>,
    /// The sum over every row.
    pub cluster: Sum,
}

/// What a job did inside the period: CPUs, and seconds ran (0: it did not run in it).
pub fn ran(job: &AcctJob, period: (u64, u64), now: u64) -> (u64, u64) {
    (job.alloc.map_or(0, |t| u64::from(t.cpus)), overlap(job, period, now))
}

/// Sorts `jobs` into `rows` and `bins`, summing `kind`.
pub fn tally(jobs: &[AcctJob], rows: &Rows, bins: &[Bin], kind: TresKind, period: (u64, u64), now: u64) -> Tally {
    let mut t = Tally::default();
    for job in jobs {
        let (cpus, secs) = ran(job, period, now);
        if secs == 0 {
            continue;
        }
        let Some(account) = rows.row_of(&job.account) else { continue };
        let at = match t.rows.iter().position(|r| r.account == account) {
            Some(i) => i,
            None => {
                t.rows.push(AcctRow { account, bins: vec![Sum::default(); bins.len()], total: Sum::default() });
                t.rows.len() - 1
            }
        };
        let held = secs * kind.of_job(job);
        let row = &mut t.rows[at];
        for (sum, _) in row.bins.iter_mut().zip(bins).filter(|(_, b)| b.holds(cpus)) {
            sum.add(held);
            row.total.add(held);
            t.cluster.add(held);
        }
    }
    t.rows.retain(|r| r.total.jobs > 0);
    t.rows.sort_by(|a, b| a.account.cmp(&b.account));
    t
}

#[cfg(test)]
mod tests {
    use super::super::bins::bins;
    use super::*;
    use crate::api::acct::Tres;

    fn job(account: &str, cpus: u32, gpus: u32, start: u64, end: u64) -> AcctJob {
        AcctJob {
            account: account.into(),
            start,
            end,
            alloc: Some(Tres { cpus, gpus, mem_mb: 1000, shards: 0, nodes: 1 }),
            ..AcctJob::default()
        }
    }

    fn sizes(s: &str) -> Vec<Bin> {
        bins(&s.split(',').map(String::from).collect::<Vec<_>>(), false, "CPUs", 13)
    }

    #[test]
    fn jobs_are_sized_by_cpus_and_summed_inside_the_period() {
        let jobs = [job("b", 2, 1, 1, 200), job("a", 1, 0, 150, 250), job("a", 60, 2, 100, 110)];
        let t = tally(&jobs, &Rows::Flat, &sizes("2,50"), TresKind::Cpu, (100, 200), 1000);
        assert_eq!(t.rows.iter().map(|r| r.account.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(t.rows[0].bins, [Sum { jobs: 1, secs: 50 }, Sum::default(), Sum { jobs: 1, secs: 600 }]);
        assert_eq!(t.rows[1].total, Sum { jobs: 1, secs: 200 });
        assert_eq!(t.cluster, Sum { jobs: 3, secs: 850 });
    }

    #[test]
    fn another_tres_is_summed_but_jobs_are_still_sized_by_cpus() {
        let jobs = [job("a", 60, 2, 100, 110)];
        let t = tally(&jobs, &Rows::Flat, &sizes("50"), TresKind::Gpu, (0, 1000), 1000);
        assert_eq!(t.rows[0].bins, [Sum::default(), Sum { jobs: 1, secs: 20 }]);
    }

    #[test]
    fn a_job_counts_in_every_range_it_falls_in() {
        let t = tally(&[job("a", 100, 0, 1, 11)], &Rows::Flat, &sizes("250,50"), TresKind::Cpu, (0, 20), 20);
        assert_eq!(t.rows[0].total, Sum { jobs: 2, secs: 2000 });
    }

    #[test]
    fn jobs_outside_the_period_or_the_rows_are_not_counted() {
        let tree = Rows::tree(&["nosuch".to_string()], false, Default::default());
        let jobs = [job("a", 1, 0, 1, 10)];
        assert_eq!(tally(&jobs, &tree, &sizes("50"), TresKind::Cpu, (0, 10), 10), Tally::default());
        assert_eq!(tally(&jobs, &Rows::Flat, &sizes("50"), TresKind::Cpu, (10, 20), 30), Tally::default());
    }
}
