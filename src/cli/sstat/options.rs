//! sstat's command line, read as Slurm's sstat reads it: its options and their errors, the
//! jobs and steps to look at, and the fields to print.

use super::fields::{DEFAULT_FORMAT, FIELDS, PID_FORMAT};
use super::CMD;
use crate::api::acct::{parse_selection, Selection};
use crate::cli::sacct::fields::{parse_fields, Column, Units};
use crate::cli::sacct::print::{columns_list, Layout};
use clap::{ArgAction, Parser};
use std::ffi::OsString;

/// sstat's options (those of Slurm 26.05).
#[derive(Debug, Parser)]
#[command(
    name = "sstat",
    about = "display the resource use of running jobs' steps, as their processes use them now",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct SstatArgs {
    /// Print all steps for the given job(s) when no step is specified
    #[arg(short = 'a', long = "allsteps")]
    pub allsteps: bool,
    /// Print a list of fields that can be specified with the '--format' option
    #[arg(short = 'e', long = "helpformat")]
    pub helpformat: bool,
    /// Print this description of use
    #[arg(short = 'h', long = "help")]
    pub help: bool,
    /// Predefined format to list the pids running for each job step (JobId,Nodes,Pids)
    #[arg(short = 'i', long = "pidformat")]
    pub pidformat: bool,
    /// Stat this job step, or comma-separated list of job steps (<job(.step)>)
    #[arg(short = 'j', long = "jobs", action = ArgAction::Append)]
    pub jobs: Vec<String>,
    /// No header will be added to the beginning of output
    #[arg(short = 'n', long = "noheader")]
    pub noheader: bool,
    /// Don't convert units from their original type (e.g. 2048M won't be converted to 2G)
    #[arg(long = "noconvert")]
    pub noconvert: bool,
    /// Comma separated list of fields (use "--helpformat" for a list of available fields)
    #[arg(short = 'o', long = "format", visible_alias = "fields", action = ArgAction::Append)]
    pub format: Vec<String>,
    /// Output will be '|' delimited with a '|' at the end
    #[arg(short = 'p', long = "parsable")]
    pub parsable: bool,
    /// Output will be '|' delimited without a '|' at the end
    #[arg(short = 'P', long = "parsable2")]
    pub parsable2: bool,
    /// Display brief usage message
    #[arg(long = "usage")]
    pub usage: bool,
    /// Report the state of various variables during processing
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub version: crate::cli::VersionFlag,
    /// A job or step to stat, as with -j
    #[arg(value_name = "JOB")]
    pub job: Option<String>,
}

/// What a command line asks sstat to do.
#[derive(Debug)]
pub struct Plan {
    /// The jobs and steps, in the order given.
    pub selections: Vec<Selection>,
    /// `-a`: every running step of a job named without a step.
    pub all_steps: bool,
    /// The fields to print.
    pub columns: Vec<Column>,
    /// How.
    pub layout: Layout,
    /// Whether to print the header.
    pub header: bool,
    /// Units of sizes.
    pub units: Units,
}

/// Reads the command line into a plan; `Err` is the exit code (after the message, or after
/// printing help).
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let a: SstatArgs = crate::cli::parse_args(CMD, args, 1)?;
    if a.help {
        print!("{HELP}");
        return Err(0);
    }
    if a.helpformat {
        columns_list(FIELDS.iter().map(|(n, _)| *n), 4, 19);
        return Err(0);
    }
    if a.usage {
        print!("Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n");
        return Err(0);
    }
    crate::cli::set_verbosity(a.verbose);
    let mut selections = Vec::new();
    for id in a.jobs.iter().chain(a.job.iter()).flat_map(|j| j.split(',')).map(str::trim).filter(|j| !j.is_empty()) {
        selections.push(parse_selection(id).map_err(|e| {
            eprintln!("{CMD}: fatal: {e}");
            1
        })?);
    }
    let mut format: Vec<&str> = Vec::new();
    if a.pidformat {
        format.push(PID_FORMAT);
    }
    format.extend(a.format.iter().map(String::as_str));
    if format.is_empty() {
        format.push(DEFAULT_FORMAT);
    }
    let columns = parse_fields(&format.join(","), FIELDS, false).map_err(|e| {
        eprintln!("{CMD}: error: {e}");
        1
    })?;
    let layout = match (a.parsable, a.parsable2) {
        (_, true) => Layout::Parsable { delimiter: "|".into(), trailing: false },
        (true, false) => Layout::Parsable { delimiter: "|".into(), trailing: true },
        _ => Layout::Fixed,
    };
    Ok(Plan {
        selections,
        all_steps: a.allsteps,
        columns,
        layout,
        header: !a.noheader,
        units: Units { no_convert: a.noconvert, ..Default::default() },
    })
}

/// Slurm's `sstat --help`.
const HELP: &str = "sstat [<OPTION>] -j <job(.stepid)>
    Valid <OPTION> values are:
      -a, --allsteps:
                   Print all steps for the given job(s) when no step is
                   specified.
      -e, --helpformat:
                   Print a list of fields that can be specified with the
                   '--format' option
     -h, --help:   Print this description of use.
     -i, --pidformat:
                   Predefined format to list the pids running for each
                   job step.  (JobId,Nodes,Pids)
     -j, --jobs:
                   Format is <job(.step)>. Stat this job step
                   or comma-separated list of job steps. This option is
                   required.  The step portion will default to the lowest
                   numbered (not batch, extern, etc) step running if not
                   specified, unless the --allsteps flag is set where not
                   specifying a step will result in all running steps
                   to be displayed. A step id of 'batch' will display the
                   information about the batch step.
     -n, --noheader:
                   No header will be added to the beginning of output.
                   The default is to print a header.
     --noconvert:  Don't convert units from their original type
                   (e.g. 2048M won't be converted to 2G).
     -o, --format:
                   Comma separated list of fields. (use \"--helpformat\"
                   for a list of available fields).
     -p, --parsable: output will be '|' delimited with a '|' at the end
     -P, --parsable2: output will be '|' delimited without a '|' at the end
     --usage:      Display brief usage message.
     -v, --verbose:
                   Primarily for debugging purposes, report the state of
                   various variables during processing.
     -V, --version: Print version.

";
