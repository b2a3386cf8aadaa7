//! What sbatch, srun and salloc share besides their failures (see [`super::job_failure`]):
//! the options of srun and salloc (command line and input variables, no directives), the
//! job's working directory, and its environment.

use super::job_failure::Failure;
use crate::options::sources::{self, SourceError};
use crate::options::{JobOptions, Tool};
use std::ffi::OsString;
use std::path::PathBuf;

/// The options of `tool` (srun or salloc, named `cmd` in messages): `args` merged with the
/// input variables of `env`, their warnings printed unless `-Q`. `--help`, `--usage` and
/// `--version` print and end the command (`Failure::Usage(0)`).
pub fn options(tool: Tool, cmd: &str, args: &[OsString], env: &[(String, String)]) -> Result<JobOptions, Failure> {
    let tokens: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let cli = JobOptions::parse(tool, &tokens).map_err(|e| Failure::from_source(cmd, SourceError::Usage(e)))?;
    if let Some(code) = super::common_flags(tool, &cli) {
        return Err(Failure::Usage(code));
    }
    let composed = sources::compose(tool, &[], None, "", env, &tokens).map_err(|e| Failure::from_source(cmd, e))?;
    if !composed.options.has("quiet") {
        for w in &composed.warnings {
            super::warning(cmd, &w.0);
        }
    }
    Ok(composed.options)
}

/// The job's working directory: `--chdir` (relative to the current one) or the current one.
pub fn working_directory(o: &JobOptions) -> Result<PathBuf, Failure> {
    let cwd =
        std::env::current_dir().map_err(|e| Failure::Message(format!("cannot read the current directory: {e}"), 1))?;
    Ok(o.value("chdir").map_or(cwd.clone(), |d| cwd.join(d)))
}

/// The job's environment: `env` as `--export` keeps it, with the submitter's umask, which
/// the files the job creates get, as in Slurm (`SLURM_UMASK`).
pub fn environment(o: &JobOptions, env: &[(String, String)]) -> Vec<String> {
    let mut environment = crate::options::job_environment(o.value("export"), env);
    environment.push(format!("SLURM_UMASK={:04o}", crate::sys::current_umask()));
    environment
}
