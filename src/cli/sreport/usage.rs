//! What the reports count: each job's TRES-seconds inside the report period, summed per
//! (user, account) association, and what the cluster could have given over the period.
//!
//! Slurm's slurmdbd rolls usage up by the hour and sreport reads the hours of its period,
//! which is cut to whole hours: a job counts for the seconds it overlapped that period, as
//! here. Down, planned-down and planned (reserved) time are never recorded by slurmlet, so
//! they are 0, as Slurm reports them on a cluster whose node never went down.

use crate::api::acct::{AcctJob, NO_VAL};

/// A trackable resource sreport can report on, as `--tres` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TresKind {
    /// `cpu`.
    Cpu,
    /// `mem` (MB).
    Mem,
    /// `node`.
    Node,
    /// `gres/gpu`.
    Gpu,
}

impl TresKind {
    /// The name sreport prints (`type/name`).
    pub fn name(self) -> &'static str {
        match self {
            TresKind::Cpu => "cpu",
            TresKind::Mem => "mem",
            TresKind::Node => "node",
            TresKind::Gpu => "gres/gpu",
        }
    }

    /// Reads one `--tres` entry (case does not matter, as in Slurm).
    pub fn parse(text: &str) -> Option<TresKind> {
        [TresKind::Cpu, TresKind::Mem, TresKind::Node, TresKind::Gpu]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(text))
    }

    /// How many of it `job` held.
    pub fn of_job(self, job: &AcctJob) -> u64 {
        let Some(t) = job.alloc else { return 0 };
        match self {
            TresKind::Cpu => t.cpus.into(),
            TresKind::Mem => t.mem_mb,
            TresKind::Node => 1,
            TresKind::Gpu => t.gpus.into(),
        }
    }
}

/// What the cluster has of each TRES (Slurm's registered TRES counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capacity {
    /// CPUs.
    pub cpus: u64,
    /// Memory, MB.
    pub mem_mb: u64,
    /// Nodes.
    pub nodes: u64,
    /// Whole GPUs.
    pub gpus: u64,
}

impl Capacity {
    /// The count of `kind`.
    pub fn count(&self, kind: TresKind) -> u64 {
        match kind {
            TresKind::Cpu => self.cpus,
            TresKind::Mem => self.mem_mb,
            TresKind::Node => self.nodes,
            TresKind::Gpu => self.gpus,
        }
    }
}

/// The seconds `job` ran inside `[start, end)` (a job still running runs until `now`).
pub fn overlap(job: &AcctJob, (start, end): (u64, u64), now: u64) -> u64 {
    if job.alloc.is_none() || job.start == 0 || job.start == NO_VAL {
        return 0;
    }
    let job_end = if job.end == 0 { now } else { job.end };
    job_end.min(end).saturating_sub(job.start.max(start))
}

/// One association's usage: a user in an account (`user` `None`: the account itself, with
/// the usage of all its users).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssocUse {
    /// The account.
    pub account: String,
    /// The user, for a user's association.
    pub user: Option<String>,
    /// TRES-seconds of each kind asked for, in the order of the report's TRES.
    pub secs: Vec<u64>,
}

/// The usage of each (user, account) pair that used anything in `period`, in no order.
pub fn user_usage(jobs: &[AcctJob], kinds: &[TresKind], period: (u64, u64), now: u64) -> Vec<AssocUse> {
    let mut out: Vec<AssocUse> = Vec::new();
    for job in jobs {
        let secs = overlap(job, period, now);
        if secs == 0 {
            continue;
        }
        let at = match out.iter().position(|a| a.account == job.account && a.user.as_deref() == Some(&job.user)) {
            Some(i) => i,
            None => {
                let fresh = vec![0; kinds.len()];
                out.push(AssocUse { account: job.account.clone(), user: Some(job.user.clone()), secs: fresh });
                out.len() - 1
            }
        };
        for (total, kind) in out[at].secs.iter_mut().zip(kinds) {
            *total += secs * kind.of_job(job);
        }
    }
    out
}

/// The sum of `rows`' usage, TRES by TRES.
pub fn sum<'a>(rows: impl Iterator<Item = &'a AssocUse>, n: usize) -> Vec<u64> {
    rows.fold(vec![0; n], |mut acc, r| {
        acc.iter_mut().zip(&r.secs).for_each(|(a, s)| *a += s);
        acc
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::Tres;

    fn job(user: &str, account: &str, cpus: u32, gpus: u32, start: u64, end: u64) -> AcctJob {
        AcctJob {
            user: user.into(),
            account: account.into(),
            start,
            end,
            alloc: Some(Tres { cpus, gpus, mem_mb: 1000, shards: 0, nodes: 1 }),
            ..AcctJob::default()
        }
    }

    #[test]
    fn a_job_counts_only_the_seconds_inside_the_period() {
        let j = job("a", "x", 2, 1, 100, 500);
        assert_eq!(overlap(&j, (0, 1000), 2000), 400);
        assert_eq!(overlap(&j, (200, 300), 2000), 100);
        assert_eq!(overlap(&j, (500, 900), 2000), 0);
        let running = job("a", "x", 2, 1, 100, 0);
        assert_eq!(overlap(&running, (0, 1000), 600), 500);
        let never = AcctJob { alloc: None, ..j };
        assert_eq!(overlap(&never, (0, 1000), 2000), 0);
    }

    #[test]
    fn usage_is_summed_per_user_and_account_and_tres() {
        let jobs = [job("a", "x", 2, 1, 1, 101), job("a", "x", 1, 0, 50, 150), job("b", "x", 4, 2, 1, 11)];
        let rows = user_usage(&jobs, &[TresKind::Cpu, TresKind::Gpu], (0, 1000), 2000);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].secs, vec![300, 100]);
        assert_eq!(rows[1].secs, vec![40, 20]);
        assert_eq!(sum(rows.iter(), 2), vec![340, 120]);
    }
}
