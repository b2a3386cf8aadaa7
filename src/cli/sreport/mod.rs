//! `sreport`: Slurm's usage reports (`cluster utilization`, `cluster
//! AccountUtilizationByUser`, `cluster UserUtilizationByAccount`, `user topusage`, `job
//! SizesByAccount`), computed from the daemon's accounting history (`POST
//! /slurmlet/v1/history`) for the report period, and printed as Slurm's sreport prints them.
//!
//! * `args`: options and conditions; * `period`: the period in whole hours;
//! * `usage`: TRES-seconds per association; * `units`: `-t` and column widths;
//! * `fields`: `format=`; * `reports`: rows and their order; * `utilization`: the
//!   cluster's own report; * `job_sizes`: the job report, with conditions of its own.

pub mod args;
mod fields;
mod job_sizes;
mod period;
mod reports;
mod units;
mod usage;
mod utilization;

use crate::api::acct::{HistoryQuery, HistoryReply};
use crate::cli::sacct::print::Layout;
use args::condition;
use fields::Col;
use std::ffi::OsString;
use units::{abbrev, TimeFormat};
use usage::{Capacity, TresKind};

const CMD: &str = "sreport";

/// The conditions after a report's name.
#[derive(Debug, Default)]
pub struct Conds {
    start: Option<u64>,
    end: Option<u64>,
    users: Vec<String>,
    accounts: Vec<String>,
    clusters: Vec<String>,
    format: Vec<String>,
    top: Option<u32>,
}

/// What every report needs.
pub struct Ctx {
    time: TimeFormat,
    tres_given: bool,
    kinds: Vec<TresKind>,
    layout: Layout,
    header: bool,
    cluster: String,
    capacity: Capacity,
    period: (u64, u64),
    conds: Conds,
    bad: bool,
}

impl Ctx {
    /// The length of the period, seconds.
    fn seconds(&self) -> u64 {
        self.period.1 - self.period.0
    }

    /// Whether the cluster is one of those asked for (all when none were named).
    fn cluster_wanted(&self) -> bool {
        self.conds.clusters.is_empty() || self.conds.clusters.iter().any(|c| c.eq_ignore_ascii_case(&self.cluster))
    }

    /// `START - END`, the period's first and last second as Slurm prints them.
    fn span(&self) -> String {
        let t = crate::cli::sacct::time::time_str;
        format!("{} - {}", t(self.period.0), t(self.period.1 - 1))
    }
}

/// The reports slurmlet has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    Utilization,
    AccountByUser,
    UserByAccount,
    TopUsage,
    JobSizes,
}

/// Runs sreport.
pub fn run(args: Vec<OsString>) -> i32 {
    let opts = match args::read(args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let Some((report, rest)) = which_report(&opts.words) else { return 1 };
    if report == Report::JobSizes {
        return job_sizes::run(&opts, rest);
    }
    let mut bad = false;
    let mut conds = match conditions(rest, report, &mut bad) {
        Ok(c) => c,
        Err(code) => return code,
    };
    conds.clusters.extend(opts.clusters.iter().flat_map(|c| c.split(',')).map(str::to_string));
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (cluster, capacity, now) = match cluster_of(&client) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let tres_given = opts.tres.is_some();
    let mut ctx = Ctx {
        time: opts.time,
        tres_given,
        kinds: opts.tres.unwrap_or_else(|| vec![TresKind::Cpu]),
        layout: match opts.parsable {
            Some(trailing) => Layout::Parsable { delimiter: "|".into(), trailing },
            None => Layout::Fixed,
        },
        header: !opts.noheader,
        cluster,
        capacity,
        period: period::period(conds.start, conds.end, now),
        conds,
        bad,
    };
    let history = match history(&client, ctx.period) {
        Ok(h) => h,
        Err(e) => return fail(&e),
    };
    let out = match render(&mut ctx, report, &history) {
        Ok(out) => out,
        Err(e) => return fail(&e),
    };
    super::format::emit_text(&out);
    i32::from(ctx.bad)
}

fn fail(e: &str) -> i32 {
    super::error(CMD, e);
    1
}

/// The report a command line names, and the words after it; `None` after the message.
fn which_report(words: &[String]) -> Option<(Report, &[String])> {
    let Some(kind) = words.first() else {
        eprintln!("sreport: error: no report given (slurmlet's sreport has no interactive mode)");
        return None;
    };
    let Some(name) = words.get(1) else {
        eprintln!("too few arguments for keyword:{kind}");
        return None;
    };
    let rest = &words[2..];
    if abbrev(kind, "cluster", 2) {
        let prefix =
            |w: &str, n: usize| name.len() >= n && w.get(..n).is_some_and(|w| w.eq_ignore_ascii_case(&name[..n]));
        let report = if prefix("AccountUtilizationByUser", 21) {
            Report::AccountByUser
        } else if prefix("UserUtilizationByAccount", 18) || prefix("UA", 2) {
            Report::UserByAccount
        } else if prefix("Utilization", 2) {
            Report::Utilization
        } else if prefix("AccountUtilizationByQOS", 21)
            || prefix("AQ", 2)
            || prefix("UserUtilizationByWckey", 18)
            || prefix("UW", 2)
            || prefix("WCKeyUtilizationByUser", 1)
        {
            eprintln!("sreport: error: cluster {name}: QOS and WCKey reports are not supported by slurmlet's sreport");
            return None;
        } else {
            eprintln!("Not valid report {name}");
            eprintln!("Valid cluster reports are, \"AccountUtilizationByUser\", \"AccountUtilizationByQOS\", \"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"");
            return None;
        };
        return Some((report, rest));
    }
    if abbrev(kind, "user", 1) {
        if name.get(..1).is_some_and(|c| c.eq_ignore_ascii_case("t")) {
            return Some((Report::TopUsage, rest));
        }
        eprintln!("Not valid report {name}");
        eprintln!("Valid user reports are, \"Top\"");
        return None;
    }
    if abbrev(kind, "job", 1) {
        // Slurm tries SizesByAccount from its first letter (Sizes was its first name).
        if abbrev(name, "SizesByAccount", 1) {
            return Some((Report::JobSizes, rest));
        }
        if abbrev(name, "SizesByWcKey", 8) || abbrev(name, "SizesByAccountAndWcKey", 15) {
            eprintln!("sreport: error: job {name}: WCKey reports are not supported by slurmlet's sreport");
            return None;
        }
        eprintln!("Not valid report {name}");
        eprintln!("Valid job reports are, \"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey\"");
        return None;
    }
    eprintln!(
        "sreport: error: {kind} {name}: only the cluster, user and job reports are supported by slurmlet's sreport"
    );
    None
}

/// A `start=`/`end=` value as a time; `Err`: the exit status, after Slurm's message.
fn time_of(v: &str) -> Result<u64, i32> {
    crate::cli::sacct::time::parse_past_time(v, crate::sys::now()).map_err(|pos| {
        eprintln!("sreport: error: Invalid time specification (pos={pos}): {v}");
        1
    })
}

/// A comma separated list, added to `to` (case kept, duplicates dropped).
fn add_list(to: &mut Vec<String>, text: &str) {
    for item in text.split(',').map(|s| s.trim_matches(|c| c == '"' || c == '\'')).filter(|s| !s.is_empty()) {
        if !to.iter().any(|t| t.eq_ignore_ascii_case(item)) {
            to.push(item.to_string());
        }
    }
}

/// Reads a report's conditions; an unknown one is said as Slurm says it (the report still
/// runs, and the exit status is 1); one slurmlet cannot honour is an error.
fn conditions(words: &[String], report: Report, bad: &mut bool) -> Result<Conds, i32> {
    let mut c = Conds::default();
    let time = time_of;
    for w in words {
        let bare = !w.contains('=');
        if let Some(v) = condition(w, "Start", 1) {
            c.start = Some(time(v)?);
        } else if let Some(v) = condition(w, "End", 1) {
            c.end = Some(time(v)?);
        } else if let Some(v) = condition(w, "Format", 1) {
            add_list(&mut c.format, v);
        } else if let Some(v) = condition(w, "Clusters", 1) {
            add_list(&mut c.clusters, v);
        } else if report != Report::Utilization && (condition(w, "Accounts", 2).or(condition(w, "Acct", 4))).is_some() {
            add_list(&mut c.accounts, w.split_once('=').map_or("", |x| x.1));
        } else if report == Report::TopUsage && condition(w, "TopCount", 1).is_some() {
            let v = w.split_once('=').map_or("", |x| x.1);
            c.top = Some(v.parse::<i64>().map_or(10, |n| if n < 0 { u32::MAX } else { n as u32 }));
        } else if ["Tree", "Group", "all_clusters", "withdeleted", "QosLevel", "Partitions", "Nodes"]
            .iter()
            .any(|n| abbrev(w.split('=').next().unwrap_or(""), n, 2))
        {
            eprintln!("sreport: error: {w}: not supported by slurmlet's sreport");
            return Err(1);
        } else if report != Report::Utilization && (bare || condition(w, "Users", 1).is_some()) {
            add_list(&mut c.users, w.split_once('=').map_or(w.as_str(), |x| x.1));
        } else {
            eprintln!(" Unknown condition: {w}\nUse keyword set to modify value");
            *bad = true;
        }
    }
    Ok(c)
}

/// The cluster's name, what it has of each TRES, and the daemon's time.
fn cluster_of(client: &crate::api::client::Client) -> Result<(String, Capacity, u64), String> {
    let nodes = client.nodes().map_err(|e| e.to_string())?;
    let mut cap = Capacity::default();
    let mut name = String::new();
    for n in &nodes.nodes {
        name.clone_from(&n.cluster_name);
        cap.cpus += u64::from(n.cpus);
        cap.mem_mb += n.real_memory;
        cap.nodes += 1;
        cap.gpus += gpu_count(&n.gres);
    }
    Ok((name, cap, crate::sys::now()))
}

/// The whole GPUs of a node's `Gres` (`gpu:4`, `gpu:h100:2(S:0-1)`, …).
fn gpu_count(gres: &str) -> u64 {
    gres.split(',')
        .filter(|g| g == &"gpu" || g.starts_with("gpu:"))
        .map(|g| {
            let g = g.split('(').next().unwrap_or(g);
            g.rsplit(':').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(1)
        })
        .sum()
}

/// The jobs that may have run in `period`.
fn history(client: &crate::api::client::Client, period: (u64, u64)) -> Result<HistoryReply, String> {
    let q = HistoryQuery { window: Some(period), skip_steps: true, ..HistoryQuery::default() };
    let reply: HistoryReply = client.post("/slurmlet/v1/history", &q).map_err(|e| e.to_string())?;
    match reply.errors.first() {
        Some(e) => Err(e.error.clone()),
        None => Ok(reply),
    }
}

/// The first word of the GECOS field of `login` (Slurm's `Proper Name`).
pub fn gecos(login: &str) -> Option<String> {
    let name = std::ffi::CString::new(login).ok()?;
    // SAFETY: getpwnam reads the NUL-terminated name; its result is copied before any
    // other passwd call can overwrite it.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() || (*pw).pw_gecos.is_null() {
            return None;
        }
        let g = std::ffi::CStr::from_ptr((*pw).pw_gecos).to_string_lossy().into_owned();
        Some(g.split(',').find(|s| !s.is_empty()).unwrap_or(&g).to_string())
    }
}

/// The report's text.
fn render(ctx: &mut Ctx, report: Report, history: &HistoryReply) -> Result<String, String> {
    let default = match (report, ctx.tres_given) {
        (Report::Utilization, true) => "Cl,TresName,al,d,PLNDDown,i,res,rep",
        (Report::Utilization, false) => "Cl,al,d,PLNDDown,i,res,rep",
        (Report::AccountByUser, true) => "Cluster,Ac,Login,Proper,TresName,Used",
        (Report::AccountByUser, false) => "Cluster,Ac,Login,Proper,Used,Energy",
        (_, true) => "Cluster,Login,Proper,Ac,TresName,Used",
        (_, false) => "Cluster,Login,Proper,Ac,Used,Energy",
    };
    let list = if ctx.conds.format.is_empty() { default.to_string() } else { ctx.conds.format.join(",") };
    let mut cols = fields::parse(&list, ctx.time, &mut ctx.bad)?;
    if report == Report::Utilization {
        return Ok(utilization::render(ctx, &mut cols, history));
    }
    Ok(associations(ctx, report, &mut cols, history))
}

/// The three reports of associations and users.
fn associations(ctx: &Ctx, report: Report, cols: &mut [Col], history: &HistoryReply) -> String {
    let mut rows = if ctx.cluster_wanted() {
        usage::user_usage(&history.jobs, &ctx.kinds, ctx.period, history.now.max(crate::sys::now()))
    } else {
        Vec::new()
    };
    let c = &ctx.conds;
    rows.retain(|r| {
        (c.accounts.is_empty() || c.accounts.iter().any(|a| a == &r.account))
            && (c.users.is_empty() || r.user.as_ref().is_some_and(|u| c.users.iter().any(|n| n == u)))
    });
    let by = match report {
        Report::TopUsage => 0,
        _ => ctx.kinds.iter().position(|k| *k == TresKind::Cpu).unwrap_or(0),
    };
    let (title, rows) = match report {
        Report::AccountByUser => ("Cluster/Account/User Utilization", reports::account_tree(ctx, &rows)),
        _ => {
            reports::sort_users(&mut rows, by);
            if report == Report::TopUsage {
                rows.truncate(ctx.conds.top.unwrap_or(10) as usize);
            }
            ("Cluster/User/Account Utilization", rows)
        }
    };
    let mut out = String::new();
    if ctx.header {
        let title = match (report, ctx.conds.top) {
            (Report::TopUsage, Some(u32::MAX)) => "Top ALL Users".to_string(),
            (Report::TopUsage, top) => format!("Top {} Users", top.unwrap_or(10)),
            _ => title.to_string(),
        };
        out.push_str(&reports::banner(ctx, &format!("{title} {} ({} secs)", ctx.span(), ctx.seconds())));
    }
    reports::widen(ctx, cols, rows.first().map_or(0, |r| r.secs.iter().copied().max().unwrap_or(0)));
    if ctx.header {
        out.push_str(&reports::header(ctx, cols));
    }
    reports::assoc_rows(ctx, cols, &rows, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_are_counted_from_a_nodes_gres() {
        assert_eq!(gpu_count("gpu:4"), 4);
        assert_eq!(gpu_count("gpu:h100:2(S:0-1),shard:8"), 2);
        assert_eq!(gpu_count(""), 0);
    }

    #[test]
    fn reports_are_named_as_slurm_names_them() {
        let w = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(which_report(&w("cluster utilization")).map(|r| r.0), Some(Report::Utilization));
        assert_eq!(which_report(&w("cluster AccountUtilizationByUser")).map(|r| r.0), Some(Report::AccountByUser));
        assert_eq!(which_report(&w("cl ua")).map(|r| r.0), Some(Report::UserByAccount));
        assert_eq!(which_report(&w("user topusage")).map(|r| r.0), Some(Report::TopUsage));
        assert_eq!(which_report(&w("job sizesbyaccount")).map(|r| r.0), Some(Report::JobSizes));
        assert_eq!(which_report(&w("j s")).map(|r| r.0), Some(Report::JobSizes));
        assert!(which_report(&w("job SizesByWcKey")).is_none());
        assert!(which_report(&w("job SizesByAccountAndWcKey")).is_none());
        assert!(which_report(&w("job bogus")).is_none());
        assert!(which_report(&w("reservation utilization")).is_none());
        assert!(which_report(&w("cluster bogus")).is_none());
    }
}
