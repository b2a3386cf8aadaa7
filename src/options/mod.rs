//! The one job-option model shared by the command line, `#SBATCH` directives, `SBATCH_*`
//! input variables and the REST job description.
//!
//! [`table`] lists every option of sbatch, srun and salloc once; [`parse`] builds the command
//! line parser from it; [`sources`] feeds directives and input variables through the same
//! parser, in the order directive < environment < command line, so that clap's "last one wins"
//! gives Slurm's precedence; [`desc`] checks the values and builds the REST job description.

pub mod array;
pub mod begin;
pub mod dependency;
pub mod desc;
pub mod directive;
pub mod error;
pub mod export;
pub mod gres;
pub mod help;
pub mod hostlist;
pub mod mail;
pub mod memory;
pub mod parse;
pub mod pattern;
pub mod signal;
pub mod sources;
pub mod table;
pub mod time;

pub use desc::parse_node_range;
pub use error::OptionError;
pub use export::{is_name as is_variable_name, job_environment, parse_export, ExportMode};
pub use parse::JobOptions;
pub use table::Tool;

/// A one-line notice about an option that has no effect here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionWarning(pub String);

/// Helpers shared by the grammars' tests.
#[cfg(test)]
pub(crate) mod test_support {
    /// Every string of up to `len` characters from `alphabet`, for exhaustive no-panic checks.
    pub fn short_strings(alphabet: &str, len: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last.iter().flat_map(|s| alphabet.chars().map(move |c| format!("{s}{c}"))).collect();
            all.extend(last.iter().cloned());
        }
        all
    }
}
