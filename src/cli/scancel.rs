//! `scancel`: cancel or signal jobs.

use crate::api::client::Client;
use crate::api::types::{JobInfo, SignalScope};
use clap::Parser;
use std::ffi::OsString;

/// scancel's options.
#[derive(Debug, Parser)]
#[command(about = "Used to signal jobs or job steps that are under the control of Slurm", disable_version_flag = true)]
pub struct ScancelArgs {
    /// signal batch shell only
    #[arg(short = 'b', long)]
    pub batch: bool,
    /// signal batch shell and all steps for specified job
    #[arg(short = 'f', long)]
    pub full: bool,
    /// act only on jobs with this name
    #[arg(short = 'n', long = "name", alias = "jobname", value_name = "job_name")]
    pub name: Option<String>,
    /// act only on jobs in this partition
    #[arg(short = 'p', long, value_name = "partition")]
    pub partition: Option<String>,
    /// disable warnings
    #[arg(short = 'Q', long)]
    pub quiet: bool,
    /// signal to send to job, default is SIGKILL
    #[arg(short = 's', long, value_name = "name | integer")]
    pub signal: Option<String>,
    /// act only on jobs in this state.  Valid job states are PENDING, RUNNING and SUSPENDED
    #[arg(short = 't', long = "state", value_name = "states")]
    pub state: Option<String>,
    /// act only on jobs of this user
    #[arg(short = 'u', long, value_name = "user_name")]
    pub user: Option<String>,
    /// act only on jobs of the current user
    #[arg(long)]
    pub me: bool,
    /// The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)
    #[arg(short = 'M', long = "clusters", value_name = "cluster_name")]
    pub clusters: Option<String>,
    /// verbose operation
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub version: super::VersionFlag,
    /// Job ids to act on
    #[arg(value_name = "job_id")]
    pub ids: Vec<String>,
}

const CMD: &str = "scancel";

fn state_matches(filter: &str, job: &JobInfo) -> bool {
    let state = job.job_state.first().map(String::as_str).unwrap_or("");
    filter.split(',').any(|f| {
        let f = f.to_ascii_uppercase();
        match f.as_str() {
            "PD" => state == "PENDING",
            "R" => state == "RUNNING",
            "S" => state == "SUSPENDED",
            _ => state == f,
        }
    })
}

/// What one id on the command line names.
#[derive(Debug, PartialEq)]
enum Target {
    /// Jobs: `N`, `A_T`, or each task of `A_[1-3,5]`, as the daemon's paths name them.
    Jobs(Vec<String>),
    /// A step, `N.S`.
    Step(String),
}

/// Reads one id: `N`, `N.S`, `A_T` or `A_[list]`; `None` when it is none of these.
fn parse_target(raw: &str) -> Option<Target> {
    if let Some((job, step)) = raw.split_once('.') {
        let number = super::job_ids::number;
        let (job, step) = (number(job).filter(|&n| n > 0)?, number(step)?);
        return Some(Target::Step(format!("{job}.{step}")));
    }
    super::job_ids::parse(raw).map(|ids| Target::Jobs(ids.path_ids()))
}

/// The ids to cancel a listed job by: its own, or for an entry that stands for an array's
/// pending tasks (`A_[1-3]`), each of those.
fn ids_of(job: &JobInfo) -> Vec<String> {
    let array = job.array_job_id.get().filter(|&a| a != 0);
    match (array, job.array_task_id.get()) {
        (Some(a), None) if !job.array_task_string.is_empty() => {
            let list = job.array_task_string.split('%').next().unwrap_or_default();
            let limit = crate::options::array::MAX_ARRAY_SIZE_LIMIT;
            let tasks = crate::options::array::parse_array(list, limit).map(|s| s.indices).unwrap_or_default();
            tasks.iter().map(|t| format!("{a}_{t}")).collect()
        }
        _ => vec![job.job_id.to_string()],
    }
}

/// Whether `id` (`N` or `A_T`) names `job`: an array's id names all its tasks.
fn names_job(id: &str, job: &JobInfo) -> bool {
    let array = job.array_job_id.get().filter(|&a| a != 0);
    match id.split_once('_') {
        Some((a, t)) => {
            array.is_some_and(|x| x.to_string() == a) && job.array_task_id.get().is_some_and(|x| x.to_string() == t)
        }
        None => job.job_id.to_string() == id || array.is_some_and(|x| x.to_string() == id),
    }
}

/// Runs scancel.
pub fn run(args: Vec<OsString>) -> i32 {
    let args: ScancelArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    super::choose_cluster(args.clusters.as_deref());
    super::set_verbosity(args.verbose);
    let filters =
        args.name.is_some() || args.partition.is_some() || args.state.is_some() || args.user.is_some() || args.me;
    if args.ids.is_empty() && !filters {
        super::error(CMD, "No job identification provided");
        return 1;
    }
    let (mut ids, steps) = match targets(&args) {
        Ok(named) => named,
        Err(code) => return code,
    };
    let signal = match signal(&args) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // As Slurm: `-f` signals everything (and makes `-b` moot), `-b` the batch shell alone,
    // neither the steps alone.
    let scope = match (args.full, args.batch) {
        (true, _) => SignalScope::Full,
        (false, true) => SignalScope::Batch,
        (false, false) => SignalScope::Steps,
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut code = cancel_steps(&client, &steps, signal.as_deref(), args.verbose);
    if filters {
        ids = match select_jobs(&client, &args, &ids) {
            Ok(selected) => selected,
            Err(code) => return code,
        };
    }
    code |= cancel_jobs(&client, &ids, signal.as_deref(), scope, args.verbose);
    code
}

/// The jobs (each by the id the daemon's paths take) and the steps the command line names;
/// `Err` (after the message) at one that names neither.
fn targets(args: &ScancelArgs) -> Result<(Vec<String>, Vec<String>), i32> {
    let mut ids: Vec<String> = Vec::new();
    let mut steps = Vec::new();
    for raw in args.ids.iter().flat_map(|a| super::job_ids::split(a)) {
        match parse_target(&raw) {
            Some(Target::Jobs(mut named)) => ids.append(&mut named),
            Some(Target::Step(step)) => steps.push(step),
            None => {
                super::error(CMD, &format!("Invalid job id {raw}"));
                return Err(1);
            }
        }
    }
    Ok((ids, steps))
}

/// `-s`: the signal's number, if one was given; `Err` (after the message) for a name that is
/// no signal.
fn signal(args: &ScancelArgs) -> Result<Option<String>, i32> {
    let Some(s) = &args.signal else { return Ok(None) };
    match crate::options::signal::signal_number(s) {
        Some(n) => Ok(Some(n.to_string())),
        None => {
            super::error(CMD, &format!("Invalid job signal: {s}"));
            Err(1)
        }
    }
}

/// Cancels (or signals) each of `steps`; the exit code: 1 when one could not be.
fn cancel_steps(client: &Client, steps: &[String], signal: Option<&str>, verbose: u8) -> i32 {
    let mut code = 0;
    for step in steps {
        if verbose > 0 {
            eprintln!("scancel: Terminating step {step}");
        }
        match client.cancel(step, signal, SignalScope::Steps) {
            Ok(resp) => {
                for message in
                    resp.errors.iter().map(|e| &e.description).chain(resp.status.iter().map(|s| &s.error.message))
                {
                    super::error(CMD, &format!("Kill job error on job step id {step}: {message}"));
                    code = 1;
                }
            }
            Err(e) => {
                super::error(CMD, &e.to_string());
                code = 1;
            }
        }
    }
    code
}

/// The ids of the live jobs (pending, running or suspended) that the filters (`-n`, `-p`,
/// `-t`, `-u`, `--me`) select, among `ids` when any were named; `Err` (after the message)
/// when the jobs cannot be listed.
fn select_jobs(client: &Client, args: &ScancelArgs, ids: &[String]) -> Result<Vec<String>, i32> {
    let user = if args.me {
        Some(crate::identity::uid())
    } else {
        args.user.as_deref().map(crate::identity::user_uid).map(|u| u.unwrap_or(u32::MAX))
    };
    let jobs = match client.jobs() {
        Ok(r) => r.jobs,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return Err(1);
        }
    };
    Ok(jobs
        .iter()
        .filter(|j| matches!(j.job_state.first().map(String::as_str), Some("PENDING" | "RUNNING" | "SUSPENDED")))
        .filter(|j| ids.is_empty() || ids.iter().any(|id| names_job(id, j)))
        .filter(|j| args.name.as_ref().is_none_or(|n| &j.name == n))
        .filter(|j| args.partition.as_ref().is_none_or(|p| &j.partition == p))
        .filter(|j| args.state.as_ref().is_none_or(|s| state_matches(s, j)))
        .filter(|j| user.is_none_or(|u| j.user_id == u))
        .flat_map(ids_of)
        .collect())
}

/// Cancels (or signals, in `scope`) each job of `ids`; the exit code: 1 when one could not
/// be. A job already finished is passed over in silence, and an unknown one is said only
/// with `-v`, as Slurm does.
fn cancel_jobs(client: &Client, ids: &[String], signal: Option<&str>, scope: SignalScope, verbose: u8) -> i32 {
    let mut code = 0;
    for id in ids {
        if verbose > 0 {
            eprintln!("scancel: Terminating job {id}");
        }
        match client.cancel(id, signal, scope) {
            Ok(resp) => {
                for e in resp.errors {
                    super::error(CMD, &format!("Kill job error on job id {id}: {}", e.description));
                    code = 1;
                }
                for s in resp.status {
                    match s.error.code {
                        // Already finished: silent, as Slurm.
                        2021 => {}
                        // Unknown (never was, or purged): said only with -v, and exit 0, as Slurm
                        // does; tools cancel every job they ever submitted.
                        2017 => {
                            if verbose > 0 {
                                super::error(CMD, &format!("Kill job error on job id {id}: {}", s.error.message));
                            }
                        }
                        _ => {
                            super::error(CMD, &format!("Kill job error on job id {id}: {}", s.error.message));
                            code = 1;
                        }
                    }
                }
            }
            Err(e) => {
                super::error(CMD, &e.to_string());
                code = 1;
            }
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_jobs_array_tasks_task_lists_and_steps() {
        let jobs = |ids: &[&str]| Some(Target::Jobs(ids.iter().map(|s| s.to_string()).collect()));
        assert_eq!(parse_target("12"), jobs(&["12"]));
        assert_eq!(parse_target("12_3"), jobs(&["12_3"]));
        assert_eq!(parse_target("12_[1-3,7]"), jobs(&["12_1", "12_2", "12_3", "12_7"]));
        assert_eq!(parse_target("12.0"), Some(Target::Step("12.0".into())));
        for bad in ["0", "x", "12_", "12_x", "12_[3-1]", "_1", "1.x"] {
            assert_eq!(parse_target(bad), None, "{bad}");
        }
    }
}
