//! `sreport job SizesByAccount`: the jobs that ran in the period, by account and by size
//! (CPUs), with the time they held the report's TRES, as Slurm's job report prints them.
//!
//! Slurm builds this report from the job records (not from rolled-up usage): each job
//! counts for the seconds it ran inside the period, as the daemon's accounting history
//! gives them. The filters (`users=`, `partitions=`, `gid=`, `wckeys=`, `jobs=`,
//! `nodes=`, and with `FlatView` `accounts=`) are the history query's.
//!
//! * `conds`: the report's conditions; * `lists`: Slurm's ways of reading their lists;
//! * `bins`: the size ranges; * `tree`: which account row a job falls under;
//! * `tally`: the sums; * `render`: the text.

mod bins;
mod conds;
mod lists;
mod render;
mod tally;
mod tree;

use super::args::Opts;
use super::usage::TresKind;
use crate::api::acct::{HistoryQuery, HistoryReply, Selection};
use crate::api::client::Client;
use crate::cli::sacct::print::Layout;
use conds::JobConds;
use std::collections::HashMap;
use tree::Rows;

const CMD: &str = "sreport";

/// Runs the report for the words after its name.
pub fn run(opts: &Opts, words: &[String]) -> i32 {
    let mut conds = match conds::read(words, super::time_of) {
        Ok(c) => c,
        Err(code) => return code,
    };
    for c in &opts.clusters {
        lists::add_names(&mut conds.clusters, c);
    }
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (cluster, _, now) = match super::cluster_of(&client) {
        Ok(c) => c,
        Err(e) => return super::fail(&e),
    };
    let period = super::period::period(conds.start, conds.end, now);
    let wanted = conds.clusters.is_empty() || conds.clusters.iter().any(|c| c.eq_ignore_ascii_case(&cluster));
    let (history, rows) = match query(&client, &conds, period, wanted) {
        Ok(found) => found,
        Err(e) => return super::fail(&e),
    };
    let kind = match opts.tres.as_deref() {
        None => TresKind::Cpu,
        Some([one]) => *one,
        Some(_) => {
            eprint!(
                " Job report only supports a single --tres type.\n Generate a separate report for each TRES type.\n"
            );
            return 1;
        }
    };
    let mut bad = conds.bad;
    let format = if conds.format.is_empty() { vec!["cl".to_string(), "a".to_string()] } else { conds.format.clone() };
    let cols = render::columns(&format, &mut bad);
    let now = history.now.max(crate::sys::now());
    let Some(bins) = ranges(&conds, opts, &history, period, now) else {
        eprintln!(" We need a grouping list to set up the print.");
        return 1;
    };
    let tally = tally::tally(&history.jobs, &rows, &bins, kind, period, now);
    let look = render::Look {
        cluster: &cluster,
        period,
        time: opts.time,
        tres_text: opts.tres_text.as_deref(),
        job_count: conds.job_count,
        layout: match opts.parsable {
            Some(trailing) => Layout::Parsable { delimiter: "|".into(), trailing },
            None => Layout::Fixed,
        },
        header: !opts.noheader,
    };
    crate::cli::format::emit_text(&render::render(&look, &cols, &bins, &tally));
    i32::from(bad)
}

/// The size ranges: `grouping=`'s, Slurm's default, or with `grouping=individual` the CPU
/// counts of the jobs that ran in the period (`None` when there are none).
fn ranges(
    conds: &JobConds,
    opts: &Opts,
    history: &HistoryReply,
    period: (u64, u64),
    now: u64,
) -> Option<Vec<bins::Bin>> {
    let sizes = if conds.individual {
        let ran = history.jobs.iter().map(|j| tally::ran(j, period, now)).filter(|&(_, secs)| secs > 0);
        bins::individual_sizes(ran.map(|(cpus, _)| cpus))
    } else if conds.grouping.is_empty() {
        let mut sizes = Vec::new();
        lists::add_names(&mut sizes, bins::DEFAULT);
        sizes
    } else {
        conds.grouping.clone()
    };
    if sizes.is_empty() {
        return None;
    }
    // Slurm names the unit after --tres as given: "CPUs" for none or `cpu`.
    let unit = match opts.tres_text.as_deref() {
        Some(t) if !t.eq_ignore_ascii_case("cpu") => "TRES",
        _ => "CPUs",
    };
    let width = if opts.time.with_percent() { 20 } else { 13 };
    Some(bins::bins(&sizes, conds.individual, unit, width))
}

/// The jobs of the period that the conditions ask for, and how they are put into rows
/// (nothing when the cluster is not one of those asked for).
fn query(client: &Client, c: &JobConds, period: (u64, u64), wanted: bool) -> Result<(HistoryReply, Rows), String> {
    if !wanted {
        return Ok((HistoryReply::default(), Rows::tree(&[], false, HashMap::new())));
    }
    let some = |v: &[String]| (!v.is_empty()).then(|| v.to_vec());
    let q = HistoryQuery {
        window: Some(period),
        skip_steps: true,
        // Slurm's job reports count each run of a requeued job.
        duplicates: true,
        users: (!c.users.is_empty()).then(|| c.users.clone()),
        partitions: some(&c.partitions),
        wckeys: some(&c.wckeys),
        // The database compares a group id with the number the text starts with.
        gids: (!c.gids.is_empty()).then(|| c.gids.iter().map(|g| lists::atoi(g) as u32).collect()),
        selections: c
            .jobs
            .iter()
            .map(|&job| Selection { job, array_task: None, het_offset: None, step: None })
            .collect(),
        nodes: c.nodes.as_ref().map(|n| crate::options::hostlist::expand(n).unwrap_or_else(|_| vec![n.clone()])),
        // Without FlatView, accounts choose rows, not jobs (a row takes its sub-accounts' jobs).
        accounts: if c.flat_view { some(&c.accounts) } else { None },
        ..HistoryQuery::default()
    };
    let reply: HistoryReply = client.post("/slurmlet/v1/history", &q).map_err(|e| e.to_string())?;
    if let Some(e) = reply.errors.first() {
        return Err(e.error.clone());
    }
    let rows = if c.flat_view {
        Rows::Flat
    } else if c.accounts.is_empty() && !c.acct_as_parent {
        Rows::tree(&[], false, HashMap::new())
    } else {
        Rows::tree(&c.accounts, c.acct_as_parent, parents(client, &reply)?)
    };
    Ok((reply, rows))
}

/// Each account's parent, from the associations (`GET /slurmdb/v0.0.43/associations`); an
/// account jobs were charged to that has none is under root, as slurmlet's tree hangs it.
fn parents(client: &Client, history: &HistoryReply) -> Result<HashMap<String, String>, String> {
    let reply: serde_json::Value = client.get("/slurmdb/v0.0.43/associations").map_err(|e| e.to_string())?;
    let text = |a: &serde_json::Value, key: &str| a.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    let list = reply.get("associations").and_then(|l| l.as_array()).cloned().unwrap_or_default();
    let mut parents: HashMap<String, String> = list
        .iter()
        .filter(|a| text(a, "user").is_empty() && !text(a, "parent_account").is_empty())
        .map(|a| (text(a, "account"), text(a, "parent_account")))
        .collect();
    for job in &history.jobs {
        if !job.account.is_empty() && !job.account.eq_ignore_ascii_case(tree::ROOT) {
            parents.entry(job.account.clone()).or_insert_with(|| tree::ROOT.to_string());
        }
    }
    Ok(parents)
}
