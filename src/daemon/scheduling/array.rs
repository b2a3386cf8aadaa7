//! Job arrays: one submit with `--array` becomes one job per index, each with its own id,
//! sharing the array's id (the first task's), its script and its `%N` limit.
//!
//! Slurm keeps the tasks that have not started in one record and splits each off as it
//! starts; here every task is its own record from the start, and listings gather the
//! pending ones back into Slurm's compressed `A_[3-15%2]` line (see `pending_groups`).

use crate::api::types::{errno, JobDescMsg};
use crate::config::Config;
use crate::daemon::model::job::{ArrayTask, Job, JobState};
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::options::array::{format_array, parse_array, ArraySpec};

/// Where an array task's output goes when the job names no file: `slurm-%A_%a.out`, as in
/// Slurm.
pub const DEFAULT_OUTPUT: &str = "slurm-%A_%a.out";

/// The array a job description asks for, checked against `MaxArraySize`; `None`: not an
/// array.
pub fn requested(desc: &JobDescMsg, config: &Config) -> Result<Option<ArraySpec>, Refusal> {
    let Some(text) = desc.array.as_deref().filter(|a| !a.is_empty()) else { return Ok(None) };
    parse_array(text, config.max_array_size).map(Some).map_err(|e| Refusal {
        kind: Kind::Invalid,
        description: match e {
            crate::options::OptionError::InvalidArray { value, why } => format!("--array={value}: {why}"),
            other => other.to_string(),
        },
        number: errno::INVALID_ARRAY,
        error: "Invalid job array specification".into(),
        source: "slurm_submit_batch_job()".into(),
    })
}

/// The step between the indices of an array: their common difference, or 1 when they are
/// not evenly spaced (or there is only one), as Slurm sets `SLURM_ARRAY_TASK_STEP`.
fn step_of(indices: &[u32]) -> u32 {
    let mut gaps = indices.windows(2).map(|w| w[1] - w[0]);
    match gaps.next() {
        Some(first) if gaps.all(|g| g == first) => first,
        _ => 1,
    }
}

/// The tasks of array `spec` made from `template`, numbered from `first_id` in index
/// order; the array's id is `first_id`.
pub fn tasks(template: &Job, spec: &ArraySpec, first_id: u32) -> Vec<Job> {
    let shared = ArrayTask {
        job_id: first_id,
        task_id: 0,
        count: spec.indices.len() as u32,
        min: spec.indices.first().copied().unwrap_or(0),
        max: spec.indices.last().copied().unwrap_or(0),
        step: step_of(&spec.indices),
        max_running: spec.max_running.unwrap_or(0),
    };
    spec.indices
        .iter()
        .zip(first_id..)
        .map(|(&task_id, id)| Job { id, array: Some(ArrayTask { task_id, ..shared }), ..template.clone() })
        .collect()
}

/// Whether job `id` (as written by a user: `A`) names `job`: its own id, or the id of the
/// array it is a task of.
pub fn named_by(job: &Job, id: u32) -> bool {
    job.id == id || job.array.is_some_and(|a| a.job_id == id)
}

/// How many tasks of each array hold resources, by array id.
pub fn running<'a>(holding: impl Iterator<Item = &'a Job>) -> std::collections::HashMap<u32, u32> {
    let mut counts = std::collections::HashMap::new();
    for a in holding.filter_map(|j| j.array) {
        *counts.entry(a.job_id).or_default() += 1;
    }
    counts
}

/// Whether array task `job` must wait for others of its array to end: `%N` of them run.
pub fn throttled(job: &Job, running: &std::collections::HashMap<u32, u32>) -> bool {
    job.array.is_some_and(|a| a.max_running > 0 && running.get(&a.job_id).copied().unwrap_or(0) >= a.max_running)
}

/// A pending array task that has never run and is neither held apart nor changed since
/// submit: Slurm lists such tasks together, in the array's own record.
fn gathered(job: &Job) -> bool {
    job.array.is_some() && job.state() == JobState::Pending && job.restarts == 0
}

/// The pending tasks squeue shows on one line: for each array, the first of its pending,
/// never-run tasks that share a hold and priority, with the index list of all of them
/// (`3-15%2`). Returns, for every job of `jobs` that leads a group of more than one task,
/// its position and the list; and the positions of the tasks folded into a leader.
fn pending_groups(jobs: &[&Job]) -> (Vec<(usize, String)>, Vec<bool>) {
    let mut leaders: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut group_of: std::collections::HashMap<(u32, bool, u32), usize> = std::collections::HashMap::new();
    let mut folded = vec![false; jobs.len()];
    for (i, job) in jobs.iter().enumerate() {
        let Some(array) = job.array.filter(|_| gathered(job)) else { continue };
        match group_of.entry((array.job_id, job.held, job.priority)) {
            std::collections::hash_map::Entry::Occupied(g) => {
                leaders[*g.get()].1.push(array.task_id);
                folded[i] = true;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(leaders.len());
                leaders.push((i, vec![array.task_id]));
            }
        }
    }
    let groups = leaders
        .into_iter()
        .filter(|(_, indices)| indices.len() > 1)
        .map(|(i, mut indices)| {
            indices.sort_unstable();
            let throttle = jobs[i].array.map_or(0, |a| a.max_running);
            let list = format_array(&indices);
            (i, if throttle > 0 { format!("{list}%{throttle}") } else { list })
        })
        .collect();
    (groups, folded)
}

/// A job as squeue lists it, with the index list of the pending tasks it stands for when
/// it leads an array's folded tasks (`3-15%2`).
pub type Listed<'a> = (&'a Job, Option<String>);

/// `jobs` (in listing order) as squeue lists them without `-r`: the pending, never-run
/// tasks of an array folded into one entry that stands for all of them, at the place of the
/// first. The jobs are not copied: a long queue is listed without one.
pub fn fold_pending<'a>(jobs: &[&'a Job]) -> Vec<Listed<'a>> {
    if !jobs.iter().any(|j| gathered(j)) {
        return jobs.iter().map(|j| (*j, None)).collect();
    }
    let (groups, folded) = pending_groups(jobs);
    // The groups come in their leaders' order: one pass over both.
    let mut groups = groups.into_iter().peekable();
    jobs.iter()
        .enumerate()
        .filter(|(i, _)| !folded[*i])
        .map(|(i, job)| (*job, groups.next_if(|(leader, _)| *leader == i).map(|(_, list)| list)))
        .collect()
}

/// A [`Listed`] entry as a job of its own, the index list in [`Job::listed_tasks`] (for the
/// REST replies, which copy the jobs they list).
pub fn listed_job((job, tasks): Listed<'_>) -> Job {
    match tasks {
        Some(list) => Job { listed_tasks: list.as_str().into(), ..job.clone() },
        None => job.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(indices: &[u32], max_running: Option<u32>) -> ArraySpec {
        ArraySpec { indices: indices.to_vec(), max_running }
    }

    #[test]
    fn tasks_are_numbered_from_the_array_id_and_share_its_counts() {
        let template = Job { name: "t".into(), state: Some(JobState::Pending), ..Default::default() };
        let tasks = tasks(&template, &spec(&[1, 3, 5], Some(2)), 40);
        let ids: Vec<(u32, u32)> = tasks.iter().map(|t| (t.id, t.array.unwrap().task_id)).collect();
        assert_eq!(ids, vec![(40, 1), (41, 3), (42, 5)]);
        let a = tasks[2].array.unwrap();
        assert_eq!((a.job_id, a.count, a.min, a.max, a.step, a.max_running), (40, 3, 1, 5, 2, 2));
        assert_eq!(tasks[1].display_id(), "40_3");
    }

    #[test]
    fn the_step_is_one_when_the_indices_are_uneven_or_alone() {
        assert_eq!(step_of(&[0, 4, 8, 12]), 4);
        assert_eq!(step_of(&[1, 2, 5]), 1);
        assert_eq!(step_of(&[7]), 1);
    }

    #[test]
    fn pending_never_run_tasks_fold_into_one_entry_per_hold() {
        let template = Job { state: Some(JobState::Pending), reason: "None".into(), ..Default::default() };
        let mut all = tasks(&template, &spec(&[0, 1, 2, 3, 4, 5], Some(2)), 10);
        all[0].state = Some(JobState::Running);
        all[2].reason = "JobArrayTaskLimit".into();
        all[4].held = true;
        all[5].restarts = 1;
        let refs: Vec<&Job> = all.iter().collect();
        let listed = fold_pending(&refs);
        let shown: Vec<(u32, &str)> = listed.iter().map(|(j, list)| (j.id, list.as_deref().unwrap_or(""))).collect();
        // Task 4 is held apart (alone, so listed as itself); task 5 has run before.
        assert_eq!(shown, vec![(10, ""), (11, "1-3%2"), (14, ""), (15, "")]);
    }

    #[test]
    fn an_array_is_named_by_its_id_and_each_task_by_its_own() {
        let template = Job::default();
        let all = tasks(&template, &spec(&[0, 1], None), 5);
        assert!(named_by(&all[1], 5) && named_by(&all[1], 6) && !named_by(&all[0], 6));
    }
}
