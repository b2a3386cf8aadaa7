//! Merging the three places options come from: `#SBATCH` directives, input environment
//! variables and the command line, in that order of rising precedence.
//!
//! All three are turned into option tokens and fed through the same parser, directives first,
//! so that the last one given wins, as in Slurm. Each directive line and each variable is
//! first parsed alone, so that an error names where it was written.

use super::directive::Directive;
use super::table::{self, Tool, Value};
use super::{JobOptions, OptionError, OptionWarning};

/// Why the options could not be read.
#[derive(Debug)]
pub enum SourceError {
    /// The command line does not parse (Slurm's usage error).
    Usage(clap::Error),
    /// A directive line does not parse.
    DirectiveUsage {
        /// The parser's error.
        error: clap::Error,
        /// Where it was written: `file:line: the line`.
        at: OptionError,
    },
    /// An input variable does not parse.
    EnvUsage {
        /// The parser's error.
        error: clap::Error,
        /// The variable.
        var: String,
    },
    /// A value or option that cannot be used.
    Option(OptionError),
}

impl From<OptionError> for SourceError {
    fn from(e: OptionError) -> Self {
        SourceError::Option(e)
    }
}

/// The merged options and the warnings to print.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    /// The options in force.
    pub options: JobOptions,
    /// One line for each option that has no effect here, and other notices.
    pub warnings: Vec<OptionWarning>,
}

/// The option tokens the input variables of `tool` found in `env` stand for, as
/// (variable, token).
pub fn env_tokens(tool: Tool, env: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    for (var, spec) in table::input_vars(tool) {
        let Some((_, v)) = env.iter().find(|(k, _)| k == var) else { continue };
        if taken.contains(&spec.long) {
            continue; // SBATCH_CLUSTERS before SLURM_CLUSTERS: the first one listed wins.
        }
        taken.push(spec.long);
        let token = match spec.value {
            Value::Flag | Value::Count | Value::IgnoredValue => format!("--{}", spec.long),
            Value::Optional(_) if v.is_empty() => format!("--{}", spec.long),
            Value::Required(_) | Value::Optional(_) => format!("--{}={v}", spec.long),
        };
        out.push((var.to_string(), token));
    }
    out
}

/// Merges directives, `env`'s input variables and the command line `cli` for `tool`.
///
/// `script` is the batch script's text (for notices about directives of other batch systems)
/// and `file` its name for messages.
pub fn compose(
    tool: Tool,
    directives: &[Directive],
    script: Option<&str>,
    file: &str,
    env: &[(String, String)],
    cli: &[String],
) -> Result<Composed, SourceError> {
    let mut explicit = Vec::new();
    for d in directives {
        let at = |message: String| OptionError::Directive { file: file.to_string(), line: d.line, message };
        let one = JobOptions::parse(tool, &d.args).map_err(|error| SourceError::DirectiveUsage {
            error,
            at: at(format!("cannot use this line: {}", d.text.trim())),
        })?;
        if let Some(word) = one.positional.first() {
            return Err(at(format!("Invalid directive found in batch script: {word}")).into());
        }
        one.validate(tool).map_err(|e| OptionError::AtLine {
            file: file.to_string(),
            line: d.line,
            error: Box::new(e),
        })?;
        explicit.extend(d.args.iter().cloned());
    }
    let env_tokens = env_tokens(tool, env);
    for (var, token) in &env_tokens {
        let one = JobOptions::parse(tool, std::slice::from_ref(token))
            .map_err(|error| SourceError::EnvUsage { error, var: var.clone() })?;
        one.validate(tool).map_err(|e| OptionError::InputVariable {
            var: var.clone(),
            value: token_value(token).to_string(),
            error: Box::new(e),
        })?;
    }
    let cli_options = JobOptions::parse(tool, cli).map_err(SourceError::Usage)?;
    explicit.extend(cli.iter().cloned());

    let mut tokens: Vec<String> = directives.iter().flat_map(|d| d.args.iter().cloned()).collect();
    tokens.extend(env_tokens.iter().map(|(_, t)| t.clone()));
    tokens.extend(cli.iter().cloned());
    // Each parse walks every option of the table: the same tokens are parsed once.
    let mut options = if tokens == cli {
        cli_options.clone()
    } else {
        JobOptions::parse(tool, &tokens).map_err(SourceError::Usage)?
    };
    options.positional = cli_options.positional;

    // The three ways to ask for memory exclude each other when written in the script or on the
    // command line; one written there overrides the others from the environment.
    let explicit_options = if explicit == tokens {
        options.clone()
    } else {
        JobOptions::parse(tool, &explicit).map_err(SourceError::Usage)?
    };
    const MEMORY: [&str; 3] = ["mem", "mem-per-cpu", "mem-per-gpu"];
    let explicit_memory: Vec<&str> = MEMORY.into_iter().filter(|o| explicit_options.has(o)).collect();
    match explicit_memory.as_slice() {
        [] if MEMORY.iter().filter(|o| options.has(o)).count() > 1 => {
            let vars: Vec<&str> = env_tokens
                .iter()
                .filter(|(_, t)| MEMORY.iter().any(|m| t.starts_with(&format!("--{m}="))))
                .map(|(v, _)| v.as_str())
                .collect();
            return Err(OptionError::Script(format!("{} are mutually exclusive.", vars.join(", "))).into());
        }
        [] => {}
        [one] => MEMORY.iter().filter(|o| *o != one).for_each(|o| options.remove(o)),
        _ => {
            return Err(
                OptionError::Script("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.".into()).into()
            )
        }
    }

    let mut warnings = options.validate(tool)?;
    if let Some(script) = script {
        if !options.has("ignore-pbs") {
            warnings.extend(foreign_directives(script, file));
        }
    }
    Ok(Composed { options, warnings })
}

fn token_value(token: &str) -> &str {
    token.split_once('=').map(|(_, v)| v).unwrap_or("")
}

/// A notice for each `#PBS` or `#BSUB` line in the script's header: Slurm's sbatch would read
/// some of them; slurmlet does not.
fn foreign_directives(script: &str, file: &str) -> Vec<OptionWarning> {
    let mut out = Vec::new();
    for (i, line) in super::directive::strip_bom(script).lines().enumerate() {
        let trimmed = line.trim_start();
        if !(trimmed.is_empty() || trimmed.starts_with('#')) {
            break;
        }
        if line.starts_with("#PBS") || line.starts_with("#BSUB") {
            out.push(OptionWarning(format!(
                "{file}:{}: {} directives are not read; write them as #SBATCH lines (--ignore-pbs silences this)",
                i + 1,
                if line.starts_with("#PBS") { "#PBS" } else { "#BSUB" }
            )));
        }
    }
    out
}
