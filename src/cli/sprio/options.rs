//! sprio's command line, read as Slurm's sprio reads it, and the default formats it picks
//! from the weights (a factor whose weight is 0 has no column unless `-l` asks for all).

use super::CMD;
use crate::api::types::{JobPriority, PriorityWeights};
use clap::{ArgAction, Parser};
use std::ffi::OsString;

/// sprio's options (those of Slurm 26.05).
#[derive(Debug, Parser)]
#[command(
    name = "sprio",
    about = "view the factors that make up pending jobs' priorities",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct SprioArgs {
    /// Do not print a header on the output
    #[arg(short = 'h', long = "noheader")]
    pub noheader: bool,
    /// Print the job priorities for a comma separated list of job ids (all when none)
    #[arg(short = 'j', long = "jobs", num_args = 0..=1, default_missing_value = "", require_equals = false)]
    pub jobs: Option<String>,
    /// Long report: every factor, the user, account and QOS
    #[arg(short = 'l', long = "long")]
    pub long: bool,
    /// Clusters to ask (slurmlet: the profile's cluster)
    #[arg(short = 'M', long = "clusters", visible_alias = "cluster")]
    pub clusters: Option<String>,
    /// Print the factors normalised (0 to 1) rather than weighted
    #[arg(short = 'n', long = "norm")]
    pub norm: bool,
    /// Format specification (%.15i %9r …)
    #[arg(short = 'o', long = "format")]
    pub format: Option<String>,
    /// Comma separated list of fields to sort on (i, Y, u, …; '-' before one: descending)
    #[arg(short = 'S', long = "sort", allow_hyphen_values = true)]
    pub sort: Option<String>,
    /// Print the jobs of these partitions only
    #[arg(short = 'p', long = "partition")]
    pub partition: Option<String>,
    /// Print the jobs of these users only
    #[arg(short = 'u', long = "user", visible_alias = "users")]
    pub user: Option<String>,
    /// Verbose mode
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    pub verbose: u8,
    /// Print the weights of the factors
    #[arg(short = 'w', long = "weights")]
    pub weights: bool,
    /// Show this help message
    #[arg(long = "help")]
    pub help: bool,
    /// Display a brief summary of sprio options
    #[arg(long = "usage")]
    pub usage: bool,
    /// Print a list of the format letters
    #[arg(long = "helpformat")]
    pub helpformat: bool,
    /// Show only the local cluster (one machine: always)
    #[arg(long = "local")]
    pub local: bool,
    /// Show jobs of the federation (one machine: the same)
    #[arg(long = "federation")]
    pub federation: bool,
    /// Show each sibling job (one machine: the same)
    #[arg(long = "sibling", visible_alias = "sib")]
    pub sibling: bool,
    #[command(flatten)]
    pub version: crate::cli::VersionFlag,
    /// Job ids when -j was given without any
    #[arg(value_name = "JOBS")]
    pub rest: Option<String>,
}

/// What a command line asks sprio to do.
#[derive(Debug)]
pub struct Plan {
    /// `-o`, or `SPRIO_FORMAT`; `None`: the default for the weights.
    pub format: Option<String>,
    /// `-l`.
    pub long: bool,
    /// `-n`.
    pub norm: bool,
    /// Whether `-u` was given (the default format then shows the user).
    pub users_given: bool,
    /// Jobs asked for.
    pub jobs: Vec<u32>,
    /// Users asked for.
    pub users: Vec<String>,
    /// Partitions asked for.
    pub partitions: Vec<String>,
    /// `-S`, `i` by default (job id).
    pub sort: String,
    /// `-w`.
    pub weights: bool,
    /// Whether to print the header.
    pub header: bool,
}

impl Plan {
    /// The format to print with: the one given, or sprio's default for the weights.
    pub fn format(&self, w: &PriorityWeights) -> String {
        if let Some(f) = &self.format {
            return f.clone();
        }
        let mut f = String::from("%.15i %9r");
        match (self.norm, self.long) {
            (true, true) => return "%.15i %9r %.8u %.8o %10y %10a %10b %10f %10j %10p %10n %10q %20t".into(),
            (false, true) => {
                return "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q %.11N %.20T".into()
            }
            (true, false) => {
                if self.users_given {
                    f.push_str(" %.8u");
                }
                f.push_str(" %10y");
                for (weight, letter) in
                    [(w.age, 'a'), (w.fairshare, 'f'), (w.job_size, 'j'), (w.partition, 'p'), (w.qos, 'q')]
                {
                    if weight > 0 {
                        f.push_str(&format!(" %10{letter}"));
                    }
                }
                if !w.tres.is_empty() {
                    f.push_str(" %20t");
                }
            }
            (false, false) => {
                if self.users_given {
                    f.push_str(" %.8u");
                }
                f.push_str(" %.10Y %.10S");
                for (weight, letter) in
                    [(w.age, 'A'), (w.fairshare, 'F'), (w.job_size, 'J'), (w.partition, 'P'), (w.qos, 'Q')]
                {
                    if weight > 0 {
                        f.push_str(&format!(" %.10{letter}"));
                    }
                }
                if !w.tres.is_empty() {
                    f.push_str(" %.20T");
                }
            }
        }
        f
    }

    /// Whether `job` is among those asked for.
    pub fn wants(&self, job: &JobPriority) -> bool {
        (self.jobs.is_empty() || self.jobs.contains(&job.job_id))
            && (self.users.is_empty() || self.users.contains(&job.user_name))
            && (self.partitions.is_empty() || self.partitions.contains(&job.partition))
    }
}

fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Reads the command line into a plan; `Err` is the exit code (after the message, or after
/// printing help).
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let a: SprioArgs = crate::cli::parse_args(CMD, args, 1)?;
    if a.help {
        print!("{HELP}");
        return Err(0);
    }
    if a.usage {
        print!("{USAGE}");
        return Err(0);
    }
    if a.helpformat {
        println!("%a  %A  %b  %B  %c  %f  %F  %i  %j  %J  %n  %N  %o  %p  %P  %q  %Q  %r  %s  %S  %t  %T  %u  %y  %Y");
        return Err(0);
    }
    crate::cli::set_verbosity(a.verbose);
    if a.long && a.format.is_some() {
        crate::cli::fatal(
            CMD,
            "Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.",
        );
        return Err(1);
    }
    let jobs_text = match (&a.jobs, &a.rest) {
        (Some(j), _) if !j.is_empty() => j.clone(),
        (Some(_), Some(rest)) => rest.clone(),
        (None, Some(rest)) => {
            crate::cli::error(CMD, &format!("Unrecognized option: {rest}"));
            eprintln!("Try \"sprio --help\" for more information");
            return Err(1);
        }
        _ => String::new(),
    };
    let mut jobs = Vec::new();
    for id in list(&jobs_text) {
        match id.parse::<u32>() {
            Ok(n) if n > 0 => jobs.push(n),
            _ => {
                crate::cli::error(CMD, &format!("Invalid job id: {id}"));
                return Err(1);
            }
        }
    }
    let format = a.format.clone().or_else(|| if a.long { None } else { std::env::var("SPRIO_FORMAT").ok() });
    Ok(Plan {
        format,
        long: a.long,
        norm: a.norm,
        users_given: a.user.is_some(),
        jobs,
        users: a.user.as_deref().map(list).unwrap_or_default(),
        partitions: a.partition.as_deref().map(list).unwrap_or_default(),
        sort: a.sort.unwrap_or_else(|| "i".into()),
        weights: a.weights,
        header: !a.noheader,
    })
}

const USAGE: &str = "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]
     [--federation] [--local] [--sibling] [--usage] [-hlnvVw]
";

/// Slurm's `sprio --help`.
const HELP: &str = "Usage: sprio [OPTIONS]
  -h, --noheader                  no headers on output
  -j, --jobs                      comma separated list of jobs
                                  to view, default is all
  -l, --long                      long report
  -M, --cluster=cluster_name      cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default.
                                  NOTE: SlurmDBD must be up.
  -n, --norm                      display normalized values
  -o, --format=format             format specification
  -p, --partition=partition_name  comma separated list of partitions
  -S, --sort=fields               comma separated list of fields to sort on
  -u, --user=user_name            comma separated list of users to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --weights                   show the weights for each priority factor

Help options:
  --help                          show this help message
  --usage                         display a brief summary of sprio options
";
