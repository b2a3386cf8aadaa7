//! The user-facing commands, one module each, and what they share: argument parsing with
//! Slurm's error texts, and the multicall dispatch.

pub mod allocate;
pub mod board;
pub mod cluster;
pub mod cluster_pending;
pub mod cluster_status;
pub mod complete_values;
pub mod daemon_cmd;
pub mod dynamic_completions;
pub mod format;
pub mod generate;
pub mod gpus;
pub mod install_links;
pub mod job_command;
pub mod job_failure;
pub mod job_ids;
pub mod node_check;
pub mod profiles;
pub mod sacct;
pub mod sacctmgr;
pub mod salloc;
pub mod sbatch;
mod sbatch_wait;
pub mod scancel;
pub mod scontrol;
pub mod seff;
pub mod sinfo;
pub mod sprio;
pub mod squeue;
pub mod sreport;
pub mod srun;
pub mod sshare;
pub mod sstat;
pub mod status_line;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use std::ffi::OsString;

/// The commands the multicall binary answers to, by `argv[0]` or as `slurmlet <command>`.
pub const COMMANDS: &[&str] = &[
    "sbatch",
    "srun",
    "salloc",
    "squeue",
    "scancel",
    "scontrol",
    "sinfo",
    "sacct",
    "sstat",
    "sprio",
    "sshare",
    "sreport",
    "sacctmgr",
    "seff",
    "slurmletd",
];

/// The command line as `--json` puts it in `meta.command`: the command's own name (not the
/// path it was run by), then its arguments.
pub fn command_line(cmd: &str, args: &[OsString]) -> Vec<String> {
    std::iter::once(cmd.to_string()).chain(args.iter().skip(1).map(|a| a.to_string_lossy().into_owned())).collect()
}

/// Runs the command named by `argv[0]` (or `slurmlet <command> …`) and returns the exit code.
pub fn main_with(args: Vec<OsString>) -> i32 {
    let argv0 = args.first().cloned().unwrap_or_default();
    let name = std::path::Path::new(&argv0).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Slurm runs HealthCheckProgram and Prolog without arguments: a link by this name is
    // `slurmlet node-check`.
    if name == "slurmlet-node-check" {
        return node_check::run(args);
    }
    if name == "slurmlet" || name.starts_with("slurmlet-") || !dispatchable(&name) {
        return slurmlet_main(args);
    }
    dispatch(&name, args)
}

fn dispatchable(name: &str) -> bool {
    COMMANDS.contains(&name)
}

fn dispatch(name: &str, args: Vec<OsString>) -> i32 {
    match name {
        "sbatch" => sbatch::run(args),
        "srun" => srun::run(args),
        "salloc" => salloc::run(args),
        "squeue" => squeue::run(args),
        "scancel" => scancel::run(args),
        "scontrol" => scontrol::run(args),
        "sinfo" => sinfo::run(args),
        "sacct" => sacct::run(args),
        "sstat" => sstat::run(args),
        "sprio" => sprio::run(args),
        "sshare" => sshare::run(args),
        "sreport" => sreport::run(args),
        "sacctmgr" => sacctmgr::run(args),
        "seff" => seff::run(args),
        "slurmletd" => daemon_cmd::run_daemon(args),
        _ => unreachable!("dispatchable() checked the name"),
    }
}

/// `slurmlet`'s usage.
const USAGE: &str = "usage: slurmlet [--profile NAME] <command> [args…]

commands:
  {commands}
  daemon [start|stop|status|run]
  gpus [--json]
  board [--port PORT] [--bind ADDR] [-M|--profile PROFILE]
  profiles
  cluster plan NODE… [-o DIR] [--controller HOST] [--via COMMAND]
  cluster apply [-o DIR] [--via COMMAND] [--rest-url URL] [--dry-run]
  cluster status [-o DIR] [--via COMMAND]
  cluster pending -M CLUSTER [--move-pending]
  cluster probe
  node-check [--node NAME] [--dry-run] [--prolog]
  install-links [DIR]
  generate [DIR]

--profile NAME  talk to the cluster of profile NAME (see `slurmlet profiles`; `local`: this
                machine's daemon) for this command, as SLURMLET_PROFILE=NAME does; a
                command's own -M/--clusters still wins. (sbatch, srun and salloc keep
                their own --profile, Slurm's profiling option.)";

/// Reads a leading `--profile NAME` / `--profile=NAME` off `args` (after `argv[0]`) and
/// selects that profile; `Err` is the exit code after an error was printed.
fn take_profile_flag(args: &mut Vec<OsString>) -> Result<(), i32> {
    let Some(first) = args.get(1).map(|a| a.to_string_lossy().into_owned()) else { return Ok(()) };
    let (name, used) = if first == "--profile" {
        match args.get(2) {
            Some(name) => (name.to_string_lossy().into_owned(), 2),
            None => {
                eprintln!("slurmlet: option '--profile' requires an argument");
                return Err(2);
            }
        }
    } else if let Some(name) = first.strip_prefix("--profile=") {
        (name.to_string(), 1)
    } else {
        return Ok(());
    };
    let path = crate::api::profile::profiles_path();
    let checked = crate::api::profile::read(&path).and_then(|f| crate::api::profile::remote(&f, &path, &name));
    if let Err(e) = checked {
        error("slurmlet", &format!("--profile: {e}"));
        return Err(1);
    }
    crate::api::profile::select_by_flag(&name);
    args.drain(1..1 + used);
    Ok(())
}

/// `slurmlet [--profile NAME] <command> …`: the Slurm commands plus slurmlet's own
/// (`daemon`, `gpus`, `board`, `stepd`, `stepd-server`, `path-check`, `profiles`,
/// `install-links`, `generate`, and `__complete`, which the shell completions call).
fn slurmlet_main(mut args: Vec<OsString>) -> i32 {
    if let Err(code) = take_profile_flag(&mut args) {
        return code;
    }
    let sub = args.get(1).map(|s| s.to_string_lossy().into_owned());
    let rest = |name: &str| -> Vec<OsString> {
        std::iter::once(OsString::from(name)).chain(args.iter().skip(2).cloned()).collect()
    };
    match sub.as_deref() {
        Some(cmd) if dispatchable(cmd) => dispatch(cmd, rest(cmd)),
        Some("daemon") => daemon_cmd::run(rest("slurmlet daemon")),
        Some("gpus") => gpus::run(rest("slurmlet gpus")),
        Some("board") => board::run(rest("slurmlet board")),
        Some("cluster") => cluster::run(rest("slurmlet cluster")),
        Some("node-check") => node_check::run(rest("slurmlet node-check")),
        Some("stepd") => crate::stepd::run(crate::stepd::Kind::Job, rest("slurmlet stepd")),
        Some("stepd-step") => crate::stepd::run(crate::stepd::Kind::Step, rest("slurmlet stepd-step")),
        Some("stepd-server") => crate::stepd::fork_server::run(rest("slurmlet stepd-server")),
        Some(crate::path_looks::SUBCOMMAND) => crate::path_looks::run(rest("slurmlet path-check")),
        Some("install-links") => install_links::run(rest("slurmlet install-links")),
        Some("generate") => generate::run(rest("slurmlet generate")),
        Some("profiles") => profiles::run(rest("slurmlet profiles")),
        Some("__complete") => complete_values::run(rest("slurmlet __complete")),
        Some("--version") | Some("-V") => {
            println!("{}", crate::api::release::slurmlet_line());
            0
        }
        _ => {
            eprintln!("{}", USAGE.replace("{commands}", &COMMANDS.join(", ")));
            if sub.is_none() || sub.as_deref() == Some("--help") || sub.as_deref() == Some("-h") {
                0
            } else {
                1
            }
        }
    }
}

/// `-V/--version` of a command whose options are a clap struct: flattened into it, and
/// answered by [`parse_args`] with Slurm's one line (see [`crate::api::release`]).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct VersionFlag {
    /// output version information and exit
    #[arg(short = 'V', long = "version")]
    pub version: bool,
}

/// Parses `args` for command `cmd`, printing errors as Slurm does:
/// `cmd: unrecognized option '--x'` / `Try "cmd --help" for more information`.
/// `-V/--version`, where the command has it, prints `slurm X.Y.Z` and exits 0. An option
/// given twice takes its last value, as with Slurm's getopt.
///
/// Returns the exit code to use when parsing did not produce arguments.
pub fn parse_args<T: Parser>(cmd: &str, args: Vec<OsString>, usage_exit: i32) -> Result<T, i32> {
    let command = T::command().name(cmd.to_string()).bin_name(cmd.to_string()).args_override_self(true);
    let matches = command.try_get_matches_from(args).map_err(|e| report_clap_error(cmd, &e, usage_exit))?;
    if matches.try_get_one::<bool>("version").ok().flatten() == Some(&true) {
        println!("{}", crate::api::release::version_line());
        return Err(0);
    }
    T::from_arg_matches(&matches).map_err(|e| report_clap_error(cmd, &e, usage_exit))
}

/// Prints a clap error in Slurm's words and returns the exit code.
pub fn report_clap_error(cmd: &str, e: &clap::Error, usage_exit: i32) -> i32 {
    use clap::error::ContextKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            0
        }
        ErrorKind::UnknownArgument => {
            let arg = e.get(ContextKind::InvalidArg).map(|a| a.to_string()).unwrap_or_default();
            if arg.starts_with("--") {
                eprintln!("{cmd}: unrecognized option '{arg}'");
            } else {
                eprintln!("{cmd}: invalid option -- '{}'", arg.trim_start_matches('-'));
            }
            eprintln!("Try \"{cmd} --help\" for more information");
            usage_exit
        }
        ErrorKind::InvalidValue | ErrorKind::NoEquals
            if e.get(ContextKind::InvalidValue).map(|v| v.to_string()).unwrap_or_default().is_empty() =>
        {
            let arg = e.get(ContextKind::InvalidArg).map(|a| a.to_string()).unwrap_or_default();
            let long = arg.split_whitespace().next().unwrap_or(&arg).split('=').next().unwrap_or(&arg);
            eprintln!("{cmd}: option '{long}' requires an argument");
            eprintln!("Try \"{cmd} --help\" for more information");
            usage_exit
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("").trim_start_matches("error: ");
            eprintln!("{cmd}: error: {first}");
            eprintln!("Try \"{cmd} --help\" for more information");
            usage_exit
        }
    }
}

/// Prints `cmd: error: msg` (each line prefixed) to stderr.
pub fn error(cmd: &str, msg: &str) {
    for line in msg.lines() {
        eprintln!("{cmd}: error: {line}");
    }
}

/// Prints `cmd: fatal: msg` to stderr (the caller exits 1, as Slurm's `fatal` does).
pub fn fatal(cmd: &str, msg: &str) {
    eprintln!("{cmd}: fatal: {msg}");
}

/// Prints `cmd: warning: msg` to stderr.
pub fn warning(cmd: &str, msg: &str) {
    for line in msg.lines() {
        eprintln!("{cmd}: warning: {line}");
    }
}

/// `--help`, `--usage`, `--version` of sbatch, srun and salloc: prints and returns the exit
/// code, or `None` when none was given.
pub fn common_flags(tool: crate::options::Tool, cli: &crate::options::JobOptions) -> Option<i32> {
    use crate::options::help;
    if cli.has("help") {
        print!("{}", help::help(tool));
    } else if cli.has("usage") {
        print!("{}", help::usage(tool));
    } else if cli.has("version") {
        println!("{}", crate::api::release::version_line());
    } else {
        return None;
    }
    Some(0)
}

/// The profile `-M/--clusters` named on this command's line, if any (set once, by the
/// command, before it connects).
static CLUSTER: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Notes the cluster `-M/--clusters` names: [`connect`] talks to that profile.
pub fn choose_cluster(name: Option<&str>) {
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        let _ = CLUSTER.set(name.to_string());
    }
}

/// Connects to the profile `-M` chose, else the selected one, else the local daemon (see
/// [`crate::api::client::Client::connect_to`]).
pub fn try_connect() -> Result<crate::api::client::Client, crate::api::client_error::ClientError> {
    crate::api::client::Client::connect_to(CLUSTER.get().map(String::as_str))
}

/// How many `-v` this command was given (set once, by the command, before it connects).
static VERBOSITY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Notes the command's `-v/--verbose` count.
pub fn set_verbosity(level: u8) {
    VERBOSITY.store(level, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the command runs verbosely: `-v`, or `SLURMLET_VERBOSE` set (to anything but `0`).
pub fn verbose() -> bool {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed) > 0
        || std::env::var_os("SLURMLET_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// [`try_connect`], printing the connection error on failure, and, when verbose, which
/// data_parser version a cluster profile is spoken to in if not slurmlet's own.
pub fn connect(cmd: &str) -> Result<crate::api::client::Client, i32> {
    let client = try_connect().map_err(|e| {
        error(cmd, &e.to_string());
        1
    })?;
    if let Some(note) = client.data_parser_note().filter(|_| verbose()) {
        eprintln!("{cmd}: {note}");
    }
    Ok(client)
}

/// Every command's clap definition, for completions and man pages.
pub fn all_commands() -> Vec<clap::Command> {
    vec![
        crate::options::parse::command(crate::options::Tool::Sbatch),
        crate::options::parse::command(crate::options::Tool::Srun),
        crate::options::parse::command(crate::options::Tool::Salloc),
        squeue::SqueueArgs::command().name("squeue"),
        scancel::ScancelArgs::command().name("scancel"),
        scontrol::ScontrolArgs::command().name("scontrol"),
        sinfo::SinfoArgs::command().name("sinfo"),
        sacct::SacctArgs::command().name("sacct"),
        sstat::SstatArgs::command().name("sstat"),
        sprio::SprioArgs::command().name("sprio"),
        sshare::SshareArgs::command().name("sshare"),
        sreport::args::SreportArgs::command().name("sreport"),
        sacctmgr::SacctmgrArgs::command().name("sacctmgr"),
        seff::SeffArgs::command().name("seff"),
        daemon_cmd::DaemonArgs::command().name("slurmletd"),
    ]
}
