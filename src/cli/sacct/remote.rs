//! sacct through a cluster profile: the query as slurmrestd's `GET /slurmdb/v0.0.43/jobs`
//! parameters, its records read back, and what slurmrestd has no parameter for (CPU, node
//! and time limit ranges, `-T`, steps named alone, QOS and reasons by name) done here.

use super::options::Users;
use super::Plan;
use crate::api::acct::{self, AcctJob, HistoryQuery, HistoryReply, Selection};
use crate::api::client::Client;
use crate::api::client_error::ClientError;
use crate::api::from_slurmdb::ClusterUids;
use crate::api::http::Response;
use crate::api::slurmdb::DbJobsResponse;
use crate::api::types::{errno, ApiError};

/// The accounting records path.
const JOBS: &str = "/slurmdb/v0.0.43/jobs";

/// A `-j` entry as slurmrestd's `step` parameter reads it (`N`, `N_T`, `N+H`, `N.S`).
fn step_param(s: &Selection) -> String {
    let mut text = s.job.to_string();
    if let Some(task) = s.array_task {
        text.push_str(&format!("_{task}"));
    }
    if let Some(het) = s.het_offset {
        text.push_str(&format!("+{het}"));
    }
    if let Some(step) = s.step {
        text.push_str(&format!(".{step}"));
    }
    text
}

/// The query parameters of `plan` for a cluster where the caller is `user`. A list repeats
/// its key: slurmrestd refuses a comma in some of them.
pub fn params(plan: &Plan, user: &str) -> Vec<(&'static str, String)> {
    let q = &plan.query;
    let mut p: Vec<(&'static str, String)> = Vec::new();
    let mut each = |key: &'static str, values: Option<&Vec<String>>| {
        for v in values.into_iter().flatten() {
            p.push((key, v.clone()));
        }
    };
    let users = match &plan.users {
        Users::Everyone => None,
        Users::Me if user == "root" => None,
        Users::Me => Some(vec![user.to_string()]),
        Users::Named(names) => Some(names.clone()),
    };
    each("users", users.as_ref());
    each("groups", (!plan.groups.is_empty()).then_some(&plan.groups));
    each("job_name", q.names.as_ref());
    each("partition", q.partitions.as_ref());
    each("state", q.states.as_ref());
    each("account", q.accounts.as_ref());
    each("wckey", q.wckeys.as_ref());
    each("constraints", q.constraints.as_ref());
    each("cluster", q.clusters.as_ref());
    let nodes = q.nodes.as_ref().map(|n| vec![crate::options::hostlist::compress(n)]);
    each("node", nodes.as_ref());
    let steps: Vec<String> = q.selections.iter().map(step_param).collect();
    each("step", (!steps.is_empty()).then_some(&steps));
    if let Some((start, end)) = q.window {
        p.push(("start_time", start.to_string()));
        p.push(("end_time", end.to_string()));
    }
    if q.skip_steps {
        p.push(("skip_steps", "true".into()));
    }
    if q.duplicates {
        p.push(("show_duplicates", "true".into()));
    }
    p
}

/// `params` as a URL query string.
fn query_string(params: &[(&str, String)]) -> String {
    params.iter().map(|(k, v)| format!("{k}={}", crate::api::url::percent_encode(v))).collect::<Vec<_>>().join("&")
}

/// Whether `job` passes the filters slurmrestd has no parameter for, or one that takes
/// the database's ids rather than names (QOS, reasons).
fn wanted(job: &AcctJob, q: &HistoryQuery) -> bool {
    let within = |range: Option<(u32, u32)>, n: u32| range.is_none_or(|(min, max)| (min..=max).contains(&n));
    let any = |list: &Option<Vec<String>>, value: &str| {
        list.as_ref().is_none_or(|l| l.iter().any(|v| v.eq_ignore_ascii_case(value)))
    };
    let given = job.alloc.unwrap_or(job.req);
    any(&q.qos, &job.qos)
        && any(&q.reasons, &job.reason)
        && within(q.cpus, given.cpus)
        && within(q.nnodes, given.nodes.max(1))
        && within(q.time_limits, job.time_limit.unwrap_or(u32::MAX))
}

/// The steps `q` names of `job` when it names steps of it and not the job itself.
fn only_steps(q: &HistoryQuery, job: &AcctJob) -> Option<Vec<acct::StepId>> {
    let names_job = |s: &&Selection| match s.array_task {
        None => s.job == job.id || (job.array_job_id != 0 && s.job == job.array_job_id),
        Some(t) => s.job == job.array_job_id && job.array_task_id == Some(t),
    };
    let mine: Vec<&Selection> = q.selections.iter().filter(names_job).collect();
    if mine.is_empty() || mine.iter().any(|s| s.step.is_none()) {
        return None;
    }
    Some(mine.iter().filter_map(|s| s.step).collect())
}

/// The cluster's reply to what `plan` asks, for a caller known there as `user`.
pub fn fetch(client: &Client, plan: &Plan, user: &str) -> Result<Response, ClientError> {
    let path = format!("{JOBS}?{}", query_string(&params(plan, user)));
    client.get_bytes(path.trim_end_matches('?'))
}

/// The uids of the cluster's users, as its controller's job records give them (the
/// accounting records name users only; `CANCELLED by UID` needs the cluster's uid, which this
/// machine may not know or know otherwise). Asked only when a record names a canceller; an
/// answer that does not come leaves this machine's uids to stand in.
fn cluster_uids(client: &Client, reply: &DbJobsResponse) -> ClusterUids {
    if !reply.jobs.iter().any(|j| j.names_a_canceller()) {
        return ClusterUids::default();
    }
    match client.jobs() {
        Ok(jobs) => ClusterUids::from_pairs(jobs.jobs.into_iter().map(|j| (j.user_name, j.user_id))),
        Err(_) => ClusterUids::default(),
    }
}

/// The jobs of the cluster's `reply` as sacct prints them.
pub fn read(client: &Client, plan: &Plan, reply: &Response) -> Result<HistoryReply, ClientError> {
    let reply: DbJobsResponse = Client::decode(reply)?;
    let q = &plan.query;
    let now = crate::sys::now();
    let uids = cluster_uids(client, &reply);
    let mut jobs: Vec<AcctJob> = reply.jobs.iter().map(|j| j.to_acct_with(&uids)).filter(|j| wanted(j, q)).collect();
    for job in &mut jobs {
        if let Some(only) = only_steps(q, job) {
            job.show_full = false;
            job.steps.retain(|s| only.contains(&s.id));
        }
        if let (true, Some(window)) = (q.truncate, q.window) {
            job.truncate(window, now);
        }
    }
    acct::sort_as_sacct(&mut jobs);
    Ok(HistoryReply { jobs, now, errors: reply.errors })
}

/// What sacct says of an error of the cluster's reply: a user it does not know is what
/// Slurm's sacct says of it, anything else is the database's problem.
pub fn message(error: &ApiError) -> String {
    match error.description.strip_prefix("Unable to resolve user: ") {
        Some(user) if error.error_number == errno::USER_ID_UNKNOWN => format!("Invalid user id: {user}"),
        _ => format!("Problem talking to the database: {}", error.description),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(args: &[&str]) -> Plan {
        super::super::options::plan(std::iter::once("sacct").chain(args.iter().copied()).map(Into::into).collect())
            .ok()
            .unwrap()
    }

    #[test]
    fn a_command_line_becomes_slurmrestds_parameters() {
        let p = params(&plan_of(&["-s", "F,CA", "-S", "2026-01-01T00:00:00", "-E", "2026-01-02T00:00:00"]), "alice");
        let keys: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(&keys[..3], ["users=alice", "state=FAILED", "state=CANCELLED"]);
        assert!(keys[3].starts_with("start_time=") && keys[4].starts_with("end_time="), "{keys:?}");
        let p = params(&plan_of(&["-j", "5_2,7.batch", "-X", "-u", "bob,carol", "--name", "a b"]), "alice");
        let text = query_string(&p);
        assert!(text.starts_with("users=bob&users=carol&job_name=a%20b&step=5_2&step=7.batch&start_time=0&"), "{text}");
        assert!(text.ends_with("&skip_steps=true"), "{text}");
        // Everybody's: no users parameter.
        assert!(!query_string(&params(&plan_of(&["-a"]), "alice")).contains("users="));
        assert!(!query_string(&params(&plan_of(&[]), "root")).contains("users="));
    }
}
