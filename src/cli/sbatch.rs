//! `sbatch`: submit a batch script.
//!
//! Options come from three places, merged by feeding them through one clap parser in the order
//! `#SBATCH` directives, `SBATCH_*` variables, command line, so that the last one wins as in
//! Slurm. Each directive line is first parsed alone, so that an error names its line.

use crate::api::types::{JobSubmitReq, JobSubmitResponse};
use crate::options::{self, directive, JobOptions, OptionError};
use clap::Parser;
use std::ffi::OsString;
use std::io::Read;

/// sbatch's options.
#[derive(Debug, Clone, Parser, Default)]
#[command(
    about = "Submit a batch script to Slurm",
    disable_version_flag = true,
    args_override_self = true,
    override_usage = "sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]"
)]
pub struct SbatchArgs {
    /// Job options shared with srun and salloc.
    #[command(flatten)]
    pub job: JobOptions,
    /// Outputs only the job id number and the cluster name if present
    #[arg(long)]
    pub parsable: bool,
    /// Wrap command string in a sh script and submit
    #[arg(long, value_name = "command string")]
    pub wrap: Option<String>,
    /// Validate the batch script and return an estimate of when the job would be scheduled
    #[arg(long = "test-only")]
    pub test_only: bool,
    /// Wait for job completion before exiting
    #[arg(short = 'W', long)]
    pub wait: bool,
    /// Quiet mode (suppress informational messages)
    #[arg(short = 'Q', long)]
    pub quiet: bool,
    /// Verbose mode (multiple -v's increase verbosity)
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print version information and exit
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// The batch script and its arguments
    #[arg(trailing_var_arg = true, value_name = "script [args...]")]
    pub script: Vec<String>,
}

const CMD: &str = "sbatch";

/// Runs sbatch.
pub fn run(args: Vec<OsString>) -> i32 {
    match submit(args) {
        Ok(code) => code,
        Err(Failure::Usage(code)) => code,
        Err(Failure::Option(e)) => {
            super::error(CMD, &e.to_string());
            match e {
                OptionError::InvalidSpec { .. } | OptionError::Directive { .. } => 255,
                _ => 1,
            }
        }
        Err(Failure::Message(msg, code)) => {
            super::error(CMD, &msg);
            code
        }
    }
}

enum Failure {
    Usage(i32),
    Option(OptionError),
    Message(String, i32),
}

impl From<OptionError> for Failure {
    fn from(e: OptionError) -> Self {
        Failure::Option(e)
    }
}

fn parse(tokens: Vec<String>) -> Result<SbatchArgs, Failure> {
    let argv: Vec<OsString> =
        std::iter::once(OsString::from(CMD)).chain(tokens.into_iter().map(OsString::from)).collect();
    super::parse_args(CMD, argv, 255).map_err(Failure::Usage)
}

/// Reads the script: the named file, `--wrap`, or standard input.
fn read_script(cli: &SbatchArgs) -> Result<(String, String), Failure> {
    if let Some(cmd) = &cli.wrap {
        if !cli.script.is_empty() {
            return Err(Failure::Message("script argument not permitted with --wrap option".into(), 1));
        }
        return Ok((format!("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{cmd}\n"), String::new()));
    }
    let (bytes, name) = match cli.script.first() {
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
    let cli = parse(cli_tokens.clone())?;
    if cli.version {
        println!("slurmlet {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    let (script, script_name) = read_script(&cli)?;

    // Directives, each checked on its own line first.
    let mut tokens = Vec::new();
    for d in directive::extract(&script, "#SBATCH", display_name(&script_name))? {
        let at_line = |message: String| OptionError::Directive {
            file: display_name(&script_name).to_string(),
            line: d.line,
            message,
        };
        let one = parse(d.args.clone()).map_err(|f| match f {
            Failure::Usage(_) => Failure::Option(at_line(format!("cannot use this line: {}", d.text.trim()))),
            other => other,
        })?;
        if !one.script.is_empty() {
            return Err(
                at_line(format!("unexpected argument '{}' (a directive holds options only)", one.script[0])).into()
            );
        }
        one.job.validate().map_err(|e| at_line(e.to_string()))?;
        tokens.extend(d.args);
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    let env_tokens = options::env_tokens(&env);
    for t in &env_tokens {
        let one = parse(vec![t.clone()])?;
        one.job.validate().map_err(|e| Failure::Message(format!("input environment variable {t}: {e}"), 255))?;
    }
    tokens.extend(env_tokens);
    tokens.extend(cli_tokens);
    let merged = parse(tokens)?;
    for w in merged.job.validate()? {
        super::warning(CMD, &w.0);
    }

    let mut desc = merged.job.to_job_desc()?;
    let cwd =
        std::env::current_dir().map_err(|e| Failure::Message(format!("cannot read the current directory: {e}"), 1))?;
    let workdir = match &merged.job.chdir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    desc.current_working_directory = Some(workdir.display().to_string());
    let mut environment = options::job_environment(merged.job.export.as_deref(), &env);
    // Files the job creates get the submitter's umask, as in Slurm.
    environment.push(format!("SLURM_UMASK={:04o}", current_umask()));
    desc.environment = Some(environment);
    desc.script = Some(script);
    if desc.name.is_none() {
        desc.name = Some(if merged.wrap.is_some() {
            "wrap".into()
        } else if script_name.is_empty() {
            "sbatch".into()
        } else {
            std::path::Path::new(&script_name).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        });
    }
    if let Some(name) = merged.script.first() {
        let abs = std::env::current_dir().map(|c| c.join(name)).unwrap_or_else(|_| name.into());
        desc.argv =
            Some(std::iter::once(abs.display().to_string()).chain(merged.script.iter().skip(1).cloned()).collect());
    }

    let client = super::connect(CMD).map_err(Failure::Usage)?;
    let req = JobSubmitReq { script: None, job: Some(desc) };
    if merged.test_only {
        return test_only(&client, &req);
    }
    let resp: JobSubmitResponse = client.submit(&req).map_err(|e| Failure::Message(e.to_string(), 1))?;
    report_errors(&resp)?;
    for w in &resp.warnings {
        super::warning(CMD, &w.description);
    }
    if merged.parsable {
        println!("{}", resp.job_id);
    } else if !merged.quiet {
        println!("Submitted batch job {}", resp.job_id);
    }
    if merged.wait {
        return wait(&client, resp.job_id);
    }
    Ok(0)
}

/// The process umask (read by setting and restoring it).
fn current_umask() -> u32 {
    // SAFETY: umask has no memory preconditions; the old mask is restored at once.
    unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask as u32
    }
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
    let Some(j) = resp.jobs.first() else { return Err(Failure::Message("the daemon sent no estimate".into(), 1)) };
    let start = j.start_time.get().map(crate::sys::format_local_time).unwrap_or_else(|| "Unknown".into());
    eprintln!(
        "sbatch: Job {} to start at {} using {} processors on nodes {} in partition {}",
        j.job_id,
        start,
        j.cpus.get().unwrap_or(1),
        j.nodes,
        j.partition
    );
    Ok(0)
}

/// `--wait`: blocks until the job ends; exits with its exit code (1 if it ended otherwise).
fn wait(client: &crate::api::client::Client, id: u32) -> Result<i32, Failure> {
    let resp: crate::api::types::JobsResponse =
        client.get(&format!("/slurmlet/v1/job/{id}/wait")).map_err(|e| Failure::Message(e.to_string(), 1))?;
    let Some(j) = resp.jobs.first() else { return Ok(1) };
    let rc = j.exit_code.return_code.get().unwrap_or(0) as i32;
    let state = j.job_state.first().map(String::as_str).unwrap_or("");
    Ok(if rc != 0 {
        rc
    } else if state == "COMPLETED" {
        0
    } else {
        1
    })
}
