//! Which jobs squeue lists (`-j -u -p -n -t --start`) and in what order, for any
//! [`QueueJob`]: the daemon applies it to its own records, the client to `job_info`s.

use super::fields::QueueJob;
use crate::api::types::JobQuery;

/// The job states squeue accepts in `-t`, in the order of its error message.
pub const VALID_STATES: &[&str] = &[
    "PENDING",
    "RUNNING",
    "SUSPENDED",
    "COMPLETED",
    "CANCELLED",
    "FAILED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
    "COMPLETING",
    "CONFIGURING",
    "RESIZING",
    "RESV_DEL_HOLD",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "REVOKED",
    "SIGNALING",
    "SPECIAL_EXIT",
    "STAGE_OUT",
    "STOPPED",
];

/// Whether squeue hides jobs in `state` unless `-t` asks for them.
fn is_finished(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "CANCELLED"
            | "FAILED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "PREEMPTED"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "OUT_OF_MEMORY"
            | "SPECIAL_EXIT"
            | "REVOKED"
    )
}

/// Parses `-t`: long or short state names, any case, or `all`; returns the long names or
/// the offending word.
pub fn parse_states(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for word in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let upper = word.to_ascii_uppercase();
        if upper == "ALL" {
            out.push("ALL".to_string());
            continue;
        }
        let long = VALID_STATES.iter().find(|s| **s == upper || super::fields::short_state(s) == upper);
        match long {
            Some(s) => out.push(s.to_string()),
            None => return Err(word.to_string()),
        }
    }
    Ok(out)
}

/// Whether `job` is `id` or a task of array `id`.
pub fn matches_id<J: QueueJob + ?Sized>(job: &J, id: u32) -> bool {
    job.job_id() == id || (job.array_job_id() != 0 && job.array_job_id() == id)
}

/// Whether any of `jobs` has one of the query's ids (true when it names none): squeue
/// reports an invalid job id otherwise.
pub fn ids_found<'a, J: QueueJob + 'a>(query: &JobQuery, mut jobs: impl Iterator<Item = &'a J>) -> bool {
    query.job_ids.is_none() && query.array_tasks.is_none() || jobs.any(|j| named(query, j))
}

/// Whether `job` is one of the ids or array tasks of `-j`.
fn named<J: QueueJob + ?Sized>(query: &JobQuery, job: &J) -> bool {
    query.job_ids.iter().flatten().any(|&id| matches_id(job, id))
        || query.array_tasks.iter().flatten().any(|&[a, t]| job.array_job_id() == a && job.array_task_id() == Some(t))
}

/// Whether `job` passes every filter of `query`.
pub fn matches<J: QueueJob + ?Sized>(query: &JobQuery, job: &J) -> bool {
    if (query.job_ids.is_some() || query.array_tasks.is_some()) && !named(query, job) {
        return false;
    }
    if let Some(users) = &query.users {
        if !users.contains(&job.user_id()) {
            return false;
        }
    }
    if let Some(parts) = &query.partitions {
        if !job.partition().split(',').any(|p| parts.iter().any(|q| q == p)) {
            return false;
        }
    }
    if let Some(names) = &query.names {
        if !names.iter().any(|n| n == job.name()) {
            return false;
        }
    }
    let state = job.state();
    if query.pending_only && state != "PENDING" {
        return false;
    }
    match &query.states {
        Some(states) => states.iter().any(|s| s == "ALL" || s == state),
        None => !is_finished(state),
    }
}

fn state_rank(state: &str) -> u32 {
    match state {
        "PENDING" => 0,
        "RUNNING" => 1,
        "SUSPENDED" => 2,
        "COMPLETING" => 3,
        _ => 4,
    }
}

/// A job's place in squeue's order: partition rank, state rank, priority (highest first), id.
type SortKey = (usize, u32, std::cmp::Reverse<u32>, u32);

/// squeue's default order: partition, then state (pending first), then priority (highest
/// first), then job id.
///
/// Each job's key is computed once, with partitions replaced by their rank among the few
/// distinct ones, so a long queue sorts on integers.
pub fn sort_jobs<J: QueueJob>(jobs: &mut Vec<J>) {
    let mut partitions: Vec<&str> = Vec::new();
    for job in jobs.iter() {
        if !partitions.contains(&job.partition()) {
            partitions.push(job.partition());
        }
    }
    partitions.sort_unstable();
    let mut keyed: Vec<(SortKey, usize)> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let partition = partitions.binary_search(&j.partition()).unwrap_or(0);
            ((partition, state_rank(j.state()), std::cmp::Reverse(j.priority()), j.job_id()), i)
        })
        .collect();
    keyed.sort_unstable();
    let mut slots: Vec<Option<J>> = jobs.drain(..).map(Some).collect();
    jobs.extend(keyed.into_iter().filter_map(|(_, i)| slots[i].take()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::JobInfo;

    fn job(id: u32, state: &str) -> JobInfo {
        JobInfo { job_id: id, partition: "gpu".into(), job_state: vec![state.into()], ..Default::default() }
    }

    #[test]
    fn state_filters() {
        assert_eq!(parse_states("pd,R,completing").unwrap(), vec!["PENDING", "RUNNING", "COMPLETING"]);
        assert_eq!(parse_states("all").unwrap(), vec!["ALL"]);
        assert_eq!(parse_states("BOGUS").unwrap_err(), "BOGUS");
        let q = JobQuery::default();
        let mut done = job(1, "COMPLETED");
        assert!(!matches(&q, &done));
        assert!(matches(&q, &job(2, "PENDING")));
        let q = JobQuery { states: Some(vec!["ALL".into()]), ..q };
        assert!(matches(&q, &done));
        done.job_state = vec!["CANCELLED".into()];
        let q = JobQuery { states: Some(vec!["COMPLETED".into()]), ..q };
        assert!(!matches(&q, &done));
    }

    #[test]
    fn ids_select_jobs_and_array_tasks() {
        let mut task = job(12, "PENDING");
        task.array_job_id = crate::api::noval::NoVal::of(10);
        let jobs = [job(5, "RUNNING"), task];
        let q = JobQuery { job_ids: Some(vec![10]), ..Default::default() };
        assert!(ids_found(&q, jobs.iter()));
        assert_eq!(jobs.iter().filter(|j| matches(&q, *j)).map(|j| j.job_id).collect::<Vec<_>>(), vec![12]);
        let q = JobQuery { job_ids: Some(vec![99]), ..Default::default() };
        assert!(!ids_found(&q, jobs.iter()));
        assert!(ids_found(&JobQuery::default(), jobs.iter()));
    }

    #[test]
    fn sorted_by_partition_state_priority_and_id() {
        let mut jobs = vec![job(1, "RUNNING"), job(2, "PENDING"), job(3, "PENDING"), job(4, "PENDING")];
        jobs[0].partition = "debug".into();
        jobs[2].priority = crate::api::noval::NoVal::of(5);
        jobs[3].job_state = vec!["RUNNING".into(), "COMPLETING".into()];
        sort_jobs(&mut jobs);
        assert_eq!(jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(), vec![1, 3, 2, 4]);
    }

    #[test]
    fn pending_only_and_partition_lists() {
        let mut multi = job(3, "PENDING");
        multi.partition = "debug,gpu".into();
        let q = JobQuery { partitions: Some(vec!["gpu".into()]), pending_only: true, ..Default::default() };
        assert!(matches(&q, &multi));
        assert!(!matches(&q, &job(4, "RUNNING")));
    }
}
