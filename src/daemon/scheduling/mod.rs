//! The daemon's state and its changes: the state ([`core::Core`]) behind its one lock,
//! submits and their checks (their paths' without the lock), the backfill plan,
//! dependencies, per-user limits, multifactor priority and fair-share ([`priority`]), arrays, the ledger of running steps' shares
//! ([`steps`]), and the changes made to queued or running jobs (hold, release, edit,
//! requeue, suspend). Nothing here answers a request: `http/` does, calling in.

pub mod array;
pub mod core;
pub mod core_lock;
pub mod depend;
pub mod hold;
pub mod job_edit;
pub mod limits;
pub mod plan;
pub mod priority;
pub mod qos_limits;
pub mod requeue;
pub mod reservation_desc;
pub mod steps;
pub mod submit;
pub mod submit_gres;
pub mod submit_mail;
pub mod submit_paths;
pub mod submit_refusals;
pub mod suspend;
#[cfg(test)]
mod tests;
