//! Per-user limits (`[limits]` in the configuration): how many jobs one user may run and
//! have queued, and how many GPUs they may hold at once, with Slurm's pending reasons and
//! submit errors. With no limit on running jobs or GPUs set, scheduling passes skip them;
//! the queued jobs of each user are counted as they come and go ([`Active`]).

use crate::config::UserLimits;
use crate::daemon::model::job::Job;
use crate::daemon::model::refusal::{Kind, Refusal};
use std::collections::HashMap;

/// What one user holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Running jobs.
    pub jobs: u32,
    /// GPUs of those jobs.
    pub gpus: u32,
}

impl Held {
    /// Counts `job` in.
    pub fn add(&mut self, job: &Job) {
        self.jobs += 1;
        self.gpus += job.req.gpus;
    }
}

/// What each user's running jobs hold, by uid.
pub fn held<'a>(running: impl Iterator<Item = &'a Job>) -> HashMap<u32, Held> {
    let mut by_user: HashMap<u32, Held> = HashMap::new();
    for job in running {
        by_user.entry(job.uid).or_default().add(job);
    }
    by_user
}

/// How many jobs each user has pending, running or being submitted, in all and in each
/// QOS, kept up to date as jobs are staged, end, or fail to be stored: a submit checks it
/// without looking at every job.
#[derive(Debug, Default)]
pub struct Active {
    by_user: HashMap<u32, u32>,
    by_qos: HashMap<(String, u32), u32>,
}

impl Active {
    /// Counts a job of `uid` in QOS `qos` in.
    pub fn add(&mut self, uid: u32, qos: &str) {
        *self.by_user.entry(uid).or_default() += 1;
        *self.by_qos.entry((qos.to_string(), uid)).or_default() += 1;
    }

    /// Counts a job of `uid` in QOS `qos` out (it ended, or was never stored).
    pub fn remove(&mut self, uid: u32, qos: &str) {
        if let Some(n) = self.by_user.get_mut(&uid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_user.remove(&uid);
            }
        }
        let key = (qos.to_string(), uid);
        if let Some(n) = self.by_qos.get_mut(&key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_qos.remove(&key);
            }
        }
    }

    /// The jobs of `uid`.
    pub fn of(&self, uid: u32) -> u32 {
        self.by_user.get(&uid).copied().unwrap_or(0)
    }

    /// The jobs of `uid` in QOS `qos`.
    pub fn in_qos(&self, uid: u32, qos: &str) -> u32 {
        self.by_qos.get(&(qos.to_string(), uid)).copied().unwrap_or(0)
    }
}

/// Slurm's pending reason when `job` would take its user past a limit, given what the
/// user holds.
pub fn blocked(limits: &UserLimits, held: Held, job: &Job) -> Option<&'static str> {
    if limits.max_running_jobs_per_user.is_some_and(|max| held.jobs >= max) {
        return Some("QOSMaxJobsPerUserLimit");
    }
    if limits.max_gpus_per_user.is_some_and(|max| job.req.gpus > 0 && held.gpus + job.req.gpus > max) {
        return Some("QOSMaxGRESPerUser");
    }
    None
}

/// Slurm's refusal of a submit past a limit (`ESLURM_ACCOUNTING_POLICY`), its description
/// the limit's pending reason and why.
pub fn policy_refusal(reason: &str, why: String) -> Refusal {
    Refusal {
        kind: Kind::Invalid,
        description: format!("{reason}: {why}"),
        number: crate::api::types::errno::ACCOUNTING_POLICY,
        error: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)".into(),
        source: "slurm_submit_batch_job()".into(),
    }
}

/// Slurm's refusal of a submit that can never run under the limits, or that passes the
/// submit limit: `active` is how many pending and running jobs the user has.
pub fn check_submit(limits: &UserLimits, job: &Job, active: u32) -> Result<(), Refusal> {
    let refuse = policy_refusal;
    if let Some(max) = limits.max_gpus_per_user.filter(|&max| job.req.gpus > max) {
        return Err(refuse(
            "QOSMaxGRESPerUser",
            format!("the job asks for {} GPUs; a user may hold {max} at once, so it could never start", job.req.gpus),
        ));
    }
    if let Some(max) = limits.max_submitted_jobs_per_user.filter(|&max| active >= max) {
        return Err(refuse(
            "QOSMaxSubmitJobPerUserLimit",
            format!("you have {active} jobs pending or running; the limit is {max} per user"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(uid: u32, gpus: u32) -> Job {
        Job {
            uid,
            req: crate::daemon::model::job::Resources { cpus: 1, mem_mb: 0, gpus, shards: 0, gpu_type: None },
            ..Default::default()
        }
    }

    #[test]
    fn limits_block_by_jobs_and_gpus_and_refuse_what_can_never_run() {
        let limits = UserLimits {
            max_running_jobs_per_user: Some(2),
            max_submitted_jobs_per_user: Some(3),
            max_gpus_per_user: Some(4),
        };
        let running = [job(7, 3), job(8, 1)];
        let held = held(running.iter());
        assert_eq!(held[&7], Held { jobs: 1, gpus: 3 });
        assert_eq!(blocked(&limits, held[&7], &job(7, 1)), None);
        assert_eq!(blocked(&limits, held[&7], &job(7, 2)), Some("QOSMaxGRESPerUser"));
        assert_eq!(blocked(&limits, held[&7], &job(7, 0)), None, "a CPU job needs no GPU room");
        assert_eq!(blocked(&limits, Held { jobs: 2, gpus: 0 }, &job(7, 0)), Some("QOSMaxJobsPerUserLimit"));
        assert!(check_submit(&limits, &job(7, 1), 2).is_ok());
        let e = check_submit(&limits, &job(7, 1), 3).unwrap_err();
        assert!(e.description.starts_with("QOSMaxSubmitJobPerUserLimit"), "{e:?}");
        let e = check_submit(&limits, &job(7, 5), 0).unwrap_err();
        assert!(e.description.starts_with("QOSMaxGRESPerUser"), "{e:?}");
        assert!(check_submit(&UserLimits::default(), &job(7, 99), 1000).is_ok());
    }

    #[test]
    fn active_jobs_are_counted_per_user() {
        let mut a = Active::default();
        a.add(7, "normal");
        a.add(7, "high");
        a.add(8, "normal");
        a.remove(7, "normal");
        a.remove(9, "normal");
        assert_eq!((a.of(7), a.of(8), a.of(9)), (1, 1, 0));
        assert_eq!((a.in_qos(7, "high"), a.in_qos(7, "normal")), (1, 0));
        a.remove(7, "high");
        a.remove(7, "high");
        assert_eq!(a.of(7), 0);
    }
}
