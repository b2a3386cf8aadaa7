//! What `slurmlet __complete` asks of a cluster profile's REST API (slurmrestd's shapes)
//! where the local daemon has paths of its own: the queued jobs, read as squeue reads them
//! (`GET /slurm/v0.0.43/jobs`), and the caller's ended jobs, read as sacct reads them
//! (`GET /slurmdb/v0.0.43/jobs`). Partitions and nodes are asked on the same paths of both.

use super::FetchError;
use crate::api::acct::{self, AcctJob};
use crate::api::client::Client;
use crate::api::from_slurmdb::ClusterUids;
use crate::api::slurmdb::DbJobsResponse;
use crate::api::types::{ApiError, JobQuery, LayoutItem};

/// The cluster's jobs that squeue lists with no option, in its order, laid out by `layout`
/// as squeue writes them: the same text the local daemon lays out for the same layout.
pub(super) fn job_text(client: &Client, layout: &[LayoutItem]) -> Result<String, FetchError> {
    let reply = client.jobs()?;
    refused(&reply.errors)?;
    let now = crate::sys::now();
    let (jobs, _) = crate::queue::select(reply.jobs, &JobQuery::default(), now);
    Ok(crate::queue::rows_text(&jobs, layout, now))
}

/// The jobs of `user` (the profile's user on the cluster) that were queued or ran within
/// `window` (UNIX times), without their steps, in sacct's order.
pub(super) fn ended_jobs(client: &Client, user: &str, window: (u64, u64)) -> Result<Vec<AcctJob>, FetchError> {
    let path = format!(
        "/slurmdb/v0.0.43/jobs?users={}&start_time={}&end_time={}&skip_steps=true",
        crate::api::url::percent_encode(user),
        window.0,
        window.1
    );
    let reply = client.get_bytes(&path)?;
    let reply: DbJobsResponse = Client::decode(&reply)?;
    refused(&reply.errors)?;
    // Uids are not shown: the names of the records are enough.
    let uids = ClusterUids::default();
    let mut jobs: Vec<AcctJob> = reply.jobs.iter().map(|j| j.to_acct_with(&uids)).collect();
    acct::sort_as_sacct(&mut jobs);
    Ok(jobs)
}

/// The first of a reply's `errors`, as the reason nothing is offered.
fn refused(errors: &[ApiError]) -> Result<(), FetchError> {
    match errors.first() {
        Some(e) => Err(FetchError::Refused(format!("{} ({})", e.error, e.description))),
        None => Ok(()),
    }
}
