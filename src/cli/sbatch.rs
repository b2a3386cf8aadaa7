//! `sbatch`: submit a batch script.
//!
//! Options come from three places, merged by feeding them through one clap parser in the order
//! `#SBATCH` directives, `SBATCH_*` variables, command line, so that the last one wins as in
//! Slurm. Each directive line is first parsed alone, so that an error names its line.

use super::job_command;
use super::job_failure::Failure;
use crate::api::types::{JobSubmitReq, JobSubmitResponse};
use crate::options::sources::{self, SourceError};
use crate::options::{directive, JobOptions, Tool};
use std::ffi::OsString;
use std::io::Read;

const CMD: &str = "sbatch";

/// Runs sbatch.
pub fn run(args: Vec<OsString>) -> i32 {
    submit(args).unwrap_or_else(|failure| failure.report(CMD))
}

/// Reads the script: the named file, `--wrap`, or standard input.
fn read_script(cli: &JobOptions) -> Result<(String, String), Failure> {
    if let Some(cmd) = cli.value("wrap") {
        if !cli.positional.is_empty() {
            return Err(Failure::Message("script argument not permitted with --wrap option".into(), 1));
        }
        return Ok((format!("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{cmd}\n"), String::new()));
    }
    let (bytes, name) = match cli.positional.first() {
        Some(path) => match std::fs::read(path) {
            Ok(b) => (b, path.clone()),
            Err(_) => return Err(Failure::Message(format!("Unable to open file {path}"), 1)),
        },
        None => {
            let mut b = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut b);
            (b, String::new())
        }
    };
    directive::check_script(&bytes)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::Message(
            format!(
                "{}: the script is not UTF-8 text (invalid byte at offset {})",
                display_name(&name),
                e.utf8_error().valid_up_to()
            ),
            1,
        )
    })?;
    // A UTF-8 BOM (from Windows editors) would hide the #! line from the kernel.
    Ok((directive::strip_bom(&text).to_string(), name))
}

fn display_name(name: &str) -> &str {
    if name.is_empty() {
        "(standard input)"
    } else {
        name
    }
}

fn submit(args: Vec<OsString>) -> Result<i32, Failure> {
    let cli_tokens: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let cli =
        JobOptions::parse(Tool::Sbatch, &cli_tokens).map_err(|e| Failure::from_source(CMD, SourceError::Usage(e)))?;
    if let Some(code) = super::common_flags(Tool::Sbatch, &cli) {
        return Ok(code);
    }
    let (script, script_name) = read_script(&cli)?;
    let file = display_name(&script_name);
    let directives = directive::extract(&script, "#SBATCH", file)?;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let composed = sources::compose(Tool::Sbatch, &directives, Some(&script), file, &env, &cli_tokens)
        .map_err(|e| Failure::from_source(CMD, e))?;
    for w in &composed.warnings {
        super::warning(CMD, &w.0);
    }
    let merged = composed.options;

    let mut desc = merged.to_job_desc()?;
    desc.current_working_directory = Some(job_command::working_directory(&merged)?.display().to_string());
    let mut environment = job_command::environment(&merged, &env);
    if let Some(path) = merged.value("export-file") {
        environment.extend(export_file(path)?);
    }
    if let Some(asked) = login_environment_asked(&merged) {
        environment.push(format!("{}={asked}", crate::stepd::user_env::VARIABLE));
    }
    desc.environment = Some(environment);
    desc.script = Some(script);
    if desc.name.is_none() {
        desc.name = Some(if merged.has("wrap") {
            "wrap".into()
        } else if script_name.is_empty() {
            "sbatch".into()
        } else {
            std::path::Path::new(&script_name).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        });
    }
    if let Some(name) = merged.positional.first() {
        let abs = std::env::current_dir().map(|c| c.join(name)).unwrap_or_else(|_| name.into());
        desc.argv =
            Some(std::iter::once(abs.display().to_string()).chain(merged.positional.iter().skip(1).cloned()).collect());
    }

    super::choose_cluster(merged.value("clusters"));
    super::set_verbosity(merged.count("verbose"));
    let client = super::connect(CMD).map_err(Failure::Usage)?;
    let req = JobSubmitReq { script: None, job: Some(desc) };
    if merged.has("test-only") {
        return test_only(&client, &req);
    }
    let resp: JobSubmitResponse = client.submit(&req).map_err(|e| Failure::Message(e.to_string(), 1))?;
    report_errors(&resp)?;
    // slurmrestd reports a submit's non-zero return code twice ("Job submission resulted in
    // non-zero return code: X", then X): said once here. A held job's code (ESLURM_JOB_HELD)
    // Slurm's sbatch does not mention at all.
    let mut said: Vec<&str> = Vec::new();
    for w in &resp.warnings {
        let text =
            w.description.strip_prefix("Job submission resulted in non-zero return code: ").unwrap_or(&w.description);
        if text == JOB_HELD || said.contains(&text) {
            continue;
        }
        said.push(text);
        super::warning(CMD, text);
    }
    if merged.has("parsable") {
        println!("{}", resp.job_id);
    } else if !merged.has("quiet") {
        println!("Submitted batch job {}", resp.job_id);
    }
    if merged.has("wait") {
        return super::sbatch_wait::wait(&client, resp.job_id);
    }
    Ok(0)
}

/// Whether the job is to start from the user's login environment, and how (`1`, or
/// `--get-user-env`'s `[timeout][mode]`): asked with `--get-user-env`, or implied by
/// `--export=NONE` as in Slurm's sbatch.
fn login_environment_asked(o: &JobOptions) -> Option<String> {
    if o.has("get-user-env") {
        return Some(o.value("get-user-env").filter(|v| !v.is_empty()).unwrap_or("1").to_string());
    }
    o.value("export").is_some_and(|e| e.eq_ignore_ascii_case("NONE")).then(|| "1".to_string())
}

/// The `NAME=value` definitions of `--export-file` (NUL- or newline-separated).
fn export_file(path: &str) -> Result<Vec<String>, Failure> {
    let text =
        std::fs::read(path).map_err(|e| Failure::Message(format!("--export-file={path}: cannot read it: {e}"), 1))?;
    let text = String::from_utf8_lossy(&text);
    let mut out = Vec::new();
    for def in text.split(['\0', '\n']).filter(|d| !d.is_empty()) {
        if def.split_once('=').is_none_or(|(name, _)| name.is_empty()) {
            return Err(Failure::Message(format!("--export-file={path}: '{def}' is not NAME=value"), 1));
        }
        out.push(def.to_string());
    }
    Ok(out)
}

/// Prints a submit reply's errors as Slurm does and fails.
fn report_errors(resp: &JobSubmitResponse) -> Result<(), Failure> {
    if resp.errors.is_empty() {
        return Ok(());
    }
    for e in &resp.errors {
        if e.description != "Batch job submission failed" && !e.description.is_empty() {
            super::error(CMD, &e.description);
        }
        if e.source == "slurm_submit_batch_job()" {
            super::error(CMD, &format!("Batch job submission failed: {}", e.error));
        }
    }
    Err(Failure::Usage(1))
}

fn test_only(client: &crate::api::client::Client, req: &JobSubmitReq) -> Result<i32, Failure> {
    let resp: crate::api::types::JobsResponse =
        client.post("/slurmlet/v1/job/test", req).map_err(|e| Failure::Message(e.to_string(), 1))?;
    if !resp.errors.is_empty() {
        let as_submit = JobSubmitResponse { errors: resp.errors.clone(), ..Default::default() };
        report_errors(&as_submit)?;
    }
    super::allocate::print_estimate(CMD, &resp)
}

/// Slurm's text for `ESLURM_JOB_HELD`.
const JOB_HELD: &str = "Job is in held state, pending scheduler release";
