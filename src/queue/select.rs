//! Which jobs squeue lists (`-j -u -p -n -t --start`), for any [`QueueJob`]: the daemon
//! applies it to its own records, the client to `job_info`s; in what order is
//! [`super::sort`]'s.

use super::job::QueueJob;
use super::sort::{default_sort, parse_sort, sort_jobs, SortKey};
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
    !asks_ids(query) || jobs.any(|j| named(query, j))
}

/// Whether `query` names jobs (`-j`): only then is a listing refused for want of them.
pub fn asks_ids(query: &JobQuery) -> bool {
    query.job_ids.is_some() || query.array_tasks.is_some()
}

/// The order `query` asks for (`-S`): squeue's default when none, or one squeue refuses.
pub fn sort_keys(query: &JobQuery) -> Vec<SortKey> {
    query.sort.as_deref().and_then(|s| parse_sort(s).ok()).unwrap_or_else(default_sort)
}

/// Whether `job` is one of the ids or array tasks of `-j`.
fn named<J: QueueJob + ?Sized>(query: &JobQuery, job: &J) -> bool {
    query.job_ids.iter().flatten().any(|&id| matches_id(job, id))
        || query.array_tasks.iter().flatten().any(|&[a, t]| job.array_job_id() == a && job.array_task_id() == Some(t))
}

/// The jobs of `all` that `query` lists, in its order at UNIX time `now`, and whether any
/// job has one of its ids. An order squeue refuses lists in the default order.
pub fn select<J: QueueJob>(all: Vec<J>, query: &JobQuery, now: u64) -> (Vec<J>, bool) {
    let ids_found = ids_found(query, all.iter());
    let mut listed: Vec<J> = all.into_iter().filter(|j| matches(query, j)).collect();
    sort_jobs(&mut listed, &sort_keys(query), now);
    (listed, ids_found)
}

/// Whether `job` passes every filter of `query`.
pub fn matches<J: QueueJob + ?Sized>(query: &JobQuery, job: &J) -> bool {
    if asks_ids(query) && !named(query, job) {
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
    if let Some(reservations) = &query.reservations {
        if !reservations.iter().any(|r| r == job.reservation()) {
            return false;
        }
    }
    let state = job.state();
    if query.pending_only && state != "PENDING" {
        return false;
    }
    match &query.states {
        // A job being configured is running, as Slurm's filter reads its base state.
        Some(states) => states.iter().any(|s| s == "ALL" || s == state || (s == "RUNNING" && state == "CONFIGURING")),
        None => !is_finished(state),
    }
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
    fn pending_only_and_partition_lists() {
        let mut multi = job(3, "PENDING");
        multi.partition = "debug,gpu".into();
        let q = JobQuery { partitions: Some(vec!["gpu".into()]), pending_only: true, ..Default::default() };
        assert!(matches(&q, &multi));
        assert!(!matches(&q, &job(4, "RUNNING")));
    }
}
