//! `scontrol`: view or change the state of jobs, one module per keyword.
//!
//! As Slurm's, it takes positional words: a keyword (`show`, `hold`, `uhold`, `release`,
//! `suspend`, `resume`, `update`, `ping`, `token`, `write`, `version`) and its arguments. A keyword may be abbreviated where Slurm
//! allows it (`rel`, `tok`, `sho`), and options may come anywhere (`scontrol show job -o 5`).

pub mod config;
pub mod hold;
pub mod hostnames;
mod job_gres;
pub mod json;
pub mod ping;
pub mod record;
pub mod reservation;
mod reservation_args;
pub mod show;
pub mod show_job;
pub mod show_node;
pub mod show_partition;
pub mod show_step;
pub mod token;
pub mod update;
pub mod update_node;
pub mod write;

use crate::api::types::DATA_PARSER;
use clap::Parser;
use std::ffi::OsString;

/// scontrol's options.
#[derive(Debug, Parser)]
#[command(about = "View or modify Slurm configuration and state", disable_version_flag = true)]
pub struct ScontrolArgs {
    /// Print no messages about errors
    #[arg(short = 'Q', long)]
    pub quiet: bool,
    /// Print each record of `show` on one line
    #[arg(short = 'o', long)]
    pub oneliner: bool,
    /// Print more details in `show job` (DerivedExitCode, the allocation) and `show node`
    /// (GRES in use)
    #[arg(short = 'd', long, action = clap::ArgAction::Count)]
    pub details: u8,
    /// Show all partitions, hidden ones too (none is hidden here)
    #[arg(short = 'a', long)]
    pub all: bool,
    /// `show job|node|partition` as JSON: the v0.0.43 REST reply (only v0.0.43 is spoken)
    #[arg(long, value_name = "DATA_PARSER", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub json: Option<String>,
    /// The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)
    #[arg(short = 'M', long = "clusters", value_name = "cluster_name")]
    pub clusters: Option<String>,
    /// Print more about what is done (which data_parser a cluster profile is spoken to in)
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub version: super::VersionFlag,
    /// The command: `show ENTITY [ID]` (ENTITY: job, node, partition, step, config, hostnames,
    /// hostlist, hostlistsorted), `hold JOB_LIST`, `uhold JOB_LIST`, `release JOB_LIST`,
    /// `suspend JOB_LIST`, `resume JOB_LIST`, `update JobId=ID KEY=VALUE…`, `ping`,
    /// `token [lifespan=SECONDS] [username=NAME]`, `write batch_script JOBID [FILE|-]`, or
    /// `version`. JOB_LIST is job ids
    /// separated by commas, or (hold, release) Name=NAME for every job of that name.
    #[arg(value_name = "COMMAND")]
    pub words: Vec<String>,
}

/// The options that change what `show` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-o`: one line per record.
    pub one_liner: bool,
    /// `-d`: details.
    pub details: bool,
    /// `--json`.
    pub json: bool,
    /// `-Q`: no messages about errors.
    pub quiet: bool,
}

const CMD: &str = "scontrol";

/// A keyword scontrol knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    /// `hold`, `uhold`, `release`, `requeue`, `suspend`, `resume`.
    Hold(hold::Op),
    /// `update`.
    Update,
    /// `token`.
    Token,
    /// `show`.
    Show,
    /// `ping`.
    Ping,
    /// `version`.
    Version,
    /// `write`.
    Write,
    /// `create` (reservations).
    Create,
    /// `delete` (reservations).
    Delete,
}

/// Whether `tag` is `word` or an abbreviation of it at least `min` characters long, in any
/// case (Slurm's `strncasecmp(tag, word, MAX(strlen(tag), min))`).
fn abbreviates(tag: &str, word: &str, min: usize) -> bool {
    tag.len() >= min && tag.len() <= word.len() && word[..tag.len()].eq_ignore_ascii_case(tag)
}

/// Whether `tag` starts with `prefix`, in any case.
fn starts_with(tag: &str, prefix: &str) -> bool {
    tag.len() >= prefix.len() && tag.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// The keyword `tag` names, as Slurm's scontrol matches it.
pub fn keyword(tag: &str) -> Option<Keyword> {
    if starts_with(tag, "holdu") || starts_with(tag, "uhold") {
        Some(Keyword::Hold(hold::Op::UserHold))
    } else if starts_with(tag, "hold") {
        Some(Keyword::Hold(hold::Op::Hold))
    } else if abbreviates(tag, "release", 3) {
        Some(Keyword::Hold(hold::Op::Release))
    } else if abbreviates(tag, "requeue", 3) {
        Some(Keyword::Hold(hold::Op::Requeue))
    } else if abbreviates(tag, "suspend", 2) {
        Some(Keyword::Hold(hold::Op::Suspend))
    } else if abbreviates(tag, "resume", 3) {
        Some(Keyword::Hold(hold::Op::Resume))
    } else if abbreviates(tag, "update", 1) {
        Some(Keyword::Update)
    } else if abbreviates(tag, "token", 3) {
        Some(Keyword::Token)
    } else if abbreviates(tag, "show", 3) {
        Some(Keyword::Show)
    } else if abbreviates(tag, "ping", 3) {
        Some(Keyword::Ping)
    } else if abbreviates(tag, "version", 4) {
        Some(Keyword::Version)
    } else if abbreviates(tag, "write", 5) {
        Some(Keyword::Write)
    } else if abbreviates(tag, "create", 2) {
        Some(Keyword::Create)
    } else if abbreviates(tag, "delete", 3) {
        // Slurm tries `details` first, so `d` and `de` are not `delete`.
        Some(Keyword::Delete)
    } else {
        None
    }
}

/// `scontrol create ENTITY…`: reservations only (Slurm's `_create_it` looks for the entity
/// among all the words).
fn create(words: &[String]) -> i32 {
    for w in words {
        let tag = w.split_once('=').map_or(w.as_str(), |(k, _)| k);
        if abbreviates(tag, "ReservationName", 3) {
            return reservation::create(words);
        }
        if abbreviates(tag, "NodeName", 3) || abbreviates(tag, "PartitionName", 3) {
            super::error(CMD, &format!("creating a {tag} is not supported here: this cluster's one node and its partitions are configured in its configuration file"));
            return 1;
        }
    }
    super::error(CMD, &format!("Invalid creation entity: {}", words[0]));
    1
}

/// `scontrol delete ENTITY=ID` or `scontrol delete ENTITY ID`: reservations only.
fn delete(words: &[String]) -> i32 {
    let (tag, value) = match words {
        [one] => match one.split_once('=') {
            Some((t, v)) => (t, v),
            None => {
                super::error(CMD, "Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'");
                return 1;
            }
        },
        [tag, value] => (tag.as_str(), value.as_str()),
        _ => {
            super::error(CMD, "Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'");
            return 1;
        }
    };
    if abbreviates(tag, "ReservationName", 3) {
        return reservation::delete(&words[0], value);
    }
    if abbreviates(tag, "NodeName", 3) || abbreviates(tag, "PartitionName", 3) {
        super::error(CMD, &format!("deleting a {tag} is not supported here"));
        return 1;
    }
    eprintln!("Invalid deletion entity: {}", words[0]);
    1
}

/// The data parser `--json=…` may name: none, or v0.0.43 (with or without Slurm's `+flag`s).
fn json_parser_ok(value: &str) -> bool {
    value.is_empty() || value.split('+').next() == Some(DATA_PARSER)
}

/// Runs scontrol.
pub fn run(args: Vec<OsString>) -> i32 {
    let argv = super::command_line(CMD, &args);
    let args: ScontrolArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    super::choose_cluster(args.clusters.as_deref());
    super::set_verbosity(args.verbose);
    if let Some(parser) = args.json.as_deref().filter(|p| !json_parser_ok(p)) {
        super::error(CMD, &format!("data_parser/{parser} is not available; slurmlet speaks {DATA_PARSER}"));
        return 1;
    }
    let flags =
        Flags { one_liner: args.oneliner, details: args.details > 0, json: args.json.is_some(), quiet: args.quiet };
    let Some((tag, rest)) = args.words.split_first() else {
        super::error(CMD, "no command given (interactive mode is not supported); see scontrol --help");
        return 1;
    };
    match keyword(tag) {
        Some(Keyword::Hold(op)) => hold::run(op, tag, rest, args.quiet),
        Some(Keyword::Update) => update::run(tag, rest, args.quiet),
        Some(Keyword::Token) => token::run(rest),
        Some(Keyword::Show) => show::run(tag, rest, flags, &argv),
        Some(Keyword::Ping) | Some(Keyword::Version) if !rest.is_empty() => {
            eprintln!("too many arguments for keyword:{tag}");
            1
        }
        Some(Keyword::Ping) => ping::run(),
        Some(Keyword::Version) => ping::version(),
        Some(Keyword::Write) => write::run(tag, rest, args.quiet),
        Some(Keyword::Create) | Some(Keyword::Delete) if rest.is_empty() => {
            eprintln!("too few arguments for {tag} keyword");
            1
        }
        Some(Keyword::Create) => create(rest),
        Some(Keyword::Delete) => delete(rest),
        None => {
            eprintln!("invalid keyword: {tag}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_match_as_in_slurm() {
        assert_eq!(keyword("hold"), Some(Keyword::Hold(hold::Op::Hold)));
        assert_eq!(keyword("HOLD"), Some(Keyword::Hold(hold::Op::Hold)));
        assert_eq!(keyword("uhold"), Some(Keyword::Hold(hold::Op::UserHold)));
        assert_eq!(keyword("holdu"), Some(Keyword::Hold(hold::Op::UserHold)));
        assert_eq!(keyword("rel"), Some(Keyword::Hold(hold::Op::Release)));
        assert_eq!(keyword("release"), Some(Keyword::Hold(hold::Op::Release)));
        assert_eq!(keyword("re"), None, "too short to tell");
        assert_eq!(keyword("releases"), None);
        assert_eq!(keyword("tok"), Some(Keyword::Token));
        assert_eq!(keyword("token"), Some(Keyword::Token));
        assert_eq!(keyword("bogus"), None);
        assert_eq!(keyword("show"), Some(Keyword::Show));
        assert_eq!(keyword("sho"), Some(Keyword::Show));
        assert_eq!(keyword("sh"), None);
        assert_eq!(keyword("ping"), Some(Keyword::Ping));
        assert_eq!(keyword("PIN"), Some(Keyword::Ping));
        assert_eq!(keyword("vers"), Some(Keyword::Version));
        assert_eq!(keyword("ver"), None);
        assert_eq!(keyword("su"), Some(Keyword::Hold(hold::Op::Suspend)));
        assert_eq!(keyword("suspend"), Some(Keyword::Hold(hold::Op::Suspend)));
        assert_eq!(keyword("res"), Some(Keyword::Hold(hold::Op::Resume)));
        assert_eq!(keyword("RESUME"), Some(Keyword::Hold(hold::Op::Resume)));
        assert_eq!(keyword("u"), Some(Keyword::Update));
        assert_eq!(keyword("update"), Some(Keyword::Update));
        assert_eq!(keyword("write"), Some(Keyword::Write));
        assert_eq!(keyword("writ"), None);
    }

    #[test]
    fn options_may_follow_the_words() {
        let args = ScontrolArgs::try_parse_from(["scontrol", "show", "job", "-o", "27", "-dd"]).unwrap();
        assert_eq!(args.words, ["show", "job", "27"]);
        assert!(args.oneliner);
        assert_eq!(args.details, 2);
        let args = ScontrolArgs::try_parse_from(["scontrol", "--json=v0.0.43", "show", "job"]).unwrap();
        assert_eq!(args.json.as_deref(), Some("v0.0.43"));
        let args = ScontrolArgs::try_parse_from(["scontrol", "show", "job", "--json"]).unwrap();
        assert_eq!(args.json.as_deref(), Some(""));
        assert!(json_parser_ok("") && json_parser_ok("v0.0.43") && json_parser_ok("v0.0.43+complex"));
        assert!(!json_parser_ok("v0.0.40"));
    }
}
