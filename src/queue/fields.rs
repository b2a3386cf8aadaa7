//! What squeue prints of a job: the `%` codes of `-o`, computed from any [`QueueJob`].
//!
//! Two kinds of job implement [`QueueJob`]: the REST `job_info` (what `--json` prints and
//! what any slurmrestd returns), and the daemon's own job records, which render rows without
//! building a `job_info` first. One [`value`] function serves both, so both print the same.

use crate::api::types::JobInfo;
use crate::format::Field;
use crate::options::time::{format_elapsed, format_limit};
use std::borrow::Cow;

/// The facts of a job that squeue's codes, filters and sort order read.
pub trait QueueJob {
    /// `job_id`.
    fn job_id(&self) -> u32;
    /// `array_job_id` (0: not an array job).
    fn array_job_id(&self) -> u32;
    /// `array_task_id`.
    fn array_task_id(&self) -> Option<u32>;
    /// `array_task_string` (the pending tasks of an array, `3-15%2`).
    fn array_task_string(&self) -> &str;
    /// `partition` (a comma list when several).
    fn partition(&self) -> &str;
    /// `name`.
    fn name(&self) -> &str;
    /// `account`.
    fn account(&self) -> &str;
    /// `qos`.
    fn qos(&self) -> &str;
    /// `comment`.
    fn comment(&self) -> &str;
    /// `wckey`.
    fn wckey(&self) -> &str;
    /// `user_id`.
    fn user_id(&self) -> u32;
    /// `user_name`.
    fn user_name(&self) -> Cow<'_, str>;
    /// `group_id`.
    fn group_id(&self) -> u32;
    /// `group_name`.
    fn group_name(&self) -> Cow<'_, str>;
    /// The state as squeue names it: `COMPLETING` while the job completes, else its base
    /// state (`PENDING` when none is known).
    fn state(&self) -> &str;
    /// `state_reason`.
    fn state_reason(&self) -> &str;
    /// `nodes` (empty before the job starts).
    fn nodes(&self) -> &str;
    /// `batch_host`.
    fn batch_host(&self) -> &str;
    /// `node_count`.
    fn node_count(&self) -> u32;
    /// `cpus`.
    fn cpus(&self) -> u32;
    /// `minimum_cpus_per_node`.
    fn minimum_cpus_per_node(&self) -> u32;
    /// `tasks`.
    fn tasks(&self) -> u32;
    /// `cpus_per_task`.
    fn cpus_per_task(&self) -> u32;
    /// `submit_time` (0: unknown).
    fn submit_time(&self) -> u64;
    /// `start_time` (0: not started).
    fn start_time(&self) -> u64;
    /// `end_time` (0: none).
    fn end_time(&self) -> u64;
    /// `time_limit` in minutes (`None`: unlimited).
    fn time_limit(&self) -> Option<u32>;
    /// `priority`.
    fn priority(&self) -> u32;
    /// `nice`.
    fn nice(&self) -> i32;
    /// `tres_per_node`.
    fn tres_per_node(&self) -> &str;
    /// `tres_per_job`.
    fn tres_per_job(&self) -> &str;
    /// `memory_per_cpu` in MB.
    fn memory_per_cpu(&self) -> Option<u64>;
    /// `memory_per_node` in MB.
    fn memory_per_node(&self) -> Option<u64>;
    /// `dependency`.
    fn dependency(&self) -> &str;
    /// `features`.
    fn features(&self) -> &str;
    /// `required_nodes`.
    fn required_nodes(&self) -> &str;
    /// `excluded_nodes`.
    fn excluded_nodes(&self) -> &str;
    /// `scheduled_nodes`.
    fn scheduled_nodes(&self) -> &str;
    /// `command`.
    fn command(&self) -> &str;
    /// `contiguous`.
    fn contiguous(&self) -> bool;
    /// `current_working_directory`.
    fn current_working_directory(&self) -> &str;
    /// `standard_output` with its patterns filled in.
    fn stdout_expanded(&self) -> Cow<'_, str>;
    /// `standard_error` with its patterns filled in.
    fn stderr_expanded(&self) -> Cow<'_, str>;
    /// `standard_input` with its patterns filled in.
    fn stdin_expanded(&self) -> Cow<'_, str>;
    /// `cluster`.
    fn cluster(&self) -> &str;
}

/// `expanded`, else (a reply without it) `asked`.
fn or_asked<'a>(expanded: &'a str, asked: &'a str) -> &'a str {
    if expanded.is_empty() {
        asked
    } else {
        expanded
    }
}

impl QueueJob for JobInfo {
    fn job_id(&self) -> u32 {
        self.job_id
    }
    fn array_job_id(&self) -> u32 {
        self.array_job_id.get().unwrap_or(0)
    }
    fn array_task_id(&self) -> Option<u32> {
        self.array_task_id.get()
    }
    fn array_task_string(&self) -> &str {
        &self.array_task_string
    }
    fn partition(&self) -> &str {
        &self.partition
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn account(&self) -> &str {
        &self.account
    }
    fn qos(&self) -> &str {
        &self.qos
    }
    fn comment(&self) -> &str {
        &self.comment
    }
    fn wckey(&self) -> &str {
        &self.wckey
    }
    fn user_id(&self) -> u32 {
        self.user_id
    }
    fn user_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.user_name)
    }
    fn group_id(&self) -> u32 {
        self.group_id
    }
    fn group_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.group_name)
    }
    fn state(&self) -> &str {
        if self.job_state.iter().any(|s| s == "COMPLETING") {
            return "COMPLETING";
        }
        self.job_state.first().map(String::as_str).unwrap_or("PENDING")
    }
    fn state_reason(&self) -> &str {
        &self.state_reason
    }
    fn nodes(&self) -> &str {
        &self.nodes
    }
    fn batch_host(&self) -> &str {
        &self.batch_host
    }
    fn node_count(&self) -> u32 {
        self.node_count.get().unwrap_or(1)
    }
    fn cpus(&self) -> u32 {
        self.cpus.get().unwrap_or(1)
    }
    fn minimum_cpus_per_node(&self) -> u32 {
        self.minimum_cpus_per_node.get().map_or(1, u32::from)
    }
    fn tasks(&self) -> u32 {
        self.tasks.get().unwrap_or(1)
    }
    fn cpus_per_task(&self) -> u32 {
        self.cpus_per_task.get().map_or(1, u32::from)
    }
    fn submit_time(&self) -> u64 {
        self.submit_time.get().unwrap_or(0)
    }
    fn start_time(&self) -> u64 {
        self.start_time.get().unwrap_or(0)
    }
    fn end_time(&self) -> u64 {
        self.end_time.get().unwrap_or(0)
    }
    fn time_limit(&self) -> Option<u32> {
        if self.time_limit.infinite {
            None
        } else {
            self.time_limit.get()
        }
    }
    fn priority(&self) -> u32 {
        self.priority.get().unwrap_or(0)
    }
    fn nice(&self) -> i32 {
        self.nice
    }
    fn tres_per_node(&self) -> &str {
        &self.tres_per_node
    }
    fn tres_per_job(&self) -> &str {
        &self.tres_per_job
    }
    fn memory_per_cpu(&self) -> Option<u64> {
        self.memory_per_cpu.get()
    }
    fn memory_per_node(&self) -> Option<u64> {
        self.memory_per_node.get()
    }
    fn dependency(&self) -> &str {
        &self.dependency
    }
    fn features(&self) -> &str {
        &self.features
    }
    fn required_nodes(&self) -> &str {
        &self.required_nodes
    }
    fn excluded_nodes(&self) -> &str {
        &self.excluded_nodes
    }
    fn scheduled_nodes(&self) -> &str {
        &self.scheduled_nodes
    }
    fn command(&self) -> &str {
        &self.command
    }
    fn contiguous(&self) -> bool {
        self.contiguous
    }
    fn current_working_directory(&self) -> &str {
        &self.current_working_directory
    }
    // data_parser v0.0.42 has no `*_expanded` fields: the path the job asked for stands in.
    fn stdout_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stdout_expanded, &self.standard_output))
    }
    fn stderr_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stderr_expanded, &self.standard_error))
    }
    fn stdin_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stdin_expanded, &self.standard_input))
    }
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

/// Every `%` code [`value`] knows.
pub const CODES: &str = "aAbBcCdDeEfFgGhHIJijkKlLmMnNoOpPqQrRStTuUvVwWxyYzZ1234567";

/// Slurm's compact state code for a long state name.
pub fn short_state(state: &str) -> &str {
    match state {
        "PENDING" => "PD",
        "RUNNING" => "R",
        "SUSPENDED" => "S",
        "COMPLETING" => "CG",
        "COMPLETED" => "CD",
        "CONFIGURING" => "CF",
        "CANCELLED" => "CA",
        "FAILED" => "F",
        "TIMEOUT" => "TO",
        "PREEMPTED" => "PR",
        "NODE_FAIL" => "NF",
        "BOOT_FAIL" => "BF",
        "DEADLINE" => "DL",
        "OUT_OF_MEMORY" => "OOM",
        "REQUEUED" => "RQ",
        "REQUEUE_FED" => "RF",
        "REQUEUE_HOLD" => "RH",
        "RESIZING" => "RS",
        "RESV_DEL_HOLD" => "RD",
        "REVOKED" => "RV",
        "SIGNALING" => "SI",
        "SPECIAL_EXIT" => "SE",
        "STAGE_OUT" => "SO",
        "STOPPED" => "ST",
        other => other,
    }
}

fn or_null(s: &str) -> Cow<'_, str> {
    if s.is_empty() {
        Cow::Borrowed("(null)")
    } else {
        Cow::Borrowed(s)
    }
}

fn time_or_na(t: u64) -> Cow<'static, str> {
    if t > 0 {
        Cow::Owned(crate::sys::format_local_time(t))
    } else {
        Cow::Borrowed("N/A")
    }
}

/// A TRES request as squeue prints it since Slurm 24.11 (`gres/gpu:1`; 22.05 printed
/// `gres:gpu:1`), or `N/A`.
fn tres_or_na(tres: &str) -> Cow<'_, str> {
    if tres.is_empty() {
        Cow::Borrowed("N/A")
    } else {
        Cow::Borrowed(tres)
    }
}

/// Memory in MB as Slurm's convert_num_unit prints it: `1000M`, `2G`.
fn memory_text(mb: u64) -> String {
    if mb == 0 {
        return "0".to_string();
    }
    let units = ['M', 'G', 'T', 'P'];
    let mut n = mb;
    let mut i = 0;
    while n.is_multiple_of(1024) && i + 1 < units.len() {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

/// Seconds the job has run at `now`.
pub(super) fn elapsed<J: QueueJob + ?Sized>(job: &J, now: u64) -> u64 {
    let state = job.state();
    let start = job.start_time();
    if start == 0 || state == "PENDING" {
        return 0;
    }
    let end = match job.end_time() {
        e if e > 0 && !matches!(state, "RUNNING" | "SUSPENDED") && e <= now => e,
        _ => now,
    };
    end.saturating_sub(start)
}

fn reason<J: QueueJob + ?Sized>(job: &J) -> &str {
    match job.state_reason() {
        "" => "None",
        r => r,
    }
}

/// The value of `-o` code `code` for `job` at UNIX time `now` (empty for unknown codes).
pub fn value<J: QueueJob + ?Sized>(code: char, job: &J, now: u64) -> String {
    let mut out = String::new();
    write_value(&mut out, code, job, now);
    out
}

/// Appends the value of `-o` code `code` for `job` at UNIX time `now` to `out` (nothing for
/// unknown codes). Listing many jobs, one buffer takes every value in turn.
pub fn write_value<J: QueueJob + ?Sized>(out: &mut String, code: char, job: &J, now: u64) {
    use crate::options::time::{push_decimal, push_elapsed};
    use std::fmt::Write;
    // Writing into a String cannot fail.
    fn number(out: &mut String, n: impl std::fmt::Display) {
        let _ = write!(out, "{n}");
    }
    fn id(out: &mut String, n: u32) {
        push_decimal(out, n.into());
    }
    match code {
        'A' => id(out, job.job_id()),
        'c' => number(out, job.minimum_cpus_per_node()),
        'C' => number(out, job.cpus()),
        'F' => number(
            out,
            match job.array_job_id() {
                0 => job.job_id(),
                a => a,
            },
        ),
        'G' => number(out, job.group_id()),
        'i' => match (job.array_job_id(), job.array_task_id()) {
            (0, _) => id(out, job.job_id()),
            (a, Some(t)) => {
                id(out, a);
                out.push('_');
                id(out, t);
            }
            (a, None) if !job.array_task_string().is_empty() => {
                number(out, format_args!("{a}_[{}]", job.array_task_string()))
            }
            (_, None) => id(out, job.job_id()),
        },
        'D' => id(out, job.node_count()),
        'M' => push_elapsed(out, elapsed(job, now)),
        'K' => match job.array_task_id() {
            Some(t) => number(out, t),
            None if !job.array_task_string().is_empty() => out.push_str(job.array_task_string()),
            None => out.push_str("N/A"),
        },
        'p' => number(out, format_args!("{:.8}", job.priority() as f64 / u32::MAX as f64)),
        'Q' => number(out, job.priority()),
        'R' if matches!(job.state(), "PENDING" | "TIMEOUT" | "OUT_OF_MEMORY" | "DEADLINE" | "FAILED") => {
            out.push('(');
            out.push_str(reason(job));
            out.push(')');
        }
        'U' => number(out, job.user_id()),
        'y' => number(out, job.nice()),
        '4' => number(out, job.cpus_per_task()),
        '6' => number(out, job.tasks()),
        _ => out.push_str(&text_value(code, job, now)),
    }
}

/// The codes whose values are text (borrowed where the job has them as is).
fn text_value<'a, J: QueueJob + ?Sized>(code: char, job: &'a J, now: u64) -> Cow<'a, str> {
    let owned = |s: String| Cow::Owned(s);
    match code {
        'a' => or_null(job.account()),
        'b' => tres_or_na(job.tres_per_node()),
        'B' => match job.batch_host() {
            "" => Cow::Borrowed("n/a"),
            host => Cow::Borrowed(host),
        },
        'd' => Cow::Borrowed("0"),
        'e' => time_or_na(job.end_time()),
        'E' => or_null(job.dependency()),
        'f' => or_null(job.features()),
        'g' => job.group_name(),
        'h' => Cow::Borrowed("OK"),
        'H' | 'I' | 'J' => Cow::Borrowed("*"),
        'j' => Cow::Borrowed(job.name()),
        'k' => or_null(job.comment()),
        'l' => owned(format_limit(job.time_limit())),
        'L' => match job.time_limit() {
            None => Cow::Borrowed("UNLIMITED"),
            Some(m) => owned(format_elapsed((m as u64 * 60).saturating_sub(elapsed(job, now)))),
        },
        'm' => match job.memory_per_cpu().or(job.memory_per_node()) {
            Some(m) => owned(memory_text(m)),
            None => Cow::Borrowed("0"),
        },
        'n' => or_null(job.required_nodes()),
        'N' | 'R' => Cow::Borrowed(job.nodes()),
        'o' => or_null(job.command()),
        'O' => Cow::Borrowed(if job.contiguous() { "1" } else { "0" }),
        'P' => Cow::Borrowed(job.partition()),
        'q' => or_null(job.qos()),
        'r' => Cow::Borrowed(reason(job)),
        'S' => time_or_na(job.start_time()),
        't' => Cow::Borrowed(short_state(job.state())),
        'T' => Cow::Borrowed(job.state()),
        'u' => job.user_name(),
        'v' | 'W' => Cow::Borrowed("(null)"),
        'V' => time_or_na(job.submit_time()),
        'w' => or_null(job.wckey()),
        'x' => or_null(job.excluded_nodes()),
        'Y' => or_null(job.scheduled_nodes()),
        'z' => Cow::Borrowed("*:*:*"),
        'Z' => Cow::Borrowed(job.current_working_directory()),
        '1' => job.stdout_expanded(),
        '2' => job.stderr_expanded(),
        '3' => job.stdin_expanded(),
        '5' => tres_or_na(job.tres_per_job()),
        '7' => Cow::Borrowed(job.cluster()),
        _ => Cow::Borrowed(""),
    }
}

/// `-O` field names → (`-o` code, header).
pub fn long_field(name: &str) -> Option<(char, &'static str)> {
    Some(match name {
        "jobid" | "jobarrayid" => ('i', "JOBID"),
        "arrayjobid" => ('F', "ARRAY_JOB_ID"),
        "arraytaskid" => ('K', "ARRAY_TASK_ID"),
        "name" => ('j', "NAME"),
        "state" => ('T', "STATE"),
        "statecompact" => ('t', "ST"),
        "reason" => ('r', "REASON"),
        "reasonlist" => ('R', "NODELIST(REASON)"),
        "tres-per-node" => ('b', "TRES_PER_NODE"),
        "timelimit" => ('l', "TIME_LIMIT"),
        "timeused" => ('M', "TIME"),
        "timeleft" => ('L', "TIME_LEFT"),
        "username" => ('u', "USER"),
        "userid" => ('U', "UID"),
        "groupname" => ('g', "GROUP"),
        "groupid" => ('G', "GROUP"),
        "partition" => ('P', "PARTITION"),
        "numnodes" => ('D', "NODES"),
        "numcpus" => ('C', "CPUS"),
        "mincpus" => ('c', "MIN_CPUS"),
        "minmemory" => ('m', "MIN_MEMORY"),
        "nodelist" => ('N', "NODELIST"),
        "account" => ('a', "ACCOUNT"),
        "qos" => ('q', "QOS"),
        "priority" => ('Q', "PRIORITY"),
        "prioritylong" => ('Q', "PRIORITY"),
        "nice" => ('y', "NICE"),
        "starttime" => ('S', "START_TIME"),
        "submittime" => ('V', "SUBMIT_TIME"),
        "endtime" => ('e', "END_TIME"),
        "workdir" => ('Z', "WORK_DIR"),
        "comment" => ('k', "COMMENT"),
        "command" => ('o', "COMMAND"),
        "dependency" => ('E', "DEPENDENCY"),
        "features" => ('f', "FEATURES"),
        "batchhost" => ('B', "EXEC_HOST"),
        "wckey" => ('w', "WCKEY"),
        "schednodes" => ('Y', "SCHEDNODES"),
        "reqnodes" => ('n', "REQ_NODES"),
        "exclnodes" => ('x', "EXC_NODES"),
        "stdout" => ('1', "STDOUT"),
        "stderr" => ('2', "STDERR"),
        "stdin" => ('3', "STDIN"),
        "cpus-per-task" => ('4', "CPUS_PER_TASK"),
        "tres-per-job" => ('5', "TRES_PER_JOB"),
        "numtasks" => ('6', "NUM_TASKS"),
        "cluster" => ('7', "CLUSTER"),
        _ => return None,
    })
}

/// The header title of a `-o` code.
pub fn title(code: char) -> &'static str {
    match code {
        'a' => "ACCOUNT",
        'A' => "JOBID",
        'b' => "TRES_PER_NODE",
        'B' => "EXEC_HOST",
        'c' => "MIN_CPUS",
        'C' => "CPUS",
        'd' => "MIN_TMP_DISK",
        'D' => "NODES",
        'e' => "END_TIME",
        'E' => "DEPENDENCY",
        'f' => "FEATURES",
        'F' => "ARRAY_JOB_ID",
        'g' => "GROUP",
        'G' => "GROUP",
        'h' => "OVER_SUBSCRIBE",
        'H' => "SOCKETS_PER_NODE",
        'i' => "JOBID",
        'I' => "CORES_PER_SOCKET",
        'j' => "NAME",
        'J' => "THREADS_PER_CORE",
        'k' => "COMMENT",
        'K' => "ARRAY_TASK_ID",
        'l' => "TIME_LIMIT",
        'L' => "TIME_LEFT",
        'm' => "MIN_MEMORY",
        'M' => "TIME",
        'n' => "REQ_NODES",
        'N' => "NODELIST",
        'o' => "COMMAND",
        'O' => "CONTIGUOUS",
        'p' => "PRIORITY",
        'P' => "PARTITION",
        'q' => "QOS",
        'Q' => "PRIORITY",
        'r' => "REASON",
        'R' => "NODELIST(REASON)",
        'S' => "START_TIME",
        't' => "ST",
        'T' => "STATE",
        'u' => "USER",
        'U' => "UID",
        'v' => "RESERVATION",
        'V' => "SUBMIT_TIME",
        'w' => "WCKEY",
        'W' => "LICENSES",
        'x' => "EXC_NODES",
        'y' => "NICE",
        'Y' => "SCHEDNODES",
        'z' => "S:C:T",
        'Z' => "WORK_DIR",
        _ => "",
    }
}

/// The `%` code a format field stands for (`-O` names map to theirs).
pub fn field_code(f: &Field) -> char {
    if f.key.chars().count() == 1 {
        f.key.chars().next().unwrap_or(' ')
    } else {
        long_field(&f.key).map(|(c, _)| c).unwrap_or(' ')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_expanded_paths_v0_0_42_replies_print_the_paths_asked_for() {
        let v42 = JobInfo {
            standard_output: "/w/slurm-%j.out".into(),
            standard_input: "/dev/null".into(),
            ..Default::default()
        };
        assert_eq!(v42.stdout_expanded(), "/w/slurm-%j.out");
        assert_eq!(v42.stderr_expanded(), "", "no path of its own: show job prints stdout's");
        assert_eq!(v42.stdin_expanded(), "/dev/null");
        let v43 = JobInfo { stdout_expanded: "/w/slurm-5.out".into(), ..v42 };
        assert_eq!(v43.stdout_expanded(), "/w/slurm-5.out");
    }
}
