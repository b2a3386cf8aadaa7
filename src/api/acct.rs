//! Job accounting: what sacct asks the daemon for (`POST /slurmlet/v1/history`) and the
//! records it gets back, one per job with its steps, in the shape sacct prints them.
//!
//! slurmrestd has no such call: sacct's own reply is smaller than the v0.0.43 records of
//! `GET /slurmdb/v0.0.43/jobs` (see [`super::slurmdb`]), which the daemon builds from the same
//! records.

use super::types::ApiError;
use serde::{Deserialize, Serialize};

/// Slurm's `NO_VAL`: what the accounting records hold as the start of a job that ended
/// without starting (printed `None`).
pub const NO_VAL: u64 = 0xffff_fffe;

/// CPU time and memory used by the processes of a job's batch script or of a step, as
/// `getrusage(RUSAGE_CHILDREN)` reports them once they are gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// User CPU time, microseconds.
    pub user_usec: u64,
    /// System CPU time, microseconds.
    pub sys_usec: u64,
    /// The largest resident set of any of the processes (of all of them together, where
    /// their cgroup was read), KiB.
    pub max_rss_kb: u64,
    /// Their resident memory on average over the looks taken while they ran (Slurm's
    /// `AveRSS`), KiB; 0 where none was taken.
    pub ave_rss_kb: u64,
}

impl Usage {
    /// The usage of the calling process's children that have been waited for.
    pub fn of_children() -> Usage {
        // SAFETY: getrusage fills a zeroed rusage; RUSAGE_CHILDREN needs no other argument.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
            ru
        };
        let usec = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000 + t.tv_usec.max(0) as u64;
        Usage {
            user_usec: usec(ru.ru_utime),
            sys_usec: usec(ru.ru_stime),
            max_rss_kb: ru.ru_maxrss.max(0) as u64,
            ave_rss_kb: 0,
        }
    }

    /// Its average resident memory, KiB: the one measured, else its peak (no look was
    /// taken while it ran: it was short).
    pub fn average_rss_kb(&self) -> u64 {
        if self.ave_rss_kb > 0 {
            self.ave_rss_kb
        } else {
            self.max_rss_kb
        }
    }

    /// `self + other`, the largest resident set (and average) of the two.
    pub fn plus(&self, other: &Usage) -> Usage {
        Usage {
            user_usec: self.user_usec + other.user_usec,
            sys_usec: self.sys_usec + other.sys_usec,
            max_rss_kb: self.max_rss_kb.max(other.max_rss_kb),
            ave_rss_kb: self.ave_rss_kb.max(other.ave_rss_kb),
        }
    }
}

/// What a step's processes did with the GPUs, as the daemon saw them at each look: the
/// sums over its processes of their GPU memory and SM utilisation (Slurm's `gres/gpumem`
/// and `gres/gpuutil`), their peaks and their averages over the looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuUse {
    /// The most GPU memory its processes held at one look, bytes.
    pub mem_max: u64,
    /// The GPU memory its processes held on average, bytes.
    pub mem_ave: u64,
    /// The highest SM utilisation its processes had at one look, percent (summed over
    /// its GPUs: two busy GPUs make 200).
    pub util_max: u32,
    /// Its processes' SM utilisation on average, percent.
    pub util_ave: u32,
}

/// A step of a job as sacct names it (`N.batch`, `N.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepId {
    /// The batch script.
    Batch,
    /// The external step (Slurm's `PrologFlags=contain`; slurmlet has none).
    Extern,
    /// salloc's interactive step (Slurm's `use_interactive_step`; slurmlet has none).
    Interactive,
    /// A step not yet given an id (`TBD`).
    Pending,
    /// An srun step.
    Number(u32),
}

impl std::fmt::Display for StepId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepId::Batch => f.write_str("batch"),
            StepId::Extern => f.write_str("extern"),
            StepId::Interactive => f.write_str("interactive"),
            StepId::Pending => f.write_str("TBD"),
            StepId::Number(n) => write!(f, "{n}"),
        }
    }
}

impl Default for StepId {
    /// The first srun step.
    fn default() -> Self {
        StepId::Number(0)
    }
}

impl StepId {
    /// The number Slurm gives it (`SLURM_BATCH_SCRIPT` and the other special ids sort after
    /// every srun step), by which squeue orders steps.
    pub fn raw(self) -> u32 {
        match self {
            StepId::Number(n) => n,
            StepId::Interactive => 0xffff_fffa,
            StepId::Batch => 0xffff_fffb,
            StepId::Extern => 0xffff_fffc,
            StepId::Pending => 0xffff_fffd,
        }
    }
}

/// One entry of `sacct -j`: a job (or an array's task), and maybe one of its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The job id (an array's job id when `array_task` is given).
    pub job: u32,
    /// `A_i`: the array task.
    pub array_task: Option<u32>,
    /// `N+i`: a heterogeneous job's component (slurmlet has none, so it selects nothing).
    pub het_offset: Option<u32>,
    /// `N.step`: only this step, not the whole job.
    pub step: Option<StepId>,
}

/// Steps numbered from here up are Slurm's special ones.
const MAX_NORMAL_STEP_ID: u64 = 0xffff_fff0;

/// Slurm's largest job id.
const MAX_JOB_ID: u64 = 0x7fff_ffff;

/// Parses one job or step id as Slurm's `sacct -j` and `GET /slurmdb/…/job/{id}` read it:
/// `N`, `N_I`, `N+I`, `N.S`, `N.batch`, `N.extern` (case does not matter for the names).
/// The error is Slurm's whole message (`Bad job/step specified: abc`).
pub fn parse_selection(text: &str) -> Result<Selection, String> {
    let bad = |why: &str| format!("Bad job/step specified: {text}: {why}");
    match text.chars().next() {
        Some(c) if c.is_ascii_digit() => {}
        Some('s') => return Err(bad("SLUID is invalid")),
        _ => return Err(format!("Bad job/step specified: {text}")),
    }
    let (job, mut rest) = leading_number(text);
    let job = match job {
        Some(0) => return Err(bad("JobID can not be zero")),
        Some(n) if n < MAX_JOB_ID => n as u32,
        _ => return Err(bad("JobID larger than acceptable range")),
    };
    let mut sel = Selection { job, array_task: None, het_offset: None, step: None };
    if let Some(after) = rest.strip_prefix('_') {
        if after.starts_with('[') {
            return Err(bad("JobID includes unexpected non-numeric characters"));
        }
        if after.is_empty() {
            return Err(bad("Job Array ID must not be an empty string"));
        }
        if after.starts_with('-') {
            return Err(bad("Job Array ID can not be a negative number"));
        }
        let (task, r) = leading_number(after);
        match task {
            Some(t) if t <= u32::MAX as u64 => sel.array_task = Some(t as u32),
            Some(_) => return Err(bad("Job Array ID larger than acceptable range")),
            None => return Err(bad("Job Array ID includes unexpected non-numeric characters")),
        }
        rest = r;
    }
    if let Some(after) = rest.strip_prefix('+') {
        if sel.array_task.is_some() {
            return Err(bad("Job can not be both a HetJob and an array"));
        }
        if after.is_empty() {
            return Err(bad("HetJob component must not be an empty string"));
        }
        let (het, r) = leading_number(after);
        match het {
            Some(h) if h <= 128 => sel.het_offset = Some(h as u32),
            Some(_) => return Err(bad("HetJob component larger than acceptable range")),
            None => return Err(bad("HetJob component includes unexpected non-numeric characters")),
        }
        if r.starts_with('_') {
            return Err(bad("Job can not be both a HetJob and an array"));
        }
        rest = r;
    }
    if rest.is_empty() {
        return Ok(sel);
    }
    let Some(step) = rest.strip_prefix('.') else {
        return Err(bad("JobID includes unexpected non-numeric characters"));
    };
    if step.is_empty() {
        return Err(bad("StepID must not be an empty string"));
    }
    if step.starts_with('-') {
        return Err(bad("StepID can not be a negative number"));
    }
    let (number, after) = leading_number(step);
    let (id, after) = match number {
        Some(n) if n >= MAX_NORMAL_STEP_ID => return Err(bad("StepID larger than acceptable range")),
        Some(n) => (StepId::Number(n as u32), after),
        None => {
            let named = [("TBD", StepId::Pending), ("extern", StepId::Extern), ("batch", StepId::Batch)]
                .into_iter()
                .chain(std::iter::once(("interactive", StepId::Interactive)))
                .find(|(name, _)| step.len() >= name.len() && step[..name.len()].eq_ignore_ascii_case(name));
            match named {
                Some((name, id)) => (id, &step[name.len()..]),
                None => return Err(bad("StepID includes unexpected non-numeric characters")),
            }
        }
    };
    // A heterogeneous step component (`N.S+C`) is accepted and, like every het job, matches
    // nothing here.
    if !after.is_empty() && !after.starts_with('+') {
        return Err(bad("StepID includes unexpected non-numeric characters"));
    }
    sel.step = Some(id);
    Ok(sel)
}

/// The decimal number at the start of `s` (saturating past `u64`), and what follows it.
fn leading_number(s: &str) -> (Option<u64>, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return (None, s);
    }
    let n = s[..end].parse::<u64>().unwrap_or(u64::MAX);
    (Some(n), &s[end..])
}

/// The job states accounting knows, as `(long name, short name)`, in Slurm's order.
pub const ACCOUNTED_STATES: &[(&str, &str)] = &[
    ("PENDING", "PD"),
    ("RUNNING", "R"),
    ("SUSPENDED", "S"),
    ("COMPLETED", "CD"),
    ("CANCELLED", "CA"),
    ("FAILED", "F"),
    ("TIMEOUT", "TO"),
    ("NODE_FAIL", "NF"),
    ("PREEMPTED", "PR"),
    ("BOOT_FAIL", "BF"),
    ("DEADLINE", "DL"),
    ("OUT_OF_MEMORY", "OOM"),
    ("REQUEUED", "RQ"),
    ("RESIZING", "RS"),
    ("REVOKED", "RV"),
];

/// States Slurm knows but does not account (`sacct -s CG`).
const UNACCOUNTED_STATES: &[(&str, &str)] = &[
    ("COMPLETING", "CG"),
    ("CONFIGURING", "CF"),
    ("STAGE_OUT", "SO"),
    ("REQUEUE_FED", "RF"),
    ("REQUEUE_HOLD", "RH"),
    ("SPECIAL_EXIT", "SE"),
    ("STOPPED", "ST"),
    ("RESV_DEL_HOLD", "RD"),
    ("SIGNALING", "SI"),
    ("EXPEDITING", "EX"),
];

/// The long name of one `sacct -s` state, given long or short in any case; the error is
/// Slurm's fatal message.
pub fn parse_state(name: &str) -> Result<&'static str, String> {
    let is = |(long, short): &&(&str, &str)| long.eq_ignore_ascii_case(name) || short.eq_ignore_ascii_case(name);
    if let Some((long, _)) = ACCOUNTED_STATES.iter().find(is) {
        return Ok(long);
    }
    if UNACCOUNTED_STATES.iter().any(|s| is(&s)) {
        return Err(format!("job state {name} is not supported / accounted"));
    }
    Err(format!("unrecognized job state value '{name}'"))
}

/// The time window of a query, as Slurm's `slurmdb_job_cond_def_start_end` fills it in from
/// what was given (`0`: not given), at `now`, with `midnight` the start of today:
///
/// * with states: start defaults to now (to the epoch when jobs are named), end to start;
/// * without states and without jobs named: start defaults to midnight;
/// * end defaults to now; the window is `[start, end)`, so an end equal to the start or to
///   now is moved one second on.
pub fn default_window(start: u64, end: u64, states: bool, jobs: bool, now: u64, midnight: u64) -> (u64, u64) {
    let (mut start, mut end) = (start, end);
    if states {
        if start == 0 && !jobs {
            start = now;
        }
        if start != 0 && end == 0 {
            end = start;
        }
    } else if !jobs && start == 0 {
        start = midnight;
    }
    if end == 0 {
        end = now;
    }
    if end == start || end == now {
        end += 1;
    }
    (start, end)
}

/// `POST /slurmlet/v1/history`: which jobs sacct lists. Every filter given must hold.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct HistoryQuery {
    /// `-j`: only these jobs (or steps); empty: any job.
    pub selections: Vec<Selection>,
    /// `-u`: only these owners' jobs; `None`: everybody's.
    pub users: Option<Vec<u32>>,
    /// `--name`: only jobs with one of these names (compared without case).
    pub names: Option<Vec<String>>,
    /// `-r`: only jobs in one of these partitions.
    pub partitions: Option<Vec<String>>,
    /// `-s`: only jobs in one of these states (long names) during the window.
    pub states: Option<Vec<String>>,
    /// `-A`: only jobs charged to one of these accounts.
    pub accounts: Option<Vec<String>>,
    /// `-g`: only jobs of these groups.
    pub gids: Option<Vec<u32>>,
    /// `-q`: only jobs of these QOS.
    pub qos: Option<Vec<String>>,
    /// `-W`: only jobs with one of these wckeys.
    pub wckeys: Option<Vec<String>>,
    /// `-R`: only jobs that waited for one of these reasons.
    pub reasons: Option<Vec<String>>,
    /// `-N`: only jobs that ran on one of these nodes.
    pub nodes: Option<Vec<String>>,
    /// `-C`: only jobs that asked for one of these features (slurmlet's nodes have none).
    pub constraints: Option<Vec<String>>,
    /// `-I`: only jobs given this many CPUs (`min`, `max`).
    pub cpus: Option<(u32, u32)>,
    /// `-i`: only jobs given this many nodes (`min`, `max`).
    pub nnodes: Option<(u32, u32)>,
    /// `-k`/`-K`: only jobs with a time limit in this range, in minutes (`u32::MAX`:
    /// unlimited).
    pub time_limits: Option<(u32, u32)>,
    /// `-M`: only jobs of these clusters (`None`: this one).
    pub clusters: Option<Vec<String>>,
    /// `-T`: start and end times cut to the window.
    pub truncate: bool,
    /// `[start, end)` in UNIX seconds, as [`default_window`] makes it; `None`: any time.
    pub window: Option<(u64, u64)>,
    /// `-X`: the jobs without their steps.
    pub skip_steps: bool,
    /// `-D`: the earlier runs of requeued jobs too (state REQUEUED), each before the next.
    pub duplicates: bool,
    /// `--json`: answer with slurmrestd's v0.0.43 reply of `GET /slurmdb/v0.0.43/jobs`,
    /// pretty-printed as `sacct --json` prints it.
    pub json: bool,
    /// The command line, for the `--json` reply's `meta.command`.
    pub command: Vec<String>,
}

/// A TRES amount of a job or step: what it asked for or was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tres {
    /// CPUs.
    pub cpus: u32,
    /// Memory in MB (0: none reserved).
    pub mem_mb: u64,
    /// GPUs (whole).
    pub gpus: u32,
    /// Shards of a GPU (`gres/shard`; 0 in records written before shards were counted).
    pub shards: u32,
    /// Nodes.
    pub nodes: u32,
}

/// One step of an [`AcctJob`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AcctStep {
    /// Its id.
    pub id: StepId,
    /// Its name (`batch`, or the program srun ran).
    pub name: String,
    /// Its state's long name (`RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`…).
    pub state: String,
    /// Who cancelled it (`scancel JOB.STEP`).
    pub cancelled_by: Option<u32>,
    /// Start, UNIX seconds.
    pub start: u64,
    /// End, UNIX seconds (0 while it runs).
    pub end: u64,
    /// Its raw wait status (the one that decides its exit code); `None` while it runs.
    pub exit_status: Option<i32>,
    /// Tasks.
    pub ntasks: u32,
    /// What it was given.
    pub alloc: Tres,
    /// Its own time limit in minutes, if it has one.
    pub time_limit: Option<u32>,
    /// What its processes used, once they are gone.
    pub usage: Option<Usage>,
    /// What its processes did with the GPUs (while the daemon looked at them).
    #[serde(default)]
    pub gpu_use: Option<GpuUse>,
    /// The nodes it ran on.
    pub nodes: String,
}

/// One job as accounting keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct AcctJob {
    /// Job id.
    pub id: u32,
    /// An array task's array job id (0 for a job that is not part of an array).
    pub array_job_id: u32,
    /// An array task's index.
    pub array_task_id: Option<u32>,
    /// Job name.
    pub name: String,
    /// Owner.
    pub uid: u32,
    /// Owner's name.
    pub user: String,
    /// Group.
    pub gid: u32,
    /// Group's name.
    pub group: String,
    /// Partition.
    pub partition: String,
    /// `--account`.
    pub account: String,
    /// QOS.
    pub qos: String,
    /// `--comment`.
    pub comment: String,
    /// `--wckey`.
    pub wckey: String,
    /// Working directory.
    pub cwd: String,
    /// The cluster's name.
    pub cluster: String,
    /// State's long name.
    pub state: String,
    /// Who cancelled it.
    pub cancelled_by: Option<u32>,
    /// The reason it waited before it started (Slurm's `state_reason_prev`), or why it
    /// waits now.
    pub reason: String,
    /// Submit time.
    pub submit: u64,
    /// When it became eligible (0 while held).
    pub eligible: u64,
    /// Start time: 0 if it never started and may still, [`NO_VAL`] if it ended unstarted.
    pub start: u64,
    /// End time (0 while active).
    pub end: u64,
    /// Time limit in minutes; `None`: unlimited.
    pub time_limit: Option<u32>,
    /// What it asked for.
    pub req: Tres,
    /// What it was given (`None`: it never started).
    pub alloc: Option<Tres>,
    /// Its nodes (`None assigned` before it started).
    pub nodes: String,
    /// Its raw exit status, as Slurm records it for the job.
    pub exit_status: i32,
    /// The highest raw exit status of its srun steps (`DerivedExitCode`).
    pub derived_status: i32,
    /// Priority.
    pub priority: u32,
    /// Held.
    pub held: bool,
    /// Standard output pattern and path.
    pub stdout: String,
    /// Standard output, expanded.
    pub stdout_expanded: String,
    /// Standard error pattern.
    pub stderr: String,
    /// Standard error, expanded.
    pub stderr_expanded: String,
    /// Standard input pattern.
    pub stdin: String,
    /// Standard input, expanded.
    pub stdin_expanded: String,
    /// Whether the job's own row is shown (not when only some of its steps were asked for).
    pub show_full: bool,
    /// Its steps, the batch script's first.
    pub steps: Vec<AcctStep>,
}

impl AcctJob {
    /// The id sacct prints: `A_i` for an array task, else the job id.
    pub fn id_string(&self) -> String {
        match self.array_task_id {
            Some(task) if self.array_job_id != 0 => format!("{}_{task}", self.array_job_id),
            _ => self.id.to_string(),
        }
    }

    /// Seconds it ran (so far, at `now`).
    pub fn elapsed(&self, now: u64) -> u64 {
        elapsed(self.start, self.end, now)
    }

    /// `-T`: cuts its times and its steps' to the window `[start, end)`, as slurmdbd does
    /// (an end still to come is the window's end, or `now`).
    pub fn truncate(&mut self, (start, end): (u64, u64), now: u64) {
        let end = end.min(now);
        let cut = |s: &mut u64, e: &mut u64| {
            if *s != 0 && *s != NO_VAL && *s < start {
                *s = start;
            }
            if *e == 0 || *e > end {
                *e = end;
            }
        };
        cut(&mut self.start, &mut self.end);
        for step in &mut self.steps {
            cut(&mut step.start, &mut step.end);
        }
    }

    /// What its finished steps used together (Slurm's job totals).
    pub fn usage(&self) -> Usage {
        self.steps
            .iter()
            .filter(|s| s.exit_status.is_some())
            .filter_map(|s| s.usage)
            .fold(Usage::default(), |a, u| a.plus(&u))
    }
}

impl AcctStep {
    /// Seconds it ran (so far, at `now`; a step without an end ends with its job).
    pub fn elapsed(&self, job_end: u64, now: u64) -> u64 {
        elapsed(self.start, if self.end == 0 { job_end } else { self.end }, now)
    }
}

/// Puts `jobs` in the order sacct prints them: by submit time, then (for jobs submitted in
/// the same second) the jobs that are not array tasks by id, then each array's tasks by
/// index. The sort is stable: a requeued job's earlier runs stay before its last.
pub fn sort_as_sacct(jobs: &mut [AcctJob]) {
    jobs.sort_by_key(|j| (j.submit, j.array_job_id, j.array_task_id.unwrap_or(u32::MAX), j.id));
}

/// Seconds from `start` to `end` (to `now` when there is no end yet; 0 if never started).
fn elapsed(start: u64, end: u64, now: u64) -> u64 {
    if start == 0 || start == NO_VAL {
        0
    } else if end == 0 {
        now.saturating_sub(start)
    } else {
        end.saturating_sub(start)
    }
}

/// Reply of `POST /slurmlet/v1/history` (without `json`).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct HistoryReply {
    /// The jobs, in sacct's order (by submit time).
    pub jobs: Vec<AcctJob>,
    /// The daemon's time when it answered.
    pub now: u64,
    /// Errors.
    pub errors: Vec<ApiError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(job: u32, step: Option<StepId>) -> Selection {
        Selection { job, array_task: None, het_offset: None, step }
    }

    #[test]
    fn job_and_step_ids_parse_as_slurm_reads_them() {
        assert_eq!(parse_selection("67").unwrap(), sel(67, None));
        assert_eq!(parse_selection("67.batch").unwrap(), sel(67, Some(StepId::Batch)));
        assert_eq!(parse_selection("67.BATCH").unwrap(), sel(67, Some(StepId::Batch)));
        assert_eq!(parse_selection("67.0").unwrap(), sel(67, Some(StepId::Number(0))));
        assert_eq!(parse_selection("67.extern").unwrap(), sel(67, Some(StepId::Extern)));
        let task = parse_selection("18_2").unwrap();
        assert_eq!((task.job, task.array_task), (18, Some(2)));
        assert_eq!(parse_selection("5+1").unwrap().het_offset, Some(1));
    }

    #[test]
    fn bad_ids_get_slurms_messages() {
        // The first one is in the reference transcripts (22.05 and 24.11).
        assert_eq!(parse_selection("abc").unwrap_err(), "Bad job/step specified: abc");
        assert_eq!(parse_selection("0").unwrap_err(), "Bad job/step specified: 0: JobID can not be zero");
        assert_eq!(
            parse_selection("12x").unwrap_err(),
            "Bad job/step specified: 12x: JobID includes unexpected non-numeric characters"
        );
        assert_eq!(
            parse_selection("12.").unwrap_err(),
            "Bad job/step specified: 12.: StepID must not be an empty string"
        );
        assert_eq!(
            parse_selection("12.batchx").unwrap_err(),
            "Bad job/step specified: 12.batchx: StepID includes unexpected non-numeric characters"
        );
        assert_eq!(
            parse_selection("12_[1-3]").unwrap_err(),
            "Bad job/step specified: 12_[1-3]: JobID includes unexpected non-numeric characters"
        );
        assert_eq!(
            parse_selection("99999999999").unwrap_err(),
            "Bad job/step specified: 99999999999: JobID larger than acceptable range"
        );
    }

    #[test]
    fn states_long_short_and_refused() {
        assert_eq!(parse_state("F"), Ok("FAILED"));
        assert_eq!(parse_state("ca"), Ok("CANCELLED"));
        assert_eq!(parse_state("to"), Ok("TIMEOUT"));
        assert_eq!(parse_state("completed"), Ok("COMPLETED"));
        assert_eq!(parse_state("OOM"), Ok("OUT_OF_MEMORY"));
        assert_eq!(parse_state("CG").unwrap_err(), "job state CG is not supported / accounted");
        assert_eq!(parse_state("bogus").unwrap_err(), "unrecognized job state value 'bogus'");
    }

    #[test]
    fn windows_default_as_slurmdbd_does() {
        let (now, midnight) = (1_000_000, 990_000);
        // Neither states nor jobs: midnight to now (and the current second).
        assert_eq!(default_window(0, 0, false, false, now, midnight), (midnight, now + 1));
        // Jobs named: from the epoch.
        assert_eq!(default_window(0, 0, false, true, now, midnight), (0, now + 1));
        // States without times: the instant now.
        assert_eq!(default_window(0, 0, true, false, now, midnight), (now, now + 1));
        // States with a start only: that instant (the reference's `-S now-1hour -s F,CA,TO`
        // finds nothing).
        assert_eq!(default_window(now - 3600, 0, true, false, now, midnight), (now - 3600, now - 3599));
        assert_eq!(default_window(5, 50, true, false, now, midnight), (5, 50));
    }
}
