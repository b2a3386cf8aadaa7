//! The limits of a job's QOS (`[qos.NAME]`): what one user's running jobs in it may hold
//! and how many may run (`max_tres_per_user`, `max_jobs_per_user`), what all its running
//! jobs may hold (`grp_tres`), its jobs' longest time limit (`max_wall`) and how many of a
//! user's jobs it may hold pending and running (`max_submit_jobs_per_user`), with Slurm's
//! pending reasons and submit errors. A job that could never run under its QOS (it alone
//! asks for more than a limit allows, or for a longer time than `max_wall`) is refused at
//! submit, whatever `DenyOnLimit` says; one over a limit only for now waits, or is refused
//! under `DenyOnLimit`, as Slurm's.

use crate::config::priority::Tres;
use crate::config::qos::{Qos, TresLimits};
use crate::daemon::model::job::Job;
use crate::daemon::model::refusal::Refusal;
use std::collections::HashMap;

/// What some running jobs hold, in the units QOS limits count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Jobs.
    pub jobs: u32,
    /// CPUs.
    pub cpus: u64,
    /// Memory, MB.
    pub mem_mb: u64,
    /// GPUs, a shard counting its part of one.
    pub gpus: f64,
}

impl Tally {
    /// What `job` holds, on a node of `shards_per_gpu` shards a GPU.
    pub fn of(job: &Job, shards_per_gpu: u32) -> Tally {
        let gpus = super::priority::billing::amount(&job.req, Tres::Gpu, shards_per_gpu);
        Tally { jobs: 1, cpus: job.req.cpus as u64, mem_mb: job.req.mem_mb, gpus }
    }

    /// Counts `other` in.
    pub fn add(&mut self, other: Tally) {
        self.jobs += other.jobs;
        self.cpus += other.cpus;
        self.mem_mb += other.mem_mb;
        self.gpus += other.gpus;
    }
}

/// What each QOS's running jobs hold, in all and per user.
#[derive(Debug, Default)]
pub struct QosHeld {
    /// By QOS.
    pub by_qos: HashMap<String, Tally>,
    /// By QOS and user.
    pub by_user: HashMap<(String, u32), Tally>,
}

impl QosHeld {
    /// What `running` hold.
    pub fn of<'a>(running: impl Iterator<Item = &'a Job>, shards_per_gpu: u32) -> QosHeld {
        let mut held = QosHeld::default();
        for job in running {
            held.add(job, shards_per_gpu);
        }
        held
    }

    /// Counts `job` in (it starts).
    pub fn add(&mut self, job: &Job, shards_per_gpu: u32) {
        let t = Tally::of(job, shards_per_gpu);
        self.by_qos.entry(job.qos.to_string()).or_default().add(t);
        self.by_user.entry((job.qos.to_string(), job.uid)).or_default().add(t);
    }
}

/// Whether `qos` limits starts at all (the pass then counts what its jobs hold).
pub fn limits_starts(qos: &Qos) -> bool {
    qos.max_jobs_per_user.is_some() || !qos.max_tres_per_user.is_empty() || !qos.grp_tres.is_empty()
}

/// The first limit of `limits` that `held` plus `job` would pass, as Slurm names it for a
/// user's limits (`per_user`) or the QOS's (`Grp`).
fn over(limits: &TresLimits, held: Tally, job: Tally, per_user: bool) -> Option<&'static str> {
    let past =
        |limit: Option<u64>, held: f64, asks: f64| asks > 0.0 && limit.is_some_and(|l| held + asks > l as f64 + 1e-9);
    let reasons = if per_user {
        ["QOSMaxGRESPerUser", "QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxNodePerUserLimit"]
    } else {
        ["QOSGrpGRES", "QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit"]
    };
    if past(limits.gpus, held.gpus, job.gpus) {
        return Some(reasons[0]);
    }
    if past(limits.cpu, held.cpus as f64, job.cpus as f64) {
        return Some(reasons[1]);
    }
    if past(limits.mem_mb, held.mem_mb as f64, job.mem_mb as f64) {
        return Some(reasons[2]);
    }
    // One node: a limit of 0 nodes holds every job back.
    if limits.nodes == Some(0) {
        return Some(reasons[3]);
    }
    None
}

/// Slurm's pending reason when `job` may not start now under `qos`, given what its QOS's
/// running jobs hold, in all (`group`) and its user's (`user`).
pub fn blocked(qos: &Qos, user: Tally, group: Tally, job: &Job, shards_per_gpu: u32) -> Option<&'static str> {
    if qos.max_wall_minutes.is_some_and(|max| job.time_limit.is_none_or(|t| t > max)) {
        return Some("QOSMaxWallDurationPerJobLimit");
    }
    if qos.max_jobs_per_user.is_some_and(|max| user.jobs >= max) {
        return Some("QOSMaxJobsPerUserLimit");
    }
    let asks = Tally::of(job, shards_per_gpu);
    over(&qos.max_tres_per_user, user, asks, true).or_else(|| over(&qos.grp_tres, group, asks, false))
}

/// Slurm's refusal of a submit under `qos` (named `name`): one that could never run, or,
/// under `DenyOnLimit`, one over a limit now; `active` is how many of the user's jobs in
/// the QOS are pending or running, `held` what its running ones hold, `group` what all of
/// the QOS's do.
pub fn check_submit(
    name: &str,
    qos: &Qos,
    job: &Job,
    active: u32,
    held: (Tally, Tally),
    shards_per_gpu: u32,
) -> Result<(), Refusal> {
    let refuse = super::limits::policy_refusal;
    if let Some(max) = qos.max_wall_minutes.filter(|&max| job.time_limit.is_some_and(|t| t > max)) {
        return Err(refuse(
            "QOSMaxWallDurationPerJobLimit",
            format!(
                "the job asks for {} minutes; QOS {name} allows {max} at most, so it could never start",
                job.time_limit.unwrap_or_default()
            ),
        ));
    }
    let asks = Tally::of(job, shards_per_gpu);
    for (limits, per_user, whose) in
        [(&qos.max_tres_per_user, true, "a user's jobs"), (&qos.grp_tres, false, "all its jobs")]
    {
        if let Some(reason) = over(limits, Tally::default(), asks, per_user) {
            return Err(refuse(
                reason,
                format!(
                    "the job alone asks for more than QOS {name} lets {whose} hold ({}), so it could never start",
                    limits.text()
                ),
            ));
        }
    }
    if let Some(max) = qos.max_submit_jobs_per_user.filter(|&max| active >= max) {
        return Err(refuse(
            "QOSMaxSubmitJobPerUserLimit",
            format!("you have {active} jobs pending or running in QOS {name}; the limit is {max} per user"),
        ));
    }
    if qos.deny_on_limit {
        if let Some(reason) = blocked(qos, held.0, held.1, job, shards_per_gpu) {
            return Err(refuse(reason, format!("QOS {name} has DenyOnLimit and the job is over its limit now")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::Resources;

    fn job(gpus: u32, minutes: Option<u32>) -> Job {
        Job {
            uid: 7,
            qos: "q".into(),
            req: Resources { cpus: 1, gpus, ..Default::default() },
            time_limit: minutes,
            ..Default::default()
        }
    }

    fn qos(text: &str) -> Qos {
        let tables: toml::Table = toml::from_str(&format!("[q]\n{text}")).unwrap();
        crate::config::qos::QosList::read(tables).unwrap().get("q").unwrap().clone()
    }

    #[test]
    fn a_user_at_their_gpu_limit_waits_with_slurms_reason() {
        let q = qos("max_tres_per_user = \"gres/gpu=2\"\nmax_jobs_per_user = 3");
        let running = [job(1, None), job(1, None)];
        let held = QosHeld::of(running.iter(), 0);
        let user = held.by_user[&("q".to_string(), 7)];
        assert_eq!(user, Tally { jobs: 2, cpus: 2, mem_mb: 0, gpus: 2.0 });
        assert_eq!(blocked(&q, user, held.by_qos["q"], &job(1, None), 0), Some("QOSMaxGRESPerUser"));
        assert_eq!(blocked(&q, user, held.by_qos["q"], &job(0, None), 0), None, "a CPU job needs no GPU room");
        let three = Tally { jobs: 3, ..user };
        assert_eq!(blocked(&q, three, three, &job(0, None), 0), Some("QOSMaxJobsPerUserLimit"));
    }

    #[test]
    fn the_qos_as_a_whole_and_its_longest_time_are_limits_too() {
        let q = qos("grp_tres = \"gres/gpu=3\"\nmax_wall = \"1:00:00\"");
        let group = Tally { jobs: 2, gpus: 3.0, ..Default::default() };
        assert_eq!(blocked(&q, Tally::default(), group, &job(1, Some(10)), 0), Some("QOSGrpGRES"));
        assert_eq!(
            blocked(&q, Tally::default(), Tally::default(), &job(1, Some(61)), 0),
            Some("QOSMaxWallDurationPerJobLimit")
        );
    }

    #[test]
    fn a_job_that_could_never_run_is_refused_and_deny_on_limit_refuses_one_over_it_now() {
        let q = qos("max_tres_per_user = \"gres/gpu=2\"\nmax_submit_jobs_per_user = 5\nmax_wall = \"60\"");
        let e = check_submit("q", &q, &job(3, Some(10)), 0, Default::default(), 0).unwrap_err();
        assert!(e.description.starts_with("QOSMaxGRESPerUser: the job alone asks"), "{e:?}");
        let e = check_submit("q", &q, &job(1, Some(90)), 0, Default::default(), 0).unwrap_err();
        assert!(e.description.starts_with("QOSMaxWallDurationPerJobLimit"), "{e:?}");
        let e = check_submit("q", &q, &job(1, Some(10)), 5, Default::default(), 0).unwrap_err();
        assert!(e.description.starts_with("QOSMaxSubmitJobPerUserLimit"), "{e:?}");
        let at_limit = (Tally { jobs: 2, gpus: 2.0, ..Default::default() }, Tally::default());
        assert!(check_submit("q", &q, &job(1, Some(10)), 2, at_limit, 0).is_ok(), "it waits instead");
        let deny = qos("max_tres_per_user = \"gres/gpu=2\"\nflags = [\"DenyOnLimit\"]");
        let e = check_submit("q", &deny, &job(1, None), 2, at_limit, 0).unwrap_err();
        assert_eq!(e.error, "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)");
        assert!(e.description.starts_with("QOSMaxGRESPerUser: QOS q has DenyOnLimit"), "{e:?}");
    }
}
