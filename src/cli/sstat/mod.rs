//! `sstat`: what the processes of running jobs' steps use now: CPU time and memory read from
//! `/proc` by the daemon when asked, and each step's GPU memory and SM utilisation as the
//! daemon's looks at the GPUs tallied them, in Slurm's fields.
//!
//! * [`fields`]: Slurm's fields and the value of each for a step;
//! * `options`: the command line read into the steps to look at and a layout.
//!
//! Lines are laid out by sacct's printer (the same `print_fields` in Slurm).

pub mod fields;
mod options;

use crate::api::acct::{Selection, StepId};
use crate::api::step_info::StepInfo;
use crate::cli::sacct::fields::Cell;
use crate::cli::sacct::print;
use std::ffi::OsString;

pub use options::SstatArgs;

const CMD: &str = "sstat";

/// Runs sstat.
pub fn run(args: Vec<OsString>) -> i32 {
    let plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    if plan.selections.is_empty() {
        super::error(CMD, "You didn't give me any jobs to stat.");
        return 1;
    }
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let steps = match client.step_stats() {
        Ok(reply) => reply.steps,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let mut out = String::new();
    if plan.header {
        out.push_str(&print::header(&plan.columns, &plan.layout));
    }
    for selection in &plan.selections {
        let found = chosen(&steps, selection, plan.all_steps);
        if found.is_empty() {
            let known = job_known(&client, selection);
            super::error(CMD, &nothing_running(selection, &steps, known));
            continue;
        }
        for step in found {
            match &step.stats {
                Some(stats) => {
                    let cells: Vec<Cell> =
                        plan.columns.iter().map(|c| fields::value(c.name, step, stats, &plan.units)).collect();
                    out.push_str(&print::row(&plan.columns, &cells, &plan.layout));
                }
                None => {
                    super::error(
                        CMD,
                        &format!(
                            "problem getting step_layout for StepId={}.{}: Access/permission denied",
                            step.job_id, step.step
                        ),
                    );
                }
            }
        }
    }
    super::format::emit_text(&out);
    // As Slurm's sstat: a job or step it could not look at is told of, and the exit is 0.
    0
}

/// The steps of `steps` that `selection` names, as Slurm's sstat picks them: the step it
/// names; else with `all` every step of the job; else its lowest numbered srun step.
fn chosen<'a>(steps: &'a [StepInfo], selection: &Selection, all: bool) -> Vec<&'a StepInfo> {
    let of_job = steps.iter().filter(|s| s.of_job(selection.job, selection.array_task));
    match selection.step {
        Some(wanted) => of_job.filter(|s| s.step == wanted).collect(),
        None if all => of_job.collect(),
        None => {
            of_job.filter(|s| matches!(s.step, StepId::Number(_))).min_by_key(|s| s.step.raw()).into_iter().collect()
        }
    }
}

/// Whether the job `selection` names is known to the daemon (running or not).
fn job_known(client: &crate::api::client::Client, selection: &Selection) -> bool {
    let id = match selection.array_task {
        Some(task) => format!("{}_{task}", selection.job),
        None => selection.job.to_string(),
    };
    client.job(&id).is_ok_and(|reply| !reply.jobs.is_empty())
}

/// Slurm's error for a selection that found no running step, with where it differs a hint
/// of what to ask instead (a job whose only running step is its script).
fn nothing_running(selection: &Selection, steps: &[StepInfo], known: bool) -> String {
    let job = match selection.array_task {
        Some(task) => format!("JobId={}_{task}", selection.job),
        None => format!("JobId={}", selection.job),
    };
    if let Some(step) = selection.step {
        return format!("StepId={}.{step} not found running.", selection.job);
    }
    if !known {
        return format!("couldn't get steps for {job}");
    }
    let batch_only = steps.iter().any(|s| s.of_job(selection.job, selection.array_task) && s.step == StepId::Batch);
    if batch_only {
        return format!(
            "No steps running for {job} but its batch script: sstat -j {}.batch (or -a) shows it",
            selection.job
        );
    }
    format!("No steps running for {job}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(job: u32, step: StepId) -> StepInfo {
        StepInfo { job_id: job, step, ..Default::default() }
    }

    #[test]
    fn a_job_without_a_step_picks_its_lowest_srun_step() {
        let steps =
            [step(5, StepId::Batch), step(5, StepId::Number(2)), step(5, StepId::Number(1)), step(6, StepId::Batch)];
        let sel = |text: &str| crate::api::acct::parse_selection(text).unwrap();
        let ids = |list: Vec<&StepInfo>| list.iter().map(|s| format!("{}.{}", s.job_id, s.step)).collect::<Vec<_>>();
        assert_eq!(ids(chosen(&steps, &sel("5"), false)), ["5.1"]);
        assert_eq!(ids(chosen(&steps, &sel("5"), true)), ["5.batch", "5.2", "5.1"]);
        assert_eq!(ids(chosen(&steps, &sel("5.batch"), false)), ["5.batch"]);
        assert!(chosen(&steps, &sel("6"), false).is_empty());
        assert_eq!(
            nothing_running(&sel("6"), &steps, true),
            "No steps running for JobId=6 but its batch script: sstat -j 6.batch (or -a) shows it"
        );
        assert_eq!(nothing_running(&sel("7"), &steps, false), "couldn't get steps for JobId=7");
        assert_eq!(nothing_running(&sel("7"), &steps, true), "No steps running for JobId=7");
        assert_eq!(nothing_running(&sel("6.3"), &steps, true), "StepId=6.3 not found running.");
    }
}
