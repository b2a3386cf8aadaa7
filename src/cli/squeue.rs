//! `squeue`: view jobs in the queue.

use clap::Parser;
use std::ffi::OsString;

/// squeue's options.
#[derive(Debug, Parser)]
#[command(disable_version_flag = true, disable_help_flag = true, about = "view information about jobs located in the Slurm scheduling queue")]
pub struct SqueueArgs {
    /// Do not print a header
    #[arg(short = 'h', long = "noheader")]
    pub noheader: bool,
    /// Comma separated list of jobs IDs to view
    #[arg(short = 'j', long = "jobs", alias = "job")]
    pub jobs: Option<String>,
}

/// Runs squeue.
pub fn run(args: Vec<OsString>) -> i32 {
    let args: SqueueArgs = match super::parse_args("squeue", args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let client = match super::connect("squeue") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let jobs = match client.jobs() {
        Ok(j) => j,
        Err(e) => {
            super::error("squeue", &e.to_string());
            return 1;
        }
    };
    if !args.noheader {
        println!("             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)");
    }
    for j in jobs.jobs {
        println!("{:>18} {:>9} {:>8.8} {:>8.8} {:>2} {:>10} {:>6} {}", j.job_id, j.partition, j.name, j.user_name, j.job_state.join(","), "", 1, j.state_reason);
    }
    0
}
