//! Where a job's or a step's processes are kept: how a new process is placed there, and how
//! all of them are signalled, frozen, thawed, counted and accounted for at once.
//!
//! Every supervisor and the daemon reach a job's processes only through [`Containment`];
//! the functions below are the one place that chooses its implementation. Today's is
//! [`process_group::ProcessGroups`]: each process the supervisor starts leads a process
//! group of its own (or a session, on a pseudo-terminal), and a process that leaves its
//! group is still found in the supervisor's session.

pub mod process_group;

use crate::api::acct::Usage;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The share of the node a job or a step was given, as the daemon tells its supervisor:
/// what its containment confines it to where the machine allows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Share {
    /// How many CPUs.
    pub cpus: u32,
    /// Which CPUs, when the allocator picked them (empty: any of the node's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_ids: Vec<u32>,
    /// Memory, MB (0: none was asked for).
    pub mem_mb: u64,
    /// The GPUs, with their device files (the environment already names them).
    pub gpus: Vec<crate::gpu::Gpu>,
}

/// The processes of one job or step, held together.
pub trait Containment {
    /// Places the calling process, a new child between `fork` and `execve`, in the
    /// container. `leads_session`: it has just made a session of its own (a
    /// pseudo-terminal's).
    ///
    /// # Safety
    ///
    /// Called only in the child right after `fork`: it may make async-signal-safe calls
    /// only, and allocate nothing.
    unsafe fn enter(&self, leads_session: bool);

    /// Called by the parent right after `fork` for its new child `pid`: when it returns, a
    /// signal sent to all of the container reaches the child, whether or not the child has
    /// placed itself yet.
    fn placed(&mut self, pid: i32, leads_session: bool);

    /// Sends `signal` to every process in the container; `Err` when it could not be sent
    /// (processes already gone are not an error).
    fn signal_all(&self, signal: i32) -> std::io::Result<()>;

    /// Stops every process (the job is suspended).
    fn freeze(&self) {
        let _ = self.signal_all(libc::SIGSTOP);
    }

    /// Lets every stopped process go on.
    fn thaw(&self) {
        let _ = self.signal_all(libc::SIGCONT);
    }

    /// The processes in the container that have not exited.
    fn members(&self) -> Vec<i32>;

    /// What the container's processes used, once they are gone and reaped.
    fn usage(&self) -> Usage;
}

/// A job's or step's supervisor makes the containment of the processes it will start.
/// `sweep_session`: processes that left their group are found in the supervisor's own
/// session (a step's supervisor, which leads one; a batch job's processes are its group).
/// `share` is what an implementation that confines holds them to; process groups confine
/// nothing.
pub fn for_supervisor(_share: &Share, sweep_session: bool) -> Box<dyn Containment> {
    Box::new(process_group::ProcessGroups::started(sweep_session))
}

/// The containment of the running job of directory `job_dir`, reopened from outside its
/// supervisor (by the daemon). `dead_supervisor`: the pid of the job's supervisor when it is
/// gone, whose session holds whatever of the job's processes left the job's group.
pub fn of_job(job_dir: &Path, dead_supervisor: Option<i32>) -> Box<dyn Containment> {
    Box::new(process_group::ProcessGroups::of_job(crate::stepd::read_pgid(job_dir), dead_supervisor))
}

/// The containment of the tasks of the step whose supervisor is `supervisor`, reopened from
/// outside it (by the daemon).
pub fn of_step(supervisor: i32) -> Box<dyn Containment> {
    Box::new(process_group::ProcessGroups::of_step(supervisor))
}
