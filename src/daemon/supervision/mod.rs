//! The processes the daemon starts and watches: each job's supervisor (its environment,
//! files and start, through the fork server or `posix_spawn`), the steps of running jobs,
//! interactive allocations and steps that stream to their clients, the fencing of a job
//! whose supervisor vanished, the backstop for supervisors that do not end their job, and the
//! short-lived children that look at a user's paths as that user.

pub mod backstop;
pub mod fence;
pub mod fork_client;
pub mod interactive;
pub mod launch;
pub mod path_check;
pub mod process_tree;
pub mod spawn;
pub mod step_spec;
pub mod steps;
