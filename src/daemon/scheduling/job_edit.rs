//! Changing a job's fields (`scontrol update JobId=N Key=Value…`, slurmrestd's job update):
//! its time limit, partition, name, comment, nice value, and the resources of a pending job
//! (CPUs, memory, GPUs), with Slurm's rules and error texts.
//!
//! An update is checked as a submit is (the partition exists, the job still fits the node and
//! the per-user limits), so that it never makes a job unrunnable silently; it is applied whole
//! or not at all. A running job's supervisors learn a new time limit at once.
//!
//! A new field: add its `job_desc_msg` name to [`FIELDS`] and a branch to [`apply`].

use super::core::{Core, Effects};
use super::hold::{refused, QueueChange, UpdateError};
use crate::api::types::{errno, JobDescMsg};
use crate::config::Config;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::refusal::Refusal;
use std::cmp::Reverse;

/// The `job_desc_msg` fields [`apply`] changes.
pub const FIELDS: &[&str] = &[
    "time_limit",
    "partition",
    "name",
    "comment",
    "nice",
    "minimum_cpus",
    "cpus_per_task",
    "memory_per_node",
    "memory_per_cpu",
    "tres_per_node",
    "dependency",
];

/// One job update: the queue changes (hold, release, priority) and the fields of a job
/// description to change (those of [`FIELDS`]; the others are left unset).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Hold, release and priority, in order.
    pub queue: Vec<QueueChange>,
    /// The fields.
    pub fields: JobDescMsg,
}

impl Changes {
    /// Whether nothing is to change.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.fields == JobDescMsg::default()
    }
}

/// A submit check's refusal as an update's.
fn from_api(e: Refusal) -> UpdateError {
    UpdateError { code: e.number, message: e.error.into() }
}

/// Slurm's `ESLURM_INVALID_TASK_MEMORY`.
const INVALID_TASK_MEMORY: i32 = 2044;

/// Applies `fields` to `job` for `caller`, as Slurm's controller does: time limits may be
/// lowered by the owner, raised only by root or an operator (or, while the job is pending,
/// up to its partition's MaxTime); a negative nice value is theirs only; the partition and
/// the resources change only while the job is pending.
pub fn apply(job: &mut Job, fields: &JobDescMsg, caller: Caller, config: &Config) -> Result<(), UpdateError> {
    let privileged = caller.privileged(config);
    let pending = job.state() == JobState::Pending;
    let not_pending = || refused(errno::JOB_NOT_PENDING, "Job is no longer pending execution");
    super::submit::check_printable(&[
        ("the job name", fields.name.as_deref()),
        ("the comment", fields.comment.as_deref()),
        ("the gres (tres_per_node)", fields.tres_per_node.as_deref()),
    ])
    .map_err(from_api)?;
    super::submit::check_lengths(&[
        ("the job name", fields.name.as_deref(), super::submit::MAX_FIELD),
        ("the comment", fields.comment.as_deref(), super::submit::MAX_FIELD),
        ("the gres (tres_per_node)", fields.tres_per_node.as_deref(), super::submit::MAX_FIELD),
    ])
    .map_err(from_api)?;
    if let Some(name) = &fields.name {
        job.name = name.as_str().into();
    }
    if let Some(comment) = &fields.comment {
        job.comment = comment.as_str().into();
    }
    if let Some(partition) = fields.partition.as_deref().filter(|p| *p != job.partition.as_str()) {
        if !pending {
            return Err(not_pending());
        }
        if !config.partitions.iter().any(|p| p.name == partition) {
            return Err(refused(errno::INVALID_PARTITION_NAME, "Invalid partition name specified"));
        }
        job.partition = partition.into();
    }
    let resources = [
        fields.minimum_cpus.is_some(),
        fields.cpus_per_task.is_some(),
        fields.memory_per_node.is_some(),
        fields.memory_per_cpu.is_some(),
        fields.tres_per_node.is_some(),
    ];
    if resources.contains(&true) {
        if !pending {
            return Err(not_pending());
        }
        resize(job, fields, config)?;
    }
    if let Some(limit) = fields.time_limit.filter(|t| t.set || t.infinite) {
        let new = if limit.infinite { None } else { limit.get() };
        // INFINITE is past every limit.
        let minutes = |l: Option<u32>| l.map_or(u64::MAX, u64::from);
        let max_time = config.partitions.iter().find(|p| job.partition == p.name).and_then(|p| p.max_time);
        if new == job.time_limit {
        } else if privileged || minutes(new) < minutes(job.time_limit) || (pending && minutes(max_time) >= minutes(new))
        {
            job.time_limit = new;
        } else {
            return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
        }
    }
    if let Some(nice) = fields.nice.filter(|&n| n != job.nice) {
        if !privileged && nice < 0 {
            return Err(refused(errno::ACCESS_DENIED, "Access/permission denied"));
        }
        job.nice = nice;
    }
    Ok(())
}

/// The resources of pending `job` as `fields` change them, checked as a submit's are.
fn resize(job: &mut Job, fields: &JobDescMsg, config: &Config) -> Result<(), UpdateError> {
    let cpus_per_task = fields.cpus_per_task.map_or(job.cpus_per_task, |c| c.max(1));
    // As Slurm: the CPU count is at least what the tasks need.
    let floor = fields.minimum_cpus.unwrap_or(if fields.cpus_per_task.is_some() { 0 } else { job.req.cpus });
    let cpus = floor.max(job.ntasks.saturating_mul(cpus_per_task)).max(1);
    if cpus > config.cpus {
        return Err(refused(errno::REQUESTED_NODE_CONFIG_UNAVAILABLE, "Requested node configuration is not available"));
    }
    let (mem_mb, mem_per_cpu) = match (fields.memory_per_node.and_then(|m| m.get()), fields.memory_per_cpu) {
        (Some(0), _) => (config.memory, None),
        (Some(m), _) => (m, None),
        (None, Some(m)) => match m.get() {
            Some(m) => (m.saturating_mul(cpus as u64), Some(m)),
            None => (job.req.mem_mb, job.mem_per_cpu),
        },
        (None, None) => match job.mem_per_cpu {
            Some(m) => (m.saturating_mul(cpus as u64), Some(m)),
            None => (job.req.mem_mb, None),
        },
    };
    if mem_mb > config.memory {
        return Err(refused(INVALID_TASK_MEMORY, "Memory required by task is not available"));
    }
    let super::submit_gres::GpuRequest { gpus, shards, gpu_type } = match &fields.tres_per_node {
        None => {
            super::submit_gres::GpuRequest { gpus: job.req.gpus, shards: job.req.shards, gpu_type: job.req.gpu_type }
        }
        Some(tres) => {
            let asked = JobDescMsg {
                tres_per_node: Some(tres.clone()),
                tres_per_job: Some(job.tres_per_job.to_string()),
                ..Default::default()
            };
            super::submit_gres::requested_gres(&asked, config, job.ntasks).map_err(from_api)?
        }
    };
    if gpus as usize > config.gpus.len() {
        return Err(refused(errno::REQUESTED_NODE_CONFIG_UNAVAILABLE, "Requested node configuration is not available"));
    }
    let mut new = job.clone();
    new.req = crate::daemon::model::job::Resources { cpus, mem_mb, gpus, shards, gpu_type };
    super::limits::check_submit(&config.limits, &new, 0).map_err(from_api)?;
    job.req = new.req;
    job.mem_per_cpu = mem_per_cpu;
    if fields.cpus_per_task.is_some() {
        job.cpus_per_task = cpus_per_task;
        job.cpus_per_task_set = true;
    }
    if let Some(tres) = &fields.tres_per_node {
        job.tres_per_node = tres.as_str().into();
    }
    Ok(())
}

impl Core {
    /// The dependency text of pending `job` after `scontrol update Dependency=text` (empty
    /// text or `0`: none), checked as a submit's is; a job may not wait for itself.
    fn new_dependency(&self, job: &Job, text: &str) -> Result<String, UpdateError> {
        if job.state() != JobState::Pending {
            return Err(refused(errno::JOB_NOT_PENDING, "Job is no longer pending execution"));
        }
        let problem = || refused(errno::INVALID_DEPENDENCY, "Job dependency problem");
        let spec = crate::options::dependency::parse_dependency(text).map_err(|_| problem())?;
        if spec.items.is_empty() {
            return Ok(String::new());
        }
        let own = job.array.map_or(job.id, |a| a.job_id);
        if spec.items.iter().any(|i| i.job_id == Some(job.id) || i.job_id == Some(own)) {
            return Err(refused(errno::CIRCULAR_DEPENDENCY, "Circular job dependency"));
        }
        super::depend::on_submit(text, &self.lookup()).map_err(|_| problem())
    }

    /// Applies `changes` to job `id` for `caller`: all of them, or none when one is refused.
    /// The changed record is queued for the store, a running job's supervisors learn its new
    /// time limit, and a scheduling pass follows.
    pub fn update_job(&mut self, id: u32, changes: &Changes, caller: Caller) -> Result<Effects, UpdateError> {
        let Some(job) = self.jobs.get(&id) else {
            return Err(refused(errno::INVALID_JOB_ID, "Invalid job id specified"));
        };
        // Whose job it is, and whether it ended, are checked first.
        let mut new = super::hold::changed(job, &changes.queue, caller, &self.config)?;
        apply(&mut new, &changes.fields, caller, &self.config)?;
        if let Some(text) = &changes.fields.dependency {
            new.dependency = self.new_dependency(&new, text)?.as_str().into();
        }
        if changes.is_empty() {
            return Ok(Effects::default());
        }
        let limit_changed = new.time_limit != job.time_limit;
        if Self::queued(job) {
            self.index.queue.remove(&(Reverse(job.priority), id));
        }
        if Self::queued(&new) {
            self.index.queue.insert((Reverse(new.priority), id));
        }
        tracing::info!(job = id, uid = caller.uid, ?changes, "job updated");
        let durable = self.writer.update(&new);
        let running = new.state().holds_resources();
        self.track_dependency(&new);
        self.jobs.insert(id, new);
        if running && limit_changed {
            self.tell_supervisors(id);
        }
        Ok(Effects { durable: Some(durable), reschedule: true, ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    fn config() -> Config {
        let text = "cpus = 4\nmemory = 8000\ngpus = 2\n[[partitions]]\nname = \"short\"\ndefault = true\nmax_time = \"30\"\n[[partitions]]\nname = \"long\"\n";
        Config::resolve(toml::from_str(text).unwrap(), std::path::Path::new("test.toml")).unwrap()
    }
    fn job(state: JobState) -> Job {
        Job {
            id: 5,
            uid: 1000,
            state: Some(state),
            partition: "short".into(),
            time_limit: Some(20),
            ntasks: 1,
            cpus_per_task: 1,
            req: crate::daemon::model::job::Resources { cpus: 1, mem_mb: 0, gpus: 0, shards: 0, gpu_type: None },
            ..Default::default()
        }
    }
    const OWNER: Caller = Caller { uid: 1000, gid: 1000 };
    const ROOT: Caller = Caller { uid: 0, gid: 0 };

    fn limit(m: u32) -> JobDescMsg {
        JobDescMsg { time_limit: Some(NoVal::of(m)), ..Default::default() }
    }

    #[test]
    fn the_owner_lowers_a_time_limit_and_raises_it_only_while_pending_within_the_partition() {
        let c = config();
        let mut running = job(JobState::Running);
        apply(&mut running, &limit(10), OWNER, &c).unwrap();
        assert_eq!(running.time_limit, Some(10));
        let refused = apply(&mut running, &limit(15), OWNER, &c).unwrap_err();
        assert_eq!((refused.code, refused.message.as_ref()), (2002, "Access/permission denied"));
        apply(&mut running, &limit(600), ROOT, &c).unwrap();
        assert_eq!(running.time_limit, Some(600), "root may raise it past the partition's MaxTime");

        let mut pending = job(JobState::Pending);
        apply(&mut pending, &limit(30), OWNER, &c).unwrap();
        assert_eq!(pending.time_limit, Some(30));
        assert_eq!(apply(&mut pending, &limit(31), OWNER, &c).unwrap_err().code, errno::ACCESS_DENIED);
        let infinite = JobDescMsg { time_limit: Some(NoVal::infinite()), ..Default::default() };
        assert_eq!(apply(&mut pending, &infinite, OWNER, &c).unwrap_err().code, errno::ACCESS_DENIED);
        pending.partition = "long".into();
        apply(&mut pending, &infinite, OWNER, &c).unwrap();
        assert_eq!(pending.time_limit, None, "a partition without MaxTime takes INFINITE");
    }

    #[test]
    fn resources_and_partition_change_while_pending_only_and_must_fit() {
        let c = config();
        let mut pending = job(JobState::Pending);
        let fields = JobDescMsg {
            partition: Some("long".into()),
            minimum_cpus: Some(3),
            memory_per_cpu: Some(NoVal::of(100)),
            tres_per_node: Some("gres/gpu:2".into()),
            name: Some("renamed".into()),
            ..Default::default()
        };
        apply(&mut pending, &fields, OWNER, &c).unwrap();
        assert_eq!(&*pending.partition, "long");
        assert_eq!(
            pending.req,
            crate::daemon::model::job::Resources { cpus: 3, mem_mb: 300, gpus: 2, shards: 0, gpu_type: None }
        );
        assert_eq!((&*pending.name, &*pending.tres_per_node), ("renamed", "gres/gpu:2"));

        let cpt = JobDescMsg { cpus_per_task: Some(2), ..Default::default() };
        apply(&mut pending, &cpt, OWNER, &c).unwrap();
        assert_eq!((pending.req.cpus, pending.req.mem_mb), (2, 200), "memory per CPU follows the CPUs");

        let error = |fields: JobDescMsg| apply(&mut job(JobState::Pending), &fields, OWNER, &c).unwrap_err();
        assert_eq!(
            error(JobDescMsg { tres_per_node: Some("gres/gpu:3".into()), ..Default::default() }).message,
            "Requested node configuration is not available"
        );
        assert_eq!(
            error(JobDescMsg { tres_per_node: Some("gres/fpga:1".into()), ..Default::default() }).code,
            errno::INVALID_GRES
        );
        assert_eq!(error(JobDescMsg { minimum_cpus: Some(5), ..Default::default() }).code, 2014);
        assert_eq!(
            error(JobDescMsg { memory_per_node: Some(NoVal::of(9000)), ..Default::default() }).message,
            "Memory required by task is not available"
        );
        assert_eq!(
            error(JobDescMsg { partition: Some("nope".into()), ..Default::default() }).message,
            "Invalid partition name specified"
        );

        let mut running = job(JobState::Running);
        for fields in [
            JobDescMsg { partition: Some("long".into()), ..Default::default() },
            JobDescMsg { tres_per_node: Some("gres/gpu:1".into()), ..Default::default() },
            JobDescMsg { minimum_cpus: Some(2), ..Default::default() },
        ] {
            let e = apply(&mut running, &fields, OWNER, &c).unwrap_err();
            assert_eq!((e.code, e.message.as_ref()), (2073, "Job is no longer pending execution"));
        }
        apply(&mut running, &JobDescMsg { comment: Some("note".into()), ..Default::default() }, OWNER, &c).unwrap();
        assert_eq!(&*running.comment, "note");
    }

    #[test]
    fn only_root_lowers_the_nice_value_below_zero() {
        let c = config();
        let mut j = job(JobState::Pending);
        apply(&mut j, &JobDescMsg { nice: Some(10), ..Default::default() }, OWNER, &c).unwrap();
        assert_eq!(j.nice, 10);
        let negative = JobDescMsg { nice: Some(-5), ..Default::default() };
        assert_eq!(apply(&mut j, &negative, OWNER, &c).unwrap_err().code, errno::ACCESS_DENIED);
        apply(&mut j, &negative, ROOT, &c).unwrap();
        assert_eq!(j.nice, -5);
    }
}
