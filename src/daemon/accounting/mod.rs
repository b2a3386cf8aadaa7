//! A job as Slurm's accounting reports it: its state, times and exit codes as slurmdbd
//! records them, the batch script's step, and whether it matches a sacct query.
//!
//! Its parts: the history sacct reads ([`history`]) and slurmrestd's accounting records
//! ([`dbjson`]); each step's record is the model's ([`crate::daemon::model::step_record`]),
//! and the accounting endpoints are served by `http/slurmdb.rs`.

pub mod dbjson;
pub mod history;

use crate::api::acct::{AcctJob, AcctStep, HistoryQuery, StepId, Tres, NO_VAL};
use crate::config::Config;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::step_record::{state_of, StepRecord};
use crate::stepd::EndCause;

/// The state accounting gives `job`: a cancelled job still ending is `CANCELLED` already
/// (Slurm records the cancel at once); one ending otherwise is still `RUNNING`.
pub fn state(job: &Job) -> JobState {
    match job.state() {
        JobState::Completing if job.cancelled_by.is_some() => JobState::Cancelled,
        JobState::Completing => JobState::Running,
        s => s,
    }
}

/// When `job` became eligible to start; 0 while it is held.
pub fn eligible(job: &Job) -> u64 {
    if job.state() == JobState::Pending && job.held {
        0
    } else {
        job.begin_time.max(job.submit_time)
    }
}

/// Its start: 0 until it starts, [`NO_VAL`] once it ended without starting.
pub fn start(job: &Job) -> u64 {
    if job.start_time > 0 {
        job.start_time
    } else if state(job).is_finished() {
        NO_VAL
    } else {
        0
    }
}

/// Its end (0 while it has none).
pub fn end(job: &Job) -> u64 {
    if job.state().is_finished() {
        job.end_time
    } else {
        0
    }
}

/// The raw exit status Slurm records for the job itself: the batch script's for a job that
/// ended by itself, 0 for one cancelled or timed out.
pub fn exit_status(job: &Job) -> i32 {
    // Slurm's accounting records a job that its time limit or a cancel ended at that moment,
    // before its script's status is known: `0:0` on the job's row (its batch step's row has
    // the status).
    if matches!(job.state(), JobState::Timeout | JobState::Cancelled) {
        return 0;
    }
    match job.exit_pair() {
        (_, signal) if signal != 0 => signal as i32,
        (exit, _) => (exit as i32) << 8,
    }
}

/// The reason accounting shows: why it waited before it started (or why it waits).
fn reason(job: &Job) -> String {
    let reason = if job.state() == JobState::Pending { &job.reason } else { &job.reason_prev };
    if reason.is_empty() {
        "None".into()
    } else {
        reason.to_string()
    }
}

/// `job` with its recorded srun `steps`, as accounting reports it; `user` and `group` are
/// its owner's names.
pub fn acct_job(job: &Job, steps: &[StepRecord], config: &Config, user: &str, group: &str) -> AcctJob {
    let started = job.start_time > 0;
    let expand = |pattern: &str| match pattern {
        "" => String::new(),
        p => crate::daemon::model::output_path::output_path(job, p, &config.node_name).display().to_string(),
    };
    let node = |started: bool| if started { config.node_name.clone() } else { "None assigned".to_string() };
    let mut acct_steps: Vec<AcctStep> = batch_step(job, config).into_iter().collect();
    acct_steps.extend(steps.iter().map(|s| srun_step(s, job, config)));
    let state = state(job);
    AcctJob {
        id: job.id,
        array_job_id: job.array.map_or(0, |a| a.job_id),
        array_task_id: job.array.map(|a| a.task_id),
        name: job.name.to_string(),
        uid: job.uid,
        user: user.to_string(),
        gid: job.gid,
        group: group.to_string(),
        partition: job.partition.to_string(),
        account: job.account.to_string(),
        qos: if job.qos.is_empty() { "normal".into() } else { job.qos.to_string() },
        comment: job.comment.to_string(),
        admin_comment: job.admin_comment.to_string(),
        reservation: job.reservation.to_string(),
        wckey: job.wckey.to_string(),
        cwd: job.cwd.to_string(),
        cluster: config.cluster_name.clone(),
        state: state.name().to_string(),
        cancelled_by: job.cancelled_by.filter(|_| state == JobState::Cancelled),
        reason: reason(job),
        submit: job.submit_time,
        eligible: eligible(job),
        start: start(job),
        end: end(job),
        time_limit: job.time_limit,
        req: Tres { cpus: job.req.cpus, mem_mb: job.req.mem_mb, gpus: job.req.gpus, shards: job.req.shards, nodes: 1 },
        alloc: started.then(|| given(job)),
        mem_per_cpu: job.mem_per_cpu.is_some(),
        gpu_indices: if started { job.gpus.iter().map(|g| g.index).collect() } else { Vec::new() },
        nodes: node(started),
        exit_status: exit_status(job),
        derived_status: steps.iter().filter_map(|s| s.exit_status).max().unwrap_or(0),
        priority: if job.held { 0 } else { job.priority },
        held: job.held,
        stdout: job.stdout.to_string(),
        stdout_expanded: expand(&job.stdout),
        stderr: job.stderr.to_string(),
        stderr_expanded: expand(&job.stderr),
        stdin: job.stdin.to_string(),
        stdin_expanded: expand(&job.stdin),
        show_full: true,
        steps: acct_steps,
    }
}

/// The batch script's step of a batch job that started: its state and status are those of
/// the script itself (killed by a signal: `CANCELLED`).
fn batch_step(job: &Job, config: &Config) -> Option<AcctStep> {
    if job.interactive || job.start_time == 0 {
        return None;
    }
    let (state, status) = if !job.state().is_finished() {
        (JobState::Running, None)
    } else {
        match (job.end_cause, job.script_status()) {
            (Some(EndCause::LaunchFailed), _) => (JobState::Failed, Some(1 << 8)),
            (_, Some(ws)) => (state_of(ws), Some(ws)),
            // Lost with its supervisor.
            (_, None) => (JobState::NodeFail, Some(0)),
        }
    };
    Some(AcctStep {
        id: StepId::Batch,
        name: "batch".into(),
        state: state.name().into(),
        cancelled_by: None,
        start: job.start_time,
        end: end(job),
        exit_status: status,
        ntasks: 1,
        alloc: given(job),
        time_limit: None,
        usage: job.batch_usage,
        gpu_use: job.batch_gpu_use,
        nodes: config.node_name.clone(),
    })
}

/// What a started job was given: its CPUs and memory, and its whole GPUs or its shards.
fn given(job: &Job) -> Tres {
    let (gpus, shards) = job.given_gres();
    Tres { cpus: job.req.cpus, mem_mb: job.req.mem_mb, gpus, shards, nodes: 1 }
}

/// A recorded srun step of `job`.
fn srun_step(s: &StepRecord, job: &Job, config: &Config) -> AcctStep {
    let (gpus, shards) = job.step_gres(s.gpus);
    AcctStep {
        id: StepId::Number(s.step),
        name: s.name.clone(),
        state: s.state.name().into(),
        cancelled_by: s.cancelled_by,
        start: s.start,
        end: s.end,
        exit_status: s.exit_status,
        ntasks: s.ntasks,
        alloc: Tres { cpus: s.cpus, mem_mb: s.mem_mb, gpus, shards, nodes: 1 },
        time_limit: s.time_limit,
        usage: s.usage,
        gpu_use: s.gpu_use,
        nodes: config.node_name.clone(),
    }
}

/// Whether `job` is one of the jobs `q` asks for (the caller's right to see it aside), on
/// the node named `node`.
pub fn matches(job: &Job, q: &HistoryQuery, node: &str) -> bool {
    matches_job(job, q) && matches_more(job, q, node)
}

/// The filters sacct's less used options add.
fn matches_more(job: &Job, q: &HistoryQuery, node: &str) -> bool {
    let any = |list: &Option<Vec<String>>, value: &str| {
        list.as_ref().is_none_or(|l| l.iter().any(|v| v.eq_ignore_ascii_case(value)))
    };
    let within = |range: Option<(u32, u32)>, n: u32| range.is_none_or(|(min, max)| (min..=max).contains(&n));
    let qos = if job.qos.is_empty() { "normal" } else { job.qos.as_str() };
    any(&q.accounts, &job.account)
        && q.gids.as_ref().is_none_or(|g| g.contains(&job.gid))
        && any(&q.qos, qos)
        && any(&q.wckeys, &job.wckey)
        && any(&q.reasons, &reason(job))
        && q.nodes.as_ref().is_none_or(|n| job.start_time > 0 && n.iter().any(|n| n == node))
        && q.constraints.is_none()
        && within(q.cpus, job.req.cpus)
        && within(q.nnodes, 1)
        && within(q.time_limits, job.time_limit.unwrap_or(u32::MAX))
}

/// Whether `q` asks for the jobs of cluster `name` (with `-M`, only if it names it).
pub fn cluster_wanted(q: &HistoryQuery, name: &str) -> bool {
    q.clusters.as_ref().is_none_or(|c| c.iter().any(|c| c.eq_ignore_ascii_case(name)))
}

/// The filters of sacct's common options and the time window.
fn matches_job(job: &Job, q: &HistoryQuery) -> bool {
    if !q.selections.is_empty() && !q.selections.iter().any(|s| s.het_offset.is_none() && selects(s, job)) {
        return false;
    }
    if q.users.as_ref().is_some_and(|u| !u.contains(&job.uid)) {
        return false;
    }
    if q.names.as_ref().is_some_and(|n| !n.iter().any(|n| n.eq_ignore_ascii_case(&job.name))) {
        return false;
    }
    if q.partitions.as_ref().is_some_and(|p| !p.iter().any(|p| p.eq_ignore_ascii_case(&job.partition))) {
        return false;
    }
    match q.window {
        None => true,
        Some(window) => in_window(job, q, window),
    }
}

/// Whether `job` falls in the time window `[s, e)` as slurmdbd selects: with states, one of
/// them held during the window; else it was eligible (submitted, when jobs are named) before
/// the end and had not ended before the start.
fn in_window(job: &Job, q: &HistoryQuery, (s, e): (u64, u64)) -> bool {
    let state = state(job);
    let start = match start(job) {
        NO_VAL => 0,
        t => t,
    };
    let end = end(job);
    let eligible = eligible(job);
    match &q.states {
        Some(states) => states.iter().any(|wanted| match wanted.as_str() {
            "PENDING" => {
                // Waiting after the start of the window: it started, or ended unstarted, after
                // it, or it still waits.
                let waited = match (start, end) {
                    (0, 0) => state == JobState::Pending,
                    (0, end) => s < end,
                    (start, _) => s < start,
                };
                eligible != 0 && waited && e > eligible
            }
            "RUNNING" => start != 0 && (s < end || (end == 0 && state == JobState::Running)) && e > start,
            other => state.name() == other && end != 0 && (s..=e).contains(&end),
        }),
        None => {
            let before_end = if q.selections.is_empty() { eligible != 0 && eligible < e } else { job.submit_time < e };
            before_end && (end >= s || end == 0)
        }
    }
}

/// Whether `-j` entry `s` names `job`: its id, the id of the array it is a task of, or
/// `A_i` its task of array `A`.
pub fn selects(s: &crate::api::acct::Selection, job: &Job) -> bool {
    match (s.array_task, job.array) {
        (None, a) => s.job == job.id || a.is_some_and(|a| a.job_id == s.job),
        (Some(t), Some(a)) => a.job_id == s.job && a.task_id == t,
        (Some(_), None) => false,
    }
}

/// Only the steps of `job` that `q` names, when it names steps of that job and not the
/// job itself; `None`: the whole job.
pub fn only_steps(q: &HistoryQuery, job: &Job) -> Option<Vec<StepId>> {
    let mine: Vec<_> = q.selections.iter().filter(|s| selects(s, job)).collect();
    if mine.is_empty() || mine.iter().any(|s| s.step.is_none()) {
        None
    } else {
        Some(mine.iter().filter_map(|s| s.step).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::Selection;

    fn job(state: JobState) -> Job {
        Job { id: 7, state: Some(state), submit_time: 100, begin_time: 0, ..Default::default() }
    }

    fn q(states: Option<&[&str]>, window: (u64, u64)) -> HistoryQuery {
        HistoryQuery {
            states: states.map(|s| s.iter().map(|s| s.to_string()).collect()),
            window: Some(window),
            ..Default::default()
        }
    }

    #[test]
    fn finished_states_count_when_the_job_ended_in_the_window() {
        let mut j = job(JobState::Failed);
        j.start_time = 110;
        j.end_time = 120;
        assert!(matches(&j, &q(Some(&["FAILED"]), (115, 125)), "node1"));
        assert!(!matches(&j, &q(Some(&["COMPLETED"]), (115, 125)), "node1"));
        assert!(!matches(&j, &q(Some(&["FAILED"]), (121, 125)), "node1"));
        // Running during the window, whatever it is now.
        assert!(matches(&j, &q(Some(&["RUNNING"]), (105, 115)), "node1"));
        assert!(!matches(&j, &q(Some(&["RUNNING"]), (125, 130)), "node1"));
        // Without states: eligible before the end, not ended before the start.
        assert!(matches(&j, &q(None, (115, 200)), "node1"));
        assert!(!matches(&j, &q(None, (121, 200)), "node1"));
        assert!(!matches(&j, &q(None, (0, 100)), "node1"));
    }

    #[test]
    fn held_jobs_are_not_eligible_unless_named() {
        let mut j = job(JobState::Pending);
        j.held = true;
        assert!(!matches(&j, &q(None, (0, 200)), "node1"));
        let mut named = q(None, (0, 200));
        named.selections = vec![Selection { job: 7, array_task: None, het_offset: None, step: None }];
        assert!(matches(&j, &named, "node1"));
        named.selections[0].array_task = Some(1);
        assert!(!matches(&j, &named, "node1"), "no array task of a job that is not an array");
    }

    #[test]
    fn exit_statuses_of_jobs_and_batch_steps() {
        let mut j = job(JobState::Failed);
        j.start_time = 110;
        j.end_time = 120;
        j.end_cause = Some(EndCause::Exited);
        j.wait_status = Some(libc::SIGKILL);
        assert_eq!(exit_status(&j), libc::SIGKILL);
        let file = toml::from_str("node_name = \"node1\"\ngpus = 2\ncpus = 8\nmemory = 4096\n").unwrap();
        let config = Config::resolve(file, std::path::Path::new("test.toml")).unwrap();
        let b = batch_step(&j, &config).unwrap();
        assert_eq!((b.state.as_str(), b.exit_status), ("CANCELLED", Some(libc::SIGKILL)));
        j.state = Some(JobState::Timeout);
        j.end_cause = Some(EndCause::TimeLimit);
        // A script whose child the limit's SIGTERM ended first exits 143: still CANCELLED by it.
        let mut exited = j.clone();
        exited.wait_status = Some(143 << 8);
        let b = batch_step(&exited, &config).unwrap();
        assert_eq!((b.state.as_str(), b.exit_status), ("CANCELLED", Some(libc::SIGTERM)));
        j.wait_status = Some(libc::SIGTERM);
        assert_eq!(exit_status(&j), 0);
        assert_eq!(batch_step(&j, &config).unwrap().state, "CANCELLED");
    }
}
