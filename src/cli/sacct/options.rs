//! sacct's command line read as Slurm's sacct reads it: `sacct: fatal:` and `error:` lines
//! (exit code 1), the default users and time window, and the fields to print. The options
//! themselves, and getopt's errors, are [`super::args`]'s.

use super::args::{report, SacctArgs};
use super::fields::{self, parse_format, Column, Units};
use super::print::{columns_list, Layout};
use super::{Plan, CMD};
use crate::api::acct::{self, HistoryQuery};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;

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
/// (after the message, or after printing help). The checks run in sacct's order, so that of
/// several mistakes the one sacct names first is named.
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let command = SacctArgs::command().name(CMD).bin_name(CMD);
    let m = command.try_get_matches_from(args.clone()).map_err(|e| report(&e, &args))?;
    let a = SacctArgs::from_arg_matches(&m).map_err(|e| report(&e, &args))?;
    answer_help(&a)?;
    super::super::set_verbosity(a.verbose);
    let now = crate::sys::now();
    let mut q = HistoryQuery::default();
    select_jobs_and_states(&a, &mut q)?;
    let (start, end) = (past_time(&a.starttime, now)?, past_time(&a.endtime, now)?);
    let users = users(&a, &m, &q);
    let groups = list(&a.group);
    add_filters(&a, &mut q)?;
    refuse_conflicts(&a, &q)?;
    q.window = Some(window(start, end, &q, now)?);
    refuse_what_is_not_kept(&a)?;
    let columns = columns(&a)?;
    if !a.rest.is_empty() {
        eprintln!("{CMD}: error: Unknown arguments:");
        for r in &a.rest {
            eprintln!("{CMD}: error:  {r}");
        }
        return Err(1);
    }
    let unit = unit(&a)?;
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

/// Prints what `--help`, `--usage`, `--version` and the `--help*` lists ask for; `Err(0)`,
/// to exit with, when one of them was given.
fn answer_help(a: &SacctArgs) -> Result<(), i32> {
    if a.help {
        let _ = SacctArgs::command().name(CMD).bin_name(CMD).print_help();
    } else if a.usage {
        print!("Usage: sacct [options]\n\tUse --help for help\n");
    } else if a.version {
        println!("{}", crate::api::release::version_line());
    } else if a.helpformat {
        columns_list(fields::FIELDS.iter().map(|(n, _)| *n), 4, 19);
    } else if a.helpstate {
        columns_list(HELP_STATES.iter().copied(), 4, 19);
    } else if a.helpreason {
        columns_list(HELP_REASONS.iter().copied(), 2, 39);
    } else {
        return Ok(());
    }
    Err(0)
}

/// `-j` and `-s` into `q`: the jobs and steps named, and the states in their long names,
/// each once.
fn select_jobs_and_states(a: &SacctArgs, q: &mut HistoryQuery) -> Result<(), i32> {
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
    Ok(())
}

/// A `-S` or `-E` time as UNIX time at `now` (0: not given), or sacct's message and 1.
fn past_time(text: &Option<String>, now: u64) -> Result<u64, i32> {
    match text {
        None => Ok(0),
        Some(t) => super::time::parse_past_time(t, now).map_err(|pos| {
            eprintln!("Invalid time specification (pos={pos}): {t}");
            1
        }),
    }
}

/// Whose jobs: yours, unless -a (or -u -1), jobs or nodes named without users, or root.
/// Names are read into ids by the local history only: a cluster's users are its own.
fn users(a: &SacctArgs, m: &clap::ArgMatches, q: &HistoryQuery) -> Users {
    let names: Vec<String> = list(&a.user).into_iter().filter(|u| u != "-1").collect();
    let minus_one = a.user.iter().any(|u| u.split(',').any(|x| x.trim() == "-1"));
    let mut all_users = match (last_index(m, "allusers"), last_index(m, "user")) {
        (Some(all), Some(user)) => all > user || minus_one,
        (Some(_), None) => true,
        (None, _) => minus_one,
    };
    if names.is_empty() && (!q.selections.is_empty() || a.nodelist.is_some()) {
        all_users = true;
    }
    match (all_users, names.is_empty()) {
        (true, _) => Users::Everyone,
        (false, false) => Users::Named(names),
        (false, true) => Users::Me,
    }
}

/// The filters on what the jobs were and ran on into `q`: names, partitions, accounts, QOS,
/// wckeys, reasons, features, clusters, nodes, node and CPU counts and time limits; and the
/// check of `--whole-hetjob`'s value.
fn add_filters(a: &SacctArgs, q: &mut HistoryQuery) -> Result<(), i32> {
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
    Ok(())
}

/// The options sacct refuses together: scripts or environments without `-j`, both of them,
/// and `--format` with `--long`.
fn refuse_conflicts(a: &SacctArgs, q: &HistoryQuery) -> Result<(), i32> {
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
    Ok(())
}

/// The time window of `-S` and `-E` (0: not given) at `now`, with sacct's defaults for what
/// `q` asks; `Err` when it starts after it ends.
fn window(start: u64, end: u64, q: &HistoryQuery, now: u64) -> Result<(u64, u64), i32> {
    let midnight = crate::sys::local_midnight(now);
    let window = acct::default_window(start, end, q.states.is_some(), !q.selections.is_empty(), now, midnight);
    if window.1 != 0 && window.0 > window.1 {
        return Err(error(&format!(
            "Start time ({}) requested is after end time ({}).",
            super::time::time_str(window.0),
            super::time::time_str(window.1)
        )));
    }
    Ok(window)
}

/// The options that ask for what slurmlet does not keep or have: job completion data, job
/// scripts and environments, scheduling flags, associations, YAML, another data parser.
fn refuse_what_is_not_kept(a: &SacctArgs) -> Result<(), i32> {
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
    Ok(())
}

/// The columns to print: `--format`'s, then `-b`'s and `-l`'s fields; without any of them,
/// `SACCT_FORMAT`'s, or the default.
fn columns(a: &SacctArgs) -> Result<Vec<Column>, i32> {
    let mut format = a.format.join(",");
    for (given, more) in [(a.brief, fields::BRIEF_FIELDS), (a.long, fields::LONG_FIELDS)] {
        if given {
            format = if format.is_empty() { more.to_string() } else { format!("{format},{more}") };
        }
    }
    if format.is_empty() {
        format = std::env::var("SACCT_FORMAT").ok().filter(|f| !f.is_empty()).unwrap_or(fields::DEFAULT_FIELDS.into());
    }
    parse_format(&format).map_err(|e| if e.starts_with("Invalid") { error(&e) } else { fatal(&e) })
}

/// `--units`: the unit sizes are printed in, if one was given.
fn unit(a: &SacctArgs) -> Result<Option<char>, i32> {
    match &a.units {
        None => Ok(None),
        Some(u) => match u.chars().next().map(|c| c.to_ascii_uppercase()) {
            Some(c @ ('K' | 'M' | 'G' | 'T' | 'P')) if u.len() == 1 => Ok(Some(c)),
            _ => Err(fatal("Invalid unit type")),
        },
    }
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
        assert_eq!(start, crate::sys::local_midnight(crate::sys::now()));
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
