//! What the daemon's other folders talk about, and nothing that acts: the job record and its
//! interned texts, the record of a step, who calls ([`caller::Caller`]), how a request names
//! a job ([`job_ref::JobRef`]), and where a job's files go ([`output_path`]). Everything else
//! in the daemon looks down to here; this folder looks at nothing of the daemon's above it.

pub mod caller;
pub mod gres_type;
pub mod job;
pub mod job_ref;
pub mod machine;
pub mod notice;
pub mod output_path;
pub mod refusal;
pub mod reservation;
pub mod step_record;
pub mod step_share;
pub mod text;
