//! `squeue`: view jobs in the queue.

mod steps;

use super::format::{self, Field, Token};
use crate::api::client::Client;
use crate::api::client_error::ClientError;
use crate::api::types::{JobQuery, JobsResponse};
use crate::queue::fields::{by_name, field_code, header_title};
use crate::queue::{read_sort, rows, select, value, QueueJob, SortItem, START_SORT};
use clap::Parser;
use std::borrow::Cow;
use std::ffi::OsString;

const CMD: &str = "squeue";

/// The default `-o` format.
pub const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
/// The `-l` format.
pub const LONG_FORMAT: &str = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
/// The `--start` format.
pub const START_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

/// squeue's options.
#[derive(Debug, Parser)]
#[command(
    disable_version_flag = true,
    disable_help_flag = true,
    about = "view information about jobs located in the Slurm scheduling queue"
)]
pub struct SqueueArgs {
    /// Print this help
    #[arg(long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Do not print a header
    #[arg(short = 'h', long = "noheader")]
    pub noheader: bool,
    /// Comma separated list of jobs IDs to view
    #[arg(short = 'j', long = "jobs", alias = "job")]
    pub jobs: Option<String>,
    /// Comma separated list of users to view
    #[arg(short = 'u', long = "user", alias = "users")]
    pub user: Option<String>,
    /// `--me`: only the caller's jobs.
    #[arg(long = "me", help = "Equivalent to --user=<my username>")]
    pub me: bool,
    /// Comma separated list of partitions to view
    #[arg(short = 'p', long = "partition", alias = "partitions")]
    pub partition: Option<String>,
    /// reservation to view
    #[arg(short = 'R', long = "reservation")]
    pub reservation: Option<String>,
    /// Comma separated list of states to view (default: pending and running)
    #[arg(short = 't', long = "states", alias = "state")]
    pub states: Option<String>,
    /// Comma separated list of job names to view
    #[arg(short = 'n', long = "name")]
    pub name: Option<String>,
    /// Format specification
    #[arg(short = 'o', long = "format")]
    pub format: Option<String>,
    /// Format specification by field names
    #[arg(short = 'O', long = "Format")]
    pub format_long: Option<String>,
    /// Long report
    #[arg(short = 'l', long = "long")]
    pub long: bool,
    /// Print expected start times of pending jobs
    #[arg(long = "start")]
    pub start: bool,
    /// Produce JSON output
    #[arg(long = "json")]
    pub json: bool,
    /// Comma separated list of fields to sort on
    #[arg(short = 'S', long = "sort", allow_hyphen_values = true)]
    pub sort: Option<String>,
    /// Accepted for compatibility; reports once
    #[arg(short = 'i', long = "iterate")]
    pub iterate: Option<String>,
    /// Display jobs in hidden partitions (accepted)
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Display one job array element per line
    #[arg(short = 'r', long = "array")]
    pub array: bool,
    /// Report job steps, only those of the comma separated list when given (JOB.STEP,
    /// ARRAY_TASK.STEP)
    #[arg(
        short = 's',
        long = "steps",
        value_name = "STEP_LIST",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub steps: Option<String>,
    /// The step list of `-s`, given after it
    #[arg(value_name = "STEP_LIST", hide = true)]
    pub operand: Option<String>,
    /// Only report job states (accepted)
    #[arg(long = "only-job-state")]
    pub only_job_state: bool,
    /// The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)
    #[arg(short = 'M', long = "clusters", value_name = "cluster_name")]
    pub clusters: Option<String>,
    /// Verbosity (ignored)
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub version: super::VersionFlag,
}

/// Runs squeue.
pub fn run(args: Vec<OsString>) -> i32 {
    let argv = super::command_line(CMD, &args);
    let args: SqueueArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    super::choose_cluster(args.clusters.as_deref());
    super::set_verbosity(args.verbose);
    let (users, bad_user) = users(&args);
    if args.steps.is_some() {
        return steps::run(&args, users, bad_user.as_deref(), &argv);
    }
    if let Some(word) = &args.operand {
        super::error(CMD, &format!("Unrecognized option: {word}"));
        return 1;
    }
    // Validate what can be validated before talking to the daemon.
    let job_ids = match args.jobs.as_deref().map(parse_job_ids).transpose() {
        Ok(v) => v,
        Err(bad) => {
            super::error(CMD, &format!("Invalid job id: {bad}"));
            return 1;
        }
    };
    let states = match args.states.as_deref().map(select::parse_states).transpose() {
        Ok(v) => v,
        Err(bad) => {
            eprintln!("{CMD}: error: Invalid job state specified: {bad}");
            eprintln!("{CMD}: error: Valid job states include: {}\n", select::VALID_STATES.join(","));
            return 1;
        }
    };
    let tokens = match build_format(&args) {
        Ok(t) => t,
        Err(msg) => {
            super::error(CMD, &msg);
            return 1;
        }
    };
    let sort = sort_spec(&args);
    if let Some(spec) = &sort {
        for item in read_sort(spec) {
            match item {
                SortItem::Key(_) => {}
                SortItem::Vestigial(c) => eprintln!("{CMD}: Invalid sort specification: {c}"),
                SortItem::Invalid(c) => {
                    super::error(CMD, &format!("Invalid sort specification: {c}"));
                    return 1;
                }
            }
        }
    }
    let query = JobQuery {
        codes: field_codes(&tokens).collect(),
        job_ids: job_ids.as_ref().map(|(ids, _)| ids.clone()).filter(|ids| !ids.is_empty()),
        array_tasks: job_ids.map(|(_, tasks)| tasks).filter(|tasks| !tasks.is_empty()),
        users,
        partitions: split_list(args.partition.as_deref()),
        names: split_list(args.name.as_deref()),
        reservations: split_list(args.reservation.as_deref()),
        states,
        pending_only: args.start,
        array_per_line: args.array,
        sort,
        json: false,
        layout: None,
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&client, &query, bad_user.as_deref());
    }
    // The daemon filters, sorts and lays the listing out: the reply is the text printed. A
    // cluster's slurmrestd has no such query: squeue does the same with its jobs.
    let rendered = match listing(&client, &query, &tokens) {
        Ok(r) => r,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = rendered.errors.first() {
        super::error(CMD, &e.description);
        return 1;
    }
    if !rendered.ids_found {
        eprintln!("slurm_load_jobs error: Invalid job id specified");
        return 1;
    }
    if args.long {
        format::emit(&format::date_line(crate::sys::now()));
    }
    if !args.noheader {
        format::emit(&header(&tokens));
    }
    if let Some(name) = &bad_user {
        eprintln!("{CMD}: error: Invalid user: {name}\n");
        return 0;
    }
    format::emit_text(&rendered.text);
    0
}

/// The uids `-u` and `--me` name, and the first name of `-u` that is no user.
fn users(args: &SqueueArgs) -> (Option<Vec<u32>>, Option<String>) {
    let mut bad_user = None;
    let mut users: Option<Vec<u32>> = None;
    if let Some(list) = &args.user {
        let mut uids = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match crate::identity::user_uid(name) {
                Some(u) => uids.push(u),
                None => {
                    bad_user.get_or_insert_with(|| name.to_string());
                }
            }
        }
        users = Some(uids);
    }
    if args.me {
        users.get_or_insert_with(Vec::new).push(crate::identity::uid());
    }
    (users, bad_user)
}

/// The listing `query` asks for, laid out by `tokens`: the local daemon lays it out; for a
/// remote cluster, squeue reads its jobs (`GET /slurm/v0.0.43/jobs`) and lays them out the
/// same way.
fn listing(client: &Client, query: &JobQuery, tokens: &[Token]) -> Result<rows::Rendered, ClientError> {
    let layout = rows::layout_of(tokens);
    if client.profile().is_some() {
        let (listed, ids_found) = remote_jobs(client, query)?;
        let text = rows::rows_text(&listed, &layout, crate::sys::now());
        return Ok(rows::Rendered { text, ids_found, errors: Vec::new() });
    }
    const PATH: &str = "/slurmlet/v1/jobs/query";
    if rows::layout_fits(&layout) {
        let laid_out = JobQuery { layout: Some(layout), ..query.clone() };
        let reply = client.post_for_bytes(PATH, &laid_out)?;
        match reply.status {
            200 => {
                let text = match String::from_utf8(reply.body) {
                    Ok(text) => text,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                };
                let text = match rows::shown(&text) {
                    Cow::Borrowed(_) => text,
                    Cow::Owned(shown) => shown,
                };
                return Ok(rows::Rendered { text, ids_found: true, errors: Vec::new() });
            }
            404 => return Ok(rows::Rendered { ids_found: false, ..Default::default() }),
            // A daemon from before layouts refuses the field: it is asked for rows.
            400 if String::from_utf8_lossy(&reply.body).contains("unknown field `layout`") => {}
            _ => return rows::render(&reply.body, tokens).map_err(|_| decode_error(&reply)),
        }
    }
    let reply = client.post_for_bytes(PATH, query)?;
    rows::render(&reply.body, tokens).map_err(|_| decode_error(&reply))
}

/// The error of a reply that is not what was asked for.
fn decode_error(reply: &crate::api::http::Response) -> ClientError {
    let body = String::from_utf8_lossy(&reply.body[..reply.body.len().min(300)]).into_owned();
    ClientError::Decode { status: reply.status, body }
}

/// A remote cluster's jobs that `query` lists, in its order, and whether any has one of its
/// ids.
fn remote_jobs(client: &Client, query: &JobQuery) -> Result<(Vec<crate::api::types::JobInfo>, bool), ClientError> {
    let reply = client.jobs()?;
    if let Some(e) = reply.errors.first() {
        return Err(ClientError::Remote(crate::api::remote::RemoteError::Request {
            url: client.endpoint(),
            why: format!("{} ({})", e.error, e.description),
        }));
    }
    // slurmrestd lists an array's pending tasks in one record; one per line is squeue's.
    let jobs = if query.array_per_line || query.array_tasks.is_some() {
        reply.jobs.into_iter().flat_map(unfold).collect()
    } else {
        reply.jobs
    };
    Ok(select(jobs, query, crate::sys::now()))
}

/// One record per task of `job` when it stands for an array's pending tasks
/// (`array_task_string` `0-9%2`, no task id), as squeue `-r` lists them; else `job`.
fn unfold(job: crate::api::types::JobInfo) -> Vec<crate::api::types::JobInfo> {
    if job.array_task_id.get().is_some() || job.array_task_string.is_empty() {
        return vec![job];
    }
    let list = job.array_task_string.split('%').next().unwrap_or_default();
    match crate::options::array::parse_array(list, crate::options::array::MAX_ARRAY_SIZE_LIMIT) {
        Ok(spec) => spec
            .indices
            .iter()
            .map(|&t| crate::api::types::JobInfo {
                array_task_id: crate::api::noval::NoVal::of(t),
                array_task_string: String::new(),
                ..job.clone()
            })
            .collect(),
        Err(_) => vec![job],
    }
}

/// `--json`: the full `job_info` of each job listed, as slurmrestd's `GET /jobs` has them,
/// printed as the daemon wrote them.
fn print_json(client: &Client, query: &JobQuery, bad_user: Option<&str>) -> i32 {
    // squeue prints the JSON of the jobs in the controller's order, whatever -S says.
    let query = JobQuery { json: true, sort: None, ..query.clone() };
    let reply = match client.post_for_bytes("/slurmlet/v1/jobs/query", &query) {
        Ok(r) => r,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if reply.status != 200 {
        let why = Client::decode::<JobsResponse>(&reply)
            .ok()
            .and_then(|r| r.errors.into_iter().next())
            .map(|e| e.error)
            .unwrap_or_else(|| String::from_utf8_lossy(&reply.body[..reply.body.len().min(300)]).into_owned());
        eprintln!("slurm_load_jobs error: {why}");
        return 1;
    }
    if let Some(name) = bad_user {
        eprintln!("{CMD}: error: Invalid user: {name}\n");
        return 0;
    }
    format::emit_bytes(&reply.body);
    0
}

/// The sort specification squeue orders by: `-S`, else `$SQUEUE_SORT`, else `S` (start
/// time) with `--start`; none: the daemon's default, [`DEFAULT_SORT`](crate::queue::DEFAULT_SORT).
fn sort_spec(args: &SqueueArgs) -> Option<String> {
    args.sort
        .clone()
        .or_else(|| std::env::var("SQUEUE_SORT").ok())
        .or_else(|| args.start.then(|| START_SORT.to_string()))
}

fn split_list(list: Option<&str>) -> Option<Vec<String>> {
    list.map(|l| l.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
}

/// The jobs `-j` names: job (or array) ids, and array tasks `[A, T]`.
type JobIds = (Vec<u32>, Vec<[u32; 2]>);

/// Parses `-j`: `123`, `123_4`, `123_[1-3]`; returns the ids and tasks, or the offending
/// text.
fn parse_job_ids(list: &str) -> Result<JobIds, String> {
    let (mut ids, mut tasks) = (Vec::new(), Vec::new());
    for word in crate::cli::job_ids::split(list) {
        match crate::cli::job_ids::parse(&word) {
            Some(crate::cli::job_ids::JobIds::Job(id)) => ids.push(id),
            Some(crate::cli::job_ids::JobIds::Tasks(array, list)) => tasks.extend(list.iter().map(|&t| [array, t])),
            None => return Err(word),
        }
    }
    Ok((ids, tasks))
}

fn build_format(args: &SqueueArgs) -> Result<Vec<Token>, String> {
    if let Some(f) = &args.format_long {
        let tokens = format::parse_long(f, 20);
        for t in &tokens {
            if let Token::Field(field) = t {
                if by_name(&field.key).is_none() {
                    return Err(format!("Invalid job format specification: {}", field.key));
                }
            }
        }
        return Ok(tokens);
    }
    let text = match &args.format {
        Some(f) => f.clone(),
        None if args.start => START_FORMAT.to_string(),
        None if args.long => LONG_FORMAT.to_string(),
        None => match std::env::var("SQUEUE_FORMAT") {
            Ok(f) if !f.is_empty() => f,
            _ => DEFAULT_FORMAT.to_string(),
        },
    };
    Ok(format::parse(&text))
}

/// The header line for `tokens`.
pub fn header(tokens: &[Token]) -> String {
    format::render(tokens, header_title)
}

/// One job's line for `tokens`, with `now` the current UNIX time.
pub fn format_job(tokens: &[Token], job: &dyn QueueJob, now: u64) -> String {
    format::render(tokens, |f: &Field| value(field_code(f), job, now))
}

/// The codes of a format's fields.
fn field_codes(tokens: &[Token]) -> impl Iterator<Item = char> + '_ {
    tokens.iter().filter_map(|t| match t {
        Token::Field(f) => Some(field_code(f)),
        Token::Literal(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;
    use crate::api::types::JobInfo;
    use crate::queue::{default_sort, short_state, sort_jobs};

    const NOW: u64 = 1_795_311_682;

    fn job(id: u32, name: &str, part: &str, state: &str, reason: &str) -> JobInfo {
        JobInfo {
            job_id: id,
            name: name.into(),
            partition: part.into(),
            job_state: vec![state.into()],
            state_reason: reason.into(),
            user_name: "alice".into(),
            user_id: 2001,
            node_count: NoVal::of(1),
            cpus: NoVal::of(1),
            priority: NoVal::of(1),
            time_limit: NoVal::infinite(),
            array_job_id: NoVal::of(0),
            ..Default::default()
        }
    }

    fn running(id: u32, name: &str, secs: u64, limit: u32) -> JobInfo {
        let mut j = job(id, name, "gpu", "RUNNING", "None");
        j.nodes = "vm".into();
        j.start_time = NoVal::of(NOW - secs);
        j.time_limit = NoVal::of(limit);
        j
    }

    fn sample() -> Vec<JobInfo> {
        let mut toolong = job(27, "toolong", "debug", "PENDING", "PartitionConfig");
        toolong.time_limit = NoVal::of(60);
        let mut waiting = job(24, "waiting", "gpu", "PENDING", "None");
        waiting.time_limit = NoVal::of(5);
        // Its expected start, as the backfill scheduler sets it.
        waiting.start_time = NoVal::of(NOW + 60);
        waiting.tres_per_node = "gres/gpu:1".into();
        let mut held = job(25, "held", "gpu", "PENDING", "JobHeldUser");
        held.priority = NoVal::of(0);
        let dep = job(26, "dep", "gpu", "PENDING", "Dependency");
        let mut jobs = vec![running(23, "sleeper2", 2, 10), held, running(22, "sleeper", 5, 10), dep, waiting, toolong];
        sort_jobs(&mut jobs, &default_sort(), NOW);
        jobs
    }

    fn lines(format: &str) -> Vec<String> {
        let t = format::parse(format);
        let mut out = vec![header(&t)];
        out.extend(sample().iter().map(|j| format_job(&t, j, NOW)));
        out
    }

    #[test]
    fn default_format() {
        assert_eq!(
            lines(DEFAULT_FORMAT),
            vec![
                "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
                "                27     debug  toolong    alice PD       0:00      1 (PartitionConfig)",
                "                24       gpu  waiting    alice PD       0:00      1 (None)",
                "                26       gpu      dep    alice PD       0:00      1 (Dependency)",
                "                25       gpu     held    alice PD       0:00      1 (JobHeldUser)",
                "                23       gpu sleeper2    alice  R       0:02      1 vm",
                "                22       gpu  sleeper    alice  R       0:05      1 vm",
            ]
        );
    }

    #[test]
    fn long_format() {
        assert_eq!(
            lines(LONG_FORMAT),
            vec![
                "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)",
                "                27     debug  toolong    alice  PENDING       0:00   1:00:00      1 (PartitionConfig)",
                "                24       gpu  waiting    alice  PENDING       0:00      5:00      1 (None)",
                "                26       gpu      dep    alice  PENDING       0:00 UNLIMITED      1 (Dependency)",
                "                25       gpu     held    alice  PENDING       0:00 UNLIMITED      1 (JobHeldUser)",
                "                23       gpu sleeper2    alice  RUNNING       0:02     10:00      1 vm",
                "                22       gpu  sleeper    alice  RUNNING       0:05     10:00      1 vm",
            ]
        );
    }

    #[test]
    fn pipe_format_without_widths() {
        let l = lines("%i|%j|%u|%T|%M|%l|%D|%R|%b|%P|%C");
        assert_eq!(l[0], "JOBID|NAME|USER|STATE|TIME|TIME_LIMIT|NODES|NODELIST(REASON)|TRES_PER_NODE|PARTITION|CPUS");
        assert_eq!(l[1], "27|toolong|alice|PENDING|0:00|1:00:00|1|(PartitionConfig)|N/A|debug|1");
        assert_eq!(l[2], "24|waiting|alice|PENDING|0:00|5:00|1|(None)|gres/gpu:1|gpu|1");
        assert_eq!(l[6], "22|sleeper|alice|RUNNING|0:05|10:00|1|vm|N/A|gpu|1");
    }

    #[test]
    fn widths_and_justification() {
        let l = lines("%.6i %-10j|%10j|%.8l %.10r %.12b %N");
        assert_eq!(l[0], " JOBID NAME      |NAME      |TIME_LIM     REASON TRES_PER_NOD NODELIST");
        assert_eq!(l[2], "    24 waiting   |waiting   |    5:00       None   gres/gpu:1 ");
        assert_eq!(l[3], "    26 dep       |dep       |UNLIMITE Dependency          N/A ");
        assert_eq!(l[6], "    22 sleeper   |sleeper   |   10:00       None          N/A vm");
    }

    #[test]
    fn quoted_csv_header() {
        let l = lines("\"%i\",\"%j\",\"%t\"");
        assert_eq!(l[0], "\"JOBID\",\"NAME\",\"ST\"");
        assert_eq!(l[1], "\"27\",\"toolong\",\"PD\"");
    }

    #[test]
    fn long_field_format() {
        let t = format::parse_long("JobID,Name,State,Reason,tres-per-node,TimeLimit,TimeUsed", 20);
        assert_eq!(
            header(&t),
            "JOBID               NAME                STATE               REASON              TRES_PER_NODE       TIME_LIMIT          TIME                "
        );
        let jobs = sample();
        assert_eq!(
            format_job(&t, &jobs[1], NOW),
            "24                  waiting             PENDING             None                gres/gpu:1          5:00                0:00                "
        );
        let t = format::parse_long("JobID:6,Name:.8", 20);
        assert_eq!(header(&t), "JOBID     NAME");
    }

    #[test]
    fn reason_pending_vs_running() {
        let jobs = sample();
        assert_eq!(value('R', &jobs[0], NOW), "(PartitionConfig)");
        assert_eq!(value('R', &jobs[4], NOW), "vm");
        assert_eq!(value('r', &jobs[4], NOW), "None");
    }

    #[test]
    fn completing_is_cg() {
        let mut j = running(30, "x", 100, 10);
        j.job_state = vec!["RUNNING".into(), "COMPLETING".into()];
        assert_eq!(value('t', &j, NOW), "CG");
        assert_eq!(value('T', &j, NOW), "COMPLETING");
        for (long, short) in [
            ("COMPLETED", "CD"),
            ("FAILED", "F"),
            ("CANCELLED", "CA"),
            ("TIMEOUT", "TO"),
            ("OUT_OF_MEMORY", "OOM"),
            ("NODE_FAIL", "NF"),
            ("SUSPENDED", "S"),
        ] {
            assert_eq!(short_state(long), short);
        }
    }

    #[test]
    fn job_id_parsing() {
        assert_eq!(parse_job_ids("22,24").unwrap(), (vec![22, 24], vec![]));
        assert_eq!(parse_job_ids("89_3,89_[5-6]").unwrap(), (vec![], vec![[89, 3], [89, 5], [89, 6]]));
        assert_eq!(parse_job_ids("abc").unwrap_err(), "abc");
    }

    #[test]
    fn times_and_memory() {
        let mut j = running(40, "x", 3 * 3600 + 5, 24 * 60 * 2);
        assert_eq!(value('M', &j, NOW), "3:00:05");
        assert_eq!(value('l', &j, NOW), "2-00:00:00");
        assert_eq!(value('L', &j, NOW), "1-20:59:55");
        j.memory_per_cpu = NoVal::of(1000);
        assert_eq!(value('m', &j, NOW), "1000M");
        j.memory_per_cpu = NoVal::unset();
        j.memory_per_node = NoVal::of(2048);
        assert_eq!(value('m', &j, NOW), "2G");
    }
}
