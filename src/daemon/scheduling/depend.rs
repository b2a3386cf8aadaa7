//! Job dependencies (`--dependency`): whether a pending job's conditions on other jobs hold,
//! can still come to hold, or never will.
//!
//! A job keeps its dependency as Slurm shows it: the items not yet satisfied, each marked
//! `(unfulfilled)` or `(failed)` (`afterok:25(unfulfilled)`). Satisfied items are dropped, and
//! once nothing is left the field is empty, as Slurm clears it. Items are re-read from that
//! text at each scheduling pass: dependent jobs are few, and the text survives a restart.

use crate::api::types::errno;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::options::dependency::{parse_dependency, DepItem, DepKind, DependencySpec};

/// Where one dependency item, or a whole dependency, stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// It holds: the job may start (as far as this goes).
    Satisfied,
    /// It may still come to hold; `Some(t)`: it will at UNIX time `t` (`after:id+minutes`).
    Waiting(Option<u64>),
    /// It can never hold (`afterok` on a job that failed).
    Never,
}

/// What the scheduler asks of the jobs a dependency names.
pub trait Jobs {
    /// The jobs `id` names: the job itself, or every task of the array `id` (in memory or
    /// in the store); empty when there is no such job.
    fn named(&self, id: u32) -> Vec<Job>;
    /// Whether another job of `job`'s user and name is running, or pending and submitted
    /// before it (what `singleton` waits for).
    fn singleton_blocked(&self, job: &Job) -> bool;
}

/// The daemon's jobs as a dependency reads them: those in memory, and the store's for the
/// ones purged from memory (ended more than MinJobAge ago).
pub struct Known<'a> {
    /// Jobs in memory, by id.
    pub jobs: &'a std::collections::BTreeMap<u32, Job>,
    /// The store.
    pub store: &'a crate::daemon::store::Store,
}

impl Known<'_> {
    /// The jobs `ids`, from memory or else the store, in id order.
    fn get(&self, ids: impl Iterator<Item = u32>) -> Vec<Job> {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for id in ids {
            match self.jobs.get(&id) {
                Some(j) => found.push(j.clone()),
                None => missing.push(id),
            }
        }
        if !missing.is_empty() {
            match self.store.jobs_by_id(&missing) {
                Ok(stored) => found.extend(stored),
                Err(e) => tracing::warn!("cannot read the jobs a dependency names: {e}"),
            }
            found.sort_by_key(|j| j.id);
        }
        found
    }
}

impl Jobs for Known<'_> {
    fn named(&self, id: u32) -> Vec<Job> {
        let Some(first) = self.get(std::iter::once(id)).pop() else { return Vec::new() };
        match first.array {
            Some(a) if a.job_id == id => self
                .get(id..id.saturating_add(a.count))
                .into_iter()
                .filter(|j| j.array.is_some_and(|t| t.job_id == id))
                .collect(),
            _ => vec![first],
        }
    }

    fn singleton_blocked(&self, job: &Job) -> bool {
        self.jobs.values().any(|other| {
            other.id != job.id
                && other.uid == job.uid
                && other.name == job.name
                && (other.state().holds_resources() || (other.state() == JobState::Pending && other.id < job.id))
        })
    }
}

/// The dependency text with its `(unfulfilled)`/`(failed)` marks removed.
fn unmarked(text: &str) -> String {
    text.replace("(unfulfilled)", "").replace("(failed)", "")
}

/// Reads a job's stored dependency text.
pub fn spec_of(job: &Job) -> Option<DependencySpec> {
    if job.dependency.is_empty() {
        return None;
    }
    parse_dependency(&unmarked(&job.dependency)).ok().filter(|s| !s.items.is_empty())
}

/// Checks a submitted `--dependency` against the jobs there are and returns the text the job
/// keeps (every item unfulfilled). Slurm refuses a dependency on a job that does not exist
/// (`Job dependency problem`); so does slurmlet, naming the job.
pub fn on_submit(text: &str, jobs: &impl Jobs) -> Result<String, Refusal> {
    let refuse = |why: String| Refusal {
        kind: Kind::Invalid,
        description: why,
        number: errno::INVALID_DEPENDENCY,
        error: "Job dependency problem".into(),
        source: "slurm_submit_batch_job()".into(),
    };
    let mut spec = parse_dependency(text).map_err(|e| match e {
        crate::options::OptionError::InvalidDependency { value, why } => refuse(format!("--dependency={value}: {why}")),
        other => refuse(other.to_string()),
    })?;
    for item in &mut spec.items {
        let Some(id) = item.job_id else { continue };
        let named = jobs.named(id);
        let found = match item.array_task {
            None => !named.is_empty(),
            Some(t) => named.iter().any(|j| j.array.is_some_and(|a| a.task_id == t)),
        };
        if !found {
            let name = item.array_task.map_or_else(|| id.to_string(), |t| format!("{id}_{t}"));
            return Err(refuse(format!(
                "--dependency={text}: job {name} does not exist, so the job could never start"
            )));
        }
        // An array's id names all its tasks: Slurm writes that `A_*`.
        if item.array_task.is_none() && named.iter().any(|j| j.array.is_some_and(|a| a.job_id == id)) {
            item.whole_array = true;
        }
    }
    Ok(marked(&spec, &vec![Standing::Waiting(None); spec.items.len()]))
}

/// The text Slurm shows for `spec` whose items stand as `standings` (satisfied ones left
/// out).
fn marked(spec: &DependencySpec, standings: &[Standing]) -> String {
    let sep = if spec.any { "?" } else { "," };
    spec.items
        .iter()
        .zip(standings)
        .filter_map(|(item, standing)| match standing {
            Standing::Satisfied => None,
            Standing::Waiting(_) => Some(format!("{}(unfulfilled)", item.to_slurm_string())),
            Standing::Never => Some(format!("{}(failed)", item.to_slurm_string())),
        })
        .collect::<Vec<_>>()
        .join(sep)
}

/// Whether a finished job ended the way `afterok` waits for.
fn succeeded(job: &Job) -> bool {
    job.state() == JobState::Completed
}

/// Where one item stands for `job`, at UNIX time `now`.
fn item_standing(job: &Job, item: &DepItem, jobs: &impl Jobs, now: u64) -> Standing {
    let Some(id) = item.job_id else {
        return if jobs.singleton_blocked(job) { Standing::Waiting(None) } else { Standing::Satisfied };
    };
    let mut targets = jobs.named(id);
    match (item.array_task, item.kind, job.array) {
        (Some(t), _, _) => targets.retain(|j| j.array.is_some_and(|a| a.task_id == t)),
        // aftercorr: the task of the other array with this task's index.
        (None, DepKind::AfterCorr, Some(mine)) => {
            targets.retain(|j| j.array.is_some_and(|a| a.task_id == mine.task_id));
        }
        _ => {}
    }
    if targets.is_empty() {
        // Gone from memory and store (history purged): nothing left to wait for.
        return Standing::Satisfied;
    }
    let all_finished = targets.iter().all(|j| j.state().is_finished());
    match item.kind {
        DepKind::After => {
            // Started (or ended without starting, as a cancelled pending job does).
            if !targets.iter().all(|j| j.start_time > 0 || j.state().is_finished()) {
                return Standing::Waiting(None);
            }
            let started = targets.iter().map(|j| j.start_time.max(j.submit_time)).max().unwrap_or(0);
            let at = started + u64::from(item.delay_minutes.unwrap_or(0)) * 60;
            if at > now {
                Standing::Waiting(Some(at))
            } else {
                Standing::Satisfied
            }
        }
        DepKind::AfterAny | DepKind::AfterBurstBuffer => {
            if all_finished {
                Standing::Satisfied
            } else {
                Standing::Waiting(None)
            }
        }
        DepKind::AfterOk | DepKind::AfterCorr => {
            if targets.iter().any(|j| j.state().is_finished() && !succeeded(j)) {
                Standing::Never
            } else if all_finished {
                Standing::Satisfied
            } else {
                Standing::Waiting(None)
            }
        }
        DepKind::AfterNotOk => {
            if !all_finished {
                Standing::Waiting(None)
            } else if targets.iter().any(|j| !succeeded(j)) {
                Standing::Satisfied
            } else {
                Standing::Never
            }
        }
        DepKind::Singleton => unreachable!("singleton has no job id"),
    }
}

/// Where `job`'s dependency stands at UNIX time `now`, and its new text (items satisfied
/// since dropped; when the whole holds, empty).
pub fn evaluate(job: &Job, spec: &DependencySpec, jobs: &impl Jobs, now: u64) -> (Standing, String) {
    let standings: Vec<Standing> = spec.items.iter().map(|i| item_standing(job, i, jobs, now)).collect();
    let soonest = standings.iter().filter_map(|s| if let Standing::Waiting(t) = s { *t } else { None }).min();
    let whole = if spec.any {
        if standings.contains(&Standing::Satisfied) {
            Standing::Satisfied
        } else if standings.iter().all(|s| *s == Standing::Never) {
            Standing::Never
        } else {
            Standing::Waiting(soonest)
        }
    } else if standings.contains(&Standing::Never) {
        Standing::Never
    } else if standings.iter().all(|s| *s == Standing::Satisfied) {
        Standing::Satisfied
    } else {
        // A timed wait is only the whole wait when nothing else is waited for untimed.
        let untimed = standings.contains(&Standing::Waiting(None));
        Standing::Waiting(if untimed { None } else { soonest })
    };
    let text = if whole == Standing::Satisfied { String::new() } else { marked(spec, &standings) };
    (whole, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::ArrayTask;

    struct Fixed(Vec<Job>);

    impl Jobs for Fixed {
        fn named(&self, id: u32) -> Vec<Job> {
            self.0.iter().filter(|j| crate::daemon::scheduling::array::named_by(j, id)).cloned().collect()
        }
        fn singleton_blocked(&self, job: &Job) -> bool {
            self.0.iter().any(|j| j.id != job.id && j.name == job.name && j.state() == JobState::Running)
        }
    }

    fn job(id: u32, state: JobState) -> Job {
        Job { id, state: Some(state), start_time: 100, submit_time: 50, ..Default::default() }
    }

    fn task(id: u32, array: u32, task_id: u32, state: JobState) -> Job {
        Job { array: Some(ArrayTask { job_id: array, task_id, ..Default::default() }), ..job(id, state) }
    }

    fn eval(text: &str, me: &Job, jobs: &Fixed, now: u64) -> (Standing, String) {
        evaluate(me, &parse_dependency(text).unwrap(), jobs, now)
    }

    #[test]
    fn afterok_waits_then_holds_or_never_does() {
        let me = job(99, JobState::Pending);
        let running = Fixed(vec![job(1, JobState::Running)]);
        assert_eq!(eval("afterok:1", &me, &running, 200), (Standing::Waiting(None), "afterok:1(unfulfilled)".into()));
        let ok = Fixed(vec![job(1, JobState::Completed)]);
        assert_eq!(eval("afterok:1", &me, &ok, 200), (Standing::Satisfied, String::new()));
        let failed = Fixed(vec![job(1, JobState::Failed)]);
        assert_eq!(eval("afterok:1", &me, &failed, 200), (Standing::Never, "afterok:1(failed)".into()));
        assert_eq!(eval("afternotok:1", &me, &failed, 200).0, Standing::Satisfied);
        assert_eq!(eval("afternotok:1", &me, &ok, 200).0, Standing::Never);
        assert_eq!(eval("afterany:1", &me, &failed, 200).0, Standing::Satisfied);
    }

    #[test]
    fn an_array_is_waited_for_as_a_whole_and_aftercorr_task_by_task() {
        let tasks = Fixed(vec![
            task(10, 10, 0, JobState::Completed),
            task(11, 10, 1, JobState::Failed),
            task(12, 10, 2, JobState::Running),
        ]);
        let me = job(99, JobState::Pending);
        assert_eq!(eval("afterok:10", &me, &tasks, 200).0, Standing::Never);
        assert_eq!(eval("afterany:10", &me, &tasks, 200).0, Standing::Waiting(None));
        assert_eq!(eval("afterok:10_0", &me, &tasks, 200).0, Standing::Satisfied);
        let mine = |t| task(50 + t, 50, t, JobState::Pending);
        assert_eq!(eval("aftercorr:10", &mine(0), &tasks, 200).0, Standing::Satisfied);
        assert_eq!(eval("aftercorr:10", &mine(1), &tasks, 200).0, Standing::Never);
        assert_eq!(eval("aftercorr:10", &mine(2), &tasks, 200).0, Standing::Waiting(None));
    }

    #[test]
    fn after_with_a_delay_waits_until_the_start_plus_the_delay() {
        let started = Fixed(vec![job(1, JobState::Running)]);
        let me = job(99, JobState::Pending);
        assert_eq!(eval("after:1+2", &me, &started, 150).0, Standing::Waiting(Some(220)));
        assert_eq!(eval("after:1+2", &me, &started, 220).0, Standing::Satisfied);
        let pending = Fixed(vec![Job { start_time: 0, ..job(1, JobState::Pending) }]);
        assert_eq!(eval("after:1", &me, &pending, 150).0, Standing::Waiting(None));
    }

    #[test]
    fn and_lists_keep_what_is_unmet_and_or_lists_need_one() {
        let jobs = Fixed(vec![job(1, JobState::Completed), job(2, JobState::Running), job(3, JobState::Failed)]);
        let me = job(99, JobState::Pending);
        assert_eq!(
            eval("afterok:1,afterok:2", &me, &jobs, 200),
            (Standing::Waiting(None), "afterok:2(unfulfilled)".into())
        );
        assert_eq!(eval("afterok:3?afterok:2", &me, &jobs, 200).0, Standing::Waiting(None));
        assert_eq!(eval("afterok:3?afterok:1", &me, &jobs, 200).0, Standing::Satisfied);
        assert_eq!(eval("afterok:3?afternotok:1", &me, &jobs, 200).0, Standing::Never);
        let (_, text) = eval("afterok:3,afterok:2", &me, &jobs, 200);
        assert_eq!(text, "afterok:3(failed),afterok:2(unfulfilled)");
        let reread = Job { dependency: text.as_str().into(), ..me.clone() };
        assert_eq!(spec_of(&reread).unwrap().to_slurm_string(), "afterok:3,afterok:2");
    }

    #[test]
    fn singleton_waits_for_the_other_job_of_that_name() {
        let mut other = job(1, JobState::Running);
        other.name = "x".into();
        let me = Job { name: "x".into(), ..job(99, JobState::Pending) };
        assert_eq!(eval("singleton", &me, &Fixed(vec![other.clone()]), 200).0, Standing::Waiting(None));
        other.state = Some(JobState::Completed);
        assert_eq!(eval("singleton", &me, &Fixed(vec![other]), 200).0, Standing::Satisfied);
    }

    #[test]
    fn a_dependency_on_a_job_that_does_not_exist_is_refused_at_submit() {
        let jobs = Fixed(vec![job(1, JobState::Running), task(10, 10, 0, JobState::Pending)]);
        assert_eq!(on_submit("afterok:1", &jobs).unwrap(), "afterok:1(unfulfilled)");
        let e = on_submit("afterok:1:999999", &jobs).unwrap_err();
        assert_eq!((e.number, e.error.as_str()), (2038, "Job dependency problem"));
        assert!(e.description.contains("job 999999 does not exist"), "{}", e.description);
        assert!(on_submit("afterok:10_0", &jobs).is_ok());
        assert!(on_submit("afterok:10_5", &jobs).unwrap_err().description.contains("10_5"));
    }
}
