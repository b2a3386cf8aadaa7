//! `scontrol suspend|resume JOB_LIST…`: stops a running job's processes, or lets them go on
//! (`POST /slurmlet/v1/job/{id}/suspend` or `…/resume`, one job at a time).
//!
//! As Slurm's scontrol: each argument is `[JobId=|Job=]ID[,ID…]`; a refusal prints
//! `<error> for job <id>` and makes the exit code 1.

use super::hold::job_ids;

/// Which of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `suspend`.
    Suspend,
    /// `resume`.
    Resume,
}

impl Op {
    /// The REST path's last word.
    fn word(self) -> &'static str {
        match self {
            Op::Suspend => "suspend",
            Op::Resume => "resume",
        }
    }
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
    let mut refused = |text: &str, id: &str| {
        code = 1;
        if !quiet {
            eprintln!("{text} for job {id}");
        }
    };
    for word in words {
        let Some(ids) = job_ids(word) else {
            refused("Invalid job id specified", word);
            continue;
        };
        for id in ids {
            match client.job_action(&id, op.word()) {
                Ok(resp) => {
                    if let Some(e) = resp.errors.first() {
                        refused(&e.error, &id);
                    }
                }
                Err(e) => {
                    crate::cli::error("scontrol", &e.to_string());
                    return 1;
                }
            }
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_job_ids() {
        let ids = |ids: &[&str]| Some(ids.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(job_ids("12"), ids(&["12"]));
        assert_eq!(job_ids("JobId=12,13"), ids(&["12", "13"]));
        assert_eq!(job_ids("job=7_[1-2]"), ids(&["7_1", "7_2"]));
        assert_eq!(job_ids("Name=x"), None);
        assert_eq!(job_ids("abc"), None);
        assert_eq!(job_ids(""), None);
    }
}
