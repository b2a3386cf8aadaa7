//! What the page shows, read from the daemon as the caller: the GPUs and who holds them, the
//! reservations on them, the queue, each user's use and the caller's recent jobs. Each part the daemon (or a cluster's
//! slurmrestd) cannot give is `None` with a line saying why, and the page says "not
//! available" there; the queue falls back to the v0.0.43 job list, which every daemon and
//! slurmrestd has.
//!
//! All of it is blocking: the server calls it from `spawn_blocking`.

use super::reservations::Reservation;
use crate::api::activity::{GpuSeries, QueueJob, UserUsage};
use crate::api::client::Client;
use crate::api::client_error::ClientError;
use crate::api::gpus::GpuStatus;
use crate::api::types::{ApiError, JobInfo};
use serde::Serialize;

/// How many pending jobs the page is sent at most; it says how many more there are.
pub const PENDING_SHOWN: u32 = 200;

/// How many of the caller's recent jobs the page lists.
pub const RECENT_SHOWN: usize = 20;

/// One part the page cannot show, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    /// Which: `gpus`, `reservations`, `queue_order`, `samples`, `usage`, `recent`.
    pub part: &'static str,
    /// Why, in words.
    pub why: String,
}

/// Who the page is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caller {
    /// Their name (on a cluster profile: who the profile is there).
    pub name: String,
    /// Their uid on this machine.
    pub uid: u32,
}

/// The queue as the page lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Queue {
    /// Running (and suspended) jobs.
    pub running: Vec<QueueJob>,
    /// Pending jobs in scheduling order, at most [`PENDING_SHOWN`].
    pub pending: Vec<QueueJob>,
    /// All running jobs the caller may see.
    pub running_total: u32,
    /// All pending jobs the caller may see.
    pub pending_total: u32,
    /// `queue` when the daemon gave its scheduling order and expected starts, `jobs` when it
    /// was made from the job list (by priority, then submit time).
    pub from: &'static str,
}

/// What changes as the machine works: sent whole to the page on every change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Live {
    /// Where the data comes from: `this machine`, or `profile NAME`.
    pub source: String,
    /// Who the page is for.
    pub caller: Caller,
    /// The GPUs and who holds them; `None` when not available.
    pub gpus: Option<Vec<GpuStatus>>,
    /// How often the daemon looks at the GPUs, seconds (0: it does not).
    pub sample_interval: u64,
    /// The reservations not yet over, by start; `None` when not available.
    pub reservations: Option<Vec<Reservation>>,
    /// The queue; `None` when even the job list could not be read.
    pub queue: Option<Queue>,
    /// What is not available, and why.
    pub missing: Vec<Missing>,
}

/// One of the caller's recent jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecentJob {
    /// Its id as sacct prints it.
    pub job: String,
    /// Its own job id.
    pub job_id: u32,
    /// Its name.
    pub name: String,
    /// Its state (`COMPLETED`, `FAILED`, …).
    pub state: String,
    /// Seconds it ran.
    pub elapsed: u64,
    /// Its exit code as sacct writes it (`0:0`).
    pub exit_code: String,
    /// When it ended (0: not yet).
    pub end: u64,
    /// The most GPU memory its processes held, bytes; `None` when not known.
    pub peak_gpu_memory: Option<u64>,
}

/// What changes slowly: each user's use over the week, and the caller's recent jobs.
#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    /// GPU-hours and jobs per user over the last 7 days; `None` when not available.
    pub users: Option<Vec<UserUsage>>,
    /// The caller's recent jobs, the newest first; `None` when not available.
    pub recent: Option<Vec<RecentJob>>,
    /// What is not available, and why.
    pub missing: Vec<Missing>,
}

/// The GPUs' samples of the last hour, for the sparklines.
#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    /// Seconds between samples.
    pub resolution: u64,
    /// One series per GPU; `None` when not available.
    pub gpus: Option<Vec<GpuSeries>>,
    /// Why not, when not.
    pub missing: Vec<Missing>,
}

/// The text of a client error, or of the first error of a reply.
pub fn why(e: &ClientError) -> String {
    e.to_string()
}

/// The first error of a reply, as text; `None` when it has none. A path the daemon does not
/// serve (an older daemon) is said in a few words.
pub fn first_error(errors: &[ApiError]) -> Option<String> {
    let e = errors.first()?;
    Some(if e.error == "Unable to find requested URL endpoint" && !e.source.is_empty() {
        format!("this daemon has no {}", e.source)
    } else if e.description.is_empty() {
        e.error.clone()
    } else {
        e.description.clone()
    })
}

/// Who the caller is for `client`.
pub fn caller(client: &Client) -> Caller {
    let uid = crate::identity::uid();
    let name = client.remote_user().map(str::to_string).unwrap_or_else(|| crate::identity::user_name(uid));
    Caller { name, uid }
}

/// Where `client`'s data comes from, in words.
pub fn source(client: &Client) -> String {
    match client.profile() {
        Some(p) => format!("profile {p}"),
        None => "this machine".into(),
    }
}

/// Reads what changes as the machine works.
pub fn live(client: &Client) -> Live {
    let mut missing = Vec::new();
    let (gpus, sample_interval) = match client.gpus() {
        Ok(r) => match first_error(&r.errors) {
            None => (Some(r.gpus), r.sample_interval),
            Some(e) => {
                missing.push(Missing { part: "gpus", why: e });
                (None, 0)
            }
        },
        Err(e) => {
            missing.push(Missing { part: "gpus", why: why(&e) });
            (None, 0)
        }
    };
    let reservations = super::reservations::read(client, &mut missing);
    let queue = queue(client, &mut missing);
    Live { source: source(client), caller: caller(client), gpus, sample_interval, reservations, queue, missing }
}

/// The queue from the daemon's own call, else from the job list.
fn queue(client: &Client, missing: &mut Vec<Missing>) -> Option<Queue> {
    let ordered = client.queue(PENDING_SHOWN).map_err(|e| why(&e)).and_then(|r| match first_error(&r.errors) {
        None => Ok(r),
        Some(e) => Err(e),
    });
    match ordered {
        Ok(r) => {
            return Some(Queue {
                running: r.running,
                pending: r.pending,
                running_total: r.running_total,
                pending_total: r.pending_total,
                from: "queue",
            })
        }
        Err(e) => missing.push(Missing { part: "queue_order", why: e }),
    }
    match client.jobs() {
        Ok(r) => match first_error(&r.errors) {
            None => Some(queue_from_jobs(&r.jobs)),
            Some(e) => {
                missing.push(Missing { part: "queue", why: e });
                None
            }
        },
        Err(e) => {
            missing.push(Missing { part: "queue", why: why(&e) });
            None
        }
    }
}

/// The state word of a job (`RUNNING`, `PENDING`, …).
fn state_of(job: &JobInfo) -> &str {
    job.job_state.first().map(String::as_str).unwrap_or("")
}

/// The queue made from the job list: running and suspended jobs the longest running first,
/// pending ones by priority then submit time, their start the one the job list gives.
pub fn queue_from_jobs(jobs: &[JobInfo]) -> Queue {
    let mut running: Vec<&JobInfo> =
        jobs.iter().filter(|j| matches!(state_of(j), "RUNNING" | "SUSPENDED" | "COMPLETING")).collect();
    let mut pending: Vec<&JobInfo> = jobs.iter().filter(|j| state_of(j) == "PENDING").collect();
    running.sort_by_key(|j| (j.start_time.get().unwrap_or(0), j.job_id));
    pending.sort_by_key(|j| {
        (std::cmp::Reverse(j.priority.get().unwrap_or(0)), j.submit_time.get().unwrap_or(0), j.job_id)
    });
    let running_total = running.len() as u32;
    let pending_total = pending.len() as u32;
    Queue {
        running: running.into_iter().map(queue_job).collect(),
        pending: pending.into_iter().take(PENDING_SHOWN as usize).map(queue_job).collect(),
        running_total,
        pending_total,
        from: "jobs",
    }
}

/// The id squeue prints for a job: `A_T` for an array task, `A_[…]` for its pending rest.
fn display_id(job: &JobInfo) -> String {
    match (job.array_job_id.get().filter(|a| *a != 0), job.array_task_id.get()) {
        (Some(array), Some(task)) => format!("{array}_{task}"),
        (Some(array), None) if !job.array_task_string.is_empty() => format!("{array}_[{}]", job.array_task_string),
        _ => job.job_id.to_string(),
    }
}

/// How many of `kind` (`gpu`, `shard`) a TRES string (`cpu=1,gres/gpu=2`) names.
fn tres_count(tres: &str, kind: &str) -> u32 {
    tres.split(',')
        .filter_map(|part| part.split_once('='))
        .filter(|(name, _)| {
            let name = name.strip_prefix("gres/").unwrap_or(name);
            name == kind || name.starts_with(&format!("{kind}:"))
        })
        .filter_map(|(_, n)| n.parse::<u32>().ok())
        .sum()
}

/// A job of the job list as the queue lists it.
fn queue_job(job: &JobInfo) -> QueueJob {
    let tres = if job.tres_alloc_str.is_empty() { &job.tres_req_str } else { &job.tres_alloc_str };
    let pending = state_of(job) == "PENDING";
    QueueJob {
        job: display_id(job),
        job_id: job.job_id,
        name: job.name.clone(),
        user_name: job.user_name.clone(),
        user_id: job.user_id,
        partition: job.partition.clone(),
        state: state_of(job).to_string(),
        reason: (pending && !job.state_reason.is_empty() && job.state_reason != "None")
            .then(|| job.state_reason.clone()),
        submit_time: job.submit_time.get().unwrap_or(0) as i64,
        start_time: job.start_time.get().filter(|t| *t > 0).map(|t| t as i64),
        time_limit: job.time_limit.get().map(|minutes| u64::from(minutes) * 60),
        gpus: Vec::new(),
        gpu_count: tres_count(tres, "gpu"),
        shards: tres_count(tres, "shard"),
        cpus: job.cpus.get().unwrap_or(0),
        priority: job.priority.get().unwrap_or(0),
    }
}

/// The GPUs' samples since `since`.
pub fn samples(client: &Client, since: i64) -> Samples {
    let reply = client.gpu_samples(Some(since)).map_err(|e| why(&e)).and_then(|r| match first_error(&r.errors) {
        None => Ok(r),
        Some(e) => Err(e),
    });
    match reply {
        Ok(r) => Samples { resolution: r.resolution, gpus: Some(r.gpus), missing: Vec::new() },
        Err(e) => Samples { resolution: 0, gpus: None, missing: vec![Missing { part: "samples", why: e }] },
    }
}

/// Each user's use over the last week, and the caller's recent jobs.
pub fn usage(client: &Client) -> Usage {
    let mut missing = Vec::new();
    let users = match client.usage(7).map_err(|e| why(&e)).and_then(|r| match first_error(&r.errors) {
        None => Ok(r),
        Some(e) => Err(e),
    }) {
        Ok(r) => Some(r.users),
        Err(e) => {
            missing.push(Missing { part: "usage", why: e });
            None
        }
    };
    let recent = match recent_jobs(client) {
        Ok(jobs) => Some(jobs),
        Err(e) => {
            missing.push(Missing { part: "recent", why: e });
            None
        }
    };
    Usage { users, recent, missing }
}

/// The caller's jobs of the last week from the daemon's history, the newest first, each with
/// the most GPU memory it held when the daemon keeps its GPU samples.
fn recent_jobs(client: &Client) -> Result<Vec<RecentJob>, String> {
    use crate::api::acct::{HistoryQuery, HistoryReply};
    if let Some(profile) = client.profile() {
        return Err(format!("the caller's recent jobs are read from this machine's daemon only (profile {profile})"));
    }
    let now = crate::sys::now();
    let query = HistoryQuery {
        users: Some(vec![crate::identity::uid()]),
        window: Some((now.saturating_sub(7 * 86400), now + 1)),
        skip_steps: true,
        ..HistoryQuery::default()
    };
    let reply = client.post_for_bytes("/slurmlet/v1/history", &query).map_err(|e| why(&e))?;
    let history: HistoryReply = Client::decode(&reply).map_err(|e| why(&e))?;
    if let Some(e) = first_error(&history.errors) {
        return Err(e);
    }
    let mut jobs: Vec<RecentJob> = history
        .jobs
        .iter()
        .rev()
        .filter(|j| !matches!(j.state.as_str(), "PENDING"))
        .take(RECENT_SHOWN)
        .map(|j| RecentJob {
            job: j.id_string(),
            job_id: j.id,
            name: j.name.clone(),
            state: j.state.clone(),
            elapsed: j.elapsed(history.now),
            exit_code: crate::cli::sacct::fields::exit_text(j.exit_status),
            end: j.end,
            peak_gpu_memory: None,
        })
        .collect();
    for job in &mut jobs {
        match client.job_gpu_samples(job.job_id) {
            Ok(r) if r.errors.is_empty() => job.peak_gpu_memory = r.samples.iter().map(|s| s.1).max(),
            // The daemon keeps no samples (or not of this job): none is known.
            _ => break,
        }
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    fn job(id: u32, state: &str, priority: u32, submit: u64) -> JobInfo {
        JobInfo {
            job_id: id,
            job_state: vec![state.into()],
            priority: NoVal::of(priority),
            submit_time: NoVal::of(submit),
            tres_req_str: "cpu=1,mem=100M,node=1,billing=1,gres/gpu=2".into(),
            ..JobInfo::default()
        }
    }

    #[test]
    fn the_job_list_makes_a_queue_in_priority_order() {
        let jobs =
            [job(1, "PENDING", 5, 10), job(2, "RUNNING", 1, 1), job(3, "PENDING", 9, 20), job(4, "COMPLETED", 9, 1)];
        let q = queue_from_jobs(&jobs);
        assert_eq!(q.running.iter().map(|j| j.job_id).collect::<Vec<_>>(), [2]);
        assert_eq!(q.pending.iter().map(|j| j.job_id).collect::<Vec<_>>(), [3, 1]);
        assert_eq!((q.running_total, q.pending_total, q.from), (1, 2, "jobs"));
        assert_eq!(q.pending[0].gpu_count, 2);
    }

    #[test]
    fn a_path_not_served_is_said_shortly() {
        let missing = ApiError {
            description: "Unable to find requested URL endpoint /slurmlet/v1/usage. Please query …".into(),
            error: "Unable to find requested URL endpoint".into(),
            source: "/slurmlet/v1/usage".into(),
            ..ApiError::default()
        };
        assert_eq!(first_error(&[missing]).as_deref(), Some("this daemon has no /slurmlet/v1/usage"));
        let refused = ApiError { description: "Access denied".into(), error: "x".into(), ..ApiError::default() };
        assert_eq!(first_error(&[refused]).as_deref(), Some("Access denied"));
        assert_eq!(first_error(&[]), None);
    }

    #[test]
    fn tres_counts_gpus_of_any_type() {
        assert_eq!(tres_count("cpu=1,gres/gpu:a100=3", "gpu"), 3);
        assert_eq!(tres_count("cpu=1,gres/shard=4", "shard"), 4);
        assert_eq!(tres_count("cpu=1", "gpu"), 0);
    }
}
