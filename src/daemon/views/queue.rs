//! `GET /slurmlet/v1/queue?pending=N`: the board's queue: the running jobs, the longest
//! running first, and the first `N` pending ones in the order the scheduling pass takes
//! them (priority, then submit order), the held ones after, each with its pending reason
//! and its expected start as `squeue --start` shows it. Only the jobs listed are converted:
//! a queue of ten thousand costs a walk over their ids, not ten thousand entries.

use crate::api::activity::{QueueJob, QueueResponse};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::scheduling::core::Core;

/// How many pending jobs the queue lists when the caller does not say.
pub const DEFAULT_PENDING: u32 = 200;

/// The queue as `caller` may see it, with at most `pending` pending jobs, without the
/// owners' names.
pub fn listing(core: &Core, caller: Caller, pending: usize) -> QueueResponse {
    let config = &core.config;
    let visible = |job: &&Job| caller.may_see(job, config);
    let mut running: Vec<&Job> = core.holding().filter(visible).collect();
    running.sort_by_key(|j| (j.start_time, j.id));
    // The scheduling pass's order, then the held jobs (which it passes over), by id.
    let queued = core.index.queue.iter().map(|(_, id)| &core.jobs[id]);
    let held = core.jobs.values().filter(|j| j.state() == JobState::Pending && !Core::queued(j));
    let mut pending_total = 0u32;
    let mut listed = Vec::new();
    for job in queued.chain(held).filter(visible) {
        pending_total += 1;
        if listed.len() < pending {
            listed.push(entry(job));
        }
    }
    QueueResponse {
        running_total: running.len() as u32,
        running: running.into_iter().map(entry).collect(),
        pending: listed,
        pending_total,
        ..Default::default()
    }
}

/// `job` as the board lists it, without its owner's name.
fn entry(job: &Job) -> QueueJob {
    let state = job.state();
    let reason =
        (state == JobState::Pending && !job.reason.is_empty() && job.reason != "None").then(|| job.reason.to_string());
    let start = job.shown_start();
    QueueJob {
        job: job.display_id(),
        job_id: job.id,
        name: job.name.to_string(),
        user_name: String::new(),
        user_id: job.uid,
        partition: job.partition.to_string(),
        state: state.name().to_string(),
        reason,
        submit_time: job.submit_time as i64,
        start_time: (start > 0).then_some(start as i64),
        time_limit: job.limit_secs(),
        gpus: job.gpus.iter().map(|g| g.index).collect(),
        gpu_count: job.req.gpus,
        shards: job.req.shards,
        cpus: job.req.cpus,
        priority: if job.held { 0 } else { job.priority },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_job_shows_its_reason_and_begin_time_a_running_one_its_gpus() {
        let pending = Job {
            id: 4,
            name: "train".into(),
            state: Some(JobState::Pending),
            reason: "Resources".into(),
            submit_time: 100,
            begin_time: 500,
            time_limit: Some(10),
            req: crate::daemon::model::job::Resources { cpus: 2, mem_mb: 0, gpus: 1, shards: 0, gpu_type: None },
            ..Default::default()
        };
        let e = entry(&pending);
        assert_eq!((e.job.as_str(), e.state.as_str(), e.reason.as_deref()), ("4", "PENDING", Some("Resources")));
        assert_eq!((e.start_time, e.time_limit, e.gpu_count, e.cpus), (Some(500), Some(600), 1, 2));
        assert!(e.gpus.is_empty());
        let running = Job {
            state: Some(JobState::Running),
            reason: "None".into(),
            start_time: 200,
            gpus: vec![crate::gpu::Gpu::nvidia(1)],
            ..pending
        };
        let e = entry(&running);
        assert_eq!((e.reason, e.start_time, e.gpus), (None, Some(200), vec![1]));
    }
}
