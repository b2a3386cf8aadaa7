//! `sacct`: the accounting history of jobs and their steps, from the daemon's job store.
//!
//! * [`fields`]: Slurm's fields and the value of each for a job or a step;
//! * [`print`]: fixed-width and parsable lines;
//! * [`time`]: `-S`/`-E` times and printed times;
//! * [`options`]: the command line read into a query and a layout.

pub mod fields;
mod options;
pub mod print;
pub mod time;

use crate::api::acct::{HistoryQuery, HistoryReply};
use crate::api::client::Client;
use fields::{Column, Row, Units};
use print::Layout;
use std::ffi::OsString;

pub use options::SacctArgs;

const CMD: &str = "sacct";

/// What a command line asks sacct to do.
pub struct Plan {
    /// The query for the daemon.
    pub query: HistoryQuery,
    /// The fields to print.
    pub columns: Vec<Column>,
    /// How.
    pub layout: Layout,
    /// Whether to print the header.
    pub header: bool,
    /// Units of sizes and file names.
    pub units: Units,
}

/// Runs sacct.
pub fn run(args: Vec<OsString>) -> i32 {
    let plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.post_for_bytes("/slurmlet/v1/history", &plan.query) {
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
    let history: HistoryReply = match Client::decode(&reply) {
        Ok(h) => h,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = history.errors.first() {
        super::error(CMD, &format!("Problem talking to the database: {}", e.description));
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
