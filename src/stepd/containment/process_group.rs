//! Containment by process groups and sessions, with nothing the kernel must provide beyond
//! them: every process a supervisor starts leads a process group of its own (or a session,
//! on a pseudo-terminal), and processes that made groups of their own are found through the
//! sessions that hold them. It confines nothing: CPUs, memory and device files are not
//! enforced.

use super::{Containment, Mechanism, Share};
use crate::api::acct::Usage;
use std::path::Path;

/// Containment by process groups and sessions: usable everywhere.
pub struct ProcessGroupMechanism;

impl Mechanism for ProcessGroupMechanism {
    fn name(&self) -> &'static str {
        "process groups"
    }

    fn usable(&self) -> bool {
        true
    }

    fn for_supervisor(&self, _share: &Share, sweep_session: bool) -> Box<dyn Containment> {
        Box::new(ProcessGroups::started(sweep_session))
    }

    fn of_job(&self, job_dir: &Path, dead_supervisor: Option<i32>) -> Box<dyn Containment> {
        Box::new(ProcessGroups::of_job(crate::stepd::read_pgid(job_dir), dead_supervisor))
    }

    fn of_step(&self, supervisor: i32) -> Box<dyn Containment> {
        Box::new(ProcessGroups::of_step(supervisor))
    }
}

/// The process groups and sessions of one job or step.
#[derive(Debug, Default)]
pub struct ProcessGroups {
    /// The groups of the processes started (each leads its own).
    groups: Vec<i32>,
    /// Sessions whose members are the container's too.
    sessions: Vec<i32>,
    /// The caller's own session is swept too, when the caller leads one.
    sweep_callers_session: bool,
    /// A process of those sessions that is not the container's (a step's supervisor).
    outside: Option<i32>,
}

impl ProcessGroups {
    /// The containment a supervisor starts its processes into; with `sweep_session`, its own
    /// session's other processes are the container's too.
    pub fn started(sweep_session: bool) -> ProcessGroups {
        ProcessGroups { sweep_callers_session: sweep_session, ..Default::default() }
    }

    /// A job's processes, seen from outside its supervisor: the batch script's process group
    /// `pgid` and, when its supervisor `dead_supervisor` is gone, that supervisor's session
    /// (the processes started before their group was written down). A session outlives its
    /// leader only while it has members, and a pid still in use as a session id is not
    /// handed out again: a live process of that pid is a later one, whose session is not
    /// the job's.
    pub fn of_job(pgid: Option<i32>, dead_supervisor: Option<i32>) -> ProcessGroups {
        let sid = dead_supervisor.filter(|&p| p > 0 && !running(p));
        ProcessGroups { groups: pgid.into_iter().collect(), sessions: sid.into_iter().collect(), ..Default::default() }
    }

    /// A step's tasks, seen from outside its supervisor: the supervisor's session but the
    /// supervisor itself, and a pseudo-terminal task's own session (one of the supervisor's
    /// children).
    pub fn of_step(supervisor: i32) -> ProcessGroups {
        ProcessGroups {
            sessions: std::iter::once(supervisor).chain(crate::sys::children(supervisor)).collect(),
            outside: Some(supervisor),
            ..Default::default()
        }
    }

    /// The process groups of the processes started (each leads its own).
    pub fn groups(&self) -> &[i32] {
        &self.groups
    }

    /// Sends `signal` to the process groups of the processes started, not to the processes
    /// that left them.
    pub fn signal_groups(&self, signal: i32) -> std::io::Result<()> {
        let mut result = Ok(());
        for &pgid in &self.groups {
            if let (Err(e), Ok(())) = (crate::sys::kill_group(pgid, signal), &result) {
                result = Err(e);
            }
        }
        result
    }

    /// The sessions to sweep, and the caller's pid (never the container's).
    fn sweep(&self) -> (Vec<i32>, i32) {
        // SAFETY: getpid and getsid have no preconditions.
        let (me, my_session) = unsafe { (libc::getpid(), libc::getsid(0)) };
        let mut sessions = self.sessions.clone();
        if self.sweep_callers_session && my_session == me {
            sessions.push(me);
        }
        (sessions, me)
    }

    /// The members of the swept sessions that are not in one of the groups.
    fn strays(&self) -> Vec<i32> {
        let (sessions, me) = self.sweep();
        if sessions.is_empty() {
            return Vec::new();
        }
        crate::sys::session_members(&sessions)
            .into_iter()
            .filter(|&(pid, pgid)| pid != me && Some(pid) != self.outside && !self.groups.contains(&pgid))
            .map(|(pid, _)| pid)
            .collect()
    }
}

impl Containment for ProcessGroups {
    unsafe fn enter(&self, leads_session: bool) {
        // A session leader leads its group already (and could not change it).
        if !leads_session {
            // SAFETY: setpgid takes two numbers (0, 0: this process leads a group of its own).
            unsafe { libc::setpgid(0, 0) };
        }
    }

    fn placed(&mut self, pid: i32, leads_session: bool) {
        if leads_session {
            // The child makes its session itself: had the parent made it a group leader
            // first, its setsid would fail.
            self.sessions.push(pid);
        } else {
            // Also set the group from the parent, so that a signal sent right after fork
            // finds it.
            // SAFETY: setpgid on our own child has no memory preconditions.
            unsafe { libc::setpgid(pid, pid) };
        }
        self.groups.push(pid);
    }

    fn signal_all(&self, signal: i32) -> std::io::Result<()> {
        let result = self.signal_groups(signal);
        // No process can join a session from outside: those left in it are the container's.
        for pid in self.strays() {
            let _ = crate::sys::kill_pid(pid, signal);
        }
        result
    }

    fn members(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self.groups.iter().flat_map(|&g| crate::sys::group_members(g)).collect();
        pids.extend(self.strays());
        pids.retain(|&p| !crate::sys::is_zombie(p));
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    fn usage(&self) -> Usage {
        // Every process the supervisor started was its child, and is reaped.
        Usage::of_children()
    }
}

/// Whether process `pid` exists and has not exited (a zombie has).
fn running(pid: i32) -> bool {
    crate::sys::process_start_ticks(pid).is_some() && !crate::sys::is_zombie(pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_job_group_is_signalled_and_its_members_listed() {
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        let job = ProcessGroups::of_job(Some(pid), None);
        assert_eq!(job.members(), [pid]);
        job.signal_all(libc::SIGKILL).unwrap();
        child.wait().unwrap();
        assert!(job.members().is_empty());
        assert!(job.signal_all(libc::SIGTERM).is_ok(), "a group that is gone is not an error");
    }

    #[test]
    fn a_live_supervisor_session_is_not_the_jobs() {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let job = ProcessGroups::of_job(None, Some(me));
        assert!(job.sessions.is_empty(), "a running process's session is its own");
    }
}
