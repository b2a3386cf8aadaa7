//! Job steps: which steps of each job run, what part of the job's resources each holds,
//! and the spec of a new step.
//!
//! A step runs inside its job's allocation. It takes `ntasks × cpus-per-task` of the job's
//! CPUs and, when it asks for GPUs, that many of the job's GPUs, so that steps running at the
//! same time do not share them; a step asking for no GPUs sees all of the job's. A step that
//! fits the job but not what other steps leave waits for them; one that can never fit is
//! refused. `--overlap` shares everything and takes nothing.

use crate::api::step::StepRequest;
use crate::config::Config;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::step_record::StepRecord;
use crate::daemon::model::step_share::{Granted, Held};
use crate::daemon::supervision::step_spec::RunningStep;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What one running step holds.
#[derive(Debug, Clone)]
struct StepUse {
    cpus: u32,
    /// GPUs it holds exclusively.
    gpus: Vec<u32>,
    /// Its supervisor, once started.
    pid: Option<i32>,
    /// Its accounting record (`None` for a step taken back after a restart whose record
    /// could not be read: the store has it).
    record: Option<StepRecord>,
    /// Who cancelled it (`scancel JOB.STEP`).
    cancelled_by: Option<u32>,
    /// The srun that asked for it.
    srun: Srun,
}

/// The srun of a step, as `scontrol show step` names it (`SrunHost:Pid`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Srun {
    /// Its host (empty: not known).
    pub host: String,
    /// Its process id (0: not known).
    pub pid: u32,
}

/// The steps of one job.
#[derive(Debug, Default)]
struct JobSteps {
    next_id: u32,
    running: BTreeMap<u32, StepUse>,
}

/// Why a step cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepRefusal {
    /// Never: Slurm's error text.
    Fatal(String),
    /// Not now: other steps hold what it needs (Slurm's reason).
    Busy(String),
}

/// Every job's steps.
#[derive(Debug, Default)]
pub struct Steps {
    by_job: HashMap<u32, JobSteps>,
}

fn fatal(text: &str) -> StepRefusal {
    StepRefusal::Fatal(text.into())
}

impl Steps {
    /// Gives a new step of `job` its share, or says why it cannot have one. `steps_dir` is
    /// where the job's step directories are: after a daemon restart, numbering goes on after
    /// the steps found there.
    pub fn create(
        &mut self,
        job: &Job,
        req: &StepRequest,
        config: &Config,
        steps_dir: &Path,
    ) -> Result<Granted, StepRefusal> {
        match job.state() {
            JobState::Running => {}
            JobState::Pending => return Err(fatal("Job is pending execution")),
            // As Slurm: no step starts in a suspended job.
            JobState::Suspended => return Err(fatal("Requested operation is presently disabled")),
            _ => return Err(fatal("Job/step already completing or completed")),
        }
        let ntasks = req.ntasks.unwrap_or(job.ntasks).max(1);
        let cpus = ntasks.saturating_mul(req.cpus_per_task.unwrap_or(1).max(1));
        if cpus > job.req.cpus {
            return Err(fatal("More processors requested than permitted"));
        }
        let wanted_gpus = req.gpus.unwrap_or(0) as usize;
        // A shard job holds shards of its GPU, not the GPU: its steps share them.
        if wanted_gpus > job.gpus.len() || (wanted_gpus > 0 && job.req.shards > 0) {
            return Err(fatal("Invalid generic resource (gres) specification"));
        }
        let other_node = |list: &str| {
            crate::options::hostlist::expand(list).map_or(true, |hosts| hosts.iter().any(|h| h != &config.node_name))
        };
        if req.nodelist.as_deref().is_some_and(other_node) {
            return Err(fatal("Requested node configuration is not available"));
        }
        let many_nodes = |n: &str| crate::options::parse_node_range(n).map_or(true, |(min, _)| min > 1);
        if req.nodes.as_deref().is_some_and(many_nodes) {
            return Err(fatal("Requested node configuration is not available"));
        }
        let steps = self
            .by_job
            .entry(job.id)
            .or_insert_with(|| JobSteps { next_id: first_free_id(steps_dir), ..Default::default() });
        let (cpus_held, gpus_held) = steps.running.values().fold((0u32, Vec::new()), |(c, mut g), s| {
            g.extend(&s.gpus);
            (c + s.cpus, g)
        });
        let free_gpus: Vec<&crate::gpu::Gpu> = job.gpus.iter().filter(|g| !gpus_held.contains(&g.index)).collect();
        let (held_cpus, held_gpus, seen_gpus) = if req.overlap {
            let seen = if wanted_gpus > 0 { job.gpus[..wanted_gpus].to_vec() } else { job.gpus.clone() };
            (0, Vec::new(), seen)
        } else {
            if cpus + cpus_held > job.req.cpus || wanted_gpus > free_gpus.len() {
                return Err(StepRefusal::Busy("Requested nodes are busy".into()));
            }
            let taken: Vec<crate::gpu::Gpu> = free_gpus[..wanted_gpus].iter().map(|&g| g.clone()).collect();
            let held = taken.iter().map(|g| g.index).collect();
            let seen = if wanted_gpus > 0 { taken } else { job.gpus.clone() };
            (cpus, held, seen)
        };
        let step_id = steps.next_id;
        steps.next_id += 1;
        let record = StepRecord {
            job: job.id,
            step: step_id,
            name: step_name(req),
            state: JobState::Running,
            start: 0,
            end: 0,
            exit_status: None,
            ntasks,
            cpus,
            gpus: seen_gpus.len() as u32,
            mem_mb: job.req.mem_mb,
            time_limit: req.time_limit,
            cancelled_by: None,
            usage: None,
            gpu_use: None,
        };
        steps.running.insert(
            step_id,
            StepUse {
                cpus: held_cpus,
                gpus: held_gpus.clone(),
                pid: None,
                record: Some(record.clone()),
                cancelled_by: None,
                srun: Srun { host: req.srun_host.clone(), pid: req.srun_pid },
            },
        );
        Ok(Granted { step_id, ntasks, gpus: seen_gpus, held: Held { cpus: held_cpus, gpus: held_gpus }, record })
    }

    /// Takes back a step of `job` that was running when the daemon stopped: its supervisor,
    /// what it held and its record (its srun is not known any more). Later steps are
    /// numbered after the ones in `steps_dir`.
    pub fn adopt(&mut self, job: u32, found: RunningStep, steps_dir: &Path) {
        let steps = self
            .by_job
            .entry(job)
            .or_insert_with(|| JobSteps { next_id: first_free_id(steps_dir), ..Default::default() });
        steps.running.insert(
            found.step,
            StepUse {
                cpus: found.held.cpus,
                gpus: found.held.gpus,
                pid: Some(found.pid),
                record: found.record,
                cancelled_by: None,
                srun: Srun::default(),
            },
        );
    }

    /// Records the supervisor of a step, started at `now`; returns the step's accounting
    /// record to store.
    pub fn started(&mut self, job: u32, step: u32, pid: i32, now: u64) -> Option<StepRecord> {
        let s = self.by_job.get_mut(&job).and_then(|j| j.running.get_mut(&step))?;
        s.pid = Some(pid);
        let record = s.record.as_mut()?;
        record.start = now;
        Some(record.clone())
    }

    /// Records that `uid` cancelled a step.
    pub fn cancelled(&mut self, job: u32, step: u32, uid: u32) {
        if let Some(s) = self.by_job.get_mut(&job).and_then(|j| j.running.get_mut(&step)) {
            s.cancelled_by.get_or_insert(uid);
        }
    }

    /// A step ended (or never started): what it held is free again. `None` if it was not
    /// running (ended already, or forgotten with its job); else who cancelled it, if someone
    /// did.
    pub fn ended(&mut self, job: u32, step: u32) -> Option<Option<u32>> {
        self.by_job.get_mut(&job)?.running.remove(&step).map(|s| s.cancelled_by)
    }

    /// Marks the steps of `job` whose supervisors have not yet been reported started as
    /// started at `at`, and returns their records: a step may run and end before its start
    /// is reported, and its job end before that too.
    pub fn start_unreported(&mut self, job: u32, at: u64) -> Vec<StepRecord> {
        let Some(steps) = self.by_job.get_mut(&job) else { return Vec::new() };
        let unreported = steps.running.values_mut().filter_map(|s| s.record.as_mut()).filter(|r| r.start == 0);
        unreported
            .map(|r| {
                r.start = at;
                r.clone()
            })
            .collect()
    }

    /// The steps of `job` that run.
    pub fn running(&self, job: u32) -> Vec<u32> {
        self.by_job.get(&job).map(|j| j.running.keys().copied().collect()).unwrap_or_default()
    }

    /// The accounting records of `job`'s running steps that this daemon started.
    pub fn records(&self, job: u32) -> Vec<StepRecord> {
        self.listed(job).map(|(r, _)| r.clone()).collect()
    }

    /// The running steps of `job` that this daemon started, by id, each with its srun.
    pub fn listed(&self, job: u32) -> impl Iterator<Item = (&StepRecord, &Srun)> {
        self.by_job
            .get(&job)
            .into_iter()
            .flat_map(|j| j.running.values())
            .filter_map(|s| s.record.as_ref().filter(|r| r.start > 0).map(|r| (r, &s.srun)))
    }

    /// The supervisor of step `step` of `job`, if it runs.
    pub fn supervisor(&self, job: u32, step: u32) -> Option<i32> {
        self.by_job.get(&job)?.running.get(&step)?.pid
    }

    /// `job`'s running steps whose supervisors are known, each with its supervisor.
    pub fn step_supervisors(&self, job: u32) -> Vec<(u32, i32)> {
        self.by_job
            .get(&job)
            .map(|j| j.running.iter().filter_map(|(&step, s)| Some((step, s.pid?))).collect())
            .unwrap_or_default()
    }

    /// The supervisors of `job`'s running steps.
    pub fn supervisors(&self, job: u32) -> Vec<i32> {
        self.by_job.get(&job).map(|j| j.running.values().filter_map(|s| s.pid).collect()).unwrap_or_default()
    }

    /// Forgets a job that ended; returns the supervisors of the steps it still had.
    pub fn forget(&mut self, job: u32) -> Vec<i32> {
        let pids = self.supervisors(job);
        self.by_job.remove(&job);
        pids
    }
}

/// A step's name, as Slurm's accounting shows it: `srun -J`, else the program's file name.
fn step_name(req: &StepRequest) -> String {
    if let Some(name) = req.name.as_deref().filter(|n| !n.is_empty()) {
        return name.to_string();
    }
    let program = req.argv.first().map(String::as_str).unwrap_or("");
    Path::new(program).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| program.to_string())
}

/// The first step id after those whose directories are under `steps_dir`.
fn first_free_id(steps_dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(steps_dir) else { return 0 };
    entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).map(|n| n + 1).max().unwrap_or(0)
}
