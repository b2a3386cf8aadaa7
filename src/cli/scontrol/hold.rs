//! scontrol's actions on a list of jobs: `hold|uhold|release JOB_LIST` keep pending jobs
//! from starting, or let them; `requeue JOB_LIST` puts jobs back in the queue to run again;
//! `suspend|resume JOB_LIST` stop a running job's processes, or let them go on.
//!
//! Each job is changed on its own (`POST /slurm/v0.0.43/job/{id}` with `hold`, or
//! `POST /slurmlet/v1/job/{id}/requeue|suspend|resume`). A refusal is printed as Slurm's
//! scontrol prints it, `<error> for job <id>`, and each argument with a refusal then ends
//! with `slurm_suspend error: <error>` (Slurm's text for holds, suspend and all) or
//! `slurm_requeue error: <error>` (suspend and resume add nothing); the exit code is then 1.

use crate::api::client::Client;
use serde_json::json;

/// Which of the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `hold`: by the owner a user hold, by root an administrator's.
    Hold,
    /// `uhold`: a user hold. slurmlet's REST update has no field to tell it from `hold`, so
    /// root's `uhold` of another user's job is an administrator's hold here.
    UserHold,
    /// `release`.
    Release,
    /// `requeue`.
    Requeue,
    /// `suspend`.
    Suspend,
    /// `resume`.
    Resume,
}

impl Op {
    /// What Slurm's scontrol prints before the error of an argument it refused, if anything.
    fn error_prefix(self) -> Option<&'static str> {
        match self {
            Op::Requeue => Some("slurm_requeue error"),
            Op::Suspend | Op::Resume => None,
            Op::Hold | Op::UserHold | Op::Release => Some("slurm_suspend error"),
        }
    }

    /// The last word of its `/slurmlet/v1/job/{id}/…` path; `None`: it is a job update.
    fn action(self) -> Option<&'static str> {
        match self {
            Op::Requeue => Some("requeue"),
            Op::Suspend => Some("suspend"),
            Op::Resume => Some("resume"),
            Op::Hold | Op::UserHold | Op::Release => None,
        }
    }
}

/// Slurm's text for a job id that is not one.
const INVALID_JOB_ID: &str = "Invalid job id specified";

/// What one argument names: job ids, or the jobs of a name.
#[derive(Debug, PartialEq, Eq)]
enum Target<'a> {
    /// Job ids as the daemon's paths take them (`N`, `A_T`).
    Ids(Vec<String>),
    Name(&'a str),
}

/// Strips `prefix` from `text` in any case.
pub(super) fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// Reads one argument: `[JobId=|Job=]ID[,ID…]` or `Name=|JobName=NAME`; `None` for text that
/// is neither.
fn target(word: &str) -> Option<Target<'_>> {
    let word = strip_prefix_ci(word, "JobID=").or_else(|| strip_prefix_ci(word, "Job=")).unwrap_or(word);
    if let Some(name) = strip_prefix_ci(word, "Name=").or_else(|| strip_prefix_ci(word, "JobName=")) {
        return Some(Target::Name(name));
    }
    job_ids(word).map(Target::Ids)
}

/// The job ids of one argument, `[JobId=|Job=]ID[,ID…]` (`N`, `A_T`, `A_[list]`, each as the
/// daemon's paths take them); `None` when it names none (Slurm's `_is_job_id`).
fn job_ids(word: &str) -> Option<Vec<String>> {
    let word = strip_prefix_ci(word, "JobID=").or_else(|| strip_prefix_ci(word, "Job=")).unwrap_or(word);
    let words = crate::cli::job_ids::split(&word.replace(' ', ","));
    let ids: Option<Vec<Vec<String>>> =
        words.iter().map(|w| crate::cli::job_ids::parse(w).map(|ids| ids.path_ids())).collect();
    ids.filter(|ids| !ids.is_empty()).map(|ids| ids.concat())
}

/// Runs `scontrol <tag> WORDS…`.
pub fn run(op: Op, tag: &str, words: &[String], quiet: bool) -> i32 {
    if words.is_empty() {
        if !quiet {
            eprintln!("too few arguments for keyword:{tag}");
        }
        return 1;
    }
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut code = 0;
    for word in words {
        match hold_word(&client, op, word, quiet) {
            Ok(None) => {}
            Ok(Some(error)) => {
                code = 1;
                match op.error_prefix() {
                    Some(prefix) if !quiet => eprintln!("{prefix}: {error}"),
                    _ => {}
                }
            }
            Err(e) => {
                crate::cli::error("scontrol", &e.to_string());
                return 1;
            }
        }
    }
    code
}

/// Applies `op` to the jobs `word` names; the last refusal's text, if any.
fn hold_word(
    client: &Client,
    op: Op,
    word: &str,
    quiet: bool,
) -> Result<Option<String>, crate::api::client_error::ClientError> {
    let body = json!({ "hold": op != Op::Release });
    let mut last_error = None;
    let ids: Vec<String> = match target(word) {
        Some(Target::Ids(ids)) => ids,
        // Slurm's suspend and resume take job ids only.
        Some(Target::Name(name)) if op.action().is_none() => {
            let jobs = client.jobs()?.jobs;
            let named: Vec<_> = jobs.iter().filter(|j| j.name == name).collect();
            // As Slurm: a job of that name that no longer pends is an error, yet its update
            // is still asked for.
            if named.iter().any(|j| j.job_state.first().map(String::as_str) != Some("PENDING")) {
                last_error = Some("Job is no longer pending execution".to_string());
            }
            named.iter().map(|j| j.job_id.to_string()).collect()
        }
        _ => {
            if !quiet {
                eprintln!("{INVALID_JOB_ID} for job {word}");
            }
            return Ok(Some(INVALID_JOB_ID.into()));
        }
    };
    for id in ids {
        let resp = match op.action() {
            Some(action) => client.job_action(&id, action)?,
            None => client.update_job(&id, &body)?,
        };
        if let Some(e) = resp.errors.first() {
            if !quiet {
                eprintln!("{} for job {id}", e.error);
            }
            last_error = Some(e.error.clone());
        }
    }
    Ok(last_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_ids_or_a_job_name() {
        let ids = |ids: &[&str]| Some(Target::Ids(ids.iter().map(|s| s.to_string()).collect()));
        assert_eq!(target("12"), ids(&["12"]));
        assert_eq!(target("12,13"), ids(&["12", "13"]));
        assert_eq!(target("jobid=12"), ids(&["12"]));
        assert_eq!(target("Job=7"), ids(&["7"]));
        assert_eq!(target("7_[1-2],8_3"), ids(&["7_1", "7_2", "8_3"]));
        assert_eq!(target("Name=train"), Some(Target::Name("train")));
        assert_eq!(target("JobName=train"), Some(Target::Name("train")));
        assert_eq!(target("abc"), None);
        assert_eq!(target(""), None);
    }
}
