//! The one job-option model shared by the command line, `#SBATCH` directives, `SBATCH_*`
//! input variables and the REST job description.
//!
//! [`table`] lists every option of sbatch, srun and salloc once; [`parse`] builds the command
//! line parser from it; [`sources`] feeds directives and input variables through the same
//! parser, in the order directive < environment < command line, so that clap's "last one wins"
//! gives Slurm's precedence; [`desc`] checks the values and builds the REST job description.

pub mod begin;
pub mod desc;
pub mod directive;
pub mod error;
pub mod gres;
pub mod help;
pub mod hostlist;
pub mod memory;
pub mod parse;
pub mod pattern;
pub mod signal;
pub mod sources;
pub mod table;
pub mod time;

pub use desc::parse_node_range;
pub use error::OptionError;
pub use parse::JobOptions;
pub use table::Tool;

/// How `--export` selects the job's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportMode {
    /// The whole submit environment, plus the listed assignments.
    All(Vec<(String, Option<String>)>),
    /// Only the listed variables (plus SLURM_* that the job gets anyway).
    Only(Vec<(String, Option<String>)>),
}

/// Parses `--export`: `ALL`, `NONE`, `[ALL,]NAME[=value],…`.
pub fn parse_export(text: &str) -> ExportMode {
    let mut all = false;
    let mut vars = Vec::new();
    for item in text.split(',').filter(|s| !s.is_empty()) {
        match item {
            "ALL" => all = true,
            "NONE" | "NIL" => {}
            _ => match item.split_once('=') {
                Some((k, v)) => vars.push((k.to_string(), Some(v.to_string()))),
                None => vars.push((item.to_string(), None)),
            },
        }
    }
    if all || text.is_empty() {
        ExportMode::All(vars)
    } else {
        ExportMode::Only(vars)
    }
}

/// Builds the job's environment from the submit environment and `--export`.
pub fn job_environment(export: Option<&str>, submit_env: &[(String, String)]) -> Vec<String> {
    let mode = parse_export(export.unwrap_or("ALL"));
    let (base, vars) = match &mode {
        ExportMode::All(v) => (true, v),
        ExportMode::Only(v) => (false, v),
    };
    let mut env: Vec<(String, String)> = if base { submit_env.to_vec() } else { Vec::new() };
    for (k, v) in vars {
        let value = match v {
            Some(v) => Some(v.clone()),
            None => submit_env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
        };
        if let Some(value) = value {
            env.retain(|(n, _)| n != k);
            env.push((k.clone(), value));
        }
    }
    if !base {
        env.push(("SLURM_EXPORT_ENV".into(), export.unwrap_or("NONE").to_string()));
    }
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// A one-line notice about an option that has no effect here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionWarning(pub String);

/// Seconds since the UNIX epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
