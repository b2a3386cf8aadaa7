//! `scontrol write batch_script`: `GET /slurmlet/v1/job/{job_id}/script` answers a job's batch
//! script, as it was submitted (slurmrestd has no endpoint for it; slurmctld's
//! `REQUEST_BATCH_SCRIPT` does this).
//!
//! As slurmctld, it answers the job's owner, root and operators (anyone else: `Invalid user
//! id`), and for a job without a script, an interactive allocation, `Job script not
//! specified`. An array's id, or one of its tasks', names the array's one script.

use crate::daemon::model::caller::Caller;
use crate::daemon::model::job_ref::JobRef;
use crate::daemon::scheduling::core::Core;

/// Why a job's batch script is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptRefused {
    /// No such job (or none the caller may see).
    UnknownJob,
    /// The caller is neither the job's owner, root nor an operator.
    NotPermitted,
    /// The job has no script: an interactive allocation's.
    NoScript,
}

impl Core {
    /// The id the batch script of the job `target` names is stored under, for `caller`; or
    /// why there is none to give.
    pub fn script_for(&self, target: JobRef, caller: Caller) -> Result<u32, ScriptRefused> {
        let ids = self.ids_named(JobRef { step: None, ..target });
        let job = ids.first().and_then(|id| self.jobs.get(id)).ok_or(ScriptRefused::UnknownJob)?;
        if !caller.may_manage(job, &self.config, "reading the batch script") {
            return Err(ScriptRefused::NotPermitted);
        }
        if job.interactive {
            return Err(ScriptRefused::NoScript);
        }
        Ok(self.payload_id(job.id))
    }
}
