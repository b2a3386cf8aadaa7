//! The paths a submit names (its working directory, the directories of its output files,
//! its input file), checked as the submitting user by a child with a deadline (see
//! [`crate::daemon::supervision::path_check`]), and Slurm's refusals for them.
//!
//! As Slurm 24.11 does, the directories of the output files are created at submit time, so
//! that a path that can never be written is refused then; they are created by the user, so
//! that permissions and quotas apply. Every refusal says what the user could have seen
//! themselves: a working directory the user cannot reach is refused as one that does not
//! exist, whatever root sees there.

use super::submit_refusals::explained;
use crate::api::types::errno;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::Job;
use crate::daemon::model::output_path::output_path;
use crate::daemon::model::refusal::Refusal;
use crate::daemon::supervision::path_check::{CheckError, PathChecks, Verdict};
use crate::path_looks::Look;
use std::path::PathBuf;

/// What a look stands for, for its refusal.
#[derive(Debug, Clone)]
enum Named {
    /// The working directory.
    WorkDir,
    /// The directory of an output file: the option (`--output`, `--error`) and the file.
    OutputDir { option: &'static str, file: PathBuf },
    /// The input file.
    Input,
}

/// The looks of a submit, in order, and what each stands for.
#[derive(Debug, Default)]
pub struct SubmitPaths {
    looks: Vec<Look>,
    named: Vec<Named>,
    /// The submitter's umask (`SLURM_UMASK`), which the directories made take.
    umask: Option<u32>,
}

impl SubmitPaths {
    /// The paths of `jobs` (a job, or an array's tasks, sharing one working directory): the
    /// working directory, then each task's output directories and input file, each path
    /// once; the directories are made with `umask`, the submitter's.
    pub fn of_jobs(jobs: &[Job], node: &str, umask: Option<u32>) -> SubmitPaths {
        let mut paths = SubmitPaths { umask, ..SubmitPaths::default() };
        let Some(first) = jobs.first() else { return paths };
        paths.add(Look::Directory(first.cwd.as_str().into()), Named::WorkDir);
        for job in jobs {
            for (option, pattern) in [("--output", &job.stdout), ("--error", &job.stderr)] {
                if pattern.is_empty() {
                    continue;
                }
                let file = output_path(job, pattern, node);
                if let Some(dir) = file.parent() {
                    paths.add(Look::MadeDirectory(dir.to_path_buf()), Named::OutputDir { option, file: file.clone() });
                }
            }
            if !job.stdin.is_empty() {
                paths.add(Look::Exists(output_path(job, &job.stdin, node)), Named::Input);
            }
        }
        paths
    }

    /// The working directory alone (`--test-only`, which creates nothing).
    pub fn of_work_dir(cwd: &str) -> SubmitPaths {
        let mut paths = SubmitPaths::default();
        paths.add(Look::Directory(cwd.into()), Named::WorkDir);
        paths
    }

    fn add(&mut self, look: Look, named: Named) {
        if !self.looks.contains(&look) {
            self.looks.push(look);
            self.named.push(named);
        }
    }

    /// Checks the paths as `caller` sees them; `Err` is the refusal.
    pub async fn check(&self, checks: &PathChecks, caller: Caller) -> Result<(), Refusal> {
        match checks.check(caller.uid, caller.gid, self.umask, &self.looks).await {
            Ok(Verdict::Passed) => Ok(()),
            Ok(Verdict::Failed { look, error }) => Err(self.failed(look, &error)),
            Ok(Verdict::NoAnswer { look }) => {
                Err(self.unanswered(look, format!("it did not answer within {} s", checks.deadline().as_secs())))
            }
            Err(CheckError::Identity(e)) => Err(explained(
                errno::ACCESS_DENIED,
                "Access/permission denied",
                format!("cannot act as the submitting user: {e}"),
            )),
            Err(e) => Err(self.unanswered(0, e.to_string())),
        }
    }

    /// The refusal when look `look` failed with `error`.
    fn failed(&self, look: usize, error: &std::io::Error) -> Refusal {
        let path = self.looks[look].path().display();
        match &self.named[look] {
            Named::WorkDir => explained(
                2063,
                "Invalid working directory",
                format!("working directory {path} does not exist or is not a directory"),
            ),
            Named::OutputDir { option, file } => explained(
                errno::INVALID_OUTPUT_PATH,
                "Invalid output file path",
                format!("cannot create directory {path} for {option} {}: {error}", file.display()),
            ),
            Named::Input => explained(
                errno::INVALID_OUTPUT_PATH,
                "Invalid input file path",
                format!("--input file {path} does not exist"),
            ),
        }
    }

    /// The refusal when look `look` could not be made (`why`).
    fn unanswered(&self, look: usize, why: String) -> Refusal {
        let description = format!("cannot check {}: {why}", self.looks[look].path().display());
        match &self.named[look] {
            Named::WorkDir => explained(2063, "Invalid working directory", description),
            Named::OutputDir { .. } => explained(errno::INVALID_OUTPUT_PATH, "Invalid output file path", description),
            Named::Input => explained(errno::INVALID_OUTPUT_PATH, "Invalid input file path", description),
        }
    }
}
