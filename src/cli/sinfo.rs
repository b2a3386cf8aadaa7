//! `sinfo`: view partitions and nodes.

use clap::Parser;
use std::ffi::OsString;

/// sinfo's options.
#[derive(Debug, Parser)]
#[command(disable_version_flag = true, disable_help_flag = true, about = "view information about Slurm nodes and partitions")]
pub struct SinfoArgs {
    /// no headers on output
    #[arg(short = 'h', long = "noheader")]
    pub noheader: bool,
}

/// Runs sinfo.
pub fn run(args: Vec<OsString>) -> i32 {
    let _args: SinfoArgs = match super::parse_args("sinfo", args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    0
}
