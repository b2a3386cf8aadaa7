//! `slurmlet __complete KIND [WORD]`: the values the shell completions (`completions/`) offer
//! from the machine — job ids, partitions, GRES, users and node names — asked of the local
//! daemon, or of the cluster a profile selects.
//!
//! It prints one candidate a line, `VALUE<TAB>DESCRIPTION`, those that start as `WORD` does;
//! in a comma-separated list only the last item is completed, the ones before it kept. With a
//! cluster profile selected the cluster's REST API is asked instead, through the client the
//! commands use (its `cluster` module), and offers the same, in the same order. When no answer
//! comes within half a second (no daemon runs, the cluster is far or down, either is busy) it
//! prints nothing and exits 0, and the completion falls back to its static list: it never
//! starts a daemon. `slurmlet __complete scontrol WORD…` completes scontrol's words: the
//! words after `scontrol`, the last one the word under the cursor.

mod cluster;

use crate::api::client::Client;
use crate::api::types::{JobQuery, JobRows, LayoutField, LayoutItem};
use std::ffi::OsString;
use std::io::Write;
use std::time::Duration;

/// How long the daemon (or the cluster) may take to answer before the shell gets nothing (and
/// falls back).
const DEADLINE: Duration = Duration::from_millis(500);

/// What is completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Job ids: the caller's own first (running, then pending), then the others'.
    Jobs,
    /// Job ids for the commands that look back (`sacct -j`, `seff`): those of [`Kind::Jobs`],
    /// then the caller's jobs that ended in the last [`HISTORY_DAYS`] days, the latest first
    /// (where there is a history: a cluster without accounting offers the queued ones alone).
    History,
    /// Partition names, the default one first.
    Partitions,
    /// GRES names and `name:type`s (`gpu`, `gpu:nvidia_a100`, `shard`).
    Gres,
    /// User names: the caller, then the owners of queued jobs.
    Users,
    /// Node names.
    Nodes,
}

impl Kind {
    /// The kind named `name` on the command line.
    pub fn named(name: &str) -> Option<Kind> {
        Some(match name {
            "jobs" => Kind::Jobs,
            "history" => Kind::History,
            "partitions" => Kind::Partitions,
            "gres" => Kind::Gres,
            "users" => Kind::Users,
            "nodes" => Kind::Nodes,
            _ => return None,
        })
    }
}

/// One value offered, and what the shell shows beside it where it shows descriptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The value.
    pub value: String,
    /// A few words about it.
    pub description: String,
}

/// What to complete: the kind, and the word typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// What is completed.
    pub kind: Kind,
    /// Kept in front of every candidate: the list items before the last comma, or
    /// `scontrol update`'s `JobId=`.
    pub keep: String,
    /// The start of the value being typed.
    pub prefix: String,
}

impl Request {
    /// Completing `word` (possibly a comma-separated list) as `kind`.
    pub fn of_word(kind: Kind, word: &str) -> Request {
        let cut = word.rfind(',').map(|i| i + 1).unwrap_or(0);
        Request { kind, keep: word[..cut].to_string(), prefix: word[cut..].to_string() }
    }
}

/// How far back [`Kind::History`] looks.
pub const HISTORY_DAYS: u64 = 7;

/// The most ended jobs [`Kind::History`] offers.
pub const HISTORY_MAX: usize = 200;

/// The scontrol subcommands taking job ids.
const SCONTROL_JOB_ACTIONS: &[&str] = &["hold", "uhold", "release", "requeue", "suspend", "resume"];

/// What to complete in `scontrol WORDS…` (the last word is the one under the cursor):
/// job ids after `hold`, `release`, … and `show job`, nodes after `show node`, partitions
/// after `show partition`, and `JobId=` after `update`. `None`: nothing the daemon knows.
pub fn scontrol_request(words: &[String]) -> Option<Request> {
    let (word, before) = words.split_last()?;
    // Options (and -M's value) are not subcommand words.
    let mut args: Vec<&str> = Vec::new();
    let mut skip_next = false;
    for w in before {
        if skip_next {
            skip_next = false;
        } else if w == "-M" || w == "--clusters" {
            skip_next = true;
        } else if !w.starts_with('-') {
            args.push(w);
        }
    }
    let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    match lower.as_slice() {
        [action] if SCONTROL_JOB_ACTIONS.contains(action) => Some(Request::of_word(Kind::Jobs, word)),
        ["show", entity] => match *entity {
            "job" | "jobs" | "step" | "steps" => Some(Request::of_word(Kind::Jobs, word)),
            "node" | "nodes" => Some(Request::of_word(Kind::Nodes, word)),
            "partition" | "partitions" => Some(Request::of_word(Kind::Partitions, word)),
            _ => None,
        },
        ["update", ..] => {
            let (key, value) = word.split_once('=').unwrap_or((word.as_str(), ""));
            if word.contains('=') && !key.eq_ignore_ascii_case("jobid") {
                return None;
            }
            if !word.contains('=') && !"jobid=".starts_with(&key.to_ascii_lowercase()) {
                return None;
            }
            let key = if word.contains('=') { key } else { "JobId" };
            let mut request = Request::of_word(Kind::Jobs, value);
            request.keep = format!("{key}={}", request.keep);
            Some(request)
        }
        _ => None,
    }
}

/// A row of the daemon's job listing, as the completion reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    /// Its id as squeue's `%i` writes it (`12`, `10_3`, `10_[4-9]`).
    pub id: String,
    /// Its long state (`RUNNING`, `PENDING`, …).
    pub state: String,
    /// Its name.
    pub name: String,
    /// Its owner's name.
    pub user: String,
    /// Its owner's uid.
    pub uid: u32,
    /// Its pending reason (`None` when it has none).
    pub reason: String,
}

/// The `%` codes asked of the daemon, in [`JobRow`]'s order.
const JOB_CODES: &str = "iTjuUr";

/// The job ids to offer from `rows`: the caller's (`uid`) running jobs, then its pending ones,
/// then its others, then everybody else's in the same order; each group by job id. A group
/// of pending array tasks (`10_[4-9]`) is offered as its array's id. Only ids starting with
/// `prefix` are offered.
pub fn job_candidates(rows: &[JobRow], uid: u32, prefix: &str) -> Vec<Candidate> {
    let rank = |state: &str| match state {
        "RUNNING" => 0,
        "PENDING" => 1,
        _ => 2,
    };
    let numeric = |id: &str| -> (u64, u64) {
        let (job, task) = id.split_once('_').unwrap_or((id, ""));
        (job.parse().unwrap_or(u64::MAX), task.parse().unwrap_or(0))
    };
    let offered = |row: &JobRow| -> String {
        match row.id.split_once("_[") {
            Some((array, _)) => array.to_string(),
            None => row.id.clone(),
        }
    };
    let mut sorted: Vec<&JobRow> = rows.iter().filter(|r| r.id.starts_with(prefix)).collect();
    sorted.sort_by_cached_key(|r| (r.uid != uid, rank(&r.state), numeric(&r.id)));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for row in sorted {
        let value = offered(row);
        if !value.starts_with(prefix) || !seen.insert(value.clone()) {
            continue;
        }
        let mut description = format!("{} {}", row.name, row.state);
        if row.state == "PENDING" && !row.reason.is_empty() && row.reason != "None" {
            description.push_str(&format!(" ({})", row.reason));
        }
        if row.uid != uid {
            description.push_str(&format!(", {}", row.user));
        }
        out.push(Candidate { value, description });
    }
    out
}

/// The GRES a node's `gres` string (`gpu:nvidia_a100:2(S:0-1),shard:16`) offers: each name,
/// and each `name:type`, with how many the node has.
pub fn gres_candidates(gres: &str) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |value: String, description: String| {
        if !value.is_empty() && !out.iter().any(|c| c.value == value) {
            out.push(Candidate { value, description });
        }
    };
    for item in gres.split(',').map(|i| i.split('(').next().unwrap_or(i).trim()) {
        let parts: Vec<&str> = item.split(':').collect();
        match parts.as_slice() {
            [name] => add(name.to_string(), String::new()),
            [name, count] if count.parse::<u64>().is_ok() => add(name.to_string(), format!("{count} on the node")),
            [name, kind] => add(format!("{name}:{kind}"), String::new()),
            [name, kind, count, ..] => {
                add(name.to_string(), String::new());
                add(format!("{name}:{kind}"), format!("{count} on the node"));
            }
            _ => {}
        }
    }
    out
}

/// Why no candidates came.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    /// The daemon did not answer, or not as asked.
    #[error(transparent)]
    Client(#[from] crate::api::client_error::ClientError),
    /// The cluster answered with an error.
    #[error("the cluster refused: {0}")]
    Refused(String),
}

/// [`JOB_CODES`] as a layout: the values separated by tabs (a value never holds a control
/// character: squeue's layout shows them as `?`).
fn job_layout() -> Vec<LayoutItem> {
    let mut layout = Vec::new();
    for code in JOB_CODES.chars() {
        if !layout.is_empty() {
            layout.push(LayoutItem::Text("\t".into()));
        }
        layout.push(LayoutItem::Field(LayoutField { code, width: 0, right: false }));
    }
    layout
}

/// The [`JobRow`]s of the lines of [`job_layout`].
fn rows_of(text: &str) -> Vec<JobRow> {
    text.lines().filter_map(|line| job_row(line.split('\t'))).collect()
}

/// The job listing of the daemon behind `client`: laid out by the daemon as tab-separated
/// text, which is read without decoding JSON; a daemon from before layouts is asked for rows.
/// A cluster's jobs are laid out here the same way.
fn job_rows(client: &Client) -> Result<Vec<JobRow>, FetchError> {
    const PATH: &str = "/slurmlet/v1/jobs/query";
    if client.profile().is_some() {
        return Ok(rows_of(&cluster::job_text(client, &job_layout())?));
    }
    let laid_out = JobQuery { layout: Some(job_layout()), ..Default::default() };
    let reply = client.post_for_bytes(PATH, &laid_out)?;
    if reply.status == 200 {
        return Ok(rows_of(&String::from_utf8_lossy(&reply.body)));
    }
    let query = JobQuery { codes: JOB_CODES.to_string(), ..Default::default() };
    let reply = client.post_for_bytes(PATH, &query)?;
    let rows: JobRows = Client::decode(&reply)?;
    Ok(rows.rows.iter().filter_map(|cells| job_row(cells.iter().map(|c| c.0.as_ref()))).collect())
}

/// The caller's jobs of the last [`HISTORY_DAYS`] days, as sacct has them: on this machine
/// those of uid `uid`, on a cluster those of the profile's user.
fn ended_jobs(client: &Client, uid: u32) -> Result<Vec<crate::api::acct::AcctJob>, FetchError> {
    let now = crate::sys::now();
    let window = (now.saturating_sub(HISTORY_DAYS * 24 * 3600), now + 1);
    if let Some(user) = client.remote_user() {
        return cluster::ended_jobs(client, user, window);
    }
    let query = crate::api::acct::HistoryQuery {
        users: Some(vec![uid]),
        window: Some(window),
        skip_steps: true,
        ..Default::default()
    };
    let reply = client.post_for_bytes("/slurmlet/v1/history", &query)?;
    Ok(Client::decode::<crate::api::acct::HistoryReply>(&reply)?.jobs)
}

/// The ended jobs of `jobs` to offer after `offered`: those not offered already, starting
/// with `prefix`, the latest first, at most [`HISTORY_MAX`]; an array task as `A_T`.
pub fn ended_candidates(jobs: &[crate::api::acct::AcctJob], prefix: &str, offered: &[Candidate]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for job in jobs.iter().rev() {
        let value = match job.array_task_id {
            Some(task) if job.array_job_id != 0 => format!("{}_{task}", job.array_job_id),
            _ => job.id.to_string(),
        };
        let known = |c: &Candidate| c.value == value;
        if !value.starts_with(prefix) || offered.iter().any(known) || out.iter().any(known) {
            continue;
        }
        out.push(Candidate { value, description: format!("{} {}", job.name, job.state) });
        if out.len() == HISTORY_MAX {
            break;
        }
    }
    out
}

/// A [`JobRow`] from the values of [`JOB_CODES`], in that order.
fn job_row<'a>(mut cells: impl Iterator<Item = &'a str>) -> Option<JobRow> {
    let mut next = || cells.next().map(str::to_string);
    let (id, state, name, user, uid, reason) = (next()?, next()?, next()?, next()?, next()?, next()?);
    Some(JobRow { id, state, name, user, uid: uid.parse().ok()?, reason })
}

/// The caller's uid where `rows` were listed: this machine's for the local daemon; on a
/// cluster, the one its rows give the profile's user (none of theirs there: `u32::MAX`,
/// which is nobody's, so that every job is another's).
fn caller_uid(client: &Client, rows: &[JobRow]) -> u32 {
    match client.remote_user() {
        None => crate::identity::uid(),
        Some(user) => rows.iter().find(|r| r.user == user).map_or(u32::MAX, |r| r.uid),
    }
}

/// The candidates of `kind` the daemon (or cluster) behind `client` has (job ids: those
/// starting with `prefix`).
fn fetch(client: &Client, kind: Kind, prefix: &str) -> Result<Vec<Candidate>, FetchError> {
    Ok(match kind {
        Kind::Jobs => {
            let rows = job_rows(client)?;
            job_candidates(&rows, caller_uid(client, &rows), prefix)
        }
        Kind::History => {
            let rows = job_rows(client)?;
            let uid = caller_uid(client, &rows);
            let mut out = job_candidates(&rows, uid, prefix);
            // A history that does not come (a cluster without slurmdbd) leaves the queued jobs.
            if let Ok(ended) = ended_jobs(client, uid) {
                out.extend(ended_candidates(&ended, prefix, &out));
            }
            out
        }
        Kind::Partitions => {
            let mut parts = client.partitions()?.partitions;
            parts.sort_by_key(|p| !p.flags.iter().any(|f| f == "DEFAULT"));
            parts
                .into_iter()
                .map(|p| {
                    let state = p.partition.state.join(",");
                    let description = match p.flags.iter().any(|f| f == "DEFAULT") {
                        true => format!("default, {state}, {}", p.nodes.configured),
                        false => format!("{state}, {}", p.nodes.configured),
                    };
                    Candidate { value: p.name, description }
                })
                .collect()
        }
        Kind::Gres => {
            let mut out: Vec<Candidate> = Vec::new();
            for node in client.nodes()?.nodes {
                for c in gres_candidates(&node.gres) {
                    if !out.iter().any(|o| o.value == c.value) {
                        out.push(c);
                    }
                }
            }
            out
        }
        Kind::Nodes => client
            .nodes()?
            .nodes
            .into_iter()
            .map(|n| Candidate { value: n.name, description: n.state.join(",") })
            .collect(),
        Kind::Users => {
            let own = match client.remote_user() {
                Some(user) => user.to_string(),
                None => crate::identity::user_name(crate::identity::uid()),
            };
            let mut out = vec![Candidate { value: own.clone(), description: "you".into() }];
            let mut counts: Vec<(String, usize)> = Vec::new();
            for row in job_rows(client)? {
                match counts.iter_mut().find(|(u, _)| *u == row.user) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((row.user, 1)),
                }
            }
            for (user, n) in counts {
                let description = format!("{n} job{} queued", if n == 1 { "" } else { "s" });
                match out.iter_mut().find(|c| c.value == user) {
                    Some(c) => c.description = format!("you, {description}"),
                    None => out.push(Candidate { value: user, description }),
                }
            }
            out
        }
    })
}

/// The lines printed for `request` from `candidates`: those starting with its prefix, the
/// list before it kept, control characters of descriptions shown as `?`.
pub fn lines(request: &Request, candidates: &[Candidate]) -> String {
    let mut out = String::with_capacity(candidates.len() * 32);
    for c in candidates.iter().filter(|c| c.value.starts_with(&request.prefix)) {
        if c.value.chars().any(char::is_control) {
            continue;
        }
        out.push_str(&request.keep);
        out.push_str(&c.value);
        if !c.description.is_empty() {
            out.push('\t');
            if c.description.bytes().any(|b| b < 0x20 || b == 0x7f || b == 0xc2) {
                out.extend(c.description.chars().map(|ch| if ch.is_control() { '?' } else { ch }));
            } else {
                out.push_str(&c.description);
            }
        }
        out.push('\n');
    }
    out
}

/// The request the command line asks for; `None`: nothing to complete from the daemon.
fn request_of(args: &[String]) -> Option<Request> {
    let (kind, rest) = args.split_first()?;
    if kind == "scontrol" {
        return scontrol_request(rest);
    }
    let kind = Kind::named(kind)?;
    Some(Request::of_word(kind, rest.first().map(String::as_str).unwrap_or("")))
}

/// Runs `slurmlet __complete KIND [WORD]`; always exits 0 (a completion never fails loudly).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let Some(request) = request_of(&args) else { return 0 };
    // A profiles file that does not read: nothing, as for a daemon that does not answer.
    let Ok(remote) = crate::api::profile::selected(None) else { return 0 };
    let socket = crate::config::target::client_target().socket;
    let (tx, rx) = std::sync::mpsc::channel();
    let (kind, prefix) = (request.kind, request.prefix.clone());
    // The token, the version spoken and the answers all come within the deadline, or not at all.
    std::thread::spawn(move || {
        let client = match &remote {
            Some(remote) => Client::remote(remote),
            None => Client::at(&socket),
        };
        let answer = client.map_err(FetchError::from).and_then(|client| fetch(&client, kind, &prefix));
        let _ = tx.send(answer);
    });
    if let Ok(Ok(candidates)) = rx.recv_timeout(DEADLINE) {
        let _ = std::io::stdout().lock().write_all(lines(&request, &candidates).as_bytes());
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_jobs_come_latest_first_without_those_already_offered() {
        let job = |id: u32, array: Option<(u32, u32)>| crate::api::acct::AcctJob {
            id,
            array_job_id: array.map_or(0, |a| a.0),
            array_task_id: array.map(|a| a.1),
            name: "j".into(),
            state: "COMPLETED".into(),
            ..Default::default()
        };
        let jobs = [job(3, None), job(4, Some((4, 0))), job(5, Some((4, 1))), job(12, None), job(20, None)];
        let offered = [Candidate { value: "20".into(), description: String::new() }];
        let values: Vec<String> = ended_candidates(&jobs, "", &offered).into_iter().map(|c| c.value).collect();
        assert_eq!(values, ["12", "4_1", "4_0", "3"]);
        let values: Vec<String> = ended_candidates(&jobs, "1", &[]).into_iter().map(|c| c.value).collect();
        assert_eq!(values, ["12"]);
        assert_eq!(ended_candidates(&jobs, "", &[])[0].description, "j COMPLETED");
    }

    fn row(id: &str, state: &str, uid: u32) -> JobRow {
        JobRow {
            id: id.into(),
            state: state.into(),
            name: format!("n{id}"),
            user: format!("u{uid}"),
            uid,
            reason: if state == "PENDING" { "Priority".into() } else { "None".into() },
        }
    }

    fn values(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.value.as_str()).collect()
    }

    #[test]
    fn the_callers_running_jobs_come_first_then_its_pending_then_the_others() {
        let rows = vec![
            row("7", "PENDING", 1000),
            row("3", "RUNNING", 2000),
            row("12", "RUNNING", 1000),
            row("5", "RUNNING", 1000),
            row("9", "PENDING", 2000),
            row("10_[4-9]", "PENDING", 1000),
            row("10_3", "RUNNING", 1000),
            row("8", "SUSPENDED", 1000),
        ];
        let c = job_candidates(&rows, 1000, "");
        assert_eq!(values(&c), ["5", "10_3", "12", "7", "10", "8", "3", "9"]);
        assert_eq!(c[0].description, "n5 RUNNING");
        assert_eq!(c[3].description, "n7 PENDING (Priority)");
        assert_eq!(c[6].description, "n3 RUNNING, u2000", "another's job names its owner");
        assert_eq!(values(&job_candidates(&rows, 1000, "1")), ["10_3", "12", "10"]);
    }

    #[test]
    fn a_list_keeps_its_first_items_and_completes_the_last() {
        let r = Request::of_word(Kind::Jobs, "12,1");
        assert_eq!((r.keep.as_str(), r.prefix.as_str()), ("12,", "1"));
        let c = vec![
            Candidate { value: "14".into(), description: "a RUNNING".into() },
            Candidate { value: "20".into(), description: "b\tx".into() },
            Candidate { value: "15".into(), description: String::new() },
        ];
        assert_eq!(lines(&r, &c), "12,14\ta RUNNING\n12,15\n");
        assert_eq!(lines(&Request::of_word(Kind::Jobs, ""), &c[1..2]), "20\tb?x\n");
    }

    #[test]
    fn gres_offers_names_and_types() {
        let c = gres_candidates("gpu:nvidia_a100:2(S:0-1),shard:16");
        assert_eq!(values(&c), ["gpu", "gpu:nvidia_a100", "shard"]);
        assert_eq!(c[1].description, "2 on the node");
        assert_eq!(values(&gres_candidates("gpu:4")), ["gpu"]);
        assert!(gres_candidates("").is_empty());
    }

    #[test]
    fn scontrol_completes_jobs_nodes_and_partitions_where_they_go() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let kind = |w: &[&str]| scontrol_request(&words(w)).map(|r| (r.kind, r.keep, r.prefix));
        assert_eq!(kind(&["hold", ""]), Some((Kind::Jobs, "".into(), "".into())));
        assert_eq!(kind(&["-o", "release", "4,"]), Some((Kind::Jobs, "4,".into(), "".into())));
        assert_eq!(kind(&["show", "job", "1"]), Some((Kind::Jobs, "".into(), "1".into())));
        assert_eq!(kind(&["show", "node", ""]).map(|k| k.0), Some(Kind::Nodes));
        assert_eq!(kind(&["show", "partition", ""]).map(|k| k.0), Some(Kind::Partitions));
        assert_eq!(kind(&["update", ""]), Some((Kind::Jobs, "JobId=".into(), "".into())));
        assert_eq!(kind(&["update", "jobid=3"]), Some((Kind::Jobs, "jobid=".into(), "3".into())));
        assert_eq!(kind(&["update", "JobId=3", "TimeLimit="]), None);
        assert_eq!(kind(&["show", "config", ""]), None);
        assert_eq!(kind(&["hold", "3", ""]), None, "hold takes one list");
        assert_eq!(kind(&[""]), None);
        assert_eq!(kind(&["-M", "hold", ""]), None, "-M's value is not a subcommand");
    }
}
