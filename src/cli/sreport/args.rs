//! sreport's command line: getopt options anywhere (`-t`, `--tres`, `-n`, `-p`, `-P`,
//! `-M`, `-h`, `-v`, `-V`), then the report (`cluster utilization`, …) and its conditions
//! (`start=`, `end=`, `users=`, `accounts=`, `clusters=`, `format=`, `TopCount=`; the job
//! report reads its own in `job_sizes`), each matched by its shortest unique start as Slurm
//! matches them. Options slurmlet cannot honour are refused by name rather than ignored.

use super::units::{abbrev, TimeFormat};
use super::usage::TresKind;
use std::ffi::OsString;

/// The options and words of one command line.
#[derive(Debug, Default)]
pub struct Opts {
    /// `-t`.
    pub time: TimeFormat,
    /// `--tres` (`None`: not given; the reports then say `CPU` and print no TRES column).
    pub tres: Option<Vec<TresKind>>,
    /// `--tres` as the job report prints it back ([`printed_tres`]).
    pub tres_text: Option<String>,
    /// `-p` (`Some(true)`: trailing `|`) or `-P` (`Some(false)`).
    pub parsable: Option<bool>,
    /// `-n`.
    pub noheader: bool,
    /// `-M`.
    pub clusters: Vec<String>,
    /// The report and its conditions.
    pub words: Vec<String>,
}

/// What the command line asks for, or the exit code after its message (or after help).
pub fn read(args: Vec<OsString>) -> Result<Opts, i32> {
    let args: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let mut o = Opts::default();
    let mut tres_text = std::env::var("SREPORT_TRES").ok();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            o.words.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let mut value = || inline.clone().or_else(|| args.get(i).cloned().inspect(|_| i += 1));
            match name {
                "tres" => tres_text = Some(value().ok_or_else(|| missing("tres"))?),
                "cluster" => o.clusters.push(value().ok_or_else(|| missing("cluster"))?),
                "noheader" => o.noheader = true,
                "parsable" => o.parsable = Some(true),
                "parsable2" => o.parsable = Some(false),
                "help" | "usage" => return Err(help()),
                "version" => return Err(version()),
                "verbose" | "quiet" => {}
                "all_clusters" | "federation" | "local" | "immediate" | "sort" | "autocomplete" => {
                    return Err(refuse(&format!("--{name}")))
                }
                _ => {
                    eprintln!("sreport: unrecognized option '--{name}'");
                    return Err(try_help());
                }
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            i = short_flags(&args, i, &mut o, &mut tres_text)?;
            continue;
        }
        o.words.push(a.clone());
    }
    if let Some(text) = tres_text {
        o.tres = Some(tres_list(&text)?);
        o.tres_text = Some(printed_tres(&text));
    }
    Ok(o)
}

/// What is left of `--tres`'s text once Slurm has split it: it cuts the list in place with
/// `strtok`, so the text its job report prints afterwards (`TRES type is …`) ends at the
/// comma after the first entry.
pub fn printed_tres(text: &str) -> String {
    let first = text.find(|c| c != ',').unwrap_or(text.len());
    match text[first..].find(',') {
        Some(i) => text[..first + i].to_string(),
        None => text.to_string(),
    }
}

/// Reads the bundle of short flags at `args[i - 1]` (its value may be the next argument);
/// returns where reading goes on.
fn short_flags(args: &[String], mut i: usize, o: &mut Opts, tres: &mut Option<String>) -> Result<usize, i32> {
    let a = &args[i - 1];
    let flags: Vec<char> = a[1..].chars().collect();
    let mut k = 0;
    while k < flags.len() {
        let c = flags[k];
        k += 1;
        let takes_value = matches!(c, 't' | 'T' | 'M' | 's');
        let value = if takes_value {
            let rest: String = flags[k..].iter().collect();
            k = flags.len();
            if !rest.is_empty() {
                rest
            } else if let Some(next) = args.get(i) {
                i += 1;
                next.clone()
            } else {
                eprintln!("sreport: option requires an argument -- '{c}'");
                return Err(try_help());
            }
        } else {
            String::new()
        };
        match c {
            't' => match TimeFormat::parse(&value) {
                Some(f) => o.time = f,
                // As Slurm's: said (without a newline), and the report goes on in minutes.
                None => eprint!("unknown time format {value}"),
            },
            'T' => *tres = Some(value),
            'M' => o.clusters.push(value),
            'n' => o.noheader = true,
            'p' => o.parsable = Some(true),
            'P' => o.parsable = Some(false),
            'h' => return Err(help()),
            'V' => return Err(version()),
            'v' | 'Q' => {}
            'a' | 's' | 'i' => return Err(refuse(&format!("-{c}"))),
            _ => {
                eprintln!("sreport: invalid option -- '{c}'");
                return Err(try_help());
            }
        }
    }
    Ok(i)
}

/// `--tres`'s list; a TRES slurmlet does not account is refused by name.
fn tres_list(text: &str) -> Result<Vec<TresKind>, i32> {
    let mut out = Vec::new();
    for name in text.split(',').filter(|s| !s.is_empty()) {
        if name.eq_ignore_ascii_case("ALL") {
            out = vec![TresKind::Cpu, TresKind::Mem, TresKind::Node, TresKind::Gpu];
            continue;
        }
        match TresKind::parse(name) {
            Some(k) => out.push(k),
            None => {
                eprintln!("sreport: error: --tres={name}: slurmlet accounts only cpu, mem, node and gres/gpu");
                return Err(1);
            }
        }
    }
    if out.is_empty() {
        eprintln!("sreport: error: --tres: no TRES given");
        return Err(1);
    }
    Ok(out)
}

fn missing(name: &str) -> i32 {
    eprintln!("sreport: option '--{name}' requires an argument");
    try_help()
}

fn try_help() -> i32 {
    eprintln!("Try \"sreport --help\" for more information");
    1
}

/// Refuses an option slurmlet's sreport does not implement.
fn refuse(what: &str) -> i32 {
    eprintln!("sreport: error: {what} is not supported by slurmlet's sreport");
    1
}

fn version() -> i32 {
    println!("{}", crate::api::release::version_line());
    0
}

fn help() -> i32 {
    print!("{HELP}");
    0
}

/// Whether word `w` is condition `name` (matched from `min` letters on), and its value.
pub fn condition<'a>(w: &'a str, name: &str, min: usize) -> Option<&'a str> {
    let (key, value) = w.split_once('=')?;
    abbrev(key, name, min).then_some(value)
}

/// `sreport --help` (the reports and options slurmlet's sreport has).
const HELP: &str = "sreport [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -h or --help: equivalent to \"help\" command
     -M or --cluster: Only send data about this cluster
     -n or --noheader: equivalent to \"noheader\" command
     -p or --parsable: output will be '|' delimited with a '|' at the end
     -P or --parsable2: output will be '|' delimited without a '|' at the end
     -t <time_format>: Second, Minute, Hour, Percent, SecPer, MinPer, HourPer
     -T or --tres: comma separated list of TRES (cpu, mem, node, gres/gpu, ALL)
     -v or --verbose: equivalent to \"verbose\" command
     -V or --version: equivalent to \"version\" command

  <REPORT> is different for each <COMMAND> type.

    cluster - AccountUtilizationByUser, UserUtilizationByAccount, Utilization
    job     - SizesByAccount
    user    - TopUsage

  <OPTIONS> are different for each report type.

    COMMON FOR ALL TYPES
             - Clusters=<OPT>  - List of clusters to include in report.
             - End=<OPT>       - Period ending for report.
             - Format=<OPT>    - Comma separated list of fields to display in report.
             - Start=<OPT>     - Period start for report.

    cluster
             - Accounts=<OPT>  - When used with the UserUtilizationByAccount,
                                 or AccountUtilizationByUser, List of accounts
                                 to include in report.
             - Users=<OPT>     - When used with any report other than Utilization,
                                 List of users to include in report.

    job
             - Accounts=<OPT>  - Accounts to report, each with the jobs of its
                                 sub-accounts.  Default is root alone (one line
                                 with every job).
             - AcctAsParent    - Report the sub-accounts of Accounts (of root
                                 by default).
             - FlatView        - Report each account jobs were charged to on
                                 a line of its own (Accounts then selects jobs).
             - GID=<OPT>       - List of group ids whose jobs to include.
             - Grouping=<OPT>  - Comma separated list of job sizes (CPUs):
                                 50,250 makes 0-49, 50-249 and >= 250.
                                 Default is 50,250,500,1000.  Grouping=individual
                                 makes a column for each job size found.
             - Jobs=<OPT>      - Jobs to include (as Slurm reads it, an id counts
                                 only when a comma follows it).
             - Nodes=<OPT>     - Only jobs that ran on these nodes.
             - Partitions=<OPT>- List of partitions whose jobs to include.
             - PrintJobCount   - Print numbers of jobs rather than time.
             - Users=<OPT>     - List of users whose jobs to include.
             - Wckeys=<OPT>    - List of wckeys whose jobs to include.

    user
             - Accounts=<OPT>  - List of accounts to use for the report
             - TopCount=<OPT>  - Used in the TopUsage report.  Change the number
                                 of users displayed.  Default is 10.
             - Users=<OPT>     - List of users jobs to include in report.

  Not in slurmlet: reservation and wckey reports, SizesByWcKey,
  SizesByAccountAndWcKey, AccountUtilizationByQOS, Associations=, Tree, Group,
  all_clusters (but in the job report, where it is this cluster), --federation,
  --local, -s.

";

/// sreport's options as a clap definition, for the completions and the man page (the
/// command line itself is read by [`read`], which takes options anywhere, as getopt does).
#[derive(Debug, clap::Parser)]
#[command(
    name = "sreport",
    about = "usage reports of clusters, accounts and users from the accounting history",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct SreportArgs {
    /// Only report on this cluster
    #[arg(short = 'M', long = "cluster")]
    pub cluster: Option<String>,
    /// Omit the headers
    #[arg(short = 'n', long = "noheader")]
    pub noheader: bool,
    /// '|' delimited output with a trailing '|'
    #[arg(short = 'p', long = "parsable")]
    pub parsable: bool,
    /// '|' delimited output without a trailing '|'
    #[arg(short = 'P', long = "parsable2")]
    pub parsable2: bool,
    /// Time format: Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer
    #[arg(short = 't')]
    pub time: Option<String>,
    /// Comma separated list of TRES (cpu, mem, node, gres/gpu, ALL)
    #[arg(short = 'T', long = "tres")]
    pub tres: Option<String>,
    /// Display more information
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Display this help
    #[arg(short = 'h', long = "help")]
    pub help: bool,
    /// Display the version
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// The report (cluster utilization, cluster AccountUtilizationByUser, cluster
    /// UserUtilizationByAccount, user topusage, job SizesByAccount) and its conditions
    /// (start=, end=, users=, accounts=, clusters=, format=, TopCount=; for the job report
    /// also grouping=, FlatView, AcctAsParent, PrintJobCount, partitions=, gid=, wckeys=,
    /// jobs=, nodes=)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub report: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tres_is_printed_back_up_to_the_comma_after_its_first_entry() {
        assert_eq!(printed_tres("gres/gpu"), "gres/gpu");
        assert_eq!(printed_tres("cpu,gres/gpu"), "cpu");
        assert_eq!(printed_tres(",gres/gpu,mem"), ",gres/gpu");
        assert_eq!(printed_tres("GRES/GPU,"), "GRES/GPU");
    }
}
