//! `scontrol`: view or change the state of jobs, one module per keyword.
//!
//! As Slurm's, it takes positional words: a keyword (`hold`, `uhold`, `release`, `token`)
//! and its arguments. A keyword may be abbreviated where Slurm allows it (`rel`, `tok`).

pub mod hold;
pub mod token;

use clap::Parser;
use std::ffi::OsString;

/// scontrol's options.
#[derive(Debug, Parser)]
#[command(about = "View or modify Slurm configuration and state", disable_version_flag = true)]
pub struct ScontrolArgs {
    /// Print no messages about errors
    #[arg(short = 'Q', long)]
    pub quiet: bool,
    /// The command: `hold JOB_LIST`, `uhold JOB_LIST`, `release JOB_LIST`, or `token
    /// [lifespan=SECONDS] [username=NAME]`. JOB_LIST is job ids separated by commas, or
    /// Name=NAME for every job of that name.
    #[arg(value_name = "COMMAND", trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

const CMD: &str = "scontrol";

/// A keyword scontrol knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    /// `hold`, `uhold`, `release`.
    Hold(hold::Op),
    /// `token`.
    Token,
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
    } else if abbreviates(tag, "token", 3) {
        Some(Keyword::Token)
    } else {
        None
    }
}

/// Runs scontrol.
pub fn run(args: Vec<OsString>) -> i32 {
    let args: ScontrolArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let Some((tag, rest)) = args.words.split_first() else {
        super::error(CMD, "no command given (interactive mode is not supported); see scontrol --help");
        return 1;
    };
    match keyword(tag) {
        Some(Keyword::Hold(op)) => hold::run(op, tag, rest, args.quiet),
        Some(Keyword::Token) => token::run(rest),
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
    }
}
