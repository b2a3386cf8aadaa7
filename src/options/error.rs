//! The error type of option and directive parsing.

use thiserror::Error;

/// A job option or directive that cannot be used, with Slurm's wording where Slurm has one.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum OptionError {
    /// A value that does not parse (`Invalid --time specification`).
    #[error("Invalid --{option} specification")]
    InvalidSpec {
        /// Long option name without dashes.
        option: &'static str,
        /// The offending value.
        value: String,
    },
    /// A count that is not a whole number (`Invalid numeric value "x" for --ntasks.`).
    #[error("Invalid numeric value \"{value}\" for --{option}.")]
    InvalidNumber {
        /// Long option name without dashes.
        option: &'static str,
        /// The offending value.
        value: String,
    },
    /// A value that parses but is out of range or otherwise unusable.
    #[error("invalid --{option} value '{value}': {why}")]
    Invalid {
        /// Long option name without dashes.
        option: &'static str,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A `--array` value that Slurm refuses. Slurm's wording has no detail, so the reason is
    /// kept in `why` for a second line (see [`OptionError::explanation`]).
    #[error("Invalid job array specification")]
    InvalidArray {
        /// The offending value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A `--dependency` value that Slurm refuses (`Job dependency problem`, the controller's
    /// wording); the reason is kept in `why` for a second line.
    #[error("Job dependency problem")]
    InvalidDependency {
        /// The offending value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A `--nodelist` or `--nodefile` that is no hostlist (Slurm's `fatal` text). The lines
    /// Slurm's hostlist code logs come first (see [`OptionError::logged`]).
    #[error("Invalid node list specified")]
    NodeList(super::hostlist::HostlistError),
    /// An option that slurmlet refuses, with the reason.
    #[error("--{option} is not supported: {why}")]
    Unsupported {
        /// Long option name without dashes.
        option: &'static str,
        /// Why it is refused and what to do instead.
        why: String,
    },
    /// A script that is not a usable batch script (empty, NUL bytes, DOS line breaks…).
    #[error("{0}")]
    Script(String),
    /// An input environment variable whose value cannot be used.
    #[error("{error}\n(from input environment variable {var}={value})")]
    InputVariable {
        /// The variable (`SBATCH_TIMELIMIT`).
        var: String,
        /// Its value.
        value: String,
        /// What is wrong with it.
        error: Box<OptionError>,
    },
    /// A `#SBATCH` line whose option cannot be used.
    #[error("{file}:{line}: {error}")]
    AtLine {
        /// Script name as given on the command line.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the option.
        error: Box<OptionError>,
    },
    /// A `#SBATCH` line that cannot be read.
    #[error("{file}:{line}: {message}")]
    Directive {
        /// Script name as given on the command line.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl OptionError {
    /// The error itself, for one that only says where it was written.
    pub fn innermost(&self) -> &OptionError {
        match self {
            OptionError::InputVariable { error, .. } | OptionError::AtLine { error, .. } => error.innermost(),
            other => other,
        }
    }

    /// The lines Slurm's library logs before the error itself (a malformed hostlist's
    /// `_parse_single_range: Invalid range: `3-1'`), each for a `cmd: error: ` line.
    pub fn logged(&self) -> &[String] {
        match self.innermost() {
            OptionError::NodeList(e) => &e.log,
            _ => &[],
        }
    }

    /// The detail that Slurm's one-line wording leaves out, for errors that keep it apart
    /// from their message ([`OptionError::InvalidArray`], [`OptionError::InvalidDependency`]).
    pub fn explanation(&self) -> Option<&str> {
        match self {
            OptionError::InvalidArray { why, .. } | OptionError::InvalidDependency { why, .. } => Some(why),
            _ => None,
        }
    }
}
