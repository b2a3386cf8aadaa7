//! squeue's own call, `POST /slurmlet/v1/jobs/query`: which jobs and fields it asks for, and
//! the rows it gets back.

use super::ApiError;
use serde::{Deserialize, Serialize};

/// Body of `POST /slurmlet/v1/jobs/query`: which jobs squeue lists and which `%` codes of
/// each it prints. The daemon filters, sorts and renders; the reply carries only the values.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct JobQuery {
    /// The `%` codes to render, one character each, in the order of the row's cells.
    pub codes: String,
    /// `-j`: only these job ids (an array's id selects its tasks).
    pub job_ids: Option<Vec<u32>>,
    /// `-j A_T`: only these array tasks, `[A, T]` (with `job_ids`: either).
    pub array_tasks: Option<Vec<[u32; 2]>>,
    /// `-u`/`--me`: only jobs of these uids.
    pub users: Option<Vec<u32>>,
    /// `-p`: only jobs in one of these partitions.
    pub partitions: Option<Vec<String>>,
    /// `-n`: only jobs with one of these names.
    pub names: Option<Vec<String>>,
    /// `-R`: only jobs in one of these reservations. Left out when none, so an older daemon
    /// still reads the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reservations: Option<Vec<String>>,
    /// `-t`: only jobs in these long states (`ALL`: any); none given: pending and active.
    pub states: Option<Vec<String>>,
    /// `--start`: only pending jobs.
    pub pending_only: bool,
    /// `-r`/`--array`: one line per array task; otherwise the pending tasks of an array
    /// that have not run are listed together, as `A_[3-15%2]`.
    pub array_per_line: bool,
    /// `-S`: the order, as squeue's sort specification (`P,t,-p`, `-j`, `t,-i`); none:
    /// squeue's default, `P,t,-p`. Left out when none, so an older daemon still reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
    /// `--json`: answer with the jobs listed as a whole v0.0.43 jobs reply, pretty-printed
    /// as `squeue --json` prints it, instead of rows (`codes` is then unused). When no job has
    /// one of `job_ids`, the reply is a 404 with the error in `errors`.
    pub json: bool,
    /// squeue's format: answer with the listing laid out as squeue prints it (`text/plain`,
    /// one line per job, control characters shown as `?`) instead of rows (`codes` is then
    /// unused). When no job has one of `job_ids`, the reply is a 404 with the error in
    /// `errors`. Left out when none, so an older daemon still reads the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Vec<LayoutItem>>,
}

/// One piece of a [`JobQuery::layout`], in the order printed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LayoutItem {
    /// Text copied as it is.
    Text(String),
    /// The value of a `%` code, cut or padded to a width.
    Field(LayoutField),
}

/// A field of a [`LayoutItem`]: which value, and how wide.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LayoutField {
    /// The `%` code.
    pub code: char,
    /// The width; 0: as wide as the value.
    pub width: usize,
    /// Padded on the left (`%.N`).
    pub right: bool,
}

/// One rendered value of a [`JobRows`] row; borrowed from the reply when it can be.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct Cell<'a>(#[serde(borrow)] pub std::borrow::Cow<'a, str>);

/// Reply of `POST /slurmlet/v1/jobs/query`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JobRows<'a> {
    /// One row per job that matched, in squeue's order; one cell per code asked for.
    #[serde(borrow)]
    pub rows: Vec<Vec<Cell<'a>>>,
    /// Whether any job in the store has one of the ids asked for (`-j`), whatever the other
    /// filters say; true when no ids were given.
    pub ids_found: bool,
    /// Errors.
    pub errors: Vec<ApiError>,
}
