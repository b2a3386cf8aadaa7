//! Where a job's or a step's processes are kept: how a new process is placed there, and how
//! all of them are signalled, frozen, thawed, counted and accounted for at once.
//!
//! Every supervisor and the daemon reach a job's processes only through [`Containment`].
//! Where the daemon contains its jobs in cgroups it says so in each supervisor's [`Share`]
//! (its [`cgroup::plan::CgroupPlan`]), and the supervisor holds the processes in the groups of
//! [`cgroup::contain`]. Otherwise each way of containing them is a [`Mechanism`] in a file of
//! its own, and [`MECHANISMS`] is the one place that lists them; the first usable one is
//! chosen. Today's is [`process_group`]: each process the supervisor starts leads a process
//! group of its own (or a session, on a pseudo-terminal), and a process that leaves its
//! group is still found in the supervisor's session.

pub mod cgroup;
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
    /// The cgroups to hold the processes in and the limits to set on them, when the daemon
    /// contains its jobs in cgroups (`None`: process groups alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<cgroup::plan::CgroupPlan>,
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

    /// Looks at what the container's processes hold now, for their average (Slurm's
    /// `AveRSS`); nothing where it cannot be told.
    fn sample(&self) {}

    /// How often [`Containment::sample`] is to be called (`None`: never).
    fn sample_every(&self) -> Option<std::time::Duration> {
        None
    }

    /// How many of the container's processes the kernel killed for want of memory within
    /// its limit (0 where it cannot be told).
    fn oom_kills(&self) -> u64 {
        0
    }

    /// Whether the container holds the processes of the job's steps too, so that signalling
    /// it reaches them (a job's cgroup): they are then not to be signalled again one step at
    /// a time.
    fn covers_steps(&self) -> bool {
        false
    }
}

/// A way of containing processes: it makes the containment of the processes a supervisor
/// starts, and reopens a running job's or step's from outside (the daemon). Each is one file
/// of this folder; [`MECHANISMS`] lists them.
pub trait Mechanism: Sync {
    /// Its name, for messages.
    fn name(&self) -> &'static str;

    /// Whether this machine (and this process's rights) allow it.
    fn usable(&self) -> bool;

    /// The containment a supervisor starts its processes into. `share` is what the processes
    /// are confined to, where the mechanism confines; with `sweep_session`, the processes
    /// that left their group are found in the supervisor's own session (a step's supervisor,
    /// which leads one; a batch job's processes are its group).
    fn for_supervisor(&self, share: &Share, sweep_session: bool) -> Box<dyn Containment>;

    /// The containment of the running job of directory `job_dir`. `dead_supervisor`: the
    /// pid of the job's supervisor when it is gone, whose session holds whatever of the
    /// job's processes left the job's group.
    fn of_job(&self, job_dir: &Path, dead_supervisor: Option<i32>) -> Box<dyn Containment>;

    /// The containment of the tasks of the step whose supervisor is `supervisor`.
    fn of_step(&self, supervisor: i32) -> Box<dyn Containment>;
}

/// The mechanisms, in the order they are tried: the first usable one is used. Process groups
/// are always usable, and come last.
pub const MECHANISMS: &[&dyn Mechanism] = &[&process_group::ProcessGroupMechanism];

/// The mechanism this machine uses: the first usable one of [`MECHANISMS`], chosen once per
/// process.
pub fn chosen() -> &'static dyn Mechanism {
    static CHOSEN: std::sync::OnceLock<&'static dyn Mechanism> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        MECHANISMS.iter().copied().find(|m| m.usable()).unwrap_or(&process_group::ProcessGroupMechanism)
    })
}

/// The containment a supervisor starts its processes into (see [`Mechanism::for_supervisor`]):
/// the cgroups of `share`'s plan when it has one and they can be made (said on the
/// supervisor's error output when they cannot), else the chosen mechanism's.
pub fn for_supervisor(share: &Share, sweep_session: bool) -> Box<dyn Containment> {
    if let Some(plan) = &share.cgroup {
        let inner = process_group::ProcessGroups::started(sweep_session);
        let whole_job = !sweep_session;
        match cgroup::contain::Cgroups::make(plan, inner, whole_job) {
            Ok(groups) => return Box::new(groups),
            Err(e) => eprintln!("slurmstepd: error: {e}; the job is held by its process groups alone"),
        }
    }
    chosen().for_supervisor(share, sweep_session)
}

/// The containment of a running job, reopened by the daemon (see [`Mechanism::of_job`]): its
/// cgroups where its directory lists them, else the chosen mechanism's.
pub fn of_job(job_dir: &Path, dead_supervisor: Option<i32>) -> Box<dyn Containment> {
    let groups = cgroup::plan::read_job_groups(&job_dir.join(JOB_CGROUPS));
    if !groups.is_empty() {
        let inner = process_group::ProcessGroups::of_job(crate::stepd::read_pgid(job_dir), dead_supervisor);
        if let Some(contained) = cgroup::contain::Cgroups::of_job(groups, inner) {
            return Box::new(contained);
        }
    }
    chosen().of_job(job_dir, dead_supervisor)
}

/// The file of a job's directory that lists the job's cgroups
/// ([`cgroup::plan::job_groups_text`]).
pub const JOB_CGROUPS: &str = "cgroup";

/// Removes the cgroups of the job of directory `job_dir`, once its end is stored (those
/// still holding a process stay).
pub fn remove_job_groups(job_dir: &Path) {
    for group in cgroup::plan::read_job_groups(&job_dir.join(JOB_CGROUPS)) {
        let _ = group.remove();
    }
}

/// The containment of a running step's tasks, reopened by the daemon (see
/// [`Mechanism::of_step`]).
pub fn of_step(supervisor: i32) -> Box<dyn Containment> {
    chosen().of_step(supervisor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_mechanism_is_always_usable_and_is_chosen() {
        let last = MECHANISMS.last().expect("at least one mechanism");
        assert!(last.usable(), "{} must be usable everywhere: it is the fallback", last.name());
        let names: Vec<&str> = MECHANISMS.iter().map(|m| m.name()).collect();
        assert!(names.contains(&chosen().name()), "{names:?}");
        let first_usable = MECHANISMS.iter().find(|m| m.usable()).expect("the last one is");
        assert_eq!(chosen().name(), first_usable.name());
    }
}
