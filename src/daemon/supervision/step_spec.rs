//! What a new step's supervisor is told: its tasks' environment, I/O and limits, written to
//! `JOBDIR/steps/STEP/spec.json`.

use super::launch::batch_env;
use crate::api::step::StepRequest;
use crate::config::Config;
use crate::daemon::model::job::Job;
use crate::daemon::model::machine::Machine;
use crate::daemon::model::step_record::StepRecord;
use crate::daemon::model::step_share::{Granted, Held};
use crate::stepd::containment::Share;
use crate::stepd::step::StepSpec;
use std::path::{Path, PathBuf};

/// A step given its share, to start.
pub struct NewStep {
    /// Its directory.
    pub dir: PathBuf,
    /// What its supervisor is told.
    pub spec: StepSpec,
    /// What it holds.
    pub held: Held,
    /// Its accounting record, kept in its directory too: a daemon that stops before storing
    /// it stores it when it starts again.
    pub record: StepRecord,
}

/// The directory of step `step` of the job whose directory is `job_dir`.
pub fn step_dir(job_dir: &Path, step: u32) -> PathBuf {
    steps_dir(job_dir).join(step.to_string())
}

/// The directory holding a job's step directories.
pub fn steps_dir(job_dir: &Path) -> PathBuf {
    job_dir.join(crate::stepd::files::STEPS)
}

/// The variables every task of the step starts with: srun's environment, the job's
/// variables as a batch step has them, then the step's (compare a real step's
/// `env | grep SLURM`). Each task adds its own `SLURM_PROCID`, `SLURM_LOCALID` and
/// `SLURM_TASK_PID`.
pub fn step_env(job: &Job, config: &Config, machine: &Machine, req: &StepRequest, step: &Granted) -> Vec<String> {
    let node = &config.node_name;
    let ntasks = step.ntasks.to_string();
    let gpus = crate::gpu::index_list(&step.gpus);
    let mut vars: Vec<(&str, String)> = vec![
        ("SLURM_STEP_ID", step.step_id.to_string()),
        ("SLURM_STEPID", step.step_id.to_string()),
        ("SLURM_STEP_NODELIST", node.clone()),
        ("SLURM_STEP_NUM_NODES", "1".into()),
        ("SLURM_STEP_NUM_TASKS", ntasks.clone()),
        ("SLURM_STEP_TASKS_PER_NODE", ntasks.clone()),
        ("SLURM_NTASKS", ntasks.clone()),
        ("SLURM_NPROCS", ntasks),
        ("SLURM_GTIDS", (0..step.ntasks).map(|t| t.to_string()).collect::<Vec<_>>().join(",")),
        ("SLURM_DISTRIBUTION", "block".into()),
        ("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1".into()),
        ("SLURM_SRUN_COMM_HOST", "127.0.0.1".into()),
        ("SLURMD_DEBUG", "2".into()),
    ];
    if let Some(c) = req.cpus_per_task {
        vars.push(("SLURM_CPUS_PER_TASK", c.to_string()));
    }
    if req.label {
        vars.push(("SLURM_LABELIO", "1".into()));
    }
    vars.extend(cpu_bind_vars(&step_cpu_ids(job, step), step.ntasks));
    if !job.gpus.is_empty() {
        vars.push(("SLURM_STEP_GPUS", gpus.clone()));
        vars.extend(crate::gpu::visible_devices(&step.gpus, &job.gpus));
        vars.push(("GPU_DEVICE_ORDINAL", gpus));
    }
    let replaced = |entry: &String| {
        let name = entry.split('=').next().unwrap_or(entry);
        vars.iter().any(|(k, _)| *k == name)
    };
    // SLURM_JOB_GPUS is a batch job's: a step of an allocation (srun's own, salloc's) has
    // only its step's GPUs, as in Slurm.
    let batch_only = |entry: &String| job.interactive && entry.starts_with("SLURM_JOB_GPUS=");
    let mut env: Vec<String> = batch_env(job, config, machine, &req.environment)
        .into_iter()
        .filter(|e| !replaced(e) && !batch_only(e))
        .collect();
    env.extend(vars.into_iter().map(|(k, v)| format!("{k}={v}")));
    env
}

/// The CPU ids of a step of `job`: the job's, or the first of them when the step asks for
/// fewer CPUs than the job holds.
fn step_cpu_ids(job: &Job, step: &Granted) -> Vec<u32> {
    job.cpu_ids.iter().copied().take(step.record.cpus as usize).collect()
}

/// The CPU binding each of a step's `ntasks` tasks is told of, as Slurm's task/affinity
/// sets it (quietly) for a task bound to the CPUs `ids`: every task is bound to the step's
/// CPUs. None when the step holds no CPU ids.
fn cpu_bind_vars(ids: &[u32], ntasks: u32) -> Vec<(&'static str, String)> {
    if ids.is_empty() {
        return Vec::new();
    }
    let mask = crate::id_set::hex_mask(ids);
    let masks = vec![mask; ntasks.max(1) as usize].join(",");
    vec![
        ("SLURM_CPU_BIND_VERBOSE", "quiet".into()),
        ("SLURM_CPU_BIND_TYPE", "mask_cpu:".into()),
        ("SLURM_CPU_BIND_LIST", masks.clone()),
        ("SLURM_CPU_BIND", format!("{}{masks}", crate::options::table::TASK_CPU_BIND)),
    ]
}

/// The spec of a step given its share of `job`.
pub fn step_spec(job: &Job, config: &Config, machine: &Machine, req: &StepRequest, step: &Granted) -> StepSpec {
    let env = step_env(job, config, machine, req, step);
    let umask = super::launch::umask_of(&env);
    let now = crate::sys::now();
    let job_end = job.limit_end(now);
    let step_end = req.time_limit.map(|m| now + m as u64 * 60);
    StepSpec {
        job_id: job.id,
        step_id: step.step_id,
        argv: req.argv.clone(),
        env,
        cwd: PathBuf::from(&req.cwd),
        ntasks: step.ntasks,
        pty: req.pty,
        stdout: req.stdout.clone(),
        stderr: req.stderr.clone(),
        stdin: req.stdin.clone(),
        append: req.append,
        end_time: [job_end, step_end].into_iter().flatten().min(),
        own_end: step_end,
        job_start: job.start_time,
        kill_wait: config.kill_wait,
        node_name: config.node_name.clone(),
        names: crate::daemon::model::output_path::pattern_context(job, &config.node_name, &step.step_id.to_string()),
        umask,
        run_as: crate::identity::RunAs::when_needed(job.uid, job.gid),
        share: Share {
            cpus: step.record.cpus,
            cpu_ids: step_cpu_ids(job, step),
            mem_mb: step.record.mem_mb,
            gpus: step.gpus.clone(),
            cgroup: super::launch::cgroup_plan(
                job,
                config,
                machine,
                &step.step_id.to_string(),
                &step_cpu_ids(job, step),
                step.record.mem_mb,
            ),
        },
    }
}

/// The file of a step's directory that records what it holds.
pub const HELD: &str = "held.json";

/// The file of a step's directory that holds its accounting record.
pub const RECORD: &str = "record.json";

/// Writes a step's spec, what it holds and its accounting record into its directory
/// (created).
pub fn write_spec(dir: &Path, new: &NewStep) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(HELD), serde_json::to_vec(&new.held).expect("held serializes"))?;
    std::fs::write(dir.join(RECORD), serde_json::to_vec(&new.record).expect("a step record serializes"))?;
    std::fs::write(dir.join(crate::stepd::files::SPEC), serde_json::to_vec(&new.spec).expect("spec serializes"))
}

/// A step found in a job's directory when the daemon starts.
pub struct FoundStep {
    /// Its id.
    pub step: u32,
    /// Its accounting record, started when its supervisor did.
    pub record: Option<StepRecord>,
    /// Whether its supervisor still runs.
    pub alive: bool,
    /// The end its supervisor recorded, if it ended.
    pub end: Option<crate::stepd::step::end::StepEnd>,
}

/// Every step under `job_dir` whose supervisor started.
pub fn found_steps(job_dir: &Path) -> Vec<FoundStep> {
    let Ok(entries) = std::fs::read_dir(steps_dir(job_dir)) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(step) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let dir = entry.path();
        if std::fs::metadata(dir.join(crate::stepd::files::STEPD_PID)).is_err() {
            continue;
        }
        let end = crate::stepd::step::end::read(&dir);
        // A step whose end is recorded has ended, whatever is left of its supervisor.
        let alive = crate::stepd::step::live_supervisor(&dir).is_some();
        found.push(FoundStep { step, record: started_record(&dir), alive, end });
    }
    found
}

/// The accounting record in a step's directory `dir`, started when its supervisor wrote its
/// pid file; `None` before that, or when it cannot be read.
fn started_record(dir: &Path) -> Option<StepRecord> {
    let started = std::fs::metadata(dir.join(crate::stepd::files::STEPD_PID)).and_then(|m| m.modified()).ok()?;
    let mut record = serde_json::from_slice::<StepRecord>(&std::fs::read(dir.join(RECORD)).ok()?).ok()?;
    record.start = started.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Some(record)
}

/// A step whose supervisor still runs, found when the daemon starts.
pub struct RunningStep {
    /// Its id.
    pub step: u32,
    /// Its supervisor's pid.
    pub pid: i32,
    /// What it holds.
    pub held: Held,
    /// Its accounting record.
    pub record: Option<StepRecord>,
}

/// The steps under `job_dir` whose supervisors still run.
pub fn running_steps(job_dir: &Path) -> Vec<RunningStep> {
    let Ok(entries) = std::fs::read_dir(steps_dir(job_dir)) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(step) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let dir = entry.path();
        let alive = crate::stepd::read_stepd_pid(&dir)
            .filter(|&(pid, ticks)| crate::sys::process_start_ticks(pid) == Some(ticks));
        let held = std::fs::read(dir.join(HELD)).ok().and_then(|b| serde_json::from_slice::<Held>(&b).ok());
        if let (Some((pid, _)), Some(held)) = (alive, held) {
            found.push(RunningStep { step, pid, held, record: started_record(&dir) });
        }
    }
    found
}
