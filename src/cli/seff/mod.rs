//! `seff JOBID`: how well a job used what it was given, as Slurm's contributed `seff`
//! script reports it (CPU time against core-walltime, memory used against memory given),
//! from the daemon's accounting record of the job (`POST /slurmlet/v1/history`, the
//! record sacct prints); for a job given GPUs, then, each GPU's utilisation and memory as
//! Princeton's jobstats prints them, from the daemon's GPU samples.
//!
//! * `options`: the command line, as the script's getopts reads it;
//! * [`figures`]: the job's figures, worked out as the script works them out;
//! * [`report`]: seff's lines;
//! * [`gpu`]: jobstats' GPU lines;
//! * [`units`]: the scripts' number formats.

pub mod figures;
pub mod gpu;
mod options;
pub mod report;
pub mod units;

use crate::api::acct::{AcctJob, HistoryQuery, HistoryReply};
use crate::api::client::Client;
use figures::{Figures, Refusal};
use std::ffi::OsString;

pub use options::SeffArgs;

const CMD: &str = "seff";

/// Runs seff.
pub fn run(args: Vec<OsString>) -> i32 {
    let plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    let selection = match crate::api::acct::parse_selection(&plan.job) {
        Ok(s) => s,
        Err(e) => {
            super::fatal(CMD, &e);
            return 1;
        }
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // A Slurm cluster's slurmrestd serves neither the history nor the GPU samples: the
    // message says to use the cluster's own seff.
    if let Err(e) = client.slurmlet_only(CMD) {
        super::error(CMD, &e.to_string());
        return 1;
    }
    // As the script asks slurmdbd: everybody's jobs, at any time.
    let query = HistoryQuery { selections: vec![selection], ..Default::default() };
    let history = match client.post::<_, HistoryReply>("/slurmlet/v1/history", &query) {
        Ok(h) => h,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = history.errors.first() {
        super::error(CMD, &e.description);
        return 1;
    }
    let Some(job) = history.jobs.first() else {
        eprintln!("Job not found.");
        return 2;
    };
    match render(&client, job, history.now, plan.debug) {
        Ok(text) => {
            super::format::emit_text(&text);
            0
        }
        Err(Refusal::BadArrayTask(array)) => {
            eprintln!("Badly formatted array jobid {array} with task_id = -2");
            3
        }
    }
}

/// Everything seff prints for `job`, read at the daemon's time `now`.
fn render(client: &Client, job: &AcctJob, now: u64, debug: bool) -> Result<String, Refusal> {
    let figures = Figures::of(job, now)?;
    let mut out = if debug { report::debug_lines(&figures) } else { String::new() };
    out.push_str(&report::identity_lines(&figures));
    out.push_str(&report::efficiency_lines(&figures));
    if figures.state != "PENDING" && !job.gpu_indices.is_empty() {
        out.push_str(&gpu::lines(&job.nodes, &gpu_figures(client, job, now)));
    }
    Ok(out)
}

/// The figures of `job`'s GPUs from the daemon's samples: the job's own reply gives the
/// samples' resolution, so that the node's samples are asked for from the start of the
/// step the job started in. Where the samples cannot be had, a warning, and the GPUs'
/// figures are unknown.
fn gpu_figures(client: &Client, job: &AcctJob, now: u64) -> Vec<gpu::GpuFigures> {
    let samples = client.job_gpu_samples(job.id).and_then(|own| {
        let resolution = own.resolution.max(1);
        let since = job.start - job.start % resolution;
        client.gpu_samples(Some(since as i64)).map(|node| (resolution, node))
    });
    match samples {
        Ok((resolution, node)) => gpu::per_gpu(job, &node.gpus, resolution, now),
        Err(e) => {
            super::warning(CMD, &format!("no GPU samples: {e}"));
            gpu::per_gpu(job, &[], 1, now)
        }
    }
}

#[cfg(test)]
mod tests;
