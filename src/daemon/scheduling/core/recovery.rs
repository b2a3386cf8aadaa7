//! Recovery when the daemon starts: the jobs that were running are re-adopted (their
//! supervisors and steps watched again), ended from their status files, put back in the
//! queue when no supervisor took them up, or fenced and failed when theirs vanished.

use super::{Core, Effects, Watch};
use crate::daemon::model::job::JobState;
use crate::daemon::supervision::fence;
use crate::daemon::supervision::step_spec;
use crate::stepd::{self, EndCause, EndStatus};
use std::cmp::Reverse;

impl Core {
    /// Re-adopts the jobs that were running when the daemon stopped. Their resources are
    /// fenced (held) until their processes are known to be gone, so no GPU or CPU id is
    /// given twice.
    /// A job whose supervisor died without recording an end is killed and ends NODE_FAIL;
    /// one that no supervisor ever took up (the daemon stopped right after giving it
    /// resources) waits again.
    pub fn recover(&mut self) -> Effects {
        let mut effects = Effects::default();
        let active: Vec<u32> = self.index.holding.iter().copied().collect();
        for id in &active {
            // The store keeps a job's GPUs as indices: the node's records stand for them.
            let gpus: Vec<crate::gpu::Gpu> = self.jobs[id].gpus.iter().map(|g| self.node_gpu(g.index)).collect();
            let job = self.jobs.get_mut(id).expect("a holding job is known");
            self.resources.used = self.resources.used.plus(&job.req);
            job.gpus = gpus;
            let cpu_ids = job.cpu_ids.clone();
            self.hold_gpus(*id);
            self.hold_cpu_ids(&cpu_ids);
        }
        self.give_missing_cpu_ids(&active);
        for id in active {
            let dir = self.job_dir(id);
            self.recover_step_records(id);
            if let Some(status) = stepd::read_status(&dir) {
                self.finish(id, Some(status));
                continue;
            }
            match stepd::claim::owner(&dir) {
                stepd::claim::Owner::Alive(pid) => self.adopt(id, pid, &mut effects),
                stepd::claim::Owner::Never => {
                    tracing::info!(job = id, "its supervisor never started; the job waits again");
                    self.requeue_unstarted(id);
                }
                // It may have written its status between the first look and its exit.
                stepd::claim::Owner::Died(pid) => match stepd::read_status(&dir) {
                    Some(status) => self.finish(id, Some(status)),
                    None => {
                        tracing::warn!(job = id, "supervisor gone without a status; fencing the job");
                        self.fence_and_fail(id, Some(pid));
                    }
                },
            }
        }
        let orphans: Vec<u32> =
            self.jobs.values().filter(|j| j.interactive && j.state() == JobState::Pending).map(|j| j.id).collect();
        for id in orphans {
            tracing::info!(job = id, "cancelling a pending interactive job: its client left with the old daemon");
            let _ = self.cancel_abandoned(id);
        }
        effects.reschedule = true;
        effects
    }

    /// Watches the running supervisor `pid` of job `id` again, and its steps'.
    fn adopt(&mut self, id: u32, pid: i32, effects: &mut Effects) {
        tracing::info!(job = id, pid, "re-adopted running job");
        if let Some(j) = self.jobs.get_mut(&id) {
            j.stepd_pid = Some(pid);
        }
        effects.watch.push(Watch { job: id, step: None, pid, ended: None, pidfd: None });
        let dir = self.job_dir(id);
        let steps_dir = step_spec::steps_dir(&dir);
        for found in step_spec::running_steps(&dir) {
            let (step, pid) = (found.step, found.pid);
            tracing::info!(job = id, step, pid, "re-adopted running step");
            self.steps.adopt(id, found, &steps_dir);
            effects.watch.push(Watch { job: id, step: Some(step), pid, ended: None, pidfd: None });
        }
        if self.jobs[&id].state() == JobState::Completing {
            // Its cancel may not have reached every supervisor before the old daemon
            // stopped (the batch script waits for the steps): tell them again; a second
            // SIGTERM changes nothing for one that heard it.
            for pid in self.steps.supervisors(id).into_iter().chain(std::iter::once(pid)) {
                let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
            }
        }
        self.tell_supervisors(id);
        self.arm_time_marks(id, crate::sys::now());
    }

    /// Puts job `id` back in the queue: it was given resources, but nothing of it ran (no
    /// supervisor took it up before the daemon stopped, see [`stepd::claim`]; or its GPUs
    /// could not be made ready). A job cancelled meanwhile ends cancelled instead.
    pub(super) fn requeue_unstarted(&mut self, id: u32) {
        let Some(job) = self.jobs.get_mut(&id) else { return };
        if job.state() == JobState::Completing {
            let now = crate::sys::now();
            self.finish(id, Some(EndStatus { wait_status: 0, cause: EndCause::Cancelled, end_time: now, usage: None }));
            return;
        }
        self.resources.used = self.resources.used.minus(&job.req);
        self.release_gpus(id);
        let job = self.jobs.get_mut(&id).expect("the job is known");
        job.gpus.clear();
        let cpu_ids = std::mem::take(&mut job.cpu_ids);
        self.index.holding.remove(&id);
        job.state = Some(JobState::Pending);
        job.start_time = 0;
        job.reason = "None".into();
        job.stepd_pid = None;
        // Nobody waits for it: the job's next allocation is written after it.
        drop(self.writer.update(job));
        if Self::queued(job) {
            self.index.queue.insert((Reverse(job.priority), id));
        }
        self.release_cpu_ids(&cpu_ids);
    }

    /// Gives the jobs of `active` that hold no CPU ids (given their CPUs by a daemon that
    /// counted them only) the lowest free ones, and stores them: once every job's own ids
    /// are held again, so that no id is given twice.
    fn give_missing_cpu_ids(&mut self, active: &[u32]) {
        for id in active {
            let job = &self.jobs[id];
            if !job.cpu_ids.is_empty() || job.req.cpus == 0 {
                continue;
            }
            let count = job.req.cpus.min(self.resources.free_cpus.len() as u32);
            let cpu_ids = self.take_cpu_ids(count);
            let job = self.jobs.get_mut(id).expect("a holding job is known");
            job.cpu_ids = cpu_ids;
            drop(self.writer.update(job));
        }
    }

    /// Kills whatever is left of a job whose supervisor (`supervisor`, when known) vanished
    /// and waits until it is gone (see [`fence`]), then records the job as failed and gives
    /// its resources back.
    pub(super) fn fence_and_fail(&mut self, id: u32, supervisor: Option<i32>) {
        fence::kill_job(&self.job_dir(id), supervisor);
        self.finish(id, None);
    }
}
