//! What srun knows of its step, shared by the thread that reads the stream and the one that
//! handles signals.

use super::exits::tasks_phrase;
use std::time::Instant;

/// The step as srun sees it.
#[derive(Debug, Default)]
pub struct StepState {
    /// How many tasks the step has.
    pub ntasks: u32,
    /// `(job, step)`, once the step has started.
    pub step: Option<(u32, u32)>,
    /// `(task, raw wait status)` of the tasks that ended, in the order their ends came.
    pub exits: Vec<(u32, i32)>,
    /// srun ended the step itself (Ctrl-C twice, `--quit-on-interrupt`): Slurm's
    /// `SRUN_JOB_CANCELLED`, after which a task killed by a signal is no error.
    pub cancelled: bool,
    /// srun asked for the step's end; when this passes without the stream ending, srun gives
    /// up waiting.
    pub abort_deadline: Option<Instant>,
    /// srun gave up waiting for the step's end.
    pub timed_out: bool,
}

impl StepState {
    /// A step of `ntasks` tasks, not started yet.
    pub fn new(ntasks: u32) -> StepState {
        StepState { ntasks, ..StepState::default() }
    }

    /// `StepId=J.S`, once the step has started.
    pub fn step_name(&self) -> Option<String> {
        self.step.map(|(j, s)| format!("StepId={j}.{s}"))
    }

    /// Records the end of `task`; `false` when it had already ended.
    pub fn record_exit(&mut self, task: u32, wait_status: i32) -> bool {
        if self.has_exited(task) {
            return false;
        }
        self.exits.push((task, wait_status));
        true
    }

    /// Whether the end of `task` was recorded.
    pub fn has_exited(&self, task: u32) -> bool {
        self.exits.iter().any(|&(t, _)| t == task)
    }

    /// The tasks still running (all of them before the step started).
    pub fn running(&self) -> Vec<u32> {
        (0..self.ntasks).filter(|&t| !self.has_exited(t)).collect()
    }

    /// Whether every task's end was recorded.
    pub fn all_exited(&self) -> bool {
        self.running().is_empty()
    }

    /// srun's status lines for the first Ctrl-C (Slurm's `task_state_print`):
    /// `srun: StepId=7.0 tasks 0-1: running`, then the tasks that exited abnormally, then
    /// those that exited.
    pub fn status_lines(&self) -> Vec<String> {
        let Some(name) = self.step_name() else { return Vec::new() };
        let (mut normal, mut abnormal) = (Vec::new(), Vec::new());
        for &(task, status) in &self.exits {
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                normal.push(task);
            } else {
                abnormal.push(task);
            }
        }
        [(self.running(), "running"), (abnormal, "exited abnormally"), (normal, "exited")]
            .into_iter()
            .filter(|(tasks, _)| !tasks.is_empty())
            .map(|(tasks, what)| format!("srun: {name} {}: {what}", tasks_phrase(&tasks)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_names_running_and_exited_tasks() {
        let mut s = StepState::new(4);
        assert!(s.status_lines().is_empty(), "no status before the step starts");
        s.step = Some((7, 0));
        assert_eq!(s.status_lines(), ["srun: StepId=7.0 tasks 0-3: running"]);
        assert!(s.record_exit(2, 1 << 8));
        assert!(s.record_exit(3, 0));
        assert!(!s.record_exit(3, 0));
        assert_eq!(
            s.status_lines(),
            [
                "srun: StepId=7.0 tasks 0-1: running",
                "srun: StepId=7.0 task 2: exited abnormally",
                "srun: StepId=7.0 task 3: exited"
            ]
        );
        assert!(!s.all_exited());
    }
}
