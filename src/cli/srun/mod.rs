//! `srun`: run a job step. Inside an allocation (`SLURM_JOB_ID` or `--jobid`) it becomes a
//! new step of that job; outside one it first gets an allocation of its own (as salloc
//! would), runs the step in it, and releases it when the step ends.

pub mod exits;
pub mod io;
mod io_options;
pub mod output;
mod reader;
pub mod signals;
pub mod state;
pub mod terminal;

use super::allocate::{self, Allocation};
use super::job_failure::Failure;
use crate::api::client::Client;
use crate::api::http::Upgrade;
use crate::api::step::StepRequest;
use crate::api::types::Envelope;
use crate::config::target::client_config;
use crate::options::{gres, time, JobOptions, Tool};
use crate::stepd::step::StepInput;
use std::ffi::OsString;

const CMD: &str = "srun";

/// Runs srun.
pub fn run(args: Vec<OsString>) -> i32 {
    srun(args).unwrap_or_else(|failure| failure.report(CMD))
}

fn srun(args: Vec<OsString>) -> Result<i32, Failure> {
    // Before any thread starts, so that every thread leaves these signals to srun's own
    // handling (see `signals`).
    let _ = signals::block_signals();
    let env: Vec<(String, String)> = std::env::vars().collect();
    let o = super::job_command::options(Tool::Srun, CMD, &args, &env)?;
    if o.positional.is_empty() {
        eprintln!("{CMD}: fatal: No command given to execute.");
        return Ok(1);
    }
    let mut step = step_request(&o, &env)?;
    super::choose_cluster(o.value("clusters"));
    super::set_verbosity(o.count("verbose"));
    let client = super::connect(CMD).map_err(Failure::Usage)?;
    match o.value("jobid") {
        Some(id) => {
            let id = id.split('.').next().unwrap_or(id);
            let id: u32 = id.trim().parse().map_err(|_| Failure::Message(format!("Invalid job id: {id}"), 1))?;
            if step.ntasks.is_none() {
                // Only SLURM_JOB_ID was left in the environment: the step has the job's tasks.
                let job = client.job(&id.to_string()).ok().and_then(|r| r.jobs.into_iter().next());
                step.ntasks = job.and_then(|j| j.tasks.get()).filter(|&n| n > 0);
            }
            let node = std::env::var("SLURMD_NODENAME")
                .or_else(|_| std::env::var("SLURM_JOB_NODELIST"))
                .ok()
                .or_else(|| crate::config::Config::load(&client_config().0).ok().map(|c| c.node_name))
                .unwrap_or_else(crate::paths::hostname);
            run_step(&client, id, &step, &o, node).map(|e| e.exit_code)
        }
        None => {
            let mut desc = o.to_job_desc()?;
            desc.current_working_directory = Some(step.cwd.clone());
            desc.environment = Some(step.environment.clone());
            if desc.name.is_none() {
                let program = std::path::Path::new(&o.positional[0]);
                desc.name = Some(program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
            }
            if o.has("test-only") {
                return allocate::test_only(CMD, &client, desc);
            }
            let interrupt =
                crate::sys::SignalFd::block_all(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT]).ok();
            let how = allocate::Waiting {
                immediate: o.has("immediate"),
                quiet: o.has("quiet"),
                interrupt: interrupt.as_ref(),
            };
            let allocation = allocate::allocate(CMD, &client, desc, &how)?;
            drop(interrupt);
            // The step takes the whole allocation it made; the job's variables come with it.
            step.gpus = None;
            step.time_limit = None;
            step.environment.extend(allocation.grant.env.iter().cloned());
            let node = allocation.grant.nodes.clone();
            let ended = run_step(&client, allocation.grant.job_id, &step, &o, node);
            finish(allocation, ended.as_ref().map_or(1 << 8, StepEnd::release_status));
            ended.map(|e| e.exit_code)
        }
    }
}

/// Releases an allocation srun made with the raw status `wait_status`, saying why if it was
/// revoked.
fn finish(allocation: Allocation, wait_status: i32) {
    if let Some(why) = allocation.revoked() {
        eprintln!("{CMD}: {why}");
    }
    allocation.release(wait_status);
}

/// How a step srun ran ended.
struct StepEnd {
    /// srun's exit code.
    exit_code: i32,
    /// The step ran out of memory (slurmstepd's `SIG_OOM`).
    out_of_memory: bool,
}

impl StepEnd {
    /// The raw status an allocation of srun's own is released with: `SIG_OOM` for a step out
    /// of memory (the job ends `OUT_OF_MEMORY`, as slurmctld ends it), else srun's exit code.
    fn release_status(&self) -> i32 {
        match self.out_of_memory {
            true => crate::stepd::SIG_OOM,
            false => (self.exit_code & 0xff) << 8,
        }
    }
}

/// Starts the step in job `id` and runs its I/O to the end.
fn run_step(client: &Client, id: u32, step: &StepRequest, o: &JobOptions, node: String) -> Result<StepEnd, Failure> {
    let conn = match client.open_stream(&format!("/slurmlet/v1/job/{id}/steps"), step) {
        Ok(Upgrade::Switched(conn)) => conn,
        Ok(Upgrade::Refused(resp)) => {
            match Client::decode::<Envelope>(&resp) {
                Ok(reply) if !reply.errors.is_empty() => {
                    reply.errors.iter().for_each(|e| super::error(CMD, &e.description));
                }
                _ => super::error(CMD, &format!("Unable to create step for job {id} ({})", resp.status)),
            }
            return Ok(StepEnd { exit_code: 1, out_of_memory: false });
        }
        Err(e) => return Err(Failure::Message(e.to_string(), 1)),
    };
    let opts = io::IoOptions {
        label: o.has("label"),
        unbuffered: o.has("unbuffered"),
        pty: step.pty.is_some(),
        forward_stdin: matches!(step.stdin, StepInput::All | StepInput::Task(_)),
        node_name: node,
        disable_status: o.has("disable-status"),
        quit_on_interrupt: o.has("quit-on-interrupt"),
        ntasks: step.ntasks.unwrap_or(1),
        kill_wait: crate::config::Config::load(&client_config().0).map(|c| c.kill_wait).unwrap_or(30),
        verbose: o.count("verbose"),
        job_id: Some(id),
        kill_on_bad_exit: o.value("kill-on-bad-exit").is_some_and(|v| v != "0"),
        wait_after_first: number(o, "wait")?.map(|s| std::time::Duration::from_secs(s as u64)).filter(|d| !d.is_zero()),
    };
    let outcome = io::run_step(conn, &opts).map_err(|e| Failure::Message(format!("step {id}: {e}"), 1))?;
    let status = exits::step_status(outcome.exits.iter().map(|&(_, status)| status));
    let out_of_memory = exits::Ending::of(status) == exits::Ending::OutOfMemory;
    Ok(StepEnd { exit_code: outcome.exit_code, out_of_memory })
}

/// A whole number option, or Slurm's error for it.
fn number(o: &JobOptions, long: &'static str) -> Result<Option<u32>, Failure> {
    o.value(long)
        .map(|v| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| Failure::Message(format!("Invalid numeric value \"{v}\" for --{long}."), 255))
        })
        .transpose()
}

/// The GPUs a step asks for (`--gres=gpu:N`, `--gpus=N`, `--gpus-per-task=N`).
fn requested_gpus(o: &JobOptions, ntasks: u32) -> Result<Option<u32>, Failure> {
    let mut gpus = None;
    if let Some(g) = o.value("gres").filter(|g| *g != "none") {
        let n: u32 = gres::parse_gres(g)?.iter().filter(|r| r.name == "gpu").map(|r| r.count).sum();
        gpus = Some(n);
    }
    if let Some(g) = o.value("gpus") {
        gpus = Some(gres::parse_gpus(g, "gpus")?.count);
    }
    if let Some(g) = o.value("gpus-per-task") {
        gpus = Some(gres::parse_gpus(g, "gpus-per-task")?.count * ntasks);
    }
    Ok(gpus)
}

/// The step request the options describe.
fn step_request(o: &JobOptions, env: &[(String, String)]) -> Result<StepRequest, Failure> {
    let ntasks = number(o, "ntasks")?.or(number(o, "ntasks-per-node")?);
    let cwd = super::job_command::working_directory(o)?;
    let stdin = match o.value("input") {
        None | Some("all") => StepInput::All,
        Some("none") => StepInput::None,
        Some(n) if n.parse::<u32>().is_ok() => StepInput::Task(n.parse().expect("checked")),
        Some(file) => StepInput::File(file.to_string()),
    };
    let time_limit = match o.value("time") {
        Some(t) => time::parse_time_limit(t)?,
        None => None,
    };
    let environment = super::job_command::environment(o, env);
    Ok(StepRequest {
        ntasks,
        cpus_per_task: number(o, "cpus-per-task")?,
        gpus: requested_gpus(o, ntasks.unwrap_or(1))?,
        overlap: o.has("overlap"),
        nodes: o.value("nodes").map(str::to_string),
        nodelist: o.value("nodelist").map(str::to_string),
        argv: o.positional.clone(),
        environment,
        cwd: cwd.display().to_string(),
        pty: o
            .has("pty")
            .then(|| terminal::terminal_size().unwrap_or(crate::api::stream::WinSize { rows: 24, cols: 80 })),
        stdout: o.value("output").filter(|p| *p != "none").map(str::to_string),
        stderr: o.value("error").filter(|p| *p != "none").map(str::to_string),
        stdin,
        append: matches!(o.value("open-mode"), Some("append" | "a")),
        label: o.has("label"),
        time_limit,
        // A name srun only inherited from its job (SLURM_JOB_NAME) does not name the step.
        name: o
            .value("job-name")
            .filter(|n| env.iter().all(|(k, v)| k != "SLURM_JOB_NAME" || v != n))
            .map(str::to_string),
        srun_host: crate::paths::hostname(),
        srun_pid: std::process::id(),
    })
}
