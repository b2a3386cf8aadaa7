//! The daemon's state and its changes: the job record, the state ([`core::Core`]) behind
//! its one lock, submits and their checks (their paths' without the lock), the backfill
//! plan, dependencies, per-user limits, arrays, and the changes made to queued or running
//! jobs (hold, release, edit, requeue, suspend).

pub mod array;
pub mod core;
pub mod core_lock;
pub mod depend;
pub mod hold;
pub mod job_edit;
pub mod limits;
pub mod plan;
pub mod requeue;
pub mod staging;
pub mod submit;
pub mod submit_paths;
pub mod suspend;
