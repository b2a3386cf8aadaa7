//! The command-line parser built from the option table, and the options one parse found.
//!
//! The same parser reads the command line, each `#SBATCH` line and the input variables (turned
//! into option tokens), so all three understand exactly the same options and values.

use super::table::{self, OptSpec, Tool, Value};
use clap::{Arg, ArgAction, ArgMatches, Command};
use std::collections::BTreeMap;

/// The clap command for `tool`: every option of the table that `tool` accepts, then the
/// script (sbatch) or program (srun, salloc) and its arguments.
pub fn command(tool: Tool) -> Command {
    let positional = match tool {
        Tool::Sbatch => "script [args...]",
        Tool::Srun | Tool::Salloc => "executable [args...]",
    };
    let mut cmd = Command::new(tool.name())
        .about(match tool {
            Tool::Sbatch => "Submit a batch script to Slurm",
            Tool::Srun => "Run parallel jobs",
            Tool::Salloc => "Obtain a Slurm job allocation and run a command in it",
        })
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args_override_self(true)
        .override_usage(format!("{} [OPTIONS...] {positional}", tool.name()));
    for spec in table::options_for(tool) {
        cmd = cmd.arg(arg(spec, tool));
    }
    cmd.arg(Arg::new(POSITIONAL).num_args(0..).trailing_var_arg(true).value_name(positional).help(match tool {
        Tool::Sbatch => "The batch script and its arguments",
        _ => "The program to run and its arguments",
    }))
}

const POSITIONAL: &str = "script";

fn arg(spec: &OptSpec, tool: Tool) -> Arg {
    let mut a = Arg::new(spec.long).long(spec.long).help(spec.help);
    if let Some(c) = spec.short_for(tool) {
        a = a.short(c);
    }
    for (long, alias) in table::ALIASES {
        if *long == spec.long {
            a = a.alias(*alias);
        }
    }
    match spec.value {
        Value::Flag => a.action(ArgAction::SetTrue),
        Value::Count => a.action(ArgAction::Count),
        // getopt takes the next word as a required argument whatever it starts with.
        Value::Required(name) => a.action(ArgAction::Set).num_args(1).value_name(name).allow_hyphen_values(true),
        // getopt's optional arguments are only ever attached: `--opt=v` (or `-Xv`, which
        // `getopt_tokens` rewrites into the long form first).
        Value::Optional(name) => {
            a.action(ArgAction::Set).num_args(0..=1).require_equals(true).default_missing_value("").value_name(name)
        }
        // Its value is dropped before clap sees it (`getopt_tokens`).
        Value::IgnoredValue => a.action(ArgAction::SetTrue),
    }
}

/// The tokens as getopt reads them, for clap: each short option that takes an optional value
/// and has one attached (`-I5`, `-K1`, `-koff`, `-vI5`) rewritten as `--long=value` (clap
/// itself would only take `-I=5`), and the value of an option whose value Slurm ignores
/// dropped (`--overlap=yes` is `--overlap`). Tokens after the first non-option word (the
/// script or program, and its arguments) and after `--` are left as they are.
fn getopt_tokens(tool: Tool, tokens: &[String]) -> Vec<String> {
    let spec_of = |c: char| table::options_for(tool).find(|s| s.short_for(tool) == Some(c));
    let mut out = Vec::with_capacity(tokens.len());
    let mut words = tokens.iter();
    while let Some(token) = words.next() {
        out.push(token.clone());
        if token == "--" || !token.starts_with('-') || token == "-" {
            break; // The rest is the script or program and its arguments.
        }
        let takes_next = if let Some(long) = token.strip_prefix("--") {
            let (long, value) = long.split_once('=').map_or((long, None), |(l, v)| (l, Some(v)));
            let name = table::ALIASES.iter().find(|(_, alias)| *alias == long).map_or(long, |(name, _)| *name);
            let spec = table::options_for(tool).find(|s| s.long == name);
            if value.is_some() && spec.is_some_and(|s| s.value == Value::IgnoredValue) {
                out.pop();
                out.push(format!("--{long}"));
            }
            value.is_none() && spec.is_some_and(|s| matches!(s.value, Value::Required(_)))
        } else {
            let cluster = &token[1..];
            let mut takes_next = false;
            for (i, c) in cluster.char_indices() {
                let Some(spec) = spec_of(c) else { break };
                let rest = &cluster[i + c.len_utf8()..];
                match spec.value {
                    Value::Required(_) => {
                        takes_next = rest.is_empty();
                        break;
                    }
                    Value::Optional(_) | Value::IgnoredValue if !rest.is_empty() => {
                        let before = &cluster[..i];
                        out.pop();
                        if !before.is_empty() {
                            out.push(format!("-{before}"));
                        }
                        out.push(match spec.value {
                            Value::IgnoredValue => format!("--{}", spec.long),
                            _ => format!("--{}={rest}", spec.long),
                        });
                        break;
                    }
                    _ => {}
                }
            }
            takes_next
        };
        if takes_next {
            if let Some(value) = words.next() {
                out.push(value.clone());
            }
        }
    }
    out.extend(words.cloned());
    out
}

/// The options one parse found, by long name, and the words after them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// Option long name → its value (`None` for a flag; the count for `-v`; `""` for an
    /// optional value left out).
    given: BTreeMap<&'static str, Option<String>>,
    /// The script or program and its arguments.
    pub positional: Vec<String>,
}

impl JobOptions {
    /// Reads what `tool`'s parser matched.
    pub fn from_matches(tool: Tool, m: &ArgMatches) -> Self {
        let mut given = BTreeMap::new();
        for spec in table::options_for(tool) {
            match spec.value {
                Value::Flag | Value::IgnoredValue => {
                    if m.get_flag(spec.long) {
                        given.insert(spec.long, None);
                    }
                }
                Value::Count => {
                    let n = m.get_count(spec.long);
                    if n > 0 {
                        given.insert(spec.long, Some(n.to_string()));
                    }
                }
                Value::Required(_) | Value::Optional(_) => {
                    if let Some(v) = m.get_one::<String>(spec.long) {
                        given.insert(spec.long, Some(v.clone()));
                    }
                }
            }
        }
        let positional = m.get_many::<String>(POSITIONAL).map(|v| v.cloned().collect()).unwrap_or_default();
        JobOptions { given, positional }
    }

    /// Parses option tokens (no program name first) for `tool`.
    ///
    /// The parser is built once per command and thread, since sbatch parses each directive
    /// line, each input variable and the command line apart.
    pub fn parse(tool: Tool, tokens: &[String]) -> Result<Self, clap::Error> {
        thread_local! {
            static PARSERS: std::cell::RefCell<Vec<(Tool, Command)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let argv = std::iter::once(tool.name().to_string()).chain(getopt_tokens(tool, tokens));
        PARSERS.with(|parsers| {
            let mut parsers = parsers.borrow_mut();
            let index = match parsers.iter().position(|(t, _)| *t == tool) {
                Some(i) => i,
                None => {
                    parsers.push((tool, command(tool)));
                    parsers.len() - 1
                }
            };
            let m = parsers[index].1.try_get_matches_from_mut(argv)?;
            Ok(Self::from_matches(tool, &m))
        })
    }

    /// The value of `--long`, if given (`""` for an optional value left out).
    pub fn value(&self, long: &str) -> Option<&str> {
        debug_assert!(table::OPTIONS.iter().any(|o| o.long == long), "--{long} is not in the option table");
        self.given.get(long).and_then(|v| v.as_deref())
    }

    /// Whether `--long` was given (flag or value).
    pub fn has(&self, long: &str) -> bool {
        debug_assert!(table::OPTIONS.iter().any(|o| o.long == long), "--{long} is not in the option table");
        self.given.contains_key(long)
    }

    /// How many times a counted option (`-v`) was given.
    pub fn count(&self, long: &str) -> u8 {
        self.value(long).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// Forgets `--long` (an option another one overrides).
    pub fn remove(&mut self, long: &str) {
        self.given.remove(long);
    }

    /// Every option given, with its value.
    pub fn given(&self) -> impl Iterator<Item = (&'static str, Option<&str>)> + '_ {
        self.given.iter().map(|(k, v)| (*k, v.as_deref()))
    }
}
