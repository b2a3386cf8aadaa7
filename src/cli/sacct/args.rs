//! sacct's options as Slurm 26.05's sacct takes them, and their errors as its getopt prints
//! them (one line, no hint, exit code 1); what the options mean for the query is
//! [`super::options`]'s.

use super::CMD;
use clap::{ArgAction, CommandFactory, Parser};
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

/// Prints a command line error as getopt does (one line, no hint) and returns 1.
pub(super) fn report(e: &clap::Error, args: &[OsString]) -> i32 {
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
