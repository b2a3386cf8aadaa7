//! Where a job's output, error and input files are: Slurm's file name patterns (`%j`, `%A_%a`,
//! `%u`, …) expanded for one job and step, relative names taken from the job's working
//! directory.

use crate::daemon::model::job::Job;
use crate::options::pattern;
use std::path::{Path, PathBuf};

/// The values file name patterns of `job`'s step `step` (`batch`, or a step id) refer to, as
/// Slurm's `fname_create` takes them for any step: `%A`/`%a` are the array's job id and this
/// task's index when the job is an array task, `%j` is the job's own id; `task_id` is task 0's.
pub fn pattern_context(job: &Job, node: &str, step: &str) -> pattern::PatternContext {
    pattern::PatternContext {
        job_id: job.id,
        job_name: job.name.to_string(),
        user: crate::identity::user_name(job.uid),
        node: node.to_string(),
        array_job_id: job.array.map_or(job.id, |a| a.job_id),
        array_task_id: job.array.map(|a| a.task_id),
        step: step.into(),
        task_id: 0,
        node_id: 0,
    }
}

/// Expands an output pattern to an absolute path (relative ones are under the job's cwd).
pub fn output_path(job: &Job, pattern_text: &str, node: &str) -> PathBuf {
    let expanded = pattern::expand(pattern_text, &pattern_context(job, node, "batch"));
    let p = PathBuf::from(expanded);
    if p.is_absolute() {
        p
    } else {
        Path::new(job.cwd.as_str()).join(p)
    }
}
