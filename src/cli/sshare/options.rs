//! sshare's command line, read as Slurm's sshare reads it.

use super::fields::{DEFAULT, FIELDS, LONG};
use super::CMD;
use crate::cli::sacct::fields::{parse_fields, Column};
use crate::cli::sacct::print::{columns_list, Layout};
use clap::{ArgAction, Parser};
use std::ffi::OsString;

/// sshare's options (those of Slurm 26.05).
#[derive(Debug, Parser)]
#[command(
    name = "sshare",
    about = "list the shares of associations: the fair-share tree",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct SshareArgs {
    /// Display information for all users
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Display the given accounts (comma separated list)
    #[arg(short = 'A', long = "accounts", action = ArgAction::Append)]
    pub accounts: Vec<String>,
    /// Print a list of fields that can be specified with the '--format' option
    #[arg(short = 'e', long = "helpformat")]
    pub helpformat: bool,
    /// Omit the header from the output
    #[arg(short = 'n', long = "noheader", visible_short_alias = 'h')]
    pub noheader: bool,
    /// Include normalized usage and Fair Tree's level fair-share in the output
    #[arg(short = 'l', long = "long")]
    pub long: bool,
    /// Clusters to ask (slurmlet: the profile's cluster)
    #[arg(short = 'M', long = "cluster", visible_alias = "clusters")]
    pub clusters: Option<String>,
    /// Print the partition part of the association
    #[arg(short = 'm', long = "partition")]
    pub partition: bool,
    /// Comma separated list of fields
    #[arg(short = 'o', long = "format", action = ArgAction::Append)]
    pub format: Vec<String>,
    /// '|' delimited output with a trailing '|'
    #[arg(short = 'p', long = "parsable")]
    pub parsable: bool,
    /// '|' delimited output without a trailing '|'
    #[arg(short = 'P', long = "parsable2")]
    pub parsable2: bool,
    /// Display only user information
    #[arg(short = 'U', long = "Users")]
    pub users_only: bool,
    /// Display information for the given users (comma separated list; -1: all)
    #[arg(short = 'u', long = "users", action = ArgAction::Append, allow_hyphen_values = true)]
    pub users: Vec<String>,
    /// Display more information
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count)]
    pub verbose: u8,
    /// Display this help
    #[arg(long = "help")]
    pub help: bool,
    /// Display a brief usage message
    #[arg(long = "usage")]
    pub usage: bool,
    #[command(flatten)]
    pub version: crate::cli::VersionFlag,
}

/// What a command line asks sshare to do.
#[derive(Debug)]
pub struct Plan {
    /// Accounts to ask for (empty: all).
    pub accounts: Vec<String>,
    /// Users to ask for (empty: all, with `-a`).
    pub users: Vec<String>,
    /// `-U`.
    pub users_only: bool,
    /// The fields.
    pub columns: Vec<Column>,
    /// How.
    pub layout: Layout,
    /// Whether to print the header.
    pub header: bool,
}

fn list(items: &[String]) -> Vec<String> {
    items.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Reads the command line into a plan; `Err` is the exit code (after the message, or after
/// printing help).
pub fn plan(args: Vec<OsString>) -> Result<Plan, i32> {
    let a: SshareArgs = crate::cli::parse_args(CMD, args, 1)?;
    if a.help || a.usage {
        print!("{HELP}");
        return Err(0);
    }
    if a.helpformat {
        columns_list(FIELDS.iter().map(|(n, _)| *n), 4, 19);
        return Err(0);
    }
    crate::cli::set_verbosity(a.verbose);
    let mut users = list(&a.users);
    let all = a.all || users.iter().any(|u| u == "-1");
    if all {
        users.clear();
    } else if users.is_empty() {
        // As Slurm's: the caller's own users, unless -a.
        users.push(crate::identity::user_name(crate::identity::uid()));
    }
    let mut format = list(&a.format).join(",");
    if format.is_empty() {
        format = if a.long { LONG } else { DEFAULT }.to_string();
        if a.partition {
            format = format.replacen("A,User,", "A,User,P,", 1);
        }
    }
    let columns = parse_fields(&format, FIELDS, false).map_err(|e| {
        eprintln!("{CMD}: error: {e}");
        1
    })?;
    let layout = match (a.parsable, a.parsable2) {
        (_, true) => Layout::Parsable { delimiter: "|".into(), trailing: false },
        (true, false) => Layout::Parsable { delimiter: "|".into(), trailing: true },
        _ => Layout::Fixed,
    };
    Ok(Plan { accounts: list(&a.accounts), users, users_only: a.users_only, columns, layout, header: !a.noheader })
}

/// Slurm's `sshare --help`.
const HELP: &str = "Usage:  sshare [OPTION]
  Valid OPTIONs are:
    -a or --all            list all users
    -A or --accounts=      display specific accounts (comma separated list)
    -e or --helpformat     Print a list of fields that can be specified
                           with the '--format' option
    --json[=data_parser]   Produce JSON output
    --yaml[=data_parser]   Produce YAML output
    -l or --long           include normalized usage in output
    -m or --partition      print the partition part of the association
    -M or --cluster=name   cluster to issue commands to.  Default is
                           current cluster.  cluster with no name will
                           reset to default.
                           NOTE: SlurmDBD must be up.
    -n or --noheader       omit header from output
    -o or --format=        Comma separated list of fields (use
                           \"--helpformat\" for a list of available fields).
    -p or --parsable       '|' delimited output with a trailing '|'
    -P or --parsable2      '|' delimited output without a trailing '|'
    -u or --users=         display specific users (comma separated list)
    -U or --Users          display only user information
    -v or --verbose        display more information
    -V or --version        display tool version number
          --help           display this usage description
          --usage          display this usage description

";
