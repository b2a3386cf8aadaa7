//! `sbatch --wait`: waits for the job (an array's every task) to end, with its state on a
//! status line when standard error is a terminal, and exits as Slurm's sbatch does: with the
//! job's exit code, an array's highest.

use super::job_failure::Failure;
use super::status_line::StatusLine;

/// How often `sbatch --wait` looks at a job on a remote cluster.
const REMOTE_WAIT_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits until job `id` has ended and returns it, showing its state on `line` meanwhile.
fn wait_for_end(
    client: &crate::api::client::Client,
    id: u32,
    line: &mut Option<StatusLine>,
) -> Result<crate::api::types::JobsResponse, Failure> {
    // Asked every second while a status line is shown; else at the daemon's own pace.
    let query = if line.is_some() { "?timeout=1" } else { "" };
    loop {
        if client.profile().is_some() {
            // A cluster's slurmrestd has no wait: its jobs are looked at every few seconds.
            let resp = client.job(&id.to_string()).map_err(|e| Failure::Message(e.to_string(), 1))?;
            let ended = |j: &crate::api::types::JobInfo| {
                !matches!(
                    j.job_state.first().map(String::as_str),
                    Some("PENDING" | "RUNNING" | "SUSPENDED" | "COMPLETING" | "CONFIGURING" | "REQUEUED")
                )
            };
            if !resp.jobs.is_empty() && resp.jobs.iter().all(ended) {
                return Ok(resp);
            }
            show(line, &resp);
            std::thread::sleep(REMOTE_WAIT_POLL);
            continue;
        }
        let (status, resp) = client
            .get_with_status(&format!("/slurmlet/v1/job/{id}/wait{query}"))
            .map_err(|e| Failure::Message(e.to_string(), 1))?;
        if status != 202 {
            return Ok(resp);
        }
        show(line, &resp);
    }
}

/// Shows the state of the job of `resp` on `line`; an array's, when it lists its tasks.
fn show(line: &mut Option<StatusLine>, resp: &crate::api::types::JobsResponse) {
    let Some(line) = line.as_mut() else { return };
    let Some(seen) = Seen::of(&resp.jobs) else { return };
    let elapsed = seen.since.filter(|&t| t > 0).map(|t| crate::sys::now().saturating_sub(t));
    line.set(seen.state, &seen.reason, elapsed);
}

/// What the status line says of a job, or of an array from its tasks.
#[derive(Debug, PartialEq, Eq)]
struct Seen<'a> {
    /// The job's state; an array's is `RUNNING` while a task runs, else `PENDING` while one
    /// waits, else its first task's.
    state: &'a str,
    /// A pending job's reason; for an array, how many of its tasks are in each state
    /// (`tasks: 2 RUNNING, 1 PENDING, 1 COMPLETED`).
    reason: String,
    /// When it entered its state: its submit time while pending, else its start (an array's
    /// earliest).
    since: Option<u64>,
}

impl<'a> Seen<'a> {
    fn of(jobs: &'a [crate::api::types::JobInfo]) -> Option<Seen<'a>> {
        let state_of = |j: &'a crate::api::types::JobInfo| j.job_state.first().map(String::as_str).unwrap_or("PENDING");
        let first = jobs.first()?;
        if jobs.len() == 1 {
            let state = state_of(first);
            let pending = state == "PENDING";
            return Some(Seen {
                state,
                reason: if pending { first.state_reason.clone() } else { String::new() },
                since: if pending { first.submit_time.get() } else { first.start_time.get() },
            });
        }
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for j in jobs {
            match counts.iter_mut().find(|(s, _)| *s == state_of(j)) {
                Some((_, n)) => *n += 1,
                None => counts.push((state_of(j), 1)),
            }
        }
        // Running first, then pending, then the ended states by name.
        let rank = |s: &str| match s {
            "RUNNING" => 0,
            "PENDING" => 1,
            _ => 2,
        };
        counts.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)).then(a.0.cmp(b.0)));
        let state = match counts[0].0 {
            s @ ("RUNNING" | "PENDING") => s,
            _ => state_of(first),
        };
        let in_state = jobs.iter().filter(|j| state_of(j) == state);
        let since = if state == "PENDING" {
            in_state.filter_map(|j| j.submit_time.get()).min()
        } else {
            in_state.filter_map(|j| j.start_time.get()).filter(|&t| t > 0).min()
        };
        let listed: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
        Some(Seen { state, reason: format!("tasks: {}", listed.join(", ")), since })
    }
}

/// `--wait`: blocks until the job ends; exits with its exit code (1 if it ended otherwise).
/// The daemon answers 202 when the job has not ended within its wait; then it asks again.
/// On a terminal the job's status line is shown meanwhile (see [`super::status_line`]),
/// asked every second.
pub fn wait(client: &crate::api::client::Client, id: u32) -> Result<i32, Failure> {
    use std::io::IsTerminal;
    let mut line = std::io::stderr().is_terminal().then(|| StatusLine::start(id, "PENDING", ""));
    let ended = wait_for_end(client, id, &mut line);
    if let Some(line) = line {
        line.finish();
    }
    let resp = ended?;
    // An array's tasks: the highest of their codes, as Slurm's sbatch --wait returns.
    let codes = resp.jobs.iter().map(|j| {
        let rc = j.exit_code.return_code.get().unwrap_or(0) as i32;
        let state = j.job_state.first().map(String::as_str).unwrap_or("");
        if rc != 0 {
            rc
        } else if state == "COMPLETED" {
            0
        } else {
            1
        }
    });
    Ok(codes.max().unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::Seen;
    use crate::api::noval::NoVal;
    use crate::api::types::JobInfo;

    fn job(state: &str, submit: u64, start: u64) -> JobInfo {
        JobInfo {
            job_state: vec![state.into()],
            state_reason: if state == "PENDING" { "Resources".into() } else { "None".into() },
            submit_time: NoVal::of(submit),
            start_time: NoVal::of(start),
            ..Default::default()
        }
    }

    #[test]
    fn one_job_is_seen_as_it_is() {
        let pending = [job("PENDING", 10, 0)];
        let seen = Seen::of(&pending).unwrap();
        assert_eq!(seen, Seen { state: "PENDING", reason: "Resources".into(), since: Some(10) });
        let running = [job("RUNNING", 10, 20)];
        let seen = Seen::of(&running).unwrap();
        assert_eq!(seen, Seen { state: "RUNNING", reason: String::new(), since: Some(20) });
        assert_eq!(Seen::of(&[]), None);
    }

    #[test]
    fn an_array_is_seen_from_all_its_tasks() {
        let tasks = [job("COMPLETED", 10, 11), job("PENDING", 10, 0), job("RUNNING", 10, 30), job("RUNNING", 10, 25)];
        let seen = Seen::of(&tasks).unwrap();
        assert_eq!(
            seen,
            Seen { state: "RUNNING", reason: "tasks: 2 RUNNING, 1 PENDING, 1 COMPLETED".into(), since: Some(25) }
        );
        let tasks = [job("COMPLETED", 10, 11), job("PENDING", 12, 0), job("FAILED", 10, 11)];
        let seen = Seen::of(&tasks).unwrap();
        assert_eq!(
            seen,
            Seen { state: "PENDING", reason: "tasks: 1 PENDING, 1 COMPLETED, 1 FAILED".into(), since: Some(12) }
        );
    }
}
