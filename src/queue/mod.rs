//! squeue's job vocabulary, spoken by squeue and by the daemon alike: the facts of a job it
//! reads ([`job`]), its fields and what each shows ([`fields`], each field's value in
//! [`field_values`]), which jobs a query lists ([`select`](mod@select)) and in what order
//! ([`sort`]), and the listing's rows and laid-out text ([`rows`]).
//!
//! squeue asks the daemon for a listing and the daemon answers with it; for a remote
//! cluster, squeue builds the same listing from the cluster's `job_info`s. Both go through
//! this module, so both print the same.

pub mod field_values;
pub mod fields;
pub mod job;
pub mod rows;
pub mod select;
pub mod sort;

pub use fields::{short_state, value, write_value, QueueField, SortField, FIELDS};
pub use job::QueueJob;
pub use rows::{layout_fits, layout_of, rows_json, rows_text, MAX_LAYOUT_WIDTH};
pub use select::{asks_ids, ids_found, matches, select, sort_keys, VALID_STATES};
pub use sort::{default_sort, parse_sort, read_sort, sort_jobs, SortItem, SortKey, DEFAULT_SORT, START_SORT};
