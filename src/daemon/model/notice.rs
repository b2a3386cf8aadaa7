//! A notice of a job event (`--mail-type`) as it is sent: Slurm's subject line
//! (`Slurm Job_id=12 Name=train Ended, Run time 00:10:02, COMPLETED, ExitCode 0`), the
//! address it goes to, and the `SLURM_JOB_*` variables Slurm's `MailProg` is given. Built
//! from the job alone here; who builds them when is the scheduler's, who sends them the
//! runtime's.

use super::job::{Job, JobState};
use crate::options::mail::{self, MailEvent};
use crate::options::time::format_hms;

/// One notice to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// The job it is about (for an array's summary, the task that completed the array).
    pub job: u32,
    /// Its owner, whom the mail program runs as on a shared machine.
    pub uid: u32,
    /// Its owner's group.
    pub gid: u32,
    /// The event.
    pub event: &'static str,
    /// The subject line, Slurm's.
    pub subject: String,
    /// The address: `--mail-user`, else the owner's name (with `mail_domain`).
    pub to: String,
    /// The variables the mail program gets, Slurm's names.
    pub env: Vec<(&'static str, String)>,
}

/// What an array's summary says of its tasks: the lowest and highest wait status of those
/// that ended, and whether any was requeued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArraySummary {
    /// The array's job id.
    pub array_id: u32,
    /// The lowest wait status of its tasks.
    pub min_status: i32,
    /// The highest.
    pub max_status: i32,
    /// Whether one of its tasks was requeued.
    pub requeued: bool,
}

/// The longest subject line sent: a job name is the user's and may be long; Slurm's is cut
/// at its buffers' sizes too.
const MAX_SUBJECT: usize = 512;

/// Builds the notice of `event` for `job`, as a task of its own or, with `summary`, for its
/// array as a whole. `to` is where it goes; `cluster` the cluster's name; `now` the time.
pub fn build(
    job: &Job,
    event: MailEvent,
    summary: Option<ArraySummary>,
    to: String,
    cluster: &str,
    now: u64,
) -> Notice {
    let mut env = common_env(job, event, cluster);
    let name = printable(&job.name);
    let subject = match summary {
        Some(s) => {
            let term = summary_term(job, event, s, &mut env);
            format!("Slurm Array Summary Job_id={0}_* ({0}) Name={name} {1}{term}", s.array_id, event.subject_word())
        }
        None => {
            let time = job_time(job, event, now, &mut env);
            let term = term_info(job, event, &mut env);
            let id = match job.array {
                Some(a) => format!("Slurm Array Task Job_id={}_{} ({})", a.job_id, a.task_id, job.id),
                None => format!("Slurm Job_id={}", job.id),
            };
            format!("{id} Name={name} {}{time}{term}", event.subject_word())
        }
    };
    let subject = subject.chars().take(MAX_SUBJECT).collect();
    Notice { job: job.id, uid: job.uid, gid: job.gid, event: event.word(), subject, to, env }
}

/// A user's text made safe for one line of a mail header: control characters (a newline
/// would start a header of the user's making) become spaces.
fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// The variables every notice gives the mail program.
fn common_env(job: &Job, event: MailEvent, cluster: &str) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("SLURM_JOB_ID", job.id.to_string()),
        ("SLURM_JOB_NAME", printable(&job.name)),
        ("SLURM_JOB_USER", crate::identity::user_name(job.uid)),
        ("SLURM_JOB_UID", job.uid.to_string()),
        ("SLURM_JOB_GID", job.gid.to_string()),
        ("SLURM_JOB_ACCOUNT", job.account.to_string()),
        ("SLURM_JOB_PARTITION", job.partition.to_string()),
        ("SLURM_JOB_QOS", job.qos.to_string()),
        ("SLURM_JOB_CLUSTER_NAME", cluster.to_string()),
        ("SLURM_JOB_WORK_DIR", job.cwd.to_string()),
        ("SLURM_JOB_STATE", base_state(job).name().to_string()),
        ("SLURM_JOB_MAIL_TYPE", event.subject_word().to_string()),
    ];
    if let Some(a) = job.array {
        env.push(("SLURM_ARRAY_JOB_ID", a.job_id.to_string()));
        env.push(("SLURM_ARRAY_TASK_ID", a.task_id.to_string()));
    }
    env
}

/// The state Slurm's subject names: a job that is still being ended is named by what it
/// was (`RUNNING`), as Slurm's base state does.
fn base_state(job: &Job) -> JobState {
    match job.state() {
        JobState::Completing => JobState::Running,
        s => s,
    }
}

/// `, Queued time 00:00:04` for a start; `, Run time 00:10:02` for an end, a requeue or a
/// time-limit notice (of a started job); else nothing.
fn job_time(job: &Job, event: MailEvent, now: u64, env: &mut Vec<(&'static str, String)>) -> String {
    if event == mail::BEGIN && job.start_time > 0 {
        let queued = format_hms(job.start_time.saturating_sub(job.submit_time));
        env.push(("SLURM_JOB_QUEUED_TIME", queued.clone()));
        return format!(", Queued time {queued}");
    }
    let ended = [mail::END, mail::FAIL, mail::REQUEUE].contains(&event) && job.end_time > 0;
    let timed = mail::TIME_FRACTIONS.iter().any(|(e, _)| *e == event);
    if job.start_time == 0 || !(ended || timed) {
        return String::new();
    }
    let until = if ended { job.end_time } else { now };
    let run = format_hms(until.saturating_sub(job.start_time).saturating_sub(job.suspended_secs));
    env.push(("SLURM_JOB_RUN_TIME", run.clone()));
    format!(", Run time {run}")
}

/// `, COMPLETED, ExitCode 0` (or `, CANCELLED` for a script ended by a signal) for an end
/// or a failure; else nothing.
fn term_info(job: &Job, event: MailEvent, env: &mut Vec<(&'static str, String)>) -> String {
    if event != mail::END && event != mail::FAIL {
        return String::new();
    }
    let status = job.script_status().unwrap_or(0);
    let state = base_state(job).name();
    if libc::WIFEXITED(status) {
        let code = libc::WEXITSTATUS(status);
        env.push(("SLURM_JOB_EXIT_CODE_MAX", code.to_string()));
        format!(", {state}, ExitCode {code}")
    } else {
        env.push(("SLURM_JOB_EXIT_CODE_MAX", "0".into()));
        format!(", {state}")
    }
}

/// The end of an array's summary: its tasks' exit codes as a range, `Mixed` when some
/// failed and some did not, and whether tasks were requeued.
fn summary_term(job: &Job, event: MailEvent, s: ArraySummary, env: &mut Vec<(&'static str, String)>) -> String {
    if event != mail::END && event != mail::FAIL {
        return String::new();
    }
    let state = base_state(job).name();
    let (min, max) = (s.min_status, s.max_status);
    let mut term = if libc::WIFEXITED(min) && libc::WIFEXITED(max) {
        let (lo, hi) = (libc::WEXITSTATUS(min), libc::WEXITSTATUS(max));
        let state = if lo == 0 && hi > 0 { "Mixed" } else { state };
        env.push(("SLURM_JOB_EXIT_CODE_MIN", lo.to_string()));
        env.push(("SLURM_JOB_EXIT_CODE_MAX", hi.to_string()));
        format!(", {state}, ExitCode [{lo}-{hi}]")
    } else if libc::WIFSIGNALED(max) {
        let signal = libc::WTERMSIG(max);
        env.push(("SLURM_JOB_TERM_SIGNAL_MAX", signal.to_string()));
        format!(", Mixed, MaxSignal [{signal}]")
    } else {
        let hi = libc::WEXITSTATUS(max);
        env.push(("SLURM_JOB_EXIT_CODE_MAX", hi.to_string()));
        format!(", Mixed, MaxExitCode [{hi}]")
    };
    if s.requeued {
        term.push_str(", with requeued tasks");
    }
    term
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::ArrayTask;

    fn job(state: JobState) -> Job {
        Job {
            id: 12,
            name: "train".into(),
            state: Some(state),
            submit_time: 1000,
            start_time: 1004,
            end_time: 1606,
            wait_status: Some(0),
            ..Default::default()
        }
    }

    fn subject(job: &Job, event: MailEvent, summary: Option<ArraySummary>) -> String {
        build(job, event, summary, "alice".into(), "lab", 1300).subject
    }

    #[test]
    fn a_jobs_subjects_are_slurms() {
        let done = job(JobState::Completed);
        assert_eq!(subject(&done, mail::BEGIN, None), "Slurm Job_id=12 Name=train Began, Queued time 00:00:04");
        assert_eq!(
            subject(&done, mail::END, None),
            "Slurm Job_id=12 Name=train Ended, Run time 00:10:02, COMPLETED, ExitCode 0"
        );
        let failed = Job { wait_status: Some(3 << 8), ..job(JobState::Failed) };
        assert_eq!(
            subject(&failed, mail::FAIL, None),
            "Slurm Job_id=12 Name=train Failed, Run time 00:10:02, FAILED, ExitCode 3"
        );
        let cancelled = Job { wait_status: Some(libc::SIGTERM), ..job(JobState::Cancelled) };
        assert_eq!(
            subject(&cancelled, mail::END, None),
            "Slurm Job_id=12 Name=train Ended, Run time 00:10:02, CANCELLED"
        );
        let running = Job { end_time: 0, ..job(JobState::Running) };
        assert_eq!(
            subject(&running, mail::TIME80, None),
            "Slurm Job_id=12 Name=train Reached 80% of time limit, Run time 00:04:56"
        );
        assert_eq!(subject(&done, mail::REQUEUE, None), "Slurm Job_id=12 Name=train Requeued, Run time 00:10:02");
    }

    #[test]
    fn a_pending_jobs_end_has_no_run_time_and_a_name_cannot_start_a_header() {
        let pending_cancel = Job { start_time: 0, wait_status: None, ..job(JobState::Cancelled) };
        assert_eq!(
            subject(&pending_cancel, mail::END, None),
            "Slurm Job_id=12 Name=train Ended, CANCELLED, ExitCode 0"
        );
        let sly = Job { name: "x\nBcc: all@lab".into(), ..job(JobState::Running) };
        assert_eq!(subject(&sly, mail::INVALID_DEPEND, None), "Slurm Job_id=12 Name=x Bcc: all@lab Invalid dependency");
    }

    #[test]
    fn array_tasks_and_summaries_are_slurms() {
        let array = ArrayTask { job_id: 10, task_id: 2, count: 3, max: 2, step: 1, ..Default::default() };
        let task = Job { array: Some(array), ..job(JobState::Completed) };
        assert_eq!(
            subject(&task, mail::END, None),
            "Slurm Array Task Job_id=10_2 (12) Name=train Ended, Run time 00:10:02, COMPLETED, ExitCode 0"
        );
        let all_fine = ArraySummary { array_id: 10, min_status: 0, max_status: 0, requeued: false };
        assert_eq!(
            subject(&task, mail::END, Some(all_fine)),
            "Slurm Array Summary Job_id=10_* (10) Name=train Ended, COMPLETED, ExitCode [0-0]"
        );
        let mixed = ArraySummary { max_status: 1 << 8, requeued: true, ..all_fine };
        assert_eq!(
            subject(&task, mail::FAIL, Some(mixed)),
            "Slurm Array Summary Job_id=10_* (10) Name=train Failed, Mixed, ExitCode [0-1], with requeued tasks"
        );
        assert_eq!(
            subject(&task, mail::BEGIN, Some(all_fine)),
            "Slurm Array Summary Job_id=10_* (10) Name=train Began"
        );
    }

    #[test]
    fn the_mail_program_is_told_slurms_variables() {
        let n = build(&job(JobState::Completed), mail::END, None, "alice@lab".into(), "lab", 0);
        let var = |k: &str| n.env.iter().find(|(name, _)| *name == k).map(|(_, v)| v.as_str());
        assert_eq!(var("SLURM_JOB_ID"), Some("12"));
        assert_eq!(var("SLURM_JOB_STATE"), Some("COMPLETED"));
        assert_eq!(var("SLURM_JOB_MAIL_TYPE"), Some("Ended"));
        assert_eq!(var("SLURM_JOB_RUN_TIME"), Some("00:10:02"));
        assert_eq!(var("SLURM_JOB_EXIT_CODE_MAX"), Some("0"));
        assert_eq!(var("SLURM_JOB_CLUSTER_NAME"), Some("lab"));
        assert_eq!((n.event, n.to.as_str()), ("END", "alice@lab"));
    }
}
