//! The steps of running jobs: their creation and start, their ends, and their accounting
//! records, kept and recovered.

use super::{Core, Effects, Watch};
use crate::api::acct::StepId;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;
use crate::daemon::model::step_record;
use crate::daemon::scheduling::steps;
use crate::daemon::supervision::launch;
use crate::daemon::supervision::step_spec;
use step_record::{StepEnding, ENDED_WITH_JOB};

impl Core {
    /// Gives a new step of job `id` its share of the job and writes its spec; returns the
    /// step's directory and spec. The caller starts its supervisor with
    /// [`launch::start_supervisor`] and reports with [`Core::step_started`].
    pub fn create_step(
        &mut self,
        id: u32,
        req: &crate::api::step::StepRequest,
        caller: Caller,
    ) -> Result<step_spec::NewStep, steps::StepRefusal> {
        use steps::StepRefusal;
        let job_dir = self.job_dir(id);
        let Some(job) = self.jobs.get(&id) else { return Err(StepRefusal::Fatal("Invalid job id specified".into())) };
        if !caller.may_manage(job, &self.config, "step creation") {
            return Err(StepRefusal::Fatal("Access/permission denied".into()));
        }
        let steps_dir = step_spec::steps_dir(&job_dir);
        let granted = self.steps.create(job, req, &self.config, &steps_dir)?;
        let spec = step_spec::step_spec(job, &self.config, &self.machine, req, &granted);
        Ok(step_spec::NewStep {
            dir: step_spec::step_dir(&job_dir, granted.step_id),
            spec,
            held: granted.held,
            record: granted.record,
        })
    }

    /// Records the outcome of starting a step's supervisor.
    pub fn step_started(&mut self, job: u32, step: u32, result: std::io::Result<launch::Started>) -> Effects {
        match result {
            Ok(launch::Started { pid, ended, pidfd }) => {
                tracing::debug!(job, step, pid, "step supervisor started");
                if let Some(record) = self.steps.started(job, step, pid, crate::sys::now()) {
                    drop(self.writer.step_started(record));
                }
                if !self.jobs.get(&job).is_some_and(|j| j.state() == JobState::Running) {
                    // The job ended or is being cancelled while the step started.
                    let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
                }
                Effects {
                    watch: vec![Watch { job, step: Some(step), pid, ended: Some(ended), pidfd }],
                    ..Default::default()
                }
            }
            Err(e) => {
                tracing::error!(job, step, "cannot start the step: {e}");
                self.steps.ended(job, step);
                Effects::default()
            }
        }
    }

    /// Whether job `id` has steps running.
    pub fn has_steps(&self, id: u32) -> bool {
        !self.steps.supervisors(id).is_empty()
    }

    /// A step's tasks are gone: what it held is free for other steps, and its end (as its
    /// supervisor recorded it) goes into the job's accounting.
    pub fn step_ended(&mut self, job: u32, step: u32) {
        tracing::debug!(job, step, "step ended");
        if let Some(cancelled_by) = self.steps.ended(job, step) {
            let dir = step_spec::step_dir(&self.job_dir(job), step);
            let end = crate::stepd::step::end::read(&dir);
            let ending = StepEnding::from_status(job, step, end, cancelled_by, crate::sys::now())
                .with_gpu_use(self.take_gpu_use(job, StepId::Number(step)));
            self.record_step_end(ending);
        }
    }

    /// Job `id` ends at `end`: the steps whose end its supervisor recorded but the daemon
    /// has not heard of yet are recorded as they ended; those still recorded as running,
    /// as ended with the job.
    pub(super) fn record_step_ends(&mut self, id: u32, end: u64) {
        let job_dir = self.job_dir(id);
        // A step that ran and ended before its start was reported: its record first.
        for record in self.steps.start_unreported(id, end) {
            drop(self.writer.step_started(record));
        }
        for step in self.steps.running(id) {
            let gpu_use = self.take_gpu_use(id, StepId::Number(step));
            if let Some(ended) = crate::stepd::step::end::read(&step_spec::step_dir(&job_dir, step)) {
                let cancelled_by = self.steps.ended(id, step).flatten();
                let ending = StepEnding::from_status(id, step, Some(ended), cancelled_by, end);
                self.record_step_end(ending.with_gpu_use(gpu_use));
                continue;
            }
            self.note_step_status(id, ENDED_WITH_JOB);
            if gpu_use.is_some() {
                // Still running: it ends with the job, as `end_steps` records it, with its GPU use.
                let ending = StepEnding {
                    job: id,
                    step,
                    state: JobState::Cancelled,
                    end,
                    exit_status: ENDED_WITH_JOB,
                    cancelled_by: None,
                    usage: None,
                    gpu_use,
                };
                drop(self.writer.step_ended(ending));
            }
        }
        drop(self.writer.end_steps(id, end));
    }

    /// Completes the accounting of the steps of job `id` from their directories, when the
    /// daemon starts: stores the records of steps whose start the last daemon had not
    /// stored, and the ends of those whose supervisors ended while no daemon ran.
    pub(super) fn recover_step_records(&mut self, id: u32) {
        let now = crate::sys::now();
        for found in step_spec::found_steps(&self.job_dir(id)) {
            if let Some(record) = found.record {
                match self.store.has_step(id, found.step) {
                    Ok(true) => {}
                    Ok(false) => drop(self.writer.step_started(record)),
                    Err(e) => tracing::warn!(job = id, step = found.step, "cannot check the step's record: {e}"),
                }
            }
            if !found.alive {
                self.record_step_end(StepEnding::from_status(id, found.step, found.end, None, now));
            }
        }
        // The steps that ended under an earlier daemon count towards the job's derived status.
        match self.store.steps(id) {
            Ok(records) => records.iter().filter_map(|r| r.exit_status).for_each(|s| self.note_step_status(id, s)),
            Err(e) => tracing::warn!(job = id, "cannot read the steps' records: {e}"),
        }
    }

    /// Stores the end of a step, and counts its status towards its job's derived status.
    fn record_step_end(&mut self, ending: StepEnding) {
        self.note_step_status(ending.job, ending.exit_status);
        drop(self.writer.step_ended(ending));
    }

    /// Counts a step's raw wait status towards its job's `DerivedExitCode`: the highest.
    fn note_step_status(&mut self, id: u32, status: i32) {
        if let Some(job) = self.jobs.get_mut(&id) {
            job.derived_status = job.derived_status.max(status);
        }
    }

    /// The running steps' records of job `id` (fresher than the store's).
    pub fn running_step_records(&self, id: u32) -> Vec<step_record::StepRecord> {
        self.steps.records(id)
    }
}
