//! What sacct asks for: the query of `POST /slurmlet/v1/history`, and the values of its
//! options read as Slurm reads them (job and step ids, states, the default time window).

use serde::{Deserialize, Serialize};

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
