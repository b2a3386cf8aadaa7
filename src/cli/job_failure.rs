//! How sbatch, srun and salloc report what stops them, in Slurm's words and exit codes.

use crate::options::sources::SourceError;
use crate::options::OptionError;

/// What stops a command that takes job options.
pub enum Failure {
    /// Already reported (a usage error); exit with this code.
    Usage(i32),
    /// A bad option or value.
    Option(OptionError),
    /// An error line to print, and the exit code.
    Message(String, i32),
}

impl From<OptionError> for Failure {
    fn from(e: OptionError) -> Self {
        Failure::Option(e)
    }
}

impl Failure {
    /// The failure of merging the options of `cmd`; clap's usage errors are printed here.
    pub fn from_source(cmd: &str, e: SourceError) -> Failure {
        match e {
            SourceError::Usage(error) => Failure::Usage(super::report_clap_error(cmd, &error, 255)),
            SourceError::DirectiveUsage { error, at } => {
                super::report_clap_error(cmd, &error, 255);
                Failure::Option(at)
            }
            SourceError::EnvUsage { error, var } => {
                super::report_clap_error(cmd, &error, 255);
                Failure::Message(format!("in input environment variable {var}"), 255)
            }
            SourceError::Option(e) => Failure::Option(e),
        }
    }

    /// Prints the failure as `cmd: error: …` and returns the exit code.
    pub fn report(self, cmd: &str) -> i32 {
        match self {
            Failure::Usage(code) => code,
            Failure::Option(e) => {
                for line in e.logged() {
                    super::error(cmd, line);
                }
                if let OptionError::NodeList(_) = e.innermost() {
                    // Slurm's commands end with `fatal()` here.
                    super::fatal(cmd, &e.to_string());
                    return 1;
                }
                super::error(cmd, &e.to_string());
                if let Some(why) = e.innermost().explanation() {
                    super::error(cmd, why);
                }
                match e.innermost() {
                    // A value the command itself cannot read is a usage error, as in Slurm.
                    OptionError::InvalidSpec { .. }
                    | OptionError::InvalidNumber { .. }
                    | OptionError::Invalid { .. }
                    | OptionError::Directive { .. } => 255,
                    _ => 1,
                }
            }
            Failure::Message(msg, code) => {
                super::error(cmd, &msg);
                code
            }
        }
    }
}
