//! sreport's command line: getopt options anywhere (`-t`, `--tres`, `-n`, `-p`, `-P`,
//! `-M`, `-h`, `-v`, `-V`), then the report (`cluster utilization`, …) and its conditions
//! (`start=`, `end=`, `users=`, `accounts=`, `clusters=`, `format=`, `TopCount=`), each
//! matched by its shortest unique start as Slurm matches them. Options slurmlet cannot
//! honour are refused by name rather than ignored.

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
    }
    Ok(o)
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

    user
             - Accounts=<OPT>  - List of accounts to use for the report
             - TopCount=<OPT>  - Used in the TopUsage report.  Change the number
                                 of users displayed.  Default is 10.
             - Users=<OPT>     - List of users jobs to include in report.

  Not in slurmlet: job, reservation and wckey reports, AccountUtilizationByQOS,
  Tree, Group, all_clusters, --federation, --local, -s.

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
    /// UserUtilizationByAccount, user topusage) and its conditions (start=, end=, users=,
    /// accounts=, clusters=, format=, TopCount=)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub report: Vec<String>,
}
