//! squeue's view of the daemon's jobs: each job record read as a [`QueueJob`], and the
//! `POST /slurmlet/v1/jobs/query` rows (filtered, sorted, rendered in the daemon).
//!
//! `job_info` (see [`super::info`]) is built from the same reading, so squeue prints the
//! same whether it asks for rows or for full `job_info`s.

use crate::api::types::{JobQuery, LayoutItem};
use crate::config::Config;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::scheduling::array;
use crate::queue::{self, QueueJob};
use std::borrow::Cow;

/// One job as squeue reads it, with the configuration its node and cluster come from.
#[derive(Clone, Copy)]
pub struct JobRow<'a> {
    /// The job.
    pub job: &'a Job,
    /// The daemon's configuration.
    pub config: &'a Config,
    /// The name of the job's user, looked up once per listing.
    pub user_name: &'a str,
    /// The index list of an array's pending tasks this entry stands for, when squeue folds
    /// them into it (else the job's own [`Job::listed_tasks`]).
    pub tasks: Option<&'a str>,
}

impl JobRow<'_> {
    /// The index list this entry stands for (empty: itself only).
    fn listed_tasks(&self) -> &str {
        self.tasks.unwrap_or(&self.job.listed_tasks)
    }

    fn started(&self) -> bool {
        self.job.start_time > 0
    }

    /// Whether the job is pending with a start the backfill plan expects (on this node).
    fn expected(&self) -> bool {
        !self.started() && !self.job.held && self.job.expected_start > 0 && self.job.state() == JobState::Pending
    }

    fn expand(&self, pattern: &str) -> String {
        crate::daemon::model::output_path::output_path(self.job, pattern, &self.config.node_name).display().to_string()
    }
}

impl QueueJob for JobRow<'_> {
    fn job_id(&self) -> u32 {
        self.job.id
    }
    fn array_job_id(&self) -> u32 {
        self.job.array.map_or(0, |a| a.job_id)
    }
    fn array_task_id(&self) -> Option<u32> {
        match self.job.array {
            Some(a) if self.listed_tasks().is_empty() => Some(a.task_id),
            _ => None,
        }
    }
    fn array_task_string(&self) -> &str {
        self.listed_tasks()
    }
    fn partition(&self) -> &str {
        &self.job.partition
    }
    fn name(&self) -> &str {
        &self.job.name
    }
    fn account(&self) -> &str {
        &self.job.account
    }
    fn reservation(&self) -> &str {
        &self.job.reservation
    }
    fn qos(&self) -> &str {
        if self.job.qos.is_empty() {
            "normal"
        } else {
            &self.job.qos
        }
    }
    fn comment(&self) -> &str {
        &self.job.comment
    }
    fn wckey(&self) -> &str {
        &self.job.wckey
    }
    fn user_id(&self) -> u32 {
        self.job.uid
    }
    fn user_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.user_name)
    }
    fn group_id(&self) -> u32 {
        self.job.gid
    }
    fn group_name(&self) -> Cow<'_, str> {
        Cow::Owned(crate::identity::group_name(self.job.gid))
    }
    fn state(&self) -> &str {
        if self.job.configuring() {
            return "CONFIGURING";
        }
        self.job.state().name()
    }
    fn state_reason(&self) -> &str {
        &self.job.reason
    }
    fn nodes(&self) -> &str {
        if self.started() {
            &self.config.node_name
        } else {
            ""
        }
    }
    fn batch_host(&self) -> &str {
        self.nodes()
    }
    fn node_count(&self) -> u32 {
        1
    }
    fn cpus(&self) -> u32 {
        self.job.req.cpus
    }
    fn minimum_cpus_per_node(&self) -> u32 {
        self.job.req.cpus
    }
    fn tasks(&self) -> u32 {
        self.job.ntasks
    }
    fn cpus_per_task(&self) -> u32 {
        self.job.cpus_per_task
    }
    fn submit_time(&self) -> u64 {
        self.job.submit_time
    }
    fn start_time(&self) -> u64 {
        self.job.shown_start()
    }
    fn end_time(&self) -> u64 {
        let job = self.job;
        if job.state().is_finished() {
            job.end_time
        } else if self.started() {
            job.limit_end(crate::sys::now()).unwrap_or(0)
        } else if self.expected() {
            // As Slurm's backfill sets it: the expected start plus the time limit.
            job.limit_secs().map_or(0, |limit| job.shown_start().saturating_add(limit))
        } else {
            0
        }
    }
    fn time_limit(&self) -> Option<u32> {
        self.job.time_limit
    }
    fn priority(&self) -> u32 {
        if self.job.held {
            0
        } else {
            self.job.priority
        }
    }
    fn nice(&self) -> i32 {
        self.job.nice
    }
    fn tres_per_node(&self) -> &str {
        &self.job.tres_per_node
    }
    fn tres_per_job(&self) -> &str {
        &self.job.tres_per_job
    }
    fn memory_per_cpu(&self) -> Option<u64> {
        self.job.mem_per_cpu
    }
    fn memory_per_node(&self) -> Option<u64> {
        match self.job.mem_per_cpu {
            None => Some(self.job.req.mem_mb),
            Some(_) => None,
        }
    }
    fn dependency(&self) -> &str {
        &self.job.dependency
    }
    fn features(&self) -> &str {
        ""
    }
    fn required_nodes(&self) -> &str {
        ""
    }
    fn excluded_nodes(&self) -> &str {
        ""
    }
    fn scheduled_nodes(&self) -> &str {
        if self.expected() {
            &self.config.node_name
        } else {
            ""
        }
    }
    fn command(&self) -> &str {
        &self.job.command
    }
    fn contiguous(&self) -> bool {
        false
    }
    fn current_working_directory(&self) -> &str {
        &self.job.cwd
    }
    fn stdout_expanded(&self) -> Cow<'_, str> {
        match self.job.stdout.as_str() {
            "" => Cow::Borrowed(""),
            pattern => Cow::Owned(self.expand(pattern)),
        }
    }
    fn stderr_expanded(&self) -> Cow<'_, str> {
        match self.job.stderr.as_str() {
            "" => self.stdout_expanded(),
            pattern => Cow::Owned(self.expand(pattern)),
        }
    }
    fn stdin_expanded(&self) -> Cow<'_, str> {
        match self.job.stdin.as_str() {
            "" => Cow::Borrowed("/dev/null"),
            pattern => Cow::Owned(self.expand(pattern)),
        }
    }
    fn cluster(&self) -> &str {
        &self.config.cluster_name
    }
}

/// The state list of `job_info`: a cancelled job that is still completing reads
/// `RUNNING,COMPLETING`, as in Slurm.
pub fn state_list(job: &Job) -> Vec<String> {
    let state = job.state();
    if job.cancelled_by.is_some() && state == JobState::Completing {
        vec!["RUNNING".into(), "COMPLETING".into()]
    } else if job.configuring() {
        vec!["RUNNING".into(), "CONFIGURING".into()]
    } else {
        vec![state.name().to_string()]
    }
}

/// The names of the users whose jobs a listing shows, each looked up once, in the order met.
#[derive(Default)]
struct UserNames(Vec<(u32, String)>);

impl UserNames {
    /// The index of `uid`'s name, looked up the first time the uid is met. Most queues have a
    /// few users, and consecutive jobs are often one user's: a look along them beats hashing.
    fn index(&mut self, uid: u32, last: &mut usize) -> usize {
        if self.0.get(*last).is_some_and(|(u, _)| *u == uid) {
            return *last;
        }
        *last = match self.0.iter().position(|(u, _)| *u == uid) {
            Some(k) => k,
            None => {
                self.0.push((uid, crate::identity::user_name(uid)));
                self.0.len() - 1
            }
        };
        *last
    }

    fn name(&self, index: usize) -> &str {
        &self.0[index].1
    }
}

/// The jobs of `jobs` that `q` lists, each with the index of its user's name in `names`,
/// whether any job has one of the query's ids, and whether any listed job is an array task.
/// Each job is read once here: a long queue does not fit the processor's caches, and every
/// pass over it costs as much as the work it does.
fn pick<'j>(
    jobs: impl Iterator<Item = &'j Job>,
    config: &'j Config,
    q: &JobQuery,
    names: &mut UserNames,
) -> (Vec<(&'j Job, usize)>, bool, bool) {
    let mut ids_found = !queue::asks_ids(q);
    let mut any_task = false;
    let mut last = 0;
    let mut picked = Vec::new();
    for job in jobs {
        let row = JobRow { job, config, user_name: "", tasks: None };
        ids_found = ids_found || queue::ids_found(q, std::iter::once(&row));
        if queue::matches(q, &row) {
            any_task |= job.array.is_some();
            picked.push((job, names.index(job.uid, &mut last)));
        }
    }
    (picked, ids_found, any_task)
}

/// Calls `answer` with the rows a query lists over `jobs` at UNIX time `now`, in the order it
/// asks for (squeue's default when none; an order squeue refuses, which the query's parser
/// in `http/request.rs` turns away first, lists in the default order), an array's pending tasks folded into one entry unless the
/// query asks for one per line; and whether any job has one of its ids.
fn with_rows<'a, T>(
    jobs: impl Iterator<Item = &'a Job>,
    config: &'a Config,
    q: &JobQuery,
    now: u64,
    answer: impl FnOnce(&[JobRow], bool) -> T,
) -> T {
    let mut names = UserNames::default();
    let (picked, ids_found, any_task) = pick(jobs, config, q, &mut names);
    let mut rows: Vec<JobRow> = picked
        .into_iter()
        .map(|(job, user)| JobRow { job, config, user_name: names.name(user), tasks: None })
        .collect();
    queue::sort_jobs(&mut rows, &queue::sort_keys(q), now);
    if q.array_per_line || !any_task {
        return answer(&rows, ids_found);
    }
    let folded = array::fold_pending(&rows.iter().map(|r| r.job).collect::<Vec<_>>());
    // The entries left are some of the rows, in their order: one walk along both.
    let mut unfolded = rows.iter();
    let rows: Vec<JobRow> = folded
        .iter()
        .filter_map(|(job, tasks)| {
            let row = unfolded.find(|r| std::ptr::eq(r.job, *job))?;
            Some(JobRow { tasks: tasks.as_deref(), ..*row })
        })
        .collect();
    answer(&rows, ids_found)
}

/// The jobs a `--json` [`JobQuery`] lists, copied out of `jobs` in squeue's order, and
/// whether any job has one of the query's ids. A copy is cheap (the text fields are shared),
/// and lets [`super::jobs_reply`] build and write the long reply without holding the
/// daemon's lock.
pub fn select_json<'a>(jobs: impl Iterator<Item = &'a Job>, config: &'a Config, q: &JobQuery) -> (Vec<Job>, bool) {
    with_rows(jobs, config, q, crate::sys::now(), |rows, ids_found| {
        (rows.iter().map(|r| array::listed_job((r.job, r.tasks.map(String::from)))).collect(), ids_found)
    })
}

/// Answers a [`JobQuery`] over `jobs` at UNIX time `now`, as the JSON of a
/// [`JobRows`](crate::api::types::JobRows).
pub fn query<'a>(jobs: impl Iterator<Item = &'a Job>, config: &'a Config, q: &JobQuery, now: u64) -> Vec<u8> {
    with_rows(jobs, config, q, now, |rows, ids_found| queue::rows_json(rows, q, ids_found, now))
}

/// Answers a [`JobQuery`] over `jobs` at UNIX time `now` as squeue's text laid out by
/// `layout`; `None` when no job has one of its ids.
pub fn laid_out<'a>(
    jobs: impl Iterator<Item = &'a Job>,
    config: &'a Config,
    q: &JobQuery,
    layout: &[LayoutItem],
    now: u64,
) -> Option<String> {
    with_rows(jobs, config, q, now, |rows, ids_found| ids_found.then(|| queue::rows_text(rows, layout, now)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::{JobRows, JobsResponse};
    use crate::daemon::model::job::Resources;
    use crate::queue::{value, FIELDS};
    use crate::stepd::EndCause;

    fn jobs() -> Vec<Job> {
        let base = Job {
            id: 7,
            name: "train".into(),
            uid: 0,
            gid: 0,
            partition: "gpu".into(),
            reason: "Resources".into(),
            priority: 1,
            submit_time: 1_000,
            time_limit: Some(90),
            req: Resources { cpus: 4, mem_mb: 2048, gpus: 2, shards: 0, gpu_type: None },
            ntasks: 2,
            cpus_per_task: 2,
            tres_per_node: "gres/gpu:2".into(),
            comment: "a b".into(),
            account: "proj".into(),
            qos: "high".into(),
            cwd: "/work".into(),
            command: "/work/run.sh".into(),
            stdout: "out-%j.log".into(),
            nice: 5,
            begin_time: 1_010,
            ..Default::default()
        };
        vec![
            Job { state: Some(JobState::Pending), ..base.clone() },
            Job { state: Some(JobState::Pending), held: true, reason: "JobHeldUser".into(), ..base.clone() },
            Job {
                state: Some(JobState::Running),
                stepd_pid: Some(4242),
                start_time: 1_100,
                gpus: vec![crate::gpu::Gpu::nvidia(0), crate::gpu::Gpu::nvidia(1)],
                mem_per_cpu: Some(512),
                time_limit: None,
                stdin: "in-%j".into(),
                stderr: "err-%x".into(),
                ..base.clone()
            },
            Job { state: Some(JobState::Completing), start_time: 1_100, cancelled_by: Some(0), ..base.clone() },
            Job {
                state: Some(JobState::Completed),
                start_time: 1_100,
                end_time: 1_160,
                end_cause: Some(EndCause::Exited),
                wait_status: Some(0),
                wckey: "w".into(),
                qos: "".into(),
                tres_per_job: "gres/gpu:tesla:1".into(),
                ..base
            },
        ]
    }

    fn config() -> Config {
        let file = toml::from_str("node_name = \"node1\"\ngpus = 2\ncpus = 8\nmemory = 4096\n").unwrap();
        Config::resolve(file, std::path::Path::new("test.toml")).unwrap()
    }

    #[test]
    fn a_row_renders_every_code_as_the_full_job_info_does() {
        let config = config();
        for job in jobs() {
            let full = crate::daemon::views::info::job_info(&job, &config);
            let user = crate::identity::user_name(job.uid);
            let row = JobRow { job: &job, config: &config, user_name: &user, tasks: None };
            for code in FIELDS.iter().map(|f| f.code) {
                for now in [1_050, 1_200, 9_999] {
                    assert_eq!(value(code, &row, now), value(code, &full, now), "%{code} of a {:?} job", job.state);
                }
            }
        }
    }

    #[test]
    fn a_job_given_resources_whose_supervisor_has_not_started_is_configuring() {
        let config = config();
        let mut configuring = jobs().remove(2);
        configuring.stepd_pid = None;
        let full = crate::daemon::views::info::job_info(&configuring, &config);
        assert_eq!(full.job_state, vec!["RUNNING", "CONFIGURING"]);
        let user = crate::identity::user_name(configuring.uid);
        let row = JobRow { job: &configuring, config: &config, user_name: &user, tasks: None };
        for code in ['t', 'T', 'M'] {
            assert_eq!(value(code, &row, 1_200), value(code, &full, 1_200), "%{code}");
        }
        assert_eq!((value('t', &row, 1_200), value('T', &row, 1_200)), ("CF".into(), "CONFIGURING".into()));
        // `-t R` lists it, as Slurm's filter reads the base state; `-t CF` too.
        for state in ["RUNNING", "CONFIGURING"] {
            let q = JobQuery { codes: "i".into(), states: Some(vec![state.into()]), ..Default::default() };
            let bytes = query([&configuring].into_iter(), &config, &q, 2_000);
            let rows: JobRows = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(rows.rows.len(), 1, "-t {state}");
        }
    }

    #[test]
    fn a_query_filters_sorts_and_renders_the_codes_asked_for() {
        let config = config();
        let mut jobs = jobs();
        for (i, job) in jobs.iter_mut().enumerate() {
            job.id = 10 + i as u32;
        }
        jobs[0].name = "say \"hi\"\\\t".into();
        let q = JobQuery { codes: "itRj".into(), ..Default::default() };
        let bytes = query(jobs.iter(), &config, &q, 2_000);
        let rows: JobRows = serde_json::from_slice(&bytes).unwrap();
        let text: Vec<Vec<&str>> = rows.rows.iter().map(|r| r.iter().map(|c| c.0.as_ref()).collect()).collect();
        // By state as text (CG, PD, R), then priority, highest first (the held one last);
        // the completed job is hidden by default.
        assert_eq!(
            text,
            vec![
                vec!["13", "CG", "node1", "train"],
                vec!["10", "PD", "(Resources)", "say \"hi\"\\\t"],
                vec!["11", "PD", "(JobHeldUser)", "train"],
                vec!["12", "R", "node1", "train"],
            ]
        );
        assert!(rows.ids_found);
        // The order asked for.
        let q = JobQuery { codes: "i".into(), sort: Some("-t,-i".into()), ..Default::default() };
        let bytes = query(jobs.iter(), &config, &q, 2_000);
        let rows: JobRows = serde_json::from_slice(&bytes).unwrap();
        let ids: Vec<&str> = rows.rows.iter().map(|r| r[0].0.as_ref()).collect();
        assert_eq!(ids, vec!["12", "11", "10", "13"]);
        let q = JobQuery { codes: "i".into(), job_ids: Some(vec![14, 99]), ..Default::default() };
        let bytes = query(jobs.iter(), &config, &q, 2_000);
        let rows: JobRows = serde_json::from_slice(&bytes).unwrap();
        assert!(rows.ids_found, "14 exists, though finished");
        assert!(rows.rows.is_empty(), "a finished job is not listed without -t");
        let q = JobQuery { codes: "i".into(), job_ids: Some(vec![99]), ..Default::default() };
        let bytes = query(jobs.iter(), &config, &q, 2_000);
        let rows: JobRows = serde_json::from_slice(&bytes).unwrap();
        assert!(!rows.ids_found);
    }

    #[test]
    fn a_json_query_lists_full_job_infos_in_order_or_says_the_ids_are_unknown() {
        let config = config();
        let mut jobs = jobs();
        for (i, job) in jobs.iter_mut().enumerate() {
            job.id = 20 + i as u32;
        }
        let q = JobQuery { json: true, states: Some(vec!["ALL".into()]), ..Default::default() };
        let (listed, found) = select_json(jobs.iter(), &config, &q);
        let bytes = crate::daemon::views::jobs_reply::pretty(&listed, &config, found, 2_000);
        assert!(found);
        assert!(bytes.starts_with(b"{\n  \""), "pretty-printed");
        let reply: JobsResponse = serde_json::from_slice(&bytes).unwrap();
        let ids: Vec<u32> = reply.jobs.iter().map(|j| j.job_id).collect();
        // Squeue's default order: CD, CG, PD (highest priority first), R.
        assert_eq!(ids, vec![24, 23, 20, 21, 22]);
        let expected = serde_json::to_value(crate::daemon::views::info::job_info(&jobs[2], &config)).unwrap();
        assert_eq!(serde_json::to_value(&reply.jobs[4]).unwrap(), expected);
        let q = JobQuery { json: true, job_ids: Some(vec![99]), ..Default::default() };
        let (listed, found) = select_json(jobs.iter(), &config, &q);
        let bytes = crate::daemon::views::jobs_reply::pretty(&listed, &config, found, 2_000);
        assert!(!found);
        let reply: JobsResponse = serde_json::from_slice(&bytes).unwrap();
        assert!(reply.jobs.is_empty());
        assert_eq!(reply.errors[0].error, "Invalid job id specified");
    }
}
