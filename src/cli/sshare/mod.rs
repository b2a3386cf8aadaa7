//! `sshare`: the fair-share tree, from `GET /slurm/v0.0.43/shares` (the daemon's, or a
//! cluster's slurmrestd), printed as Slurm's sshare prints it with Fair Tree: accounts
//! indented one space per level, a user's row showing its account one level deeper, and
//! by default the caller's own users only (`-a`: every user; `-u`: those named).

mod fields;
mod options;

use crate::cli::sacct::print;
use std::collections::HashMap;
use std::ffi::OsString;

pub use options::SshareArgs;

const CMD: &str = "sshare";

/// Runs sshare.
pub fn run(args: Vec<OsString>) -> i32 {
    let plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.shares(&plan.accounts, &plan.users) {
        Ok(reply) => reply,
        Err(e) => {
            eprintln!("Couldn't get shares from controller: {e}");
            return 1;
        }
    };
    let mut out = String::new();
    if plan.header {
        out.push_str(&print::header(&plan.columns, &plan.layout));
    }
    let mut depth: HashMap<String, usize> = HashMap::new();
    for share in &reply.shares.shares {
        // An account is one deeper than its parent (0 when its parent is not listed); a
        // user's row shows its account one deeper than the account. With -U no account is
        // listed, so no user's row is indented.
        let spaces = if plan.users_only { 0 } else { depth.get(&share.parent).map_or(0, |d| d + 1) };
        if !share.is_user() {
            depth.insert(share.name.clone(), spaces);
        }
        if plan.users_only && !share.is_user() {
            continue;
        }
        let cells: Vec<_> = plan.columns.iter().map(|c| fields::value(c.name, share, spaces, &plan.layout)).collect();
        out.push_str(&print::row(&plan.columns, &cells, &plan.layout));
    }
    super::format::emit_text(&out);
    0
}
