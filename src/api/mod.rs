//! slurmrestd-shaped REST types (data_parser v0.0.43) and a blocking client.

pub mod acct;
pub mod activity;
pub mod client;
pub mod client_error;
pub mod from_slurmdb;
pub mod gpus;
pub mod http;
pub mod job_resources;
pub mod jwt;
pub mod negotiate;
pub mod noval;
pub mod parser_cache;
pub mod profile;
pub mod release;
pub mod remote;
pub mod reservations;
pub mod sharing;
pub mod slurmdb;
pub mod step;
pub mod step_info;
pub mod step_list;
pub mod stream;
pub mod types;
pub mod url;
pub mod version;
