//! The processes the daemon starts and watches: each job's supervisor (its environment,
//! files and start, through the fork server or `posix_spawn`), the spec a step's supervisor
//! is started with, the fencing of a job whose supervisor vanished, the processes of a job's
//! tree, and the short-lived children that look at a user's paths as that user. It knows
//! the job record and nothing of the scheduler; the loops that watch these processes are the
//! runtime's.

pub mod fence;
pub mod fork_client;
pub mod launch;
pub mod path_check;
pub mod posix_spawn;
pub mod process_tree;
pub mod step_spec;
