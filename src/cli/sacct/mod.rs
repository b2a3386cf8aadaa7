//! `sacct`: the accounting history of jobs and their steps, from the daemon's job store.
//!
//! * [`fields`]: Slurm's fields and the value of each for a job or a step;
//! * [`print`](mod@print): fixed-width and parsable lines;
//! * [`time`]: `-S`/`-E` times and printed times;
//! * `args`: the options, and their errors as getopt prints them;
//! * `options`: the command line read into a query and a layout.

mod args;
pub mod fields;
mod options;
pub mod print;
mod remote;
pub mod time;

use crate::api::acct::{HistoryQuery, HistoryReply};
use crate::api::client::Client;
use fields::{Column, Row, Units};
use print::Layout;
use std::ffi::OsString;

pub use args::SacctArgs;
pub use options::Users;

const CMD: &str = "sacct";

/// What a command line asks sacct to do.
pub struct Plan {
    /// The query for the daemon.
    pub query: HistoryQuery,
    /// The fields to print.
    pub columns: Vec<Column>,
    /// How.
    pub layout: Layout,
    /// Whose jobs (read into [`Plan::query`] by [`Plan::resolve_local`] for the local
    /// history, sent by name to a cluster).
    pub users: options::Users,
    /// `-g`: only jobs of these groups (names or gids), likewise.
    pub groups: Vec<String>,
    /// Whether to print the header.
    pub header: bool,
    /// Units of sizes and file names.
    pub units: Units,
}

/// Runs sacct.
pub fn run(args: Vec<OsString>) -> i32 {
    let mut plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    // `-M NAME` naming a cluster profile is the cluster to ask, not a filter on its records;
    // `-M local` is this machine's own history, whatever its cluster is named (a lab that
    // moved to a cluster keeps reading it so).
    if let Some([name]) = plan.query.clusters.as_deref() {
        let path = crate::api::profile::profiles_path();
        let profile = crate::api::profile::read(&path).is_ok_and(|f| f.profiles.contains_key(name));
        if profile || name == crate::api::profile::LOCAL {
            super::choose_cluster(Some(name));
            plan.query.clusters = None;
        }
    }
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.remote_user() {
        Some(user) => remote::fetch(&client, &plan, user),
        None => {
            if let Err(code) = plan.resolve_local() {
                return code;
            }
            client.post_for_bytes("/slurmlet/v1/history", &plan.query)
        }
    };
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if plan.query.json && reply.status == 200 {
        super::format::emit_bytes(&reply.body);
        return 0;
    }
    let history = match client.profile() {
        Some(_) => remote::read(&client, &plan, &reply),
        None => Client::decode::<HistoryReply>(&reply),
    };
    let history = match history {
        Ok(h) => h,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = history.errors.first() {
        super::error(CMD, &remote::message(e));
        return 1;
    }
    super::format::emit_text(&render(&plan, &history));
    0
}

/// The lines sacct prints for `history`.
pub fn render(plan: &Plan, history: &HistoryReply) -> String {
    let mut out = String::new();
    if plan.header {
        out.push_str(&print::header(&plan.columns, &plan.layout));
    }
    let mut line = |row: Row| {
        let cells: Vec<fields::Cell> =
            plan.columns.iter().map(|c| fields::value(c.name, row, history.now, &plan.units)).collect();
        out.push_str(&print::row(&plan.columns, &cells, &plan.layout));
    };
    for job in &history.jobs {
        if job.show_full {
            line(Row::Job(job));
        }
        for step in &job.steps {
            line(Row::Step(job, step));
        }
    }
    out
}

#[cfg(test)]
mod tests;
