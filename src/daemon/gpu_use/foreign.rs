//! Which of the processes on the GPUs belong to no job ([`foreign`]), and how one is told
//! to users ([`ForeignProcess::describe`]).

use super::owners::Owner;
use crate::gpu::process;
use crate::gpu::{Gpu, GpuProcess};
use std::collections::HashMap;

/// A process outside the queue that uses one of the node's GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignProcess {
    /// The node's index of the GPU.
    pub gpu: u32,
    /// Its pid, as the driver gave it.
    pub pid: u32,
    /// Its owner's uid; `None` when it is not in this pid namespace.
    pub uid: Option<u32>,
    /// Its owner's name; `None` when it is not in this pid namespace.
    pub user: Option<String>,
    /// Its command line, control characters escaped; `None` when unknown.
    pub command: Option<String>,
    /// The GPU memory it uses in bytes, when the driver says.
    pub used_memory: Option<u64>,
}

impl ForeignProcess {
    /// `gpu 0 busy outside the queue: pid 4242 (bob) python train.py, 11.2 GiB`.
    pub fn describe(&self) -> String {
        self.describe_for(true)
    }

    /// [`ForeignProcess::describe`], without its command line unless `with_command`.
    pub fn describe_for(&self, with_command: bool) -> String {
        let command = self.command.as_ref().filter(|_| with_command);
        let who = match (&self.user, command) {
            (Some(user), Some(command)) => format!(" ({user}) {command}"),
            (Some(user), None) => format!(" ({user})"),
            (None, _) => " (not in this pid namespace)".to_string(),
        };
        let memory = self.used_memory.map_or_else(|| "memory unknown".to_string(), memory_text);
        format!("gpu {} busy outside the queue: pid {}{who}, {memory}", self.gpu, self.pid)
    }
}

/// `11.2 GiB`, or `300 MiB` under one GiB.
fn memory_text(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    if bytes >= GIB {
        format!("{} GiB", crate::gpu::gib(bytes))
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

/// The processes of `sampled` that use more than `threshold` bytes (or do not say how much)
/// of one of `gpus` and have no owner in `owners` (see [`super::owners::owners`]).
pub fn foreign(
    sampled: &[GpuProcess],
    gpus: &[Gpu],
    owners: &HashMap<u32, Owner>,
    threshold: u64,
) -> Vec<ForeignProcess> {
    let large: Vec<(u32, &GpuProcess)> = sampled
        .iter()
        .filter(|p| p.used_memory.is_none_or(|m| m > threshold))
        .filter_map(|p| node_index(gpus, &p.gpu_uuid).map(|gpu| (gpu, p)))
        .collect();
    let mut found: Vec<ForeignProcess> = large
        .into_iter()
        .filter(|(_, p)| !owners.contains_key(&p.pid))
        .map(|(gpu, p)| {
            let owner = process::owner(p.pid as i32);
            (gpu, p, owner)
        })
        .map(|(gpu, p, owner)| ForeignProcess {
            gpu,
            pid: p.pid,
            uid: owner.as_ref().map(|(uid, _)| *uid),
            user: owner.map(|(_, name)| name),
            command: process::command_line(p.pid as i32),
            used_memory: p.used_memory,
        })
        .collect();
    found.sort_by_key(|f| (f.gpu, f.pid));
    found
}

/// Whether `caller` (uid) may see the command line of `p`: its owner, root and the
/// operators always; others as the machine would show it to them, which is not at all where
/// `/proc` hides other users' processes or `private_data` hides other users' jobs.
pub fn command_visible(p: &ForeignProcess, caller: u32, privileged: bool, private_jobs: bool) -> bool {
    privileged || p.uid == Some(caller) || !(private_jobs || process::proc_hides_processes())
}

/// The node's index of the whole GPU whose UUID is `uuid`.
pub(super) fn node_index(gpus: &[Gpu], uuid: &str) -> Option<u32> {
    gpus.iter().find(|g| g.mig_parent.is_none() && g.uuid.as_deref() == Some(uuid)).map(|g| g.index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, uuid: &str) -> Gpu {
        Gpu { uuid: Some(uuid.into()), ..Gpu::nvidia(index) }
    }

    #[test]
    fn a_process_is_told_with_its_owner_command_and_memory() {
        let p = ForeignProcess {
            gpu: 0,
            uid: Some(1001),
            pid: 4242,
            user: Some("bob".into()),
            command: Some("python train.py".into()),
            used_memory: Some(12_025_908_428),
        };
        assert_eq!(p.describe(), "gpu 0 busy outside the queue: pid 4242 (bob) python train.py, 11.2 GiB");
        let elsewhere = ForeignProcess { uid: None, user: None, command: None, used_memory: Some(300 << 20), ..p };
        assert_eq!(elsewhere.describe(), "gpu 0 busy outside the queue: pid 4242 (not in this pid namespace), 300 MiB");
    }

    #[test]
    fn small_processes_and_the_jobs_own_are_not_foreign() {
        let gpus = [gpu(0, "GPU-a"), gpu(1, "GPU-b")];
        let me = std::process::id();
        let on = |uuid: &str, memory: u64| GpuProcess {
            gpu_uuid: uuid.into(),
            pid: me,
            used_memory: Some(memory),
            sm_util: None,
        };
        let sampled = [on("GPU-a", 100 << 20), on("GPU-b", 1 << 30), on("GPU-other", 1 << 30)];
        let found = foreign(&sampled, &gpus, &HashMap::new(), 256 << 20);
        assert_eq!(found.iter().map(|f| (f.gpu, f.pid)).collect::<Vec<_>>(), [(1, me)]);
        assert!(found[0].command.is_some());
        let mine = HashMap::from([(me, (3, crate::api::acct::StepId::Batch))]);
        assert!(foreign(&sampled, &gpus, &mine, 256 << 20).is_empty(), "a job's process is not foreign");
    }
}
