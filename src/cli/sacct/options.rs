//! sacct's command line, read as Slurm's sacct reads it: its options and their errors
//! (getopt's, then sacct's own `fatal:` and `error:` lines, exit code 1), the default users
//! and time window, and the fields to print.

use super::fields::{self, parse_format, Units};
use super::print::{columns_list, Layout};
use super::{Plan, CMD};
use crate::api::acct::{self, HistoryQuery};
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};
use std::ffi::OsString;

/// sacct's options (those of Slurm 26.05).
#[derive(Debug, Parser)]
#[command(
    name = "sacct",
    about = "displays accounting data for all jobs and job steps in the job history",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    infer_long_args = true
)]
pub struct SacctArgs {
    /// Display jobs for all users (by default only yours, unless you are root)
    #[arg(short = 'a', long = "allusers")]
    pub allusers: bool,
    /// Only jobs charged to these accounts
    #[arg(short = 'A', long = "accounts", action = ArgAction::Append)]
    pub accounts: Vec<String>,
    /// Only the jobs' allocations, not their steps
    #[arg(short = 'X', long = "allocations", short_alias = 't')]
    pub allocations: bool,
    /// Expand job arrays (each task is its own record here: always one line per task)
    #[arg(long = "array")]
    pub array: bool,
    /// Equivalent to --format=jobid,state,exitcode
    #[arg(short = 'b', long = "brief")]
    pub brief: bool,
    /// Print the batch script of jobs (not kept by slurmlet's accounting)
    #[arg(short = 'B', long = "batch-script")]
    pub batch_script: bool,
    /// Use job completion data instead of accounting data (none with slurmlet)
    #[arg(short = 'c', long = "completion")]
    pub completion: bool,
    /// Only jobs that asked for these node features (slurmlet's node has none)
    #[arg(short = 'C', long = "constraints", action = ArgAction::Append)]
    pub constraints: Vec<String>,
    /// The separator of --parsable fields (default '|')
    #[arg(long = "delimiter")]
    pub delimiter: Option<String>,
    /// Show every record of a job id: the earlier runs of requeued jobs too
    #[arg(short = 'D', long = "duplicates")]
    pub duplicates: bool,
    /// Report jobs of the federation (slurmlet has one cluster)
    #[arg(long = "federation")]
    pub federation: bool,
    /// Print the fields --format takes
    #[arg(short = 'e', long = "helpformat", alias = "help-fields")]
    pub helpformat: bool,
    /// Print the job reasons --reason takes
    #[arg(long = "helpreason")]
    pub helpreason: bool,
    /// Print the job states --state takes
    #[arg(long = "helpstate")]
    pub helpstate: bool,
    /// Only jobs eligible before this time (with --state: in a state before it)
    #[arg(short = 'E', long = "endtime")]
    pub endtime: Option<String>,
    /// Print the environment of jobs (not kept by slurmlet's accounting)
    #[arg(long = "env-vars")]
    pub env_vars: bool,
    /// Fill in the patterns of StdOut, StdErr and StdIn
    #[arg(long = "expand-patterns")]
    pub expand_patterns: bool,
    /// Read job completion data from this file (none with slurmlet)
    #[arg(short = 'f', long = "file")]
    pub file: Option<String>,
    /// Only jobs with these scheduling flags
    #[arg(short = 'F', long = "flags")]
    pub flags: Option<String>,
    /// Only jobs of these groups
    #[arg(short = 'g', long = "gid", alias = "group", action = ArgAction::Append)]
    pub group: Vec<String>,
    /// Print this help
    #[arg(short = 'h', long = "help")]
    pub help: bool,
    /// Only jobs that ran on this many nodes (min[-max])
    #[arg(short = 'i', long = "nnodes")]
    pub nnodes: Option<String>,
    /// Only jobs that ran on this many CPUs (min[-max])
    #[arg(short = 'I', long = "ncpus")]
    pub ncpus: Option<String>,
    /// Only these jobs or steps (JOB, JOB.STEP, JOB.batch, ARRAY_TASK), comma separated
    #[arg(short = 'j', long = "jobs", action = ArgAction::Append)]
    pub jobs: Vec<String>,
    /// Only jobs with this time limit (with --timelimit-max: at least this)
    #[arg(short = 'k', long = "timelimit-min")]
    pub timelimit_min: Option<String>,
    /// With --timelimit-min: only jobs with a time limit up to this
    #[arg(short = 'K', long = "timelimit-max")]
    pub timelimit_max: Option<String>,
    /// Report only jobs of the local cluster
    #[arg(long = "local")]
    pub local: bool,
    /// Many fields (mutually exclusive with --format)
    #[arg(short = 'l', long = "long")]
    pub long: bool,
    /// Jobs of all clusters (slurmlet has one)
    #[arg(short = 'L', long = "allclusters")]
    pub allclusters: bool,
    /// Only jobs of these clusters
    #[arg(short = 'M', long = "clusters", alias = "cluster", action = ArgAction::Append)]
    pub clusters: Vec<String>,
    /// Only jobs that ran on these nodes
    #[arg(short = 'N', long = "nodelist")]
    pub nodelist: Option<String>,
    /// Only jobs with these names
    #[arg(long = "name", action = ArgAction::Append)]
    pub name: Vec<String>,
    /// Sizes in their own unit (2048M stays 2048M)
    #[arg(long = "noconvert")]
    pub noconvert: bool,
    /// Sizes in this unit (K, M, G, T, P)
    #[arg(long = "units")]
    pub units: Option<String>,
    /// No header
    #[arg(short = 'n', long = "noheader")]
    pub noheader: bool,
    /// Fields to print, comma separated, each optionally with %WIDTH (see --helpformat)
    #[arg(short = 'o', long = "format", alias = "fields", action = ArgAction::Append)]
    pub format: Vec<String>,
    /// Fields separated by '|', one at the end too
    #[arg(short = 'p', long = "parsable")]
    pub parsable: bool,
    /// Fields separated by '|'
    #[arg(short = 'P', long = "parsable2")]
    pub parsable2: bool,
    /// Only jobs of these QOS
    #[arg(short = 'q', long = "qos", action = ArgAction::Append)]
    pub qos: Vec<String>,
    /// Only jobs of these partitions
    #[arg(short = 'r', long = "partition", action = ArgAction::Append)]
    pub partition: Vec<String>,
    /// Only jobs that waited for these reasons
    #[arg(short = 'R', long = "reason", action = ArgAction::Append)]
    pub reason: Vec<String>,
    /// Only jobs in these states during the time window (long or short names)
    #[arg(short = 's', long = "state", action = ArgAction::Append)]
    pub state: Vec<String>,
    /// Only jobs eligible after this time (default: midnight; with --state: now)
    #[arg(short = 'S', long = "starttime")]
    pub starttime: Option<String>,
    /// Cut start and end times to the time window
    #[arg(short = 'T', long = "truncate")]
    pub truncate: bool,
    /// Only jobs of these users (names or uids; -1: everybody)
    #[arg(short = 'u', long = "user", alias = "uid", action = ArgAction::Append, allow_hyphen_values = true)]
    pub user: Vec<String>,
    /// Print user ids as this machine knows them
    #[arg(long = "use-local-uid")]
    pub use_local_uid: bool,
    /// Print a brief usage message
    #[arg(short = 'U', long = "usage")]
    pub usage: bool,
    /// More messages
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    pub verbose: u8,
    /// Print the version
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// Only jobs with these wckeys
    #[arg(short = 'W', long = "wckeys", action = ArgAction::Append)]
    pub wckeys: Vec<String>,
    /// All components of heterogeneous jobs (yes|no; slurmlet has none)
    #[arg(long = "whole-hetjob", num_args = 0..=1, require_equals = true, default_missing_value = "yes")]
    pub whole_hetjob: Option<String>,
    /// Only jobs of these association ids
    #[arg(short = 'x', long = "associations")]
    pub associations: Option<String>,
    /// JSON output (data_parser v0.0.43)
    #[arg(long = "json", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub json: Option<String>,
    /// YAML output
    #[arg(long = "yaml", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub yaml: Option<String>,
    /// Arguments that are not options (refused)
    #[arg(hide = true, allow_hyphen_values = false)]
    pub rest: Vec<String>,
}

/// `sacct: fatal: MSG`, exit code 1.
fn fatal(msg: &str) -> i32 {
    eprintln!("{CMD}: fatal: {msg}");
    1
}

/// `sacct: error: MSG`, exit code 1.
fn error(msg: &str) -> i32 {
    eprintln!("{CMD}: error: {msg}");
    1
}

/// Prints a command line error as getopt does (one line, no hint) and returns 1.
fn report(e: &clap::Error, args: &[OsString]) -> i32 {
    use clap::error::{ContextKind, ErrorKind};
    let arg = e.get(ContextKind::InvalidArg).map(|a| a.to_string()).unwrap_or_default();
    let first = arg.split([' ', '=']).next().unwrap_or("").to_string();
    match e.kind() {
        ErrorKind::UnknownArgument if arg.starts_with("--") => {
            let name = arg.trim_start_matches("--").split('=').next().unwrap_or("");
            let command = SacctArgs::command();
            let possible: Vec<String> = command
                .get_arguments()
                .flat_map(|a| a.get_long_and_visible_aliases().unwrap_or_default())
                .filter(|l| l.starts_with(name) && !name.is_empty())
                .map(|l| format!("'--{l}'"))
                .collect();
            if possible.len() > 1 {
                eprintln!("{CMD}: option '{arg}' is ambiguous; possibilities: {}", possible.join(" "));
            } else {
                eprintln!("{CMD}: unrecognized option '{arg}'");
            }
        }
        ErrorKind::UnknownArgument => {
            eprintln!("{CMD}: invalid option -- '{}'", arg.trim_start_matches('-').chars().next().unwrap_or('?'));
        }
        ErrorKind::InvalidValue | ErrorKind::NoEquals
            if e.get(ContextKind::InvalidValue).map(|v| v.to_string()).unwrap_or_default().is_empty() =>
        {
            // How it was written: `--jobs` or `-j`.
            let short =
                args.last().map(|a| a.to_string_lossy()).is_some_and(|a| a.starts_with('-') && !a.starts_with("--"));
            let command = SacctArgs::command();
            let option =
                command.get_arguments().find(|a| a.get_long().map(|l| format!("--{l}")) == Some(first.clone()));
            match (short, option.and_then(|o| o.get_short())) {
                (true, Some(c)) => eprintln!("{CMD}: option requires an argument -- '{c}'"),
                _ => eprintln!("{CMD}: option '{first}' requires an argument"),
            }
        }
        _ => {
            let text = e.render().to_string();
            eprintln!("{CMD}: {}", text.lines().next().unwrap_or("").trim_start_matches("error: "));
        }
    }
    1
}

/// The position of the last use of option `id` on the command line.
fn last_index(m: &clap::ArgMatches, id: &str) -> Option<usize> {
    if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
        return None;
    }
    m.indices_of(id).and_then(|i| i.max())
}

/// Comma separated values of repeated options, empty ones dropped.
fn list(values: &[String]) -> Vec<String> {
    values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// `min[-max]` of `-i`/`-I`, as Slurm's `get_resource_arg_range` reads it.
fn range(text: &str, what: &str) -> Result<(u32, u32), String> {
    if text.is_empty() || text == "*" {
        return Ok((1, u32::MAX));
    }
    let bad = || format!("Invalid numeric value \"{text}\" for {what}.");
    let number = |s: &str| -> Result<u32, String> {
        let (digits, mult) = match s.char_indices().last() {
            Some((i, 'k' | 'K')) => (&s[..i], 1024),
            Some((i, 'm' | 'M')) => (&s[..i], 1_048_576),
            _ => (s, 1),
        };
        digits.parse::<u64>().ok().map(|n| n * mult).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)
    };
    match text.split_once('-') {
        None => number(text).map(|n| (n, n)),
        Some((min, max)) => match (number(min)?, number(max)?) {
            (_, 0) => Err(bad()),
            (min, max) => Ok((min, max)),
        },
    }
}

/// A `-k`/`-K` time limit in minutes (`u32::MAX`: unlimited), or Slurm's fatal message.
fn limit(text: &str) -> Result<u32, String> {
    let unlimited = ["infinite", "unlimited", "-1"].iter().any(|u| text.eq_ignore_ascii_case(u));
    match crate::options::time::parse_time_limit(text) {
        _ if unlimited => Ok(u32::MAX),
        Ok(Some(m)) => Ok(m),
        _ => Err("Invalid time limit specification".into()),
    }
}

/// The job states of `--helpstate`: Slurm's base states, which lead squeue's list, in its
/// order.
const HELP_STATES: &[&str] = crate::queue::VALID_STATES.split_at(12).0;

/// The reasons of `--helpreason`: those slurmlet's jobs wait or end for.
const HELP_REASONS: &[&str] = &[
    "None",
    "Priority",
    "Resources",
    "BeginTime",
    "PartitionTimeLimit",
    "JobHeldUser",
    "JobHeldAdmin",
    "Dependency",
    "DependencyNeverSatisfied",
    "JobArrayTaskLimit",
    "QOSMaxJobsPerUserLimit",
    "QOSMaxGRESPerUser",
    "NonZeroExitCode",
    "TimeLimit",
    "JobLaunchFailure",
    "NodeDown",
];

/// Reads the command line into what to ask and how to print it; `Err` is the exit code
/// (after the message, or after printing help).
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let command = SacctArgs::command().name(CMD).bin_name(CMD);
    let m = command.try_get_matches_from(args.clone()).map_err(|e| report(&e, &args))?;
    let a = SacctArgs::from_arg_matches(&m).map_err(|e| report(&e, &args))?;
    if a.help {
        let _ = SacctArgs::command().name(CMD).bin_name(CMD).print_help();
        return Err(0);
    }
    if a.usage {
        print!("Usage: sacct [options]\n\tUse --help for help\n");
        return Err(0);
    }
    if a.version {
        println!("{}", crate::api::release::version_line());
        return Err(0);
    }
    if a.helpformat {
        columns_list(fields::FIELDS.iter().map(|(n, _)| *n), 4, 19);
        return Err(0);
    }
    if a.helpstate {
        columns_list(HELP_STATES.iter().copied(), 4, 19);
        return Err(0);
    }
    if a.helpreason {
        columns_list(HELP_REASONS.iter().copied(), 2, 39);
        return Err(0);
    }
    super::super::set_verbosity(a.verbose);
    let now = crate::options::now();
    let mut q = HistoryQuery::default();
    for id in list(&a.jobs) {
        q.selections.push(acct::parse_selection(&id).map_err(|e| fatal(&e))?);
    }
    if !a.state.is_empty() {
        let mut states = Vec::new();
        for s in list(&a.state) {
            let long = acct::parse_state(&s).map_err(|e| fatal(&e))?.to_string();
            if !states.contains(&long) {
                states.push(long);
            }
        }
        q.states = Some(states);
    }
    let time = |text: &Option<String>| -> Result<u64, i32> {
        match text {
            None => Ok(0),
            Some(t) => super::time::parse_past_time(t, now).map_err(|pos| {
                eprintln!("Invalid time specification (pos={pos}): {t}");
                1
            }),
        }
    };
    let (start, end) = (time(&a.starttime)?, time(&a.endtime)?);
    // Users: yours, unless -a (or -u -1), jobs or nodes named without users, or root. Names
    // are read into ids by the local history only: a cluster's users are its own.
    let names: Vec<String> = list(&a.user).into_iter().filter(|u| u != "-1").collect();
    let minus_one = a.user.iter().any(|u| u.split(',').any(|x| x.trim() == "-1"));
    let mut all_users = match (last_index(&m, "allusers"), last_index(&m, "user")) {
        (Some(all), Some(user)) => all > user || minus_one,
        (Some(_), None) => true,
        (None, _) => minus_one,
    };
    if names.is_empty() && (!q.selections.is_empty() || a.nodelist.is_some()) {
        all_users = true;
    }
    let users = match (all_users, names.is_empty()) {
        (true, _) => Users::Everyone,
        (false, false) => Users::Named(names),
        (false, true) => Users::Me,
    };
    let groups = list(&a.group);
    let some = |v: Vec<String>| (!v.is_empty()).then_some(v);
    q.names = some(list(&a.name));
    q.partitions = some(list(&a.partition));
    q.accounts = some(list(&a.accounts));
    q.qos = some(list(&a.qos));
    q.wckeys = some(list(&a.wckeys));
    q.reasons = some(list(&a.reason));
    q.constraints = some(list(&a.constraints));
    if !a.allclusters {
        q.clusters = some(list(&a.clusters)).filter(|c| !c.iter().any(|c| c.eq_ignore_ascii_case("all") || c == "-1"));
    }
    if let Some(nodes) = &a.nodelist {
        q.nodes = Some(crate::options::hostlist::expand(nodes).unwrap_or_else(|_| vec![nodes.clone()]));
    }
    if let Some(n) = &a.nnodes {
        q.nnodes = Some(range(n, "requested node range").map_err(|e| error(&e))?);
    }
    if let Some(n) = &a.ncpus {
        q.cpus = Some(range(n, "requested cpu range").map_err(|e| error(&e))?);
    }
    if let Some(min) = &a.timelimit_min {
        let min = limit(min).map_err(|e| fatal(&e))?;
        let max = match &a.timelimit_max {
            Some(max) => limit(max).map_err(|e| fatal(&e))?,
            None => min,
        };
        q.time_limits = Some((min, max));
    } else if let Some(max) = &a.timelimit_max {
        limit(max).map_err(|e| fatal(&e))?;
    }
    if let Some(v) = &a.whole_hetjob {
        if !["yes", "y", "no", "n"].iter().any(|x| v.eq_ignore_ascii_case(x)) {
            return Err(error(&format!("Invalid --whole-hetjob value \"{v}\". Valid values: [yes|no].")));
        }
    }
    if q.selections.is_empty() {
        let what = if a.env_vars {
            Some("job environment")
        } else if a.batch_script {
            Some("job scripts")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(fatal(&format!(
                "When requesting {what} you must also request specific jobs with the '-j' option."
            )));
        }
    }
    if a.batch_script && a.env_vars {
        return Err(fatal("Options --batch-script and --env-vars are mutually exclusive"));
    }
    if a.long && !a.format.is_empty() {
        return Err(fatal("Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry."));
    }
    let midnight = crate::sys::local_midnight(now);
    let window = acct::default_window(start, end, q.states.is_some(), !q.selections.is_empty(), now, midnight);
    if window.1 != 0 && window.0 > window.1 {
        return Err(error(&format!(
            "Start time ({}) requested is after end time ({}).",
            super::time::time_str(window.0),
            super::time::time_str(window.1)
        )));
    }
    q.window = Some(window);
    if let Some(file) = &a.file {
        if !std::fs::metadata(file).is_ok_and(|m| m.is_file()) {
            eprintln!("{file} is not a valid file");
            return Err(1);
        }
    }
    if a.completion || a.file.is_some() {
        eprintln!("Slurm job completion is disabled");
        return Err(1);
    }
    for (given, what) in [
        (a.batch_script, "--batch-script: slurmlet's accounting does not keep job scripts"),
        (a.env_vars, "--env-vars: slurmlet's accounting does not keep job environments"),
        (a.flags.is_some(), "--flags: slurmlet's accounting does not keep scheduling flags"),
        (a.associations.is_some(), "--associations: slurmlet has no associations"),
        (a.yaml.is_some(), "--yaml: slurmlet has no YAML output; use --json"),
    ] {
        if given {
            return Err(error(what));
        }
    }
    if let Some(parser) = a.json.as_deref().filter(|p| !p.is_empty() && *p != crate::api::types::DATA_PARSER) {
        return Err(error(&format!(
            "--json={parser}: slurmlet speaks data_parser {} only",
            crate::api::types::DATA_PARSER
        )));
    }
    let mut format = a.format.join(",");
    for (given, more) in [(a.brief, fields::BRIEF_FIELDS), (a.long, fields::LONG_FIELDS)] {
        if given {
            format = if format.is_empty() { more.to_string() } else { format!("{format},{more}") };
        }
    }
    if format.is_empty() {
        format = std::env::var("SACCT_FORMAT").ok().filter(|f| !f.is_empty()).unwrap_or(fields::DEFAULT_FIELDS.into());
    }
    let columns = parse_format(&format).map_err(|e| if e.starts_with("Invalid") { error(&e) } else { fatal(&e) })?;
    if !a.rest.is_empty() {
        eprintln!("{CMD}: error: Unknown arguments:");
        for r in &a.rest {
            eprintln!("{CMD}: error:  {r}");
        }
        return Err(1);
    }
    let unit = match &a.units {
        None => None,
        Some(u) => match u.chars().next().map(|c| c.to_ascii_uppercase()) {
            Some(c @ ('K' | 'M' | 'G' | 'T' | 'P')) if u.len() == 1 => Some(c),
            _ => return Err(fatal("Invalid unit type")),
        },
    };
    let layout = match (last_index(&m, "parsable"), last_index(&m, "parsable2")) {
        (None, None) => Layout::Fixed,
        (p, p2) => Layout::Parsable { delimiter: a.delimiter.clone().unwrap_or_else(|| "|".into()), trailing: p > p2 },
    };
    q.skip_steps = a.allocations;
    q.duplicates = a.duplicates;
    q.truncate = a.truncate;
    q.json = a.json.is_some();
    q.command = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(first) = q.command.first_mut() {
        *first = CMD.into();
    }
    Ok(Plan {
        query: q,
        users,
        groups,
        columns,
        layout,
        header: !a.noheader,
        units: Units { no_convert: a.noconvert, unit, expand_patterns: a.expand_patterns },
    })
}

/// Whose jobs sacct lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Users {
    /// Everybody's (`-a`, `-u -1`, or jobs named without users).
    Everyone,
    /// The caller's (everybody's when the caller is root).
    Me,
    /// Those of the users `-u` named (names or uids).
    Named(Vec<String>),
}

impl Plan {
    /// Reads the users and groups named into this machine's ids, for the local history:
    /// `Err` (after the message) names one this machine does not know.
    pub fn resolve_local(&mut self) -> Result<(), i32> {
        let me = crate::identity::uid();
        self.query.users = match &self.users {
            Users::Everyone => None,
            Users::Me if me == 0 => None,
            Users::Me => Some(vec![me]),
            Users::Named(names) => Some(
                names
                    .iter()
                    .map(|u| crate::identity::user_uid(u).ok_or_else(|| error(&format!("Invalid user id: {u}"))))
                    .collect::<Result<_, _>>()?,
            ),
        };
        if !self.groups.is_empty() {
            let gids = self
                .groups
                .iter()
                .map(|g| crate::identity::group_gid(g).ok_or_else(|| error(&format!("Invalid group id: {g}"))))
                .collect::<Result<_, _>>()?;
            self.query.gids = Some(gids);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(args: &[&str]) -> Result<Plan, i32> {
        let mut plan = plan(std::iter::once("sacct").chain(args.iter().copied()).map(OsString::from).collect())?;
        plan.resolve_local()?;
        Ok(plan)
    }

    #[test]
    fn jobs_steps_and_states_are_read_as_slurm_reads_them() {
        let p = plan_of(&["-j", "5,6.batch", "-j", "7.0", "-s", "F,ca,TO,F", "-X", "-P"]).ok().unwrap();
        let ids: Vec<u32> = p.query.selections.iter().map(|s| s.job).collect();
        assert_eq!(ids, vec![5, 6, 7]);
        assert_eq!(p.query.states, Some(vec!["FAILED".into(), "CANCELLED".into(), "TIMEOUT".into()]));
        assert!(p.query.skip_steps);
        assert_eq!(p.layout, Layout::Parsable { delimiter: "|".into(), trailing: false });
        // Jobs named: everybody's, from the epoch.
        assert_eq!(p.query.users, None);
        assert_eq!(p.query.window.map(|w| w.0), Some(0));
    }

    #[test]
    fn default_users_and_window() {
        let p = plan_of(&[]).ok().unwrap();
        let me = crate::identity::uid();
        assert_eq!(p.query.users, if me == 0 { None } else { Some(vec![me]) });
        let (start, end) = p.query.window.unwrap();
        assert_eq!(start, crate::sys::local_midnight(crate::options::now()));
        assert!(end > start);
        assert_eq!(plan_of(&["-a"]).ok().unwrap().query.users, None);
        assert_eq!(plan_of(&["-u", "0,1"]).ok().unwrap().query.users, Some(vec![0, 1]));
        assert_eq!(plan_of(&["-u", "0", "-a"]).ok().unwrap().query.users, None);
        assert_eq!(plan_of(&["-a", "-u", "0"]).ok().unwrap().query.users, Some(vec![0]));
        let cols: Vec<&str> = p.columns.iter().map(|c| c.name).collect();
        assert_eq!(cols, vec!["JobID", "JobName", "Partition", "Account", "AllocCPUS", "State", "ExitCode"]);
    }

    #[test]
    fn refusals_exit_1() {
        assert_eq!(plan_of(&["-j", "abc"]).err(), Some(1));
        assert_eq!(plan_of(&["--bogus"]).err(), Some(1));
        assert_eq!(plan_of(&["-s", "CG"]).err(), Some(1));
        assert_eq!(plan_of(&["-o", "JobID", "-l"]).err(), Some(1));
        assert_eq!(plan_of(&["-o", "Nope"]).err(), Some(1));
        assert_eq!(plan_of(&["-S", "tomorrow"]).err(), Some(1));
        assert_eq!(plan_of(&["-S", "yesterday"]).err(), Some(1));
        assert_eq!(plan_of(&["stray"]).err(), Some(1));
        assert_eq!(plan_of(&["-B"]).err(), Some(1));
    }

    #[test]
    fn brief_long_and_parsable_layouts() {
        let p = plan_of(&["-b", "-p", "--delimiter", ","]).ok().unwrap();
        let cols: Vec<&str> = p.columns.iter().map(|c| c.name).collect();
        assert_eq!(cols, vec!["JobID", "State", "ExitCode"]);
        assert_eq!(p.layout, Layout::Parsable { delimiter: ",".into(), trailing: true });
        assert_eq!(plan_of(&["-l"]).ok().unwrap().columns.len(), 54);
        assert_eq!(plan_of(&["--allo"]).ok().map(|p| p.query.skip_steps), Some(true), "unique abbreviations");
    }
}
