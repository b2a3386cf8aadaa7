//! `scontrol hold|uhold|release JOB_LIST`: keeps pending jobs from starting, or lets them.
//!
//! Each job is updated on its own (`POST /slurm/v0.0.43/job/{id}` with `hold`). A refusal is
//! printed as Slurm's scontrol prints it, `<error> for job <id>`, and each argument with a
//! refusal ends with `slurm_suspend error: <error>` (Slurm's text, suspend and all); the exit
//! code is then 1.

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
}

/// Slurm's text for a job id that is not one.
const INVALID_JOB_ID: &str = "Invalid job id specified";

/// What one argument names: job ids, or the jobs of a name.
#[derive(Debug, PartialEq, Eq)]
enum Target<'a> {
    Ids(Vec<&'a str>),
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
    let ids: Vec<&str> = word.split([',', ' ']).filter(|s| !s.is_empty()).collect();
    let valid = !ids.is_empty() && ids.iter().all(|id| id.bytes().all(|b| b.is_ascii_digit() || b"_[]-".contains(&b)));
    valid.then_some(Target::Ids(ids))
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
                if !quiet {
                    eprintln!("slurm_suspend error: {error}");
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
) -> Result<Option<String>, crate::api::client::ClientError> {
    let body = json!({ "hold": op != Op::Release });
    let mut last_error = None;
    let ids: Vec<String> = match target(word) {
        Some(Target::Ids(ids)) => ids.into_iter().map(String::from).collect(),
        Some(Target::Name(name)) => {
            let jobs = client.jobs()?.jobs;
            let named: Vec<_> = jobs.iter().filter(|j| j.name == name).collect();
            // As Slurm: a job of that name that no longer pends is an error, yet its update
            // is still asked for.
            if named.iter().any(|j| j.job_state.first().map(String::as_str) != Some("PENDING")) {
                last_error = Some("Job is no longer pending execution".to_string());
            }
            named.iter().map(|j| j.job_id.to_string()).collect()
        }
        None => {
            if !quiet {
                eprintln!("{INVALID_JOB_ID} for job {word}");
            }
            return Ok(Some(INVALID_JOB_ID.into()));
        }
    };
    for id in ids {
        let resp = client.update_job(&id, &body)?;
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
        assert_eq!(target("12"), Some(Target::Ids(vec!["12"])));
        assert_eq!(target("12,13"), Some(Target::Ids(vec!["12", "13"])));
        assert_eq!(target("jobid=12"), Some(Target::Ids(vec!["12"])));
        assert_eq!(target("Job=7"), Some(Target::Ids(vec!["7"])));
        assert_eq!(target("Name=train"), Some(Target::Name("train")));
        assert_eq!(target("JobName=train"), Some(Target::Name("train")));
        assert_eq!(target("abc"), None);
        assert_eq!(target(""), None);
    }
}
