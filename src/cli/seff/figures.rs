//! What seff reports of one job, worked out from its accounting record as Slurm's
//! `contribs/seff/seff` works it out from slurmdbd's: the cores and nodes it was given, the
//! CPU time of its steps, its wall-clock time, the most memory one of its steps used and
//! the memory it was given. Kept apart from the printing so that each rule can be checked
//! by itself.

use crate::api::acct::AcctJob;

/// The figures of one job, in seff's units.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// The job id (an array task's own id).
    pub job_id: u32,
    /// `A_i` for an array task, else empty.
    pub array_job_id: String,
    /// The cluster's name.
    pub cluster: String,
    /// The owner's name.
    pub user: String,
    /// The group's name.
    pub group: String,
    /// The state's long name (`COMPLETED`).
    pub state: String,
    /// The exit code: the high byte of the raw status, as seff keeps it.
    pub exit_code: i32,
    /// Cores given (1 when none is recorded, as seff counts a job without a count).
    pub ncpus: u64,
    /// Nodes given (1 likewise).
    pub nnodes: u64,
    /// Memory asked for, KiB (only the debug line shows it).
    pub req_mem_kb: u64,
    /// Whether the memory was asked for per node (else per CPU).
    pub per_node: bool,
    /// CPU time of its steps, seconds: whole seconds summed, then the summed
    /// microseconds rounded to the nearest second, as seff adds them.
    pub cpu_secs: u64,
    /// Wall-clock seconds (so far, for a running job).
    pub walltime: u64,
    /// The most memory one of its steps used, KiB.
    pub mem_kb: u64,
    /// Memory it was given, KiB (0: none reserved).
    pub alloc_mem_kb: u64,
}

/// Why seff cannot report a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An array job's record without a task id (seff's exit code 3).
    BadArrayTask(u32),
}

impl Figures {
    /// The figures of `job`, read at the daemon's time `now`.
    pub fn of(job: &AcctJob, now: u64) -> Result<Figures, Refusal> {
        let array_job_id = match (job.array_job_id, job.array_task_id) {
            (0, _) => String::new(),
            (array, Some(task)) => format!("{array}_{task}"),
            (array, None) => return Err(Refusal::BadArrayTask(array)),
        };
        let alloc = job.alloc.unwrap_or_default();
        let or_one = |n: u32| if n == 0 { 1 } else { n as u64 };
        Ok(Figures {
            job_id: job.id,
            array_job_id,
            cluster: job.cluster.clone(),
            user: job.user.clone(),
            group: job.group.clone(),
            state: job.state.clone(),
            exit_code: job.exit_status >> 8,
            ncpus: or_one(alloc.cpus),
            nnodes: or_one(alloc.nodes),
            req_mem_kb: job.req.mem_mb * 1024,
            per_node: !job.mem_per_cpu,
            cpu_secs: cpu_secs(job),
            walltime: job.elapsed(now),
            mem_kb: job.steps.iter().filter_map(|s| s.usage).map(|u| u.max_rss_kb).max().unwrap_or(0),
            alloc_mem_kb: alloc.mem_mb * 1024,
        })
    }

    /// Core-walltime: the wall-clock time times the cores, seconds.
    pub fn core_walltime(&self) -> u64 {
        self.walltime * self.ncpus
    }
}

/// The CPU time (user and system) of `job`'s steps, as seff adds up slurmdbd's
/// `tot_cpu_sec` and `tot_cpu_usec` of each: the whole seconds, plus the microseconds
/// summed apart and rounded to the nearest second. A step still running has none yet.
fn cpu_secs(job: &AcctJob) -> u64 {
    let (secs, usecs) = job
        .steps
        .iter()
        .filter_map(|s| s.usage)
        .map(|u| u.user_usec + u.sys_usec)
        .fold((0, 0), |(s, us), t| (s + t / 1_000_000, us + t % 1_000_000));
    secs + (usecs as f64 / 1_000_000.0 + 0.5) as u64
}
