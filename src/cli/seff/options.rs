//! seff's command line, read as the script's `getopts('hvdf:')` reads it: `-h` (help), `-v`
//! (version), `-d` (the raw figures first), `-f FILE` (taken and unused, as there) and
//! exactly one job id. Help, version and a wrong number of ids exit 1, as the script does.

use clap::Parser;
use std::ffi::OsString;

/// seff's options.
#[derive(Debug, Parser)]
#[command(
    name = "seff",
    about = "report the CPU, memory and GPU efficiency of a job",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct SeffArgs {
    /// Help menu
    #[arg(short = 'h')]
    pub help: bool,
    /// Version
    #[arg(short = 'v')]
    pub version: bool,
    /// Debug mode: display raw Slurm data
    #[arg(short = 'd')]
    pub debug: bool,
    /// Taken and unused, as by Slurm's seff
    #[arg(short = 'f', value_name = "FILE")]
    pub file: Option<String>,
    /// The job (`N`, or `N_I` for an array's task)
    #[arg(value_name = "JOBID")]
    pub jobs: Vec<String>,
}

/// What a command line asks seff to do.
#[derive(Debug, PartialEq, Eq)]
pub struct Plan {
    /// The job id as given.
    pub job: String,
    /// `-d`.
    pub debug: bool,
}

/// seff's version line (the script's `$VERSION`).
pub const VERSION: &str = "seff Version 2.1";

/// seff's usage, printed for `-h` and for a command line without exactly one job id.
pub const USAGE: &str = "Usage: seff [Options] <Jobid>
       Options:
       -h    Help menu
       -v    Version
       -d    Debug mode: display raw Slurm data
";

/// Reads the command line; `Err` is the exit code, after what the script prints then.
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let command = <SeffArgs as clap::CommandFactory>::command().args_override_self(true);
    let matches = command.try_get_matches_from(args).map_err(|e| refuse(&e))?;
    let a = <SeffArgs as clap::FromArgMatches>::from_arg_matches(&matches).map_err(|e| refuse(&e))?;
    if a.version {
        println!("{VERSION}");
        return Err(1);
    }
    match a.jobs.as_slice() {
        [job] if !a.help => Ok(Plan { job: job.clone(), debug: a.debug }),
        _ => {
            print!("{USAGE}");
            Err(1)
        }
    }
}

/// A command line clap refuses: Getopt::Std's complaint about an unknown option (or the
/// error's own first line), then the usage; exit 1.
fn refuse(e: &clap::Error) -> i32 {
    use clap::error::{ContextKind, ErrorKind};
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let arg = e.get(ContextKind::InvalidArg).map(|a| a.to_string()).unwrap_or_default();
            eprintln!("Unknown option: {}", arg.trim_start_matches('-'));
        }
        _ => {
            let text = e.render().to_string();
            eprintln!("seff: {}", text.lines().next().unwrap_or("").trim_start_matches("error: "));
        }
    }
    print!("{USAGE}");
    1
}
