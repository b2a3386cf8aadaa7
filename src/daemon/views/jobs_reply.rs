//! The v0.0.43 jobs reply of many jobs (`GET /jobs`, `squeue --json`), written job by job:
//! each job's `job_info` is built as it is written and dropped at once, so that a reply of
//! thousands of jobs costs its bytes, not a second copy of every job as `JobInfo`.

use crate::api::noval::NoVal;
use crate::api::types::{errno, ApiError, ApiWarning, Meta};
use crate::config::Config;
use crate::daemon::model::job::Job;
use serde::ser::{Serialize, SerializeSeq, Serializer};

/// `jobs` as the reply's `jobs` array.
struct Infos<'a> {
    jobs: &'a [Job],
    config: &'a Config,
}

impl Serialize for Infos<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.jobs.len()))?;
        for job in self.jobs {
            seq.serialize_element(&super::info::job_info(job, self.config))?;
        }
        seq.end()
    }
}

/// [`JobsResponse`], field for field (a test compares the two), with its jobs written as
/// they are converted.
#[derive(serde::Serialize)]
struct Reply<'a> {
    jobs: Infos<'a>,
    last_backfill: NoVal<u64>,
    last_update: NoVal<u64>,
    meta: Meta,
    errors: Vec<ApiError>,
    warnings: Vec<ApiWarning>,
}

/// The error of a listing when no job has one of the ids asked for.
pub fn unknown_ids() -> ApiError {
    ApiError {
        description: "Unable to query the jobs asked for".into(),
        error_number: errno::INVALID_JOB_ID,
        error: "Invalid job id specified".into(),
        source: "_handle_job_get".into(),
    }
}

fn reply<'a>(jobs: &'a [Job], config: &'a Config, ids_found: bool, now: u64) -> Reply<'a> {
    let errors = if ids_found { Vec::new() } else { vec![unknown_ids()] };
    let jobs = if ids_found { jobs } else { &[] };
    Reply {
        jobs: Infos { jobs, config },
        last_backfill: NoVal::of(now),
        last_update: NoVal::of(now),
        meta: super::info::meta(config),
        errors,
        warnings: Vec::new(),
    }
}

/// The pretty-printed reply of `jobs` at UNIX time `now`, as `squeue --json` prints it;
/// without `ids_found`, the reply holds the error instead.
pub fn pretty(jobs: &[Job], config: &Config, ids_found: bool, now: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(jobs.len() * 4608 + 1024);
    serde_json::to_writer_pretty(&mut out, &reply(jobs, config, ids_found, now)).expect("jobs serialize");
    out.push(b'\n');
    out
}

/// The compact reply of `jobs` at UNIX time `now`, as `GET /jobs` answers.
pub fn compact(jobs: &[Job], config: &Config, now: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(jobs.len() * 3584 + 1024);
    serde_json::to_writer(&mut out, &reply(jobs, config, true, now)).expect("jobs serialize");
    out
}

/// The same reply built whole, as [`JobsResponse`]: what the replies above must equal.
#[cfg(test)]
fn whole(jobs: &[Job], config: &Config, ids_found: bool, now: u64) -> crate::api::types::JobsResponse {
    let r = reply(jobs, config, ids_found, now);
    crate::api::types::JobsResponse {
        jobs: r.jobs.jobs.iter().map(|j| super::info::job_info(j, config)).collect(),
        last_backfill: r.last_backfill,
        last_update: r.last_update,
        meta: r.meta,
        errors: r.errors,
        warnings: r.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::JobState;

    #[test]
    fn the_reply_written_job_by_job_is_the_reply_built_whole() {
        let file = toml::from_str("node_name = \"node1\"\ngpus = 2\ncpus = 8\nmemory = 4096\n").unwrap();
        let config = Config::resolve(file, std::path::Path::new("test.toml")).unwrap();
        let jobs: Vec<Job> = (1..4)
            .map(|id| Job { id, name: "train".into(), state: Some(JobState::Pending), ..Default::default() })
            .collect();
        for found in [true, false] {
            let expected = whole(&jobs, &config, found, 7);
            assert_eq!(
                String::from_utf8(pretty(&jobs, &config, found, 7)).unwrap(),
                serde_json::to_string_pretty(&expected).unwrap() + "\n"
            );
        }
        assert_eq!(compact(&jobs, &config, 7), serde_json::to_vec(&whole(&jobs, &config, true, 7)).unwrap());
    }
}
