//! squeue's job vocabulary, spoken by squeue and by the daemon alike: the facts of a job it
//! reads ([`job`]), its fields and what each shows ([`fields`]), which jobs a query lists and
//! in what order ([`select`](mod@select)), and the listing's rows and laid-out text ([`rows`]).
//!
//! squeue asks the daemon for a listing and the daemon answers with it; for a remote
//! cluster, squeue builds the same listing from the cluster's `job_info`s. Both go through
//! this module, so both print the same.

pub mod fields;
pub mod job;
pub mod rows;
pub mod select;

pub use fields::{short_state, value, write_value, QueueField, SortField, FIELDS};
pub use job::QueueJob;
pub use rows::{layout_fits, layout_of, rows_json, rows_text, MAX_LAYOUT_WIDTH};
pub use select::{
    asks_ids, default_sort, ids_found, matches, parse_sort, read_sort, select, sort_jobs, sort_keys, SortItem, SortKey,
    DEFAULT_SORT, START_SORT, VALID_STATES,
};
