//! How a submit is refused: Slurm's error for it, with what this request did wrong, and the
//! refusal of a submit the store could not keep.

use crate::api::types::errno;
use crate::daemon::model::refusal::{Kind, Refusal};

/// A submit error with Slurm's number and text.
pub fn submit_error(number: i32, error: &str) -> Refusal {
    Refusal::new(Kind::Invalid, number, error, "slurm_submit_batch_job()").saying("Batch job submission failed")
}

/// The error a client gets when its change could not be stored.
pub fn store_failure(e: &impl std::fmt::Display) -> Refusal {
    Refusal::new(Kind::Failed, errno::ERROR, "Unexpected error", "store").saying(format!("cannot store the job: {e}"))
}

/// A submit error whose description explains more than Slurm's text does.
pub(in crate::daemon) fn explained(number: i32, error: &str, description: String) -> Refusal {
    Refusal::new(Kind::Invalid, number, error, "slurm_submit_batch_job()").saying(description)
}

pub const NODE_CONFIG: &str = "Requested node configuration is not available";
