//! Which job, and which of its steps, each process on the GPUs belongs to ([`owners`]).

use crate::api::acct::StepId;
use crate::gpu::process;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// What the daemon knows of one running job's processes.
#[derive(Debug, Clone, Default)]
pub struct RunningJob {
    /// Its id.
    pub id: u32,
    /// Its supervisor (which runs the batch script), while it runs.
    pub supervisor: Option<i32>,
    /// Its running srun steps and their supervisors.
    pub steps: Vec<(u32, i32)>,
    /// Its directory, through which its containment is found.
    pub dir: PathBuf,
    /// Whether it was given GPUs.
    pub has_gpus: bool,
}

/// What the daemon knows of its running jobs' processes, to tell them from others.
#[derive(Debug, Clone, Default)]
pub struct JobProcesses {
    /// The running jobs.
    pub jobs: Vec<RunningJob>,
}

/// The job and step a process belongs to.
pub type Owner = (u32, StepId);

impl JobProcesses {
    /// The supervisors, each with what it runs: a job's the batch script, a step's the step.
    fn supervisors(&self) -> HashMap<i32, Owner> {
        let mut found = HashMap::new();
        for job in &self.jobs {
            if let Some(pid) = job.supervisor {
                found.insert(pid, (job.id, StepId::Batch));
            }
            for &(step, pid) in &job.steps {
                found.insert(pid, (job.id, StepId::Number(step)));
            }
        }
        found
    }

    /// The members of each job's containment, with the job's batch script as their owner.
    fn members(&self) -> HashMap<i32, Owner> {
        let mut found = HashMap::new();
        for job in &self.jobs {
            for pid in crate::stepd::containment::of_job(&job.dir, None).members() {
                found.insert(pid, (job.id, StepId::Batch));
            }
        }
        found
    }
}

/// The owners of those of `pids` that belong to a job of `jobs`: the nearest supervisor at or
/// above the process, else the supervisor that leads its process group or session, else the
/// job whose containment holds it or one of its ancestors. A pid of no job is left out.
pub fn owners(pids: &HashSet<u32>, jobs: &JobProcesses) -> HashMap<u32, Owner> {
    if pids.is_empty() || jobs.jobs.is_empty() {
        return HashMap::new();
    }
    let supervisors = jobs.supervisors();
    let mut members: Option<HashMap<i32, Owner>> = None;
    let mut found = HashMap::new();
    for &pid in pids {
        let line: Vec<i32> = std::iter::once(pid as i32).chain(process::ancestors(pid as i32)).collect();
        let owner = line.iter().find_map(|p| supervisors.get(p).copied()).or_else(|| {
            let kin = process::kin(pid as i32)?;
            supervisors.get(&kin.group).or_else(|| supervisors.get(&kin.session)).copied()
        });
        let owner = owner.or_else(|| {
            let members = members.get_or_insert_with(|| jobs.members());
            line.iter().find_map(|p| members.get(p).copied())
        });
        if let Some(owner) = owner {
            found.insert(pid, owner);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_belongs_to_its_nearest_supervisor() {
        let me = std::process::id();
        let parent = process::kin(me as i32).unwrap().parent;
        let pids: HashSet<u32> = [me].into();
        let job = |supervisor: Option<i32>, steps: Vec<(u32, i32)>| JobProcesses {
            jobs: vec![RunningJob { id: 7, supervisor, steps, dir: "/nonexistent".into(), has_gpus: true }],
        };
        assert_eq!(owners(&pids, &job(Some(parent), vec![])).get(&me), Some(&(7, StepId::Batch)));
        assert_eq!(owners(&pids, &job(None, vec![(2, me as i32)])).get(&me), Some(&(7, StepId::Number(2))));
        // A step's supervisor below the job's is nearer.
        assert_eq!(owners(&pids, &job(Some(parent), vec![(1, me as i32)])).get(&me), Some(&(7, StepId::Number(1))));
        assert!(owners(&pids, &job(Some(i32::MAX), vec![])).is_empty(), "a process of no job has no owner");
    }
}
