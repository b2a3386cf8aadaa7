//! How a job's value of each of squeue's fields is written and ordered: what the table of
//! fields (`fields.rs`) names for each field.

use super::job::QueueJob;
use crate::options::time::{format_elapsed, push_decimal};
use std::borrow::Cow;

/// One job's value for a sort key.
pub enum SortValue<'a> {
    /// A number.
    Number(i64),
    /// A text, compared as bytes.
    Text(Cow<'a, str>),
    /// A start time; `None` (not started, none expected) comes after every time, in either
    /// direction.
    Start(Option<i64>),
}

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

/// Seconds the job has run at `now`.
pub fn elapsed(job: &dyn QueueJob, now: u64) -> u64 {
    let state = job.state();
    let start = job.start_time();
    if start == 0 || state == "PENDING" {
        return 0;
    }
    let end = match job.end_time() {
        e if e > 0 && !matches!(state, "RUNNING" | "CONFIGURING" | "SUSPENDED") && e <= now => e,
        _ => now,
    };
    end.saturating_sub(start)
}

/// The start time squeue sorts on: a pending job expected to start in the past starts now.
pub fn start_value(job: &dyn QueueJob, now: u64) -> SortValue<'static> {
    match job.start_time() {
        0 => SortValue::Start(None),
        t if job.state() == "PENDING" && t < now => SortValue::Start(Some(clamp(now))),
        t => SortValue::Start(Some(clamp(t))),
    }
}

// How values are written.

/// Appends a number (writing into a String cannot fail).
pub(super) fn number(out: &mut String, n: impl std::fmt::Display) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// Appends an id.
pub(super) fn id(out: &mut String, n: u32) {
    push_decimal(out, n.into());
}

/// Appends `s`, or `(null)` when it is empty.
pub(super) fn or_null(out: &mut String, s: &str) {
    out.push_str(if s.is_empty() { "(null)" } else { s });
}

/// Appends a TRES request as squeue prints it since Slurm 24.11 (`gres/gpu:1`; 22.05 printed
/// `gres:gpu:1`), or `N/A`.
pub(super) fn or_na(out: &mut String, tres: &str) {
    out.push_str(if tres.is_empty() { "N/A" } else { tres });
}

/// Appends a time in local time, or `N/A` for none.
pub(super) fn time_or_na(out: &mut String, t: u64) {
    if t > 0 {
        out.push_str(&crate::sys::format_local_time(t));
    } else {
        out.push_str("N/A");
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

/// The minimum memory asked for, in MB.
pub(super) fn memory(job: &dyn QueueJob) -> Option<u64> {
    job.memory_per_cpu().or(job.memory_per_node())
}

/// `%r`: why the job waits (or ended); `None` when nothing says.
pub(super) fn reason(job: &dyn QueueJob) -> &str {
    match job.state_reason() {
        "" => "None",
        r => r,
    }
}

/// `%B`: the batch host, `n/a` before the job starts.
pub(super) fn batch_host(out: &mut String, job: &dyn QueueJob, _: u64) {
    out.push_str(match job.batch_host() {
        "" => "n/a",
        host => host,
    });
}

/// `%F`: the array's id, the job's own when it is no array task.
pub(super) fn array_job_id(out: &mut String, job: &dyn QueueJob, _: u64) {
    number(
        out,
        match job.array_job_id() {
            0 => job.job_id(),
            a => a,
        },
    );
}

/// `%i`: the job id, `A_T` for an array task, `A_[list]` for an array's pending tasks.
pub(super) fn job_id(out: &mut String, job: &dyn QueueJob, _: u64) {
    match (job.array_job_id(), job.array_task_id()) {
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
    }
}

/// `%K`: the task id, the list of an array's pending tasks, or `N/A`.
pub(super) fn array_task_id(out: &mut String, job: &dyn QueueJob, _: u64) {
    match job.array_task_id() {
        Some(t) => number(out, t),
        None if !job.array_task_string().is_empty() => out.push_str(job.array_task_string()),
        None => out.push_str("N/A"),
    }
}

/// `%L`: the time left.
pub(super) fn time_left(out: &mut String, job: &dyn QueueJob, now: u64) {
    match job.time_limit() {
        None => out.push_str("UNLIMITED"),
        Some(m) => out.push_str(&format_elapsed((m as u64 * 60).saturating_sub(elapsed(job, now)))),
    }
}

/// `%m`: the minimum memory.
pub(super) fn min_memory(out: &mut String, job: &dyn QueueJob, _: u64) {
    match memory(job) {
        Some(m) => out.push_str(&memory_text(m)),
        None => out.push('0'),
    }
}

/// `%p`: the priority as a fraction of the highest.
pub(super) fn priority_fraction(out: &mut String, job: &dyn QueueJob, _: u64) {
    number(out, format_args!("{:.8}", job.priority() as f64 / u32::MAX as f64));
}

/// `%R`: why a job waits (or ended) in parentheses, else its nodes.
pub(super) fn reason_list(out: &mut String, job: &dyn QueueJob, _: u64) {
    if matches!(job.state(), "PENDING" | "TIMEOUT" | "OUT_OF_MEMORY" | "DEADLINE" | "FAILED") {
        out.push('(');
        out.push_str(reason(job));
        out.push(')');
    } else {
        out.push_str(job.nodes());
    }
}

// How values are ordered.

/// Slurm's `INFINITE`, which an unlimited time limit (and time left) reads as.
const INFINITE: i64 = u32::MAX as i64;
/// Slurm's `NO_VAL`, the task id of a job that is not an array task.
const NO_VAL: u64 = (u32::MAX - 1) as u64;

/// A time or size as a sort number (none comes near the limit).
fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX - 1)
}

/// A number to sort by.
pub(super) fn num(n: impl Into<i64>) -> SortValue<'static> {
    SortValue::Number(n.into())
}

/// A time or size to sort by.
pub(super) fn big(n: u64) -> SortValue<'static> {
    SortValue::Number(clamp(n))
}

/// A text to sort by.
pub(super) fn text(s: &str) -> SortValue<'_> {
    SortValue::Text(Cow::Borrowed(s))
}

/// The array's id (the job's own when none) then the task id, in 64 bits, shifted so that
/// they order as signed numbers do.
pub(super) fn job_id_order(job: &dyn QueueJob, _: u64) -> SortValue<'_> {
    let (id, task) = match job.array_task_id() {
        Some(task) => (job.array_job_id(), task.into()),
        None => (job.job_id(), NO_VAL),
    };
    SortValue::Number((((id as u64) << 32 | task) ^ (1 << 63)) as i64)
}

pub(super) fn time_limit_order(job: &dyn QueueJob, _: u64) -> SortValue<'_> {
    SortValue::Number(job.time_limit().map_or(INFINITE, i64::from))
}

pub(super) fn time_left_order(job: &dyn QueueJob, now: u64) -> SortValue<'_> {
    SortValue::Number(match job.time_limit() {
        None => INFINITE,
        Some(m) => m as i64 * 60 - clamp(elapsed(job, now)),
    })
}

pub(super) fn priority_order(job: &dyn QueueJob, _: u64) -> SortValue<'_> {
    SortValue::Number(job.priority().into())
}
