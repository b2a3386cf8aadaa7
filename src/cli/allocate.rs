//! Getting an interactive allocation, for srun and salloc outside a job: the request, the
//! wait (Slurm's messages; a spinner with the wait and the pending reason on a terminal),
//! and the grant.

use super::job_failure::Failure;
use crate::api::client::Client;
use crate::api::http::Upgrade;
use crate::api::stream::{Frame, Grant};
use crate::api::types::{JobDescMsg, JobSubmitReq, JobSubmitResponse};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A granted allocation: the connection that holds it, and what it gives.
pub struct Allocation {
    /// Held open while the allocation is in use; [`Allocation::release`] ends it.
    pub conn: UnixStream,
    /// The job and its variables.
    pub grant: Grant,
}

impl Allocation {
    /// Ends the allocation: the command run in it ended with raw wait status `wait_status`.
    /// Waits until the allocation's supervisor has let go of it.
    pub fn release(self, wait_status: i32) {
        if Frame::Release(wait_status).write_to(&mut &self.conn).is_ok() {
            let _ = self.conn.shutdown(std::net::Shutdown::Write);
            while let Ok(Some(_)) = Frame::read_from(&mut &self.conn) {}
        }
    }

    /// A revocation already sent by the allocation's supervisor, if any (read without
    /// waiting).
    pub fn revoked(&self) -> Option<String> {
        while crate::sys::wait_readable(&self.conn, Duration::ZERO).unwrap_or(false) {
            match Frame::read_from(&mut &self.conn) {
                Ok(Some(Frame::Revoked(why))) => return Some(why),
                Ok(Some(_)) => {}
                _ => return None,
            }
        }
        None
    }
}

/// How to wait.
pub struct Waiting<'a> {
    /// `-I`: fail at once instead of waiting.
    pub immediate: bool,
    /// `-Q`: no informational messages.
    pub quiet: bool,
    /// Signals (blocked) that give up the wait, as a signalfd.
    pub interrupt: Option<&'a crate::sys::SignalFd>,
}

/// The error lines of a refused allocation, as `cmd` prints them.
fn report_refusal(cmd: &str, resp: &crate::api::http::Response) -> Failure {
    match Client::decode::<JobSubmitResponse>(resp) {
        Ok(reply) => report_errors(cmd, &reply),
        Err(_) => Failure::Message(format!("the daemon refused the allocation ({})", resp.status), 1),
    }
}

/// Prints a refusal's errors as `cmd` does.
fn report_errors(cmd: &str, reply: &JobSubmitResponse) -> Failure {
    let lead = if cmd == "salloc" { "Job submit/allocate failed" } else { "Unable to allocate resources" };
    for e in &reply.errors {
        if !e.description.is_empty() && e.description != e.error {
            super::error(cmd, &e.description);
        }
        super::error(cmd, &format!("{lead}: {}", e.error));
    }
    Failure::Usage(1)
}

/// Prints the estimate of `--test-only` (`CMD: Job N to start at … using C processors on
/// nodes … in partition …`).
pub fn print_estimate(cmd: &str, resp: &crate::api::types::JobsResponse) -> Result<i32, Failure> {
    let Some(j) = resp.jobs.first() else { return Err(Failure::Message("the daemon sent no estimate".into(), 1)) };
    let start = j.start_time.get().map(crate::sys::format_local_time).unwrap_or_else(|| "Unknown".into());
    eprintln!(
        "{cmd}: Job {} to start at {} using {} processors on nodes {} in partition {}",
        j.job_id,
        start,
        j.cpus.get().unwrap_or(1),
        j.nodes,
        j.partition
    );
    Ok(0)
}

/// `srun --test-only`: checks the allocation `desc` asks for and estimates
/// when it would be granted, without asking for it.
pub fn test_only(cmd: &str, client: &Client, desc: JobDescMsg) -> Result<i32, Failure> {
    let req = JobSubmitReq { script: None, job: Some(desc) };
    let resp = client.post_for_bytes("/slurmlet/v1/job/test", &req).map_err(|e| Failure::Message(e.to_string(), 1))?;
    let jobs: crate::api::types::JobsResponse =
        Client::decode(&resp).map_err(|e| Failure::Message(e.to_string(), 1))?;
    if !jobs.errors.is_empty() {
        let as_submit = JobSubmitResponse { errors: jobs.errors.clone(), ..Default::default() };
        return Err(report_errors(cmd, &as_submit));
    }
    print_estimate(cmd, &jobs)
}

/// Asks for an allocation described by `desc` and waits until it is granted.
pub fn allocate(cmd: &str, client: &Client, desc: JobDescMsg, how: &Waiting) -> Result<Allocation, Failure> {
    let req = JobSubmitReq { script: None, job: Some(desc) };
    let conn = match client.open_stream("/slurmlet/v1/allocation", &req) {
        Ok(Upgrade::Switched(conn)) => conn,
        Ok(Upgrade::Refused(resp)) => return Err(report_refusal(cmd, &resp)),
        Err(e) => return Err(Failure::Message(e.to_string(), 1)),
    };
    let mut queued: Option<(u32, Spinner)> = None;
    loop {
        use std::os::fd::AsRawFd;
        let fds: Vec<i32> = std::iter::once(conn.as_raw_fd()).chain(how.interrupt.map(|s| s.as_raw_fd())).collect();
        let timeout = queued.is_some().then_some(Duration::from_secs(1));
        match crate::sys::poll_readable(&fds, timeout) {
            Ok(None) => {
                if let Some((id, spinner)) = queued.as_mut() {
                    spinner.tick(client, *id);
                }
                continue;
            }
            Ok(Some(1)) => {
                // Given up: dropping the connection cancels the job.
                if let Some((id, spinner)) = queued.take() {
                    spinner.finish();
                    eprintln!("{cmd}: Job allocation {id} has been revoked.");
                }
                return Err(Failure::Usage(1));
            }
            _ => {}
        }
        match Frame::read_from(&mut &conn) {
            Ok(Some(Frame::Queued { job_id, reason })) => {
                if how.immediate {
                    super::error(cmd, "Unable to allocate resources: Requested nodes are busy");
                    return Err(Failure::Usage(1));
                }
                if cmd == "salloc" && !how.quiet {
                    eprintln!("{cmd}: Pending job allocation {job_id}");
                }
                if !how.quiet {
                    eprintln!("{cmd}: job {job_id} queued and waiting for resources");
                }
                queued = Some((job_id, Spinner::start(job_id, &reason)));
            }
            Ok(Some(Frame::Granted(grant))) => {
                if let Some((id, spinner)) = queued.take() {
                    spinner.finish();
                    if !how.quiet {
                        eprintln!("{cmd}: job {id} has been allocated resources");
                    }
                }
                return Ok(Allocation { conn, grant });
            }
            Ok(Some(Frame::Revoked(why) | Frame::Error(why))) => return Err(Failure::Message(why, 1)),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => {
                return Err(Failure::Message("the daemon ended the allocation before granting it".into(), 1))
            }
        }
    }
}

/// The wait shown on a terminal: the job, its state, the time waited and the pending reason
/// (asked again now and then).
struct Spinner {
    line: super::status_line::StatusLine,
    asked: Instant,
}

impl Spinner {
    fn start(job_id: u32, reason: &str) -> Spinner {
        Spinner { line: super::status_line::StatusLine::start(job_id, "PENDING", reason), asked: Instant::now() }
    }

    /// Moves the time on, and refreshes the pending reason now and then.
    fn tick(&mut self, client: &Client, id: u32) {
        if !self.line.is_shown() {
            return;
        }
        if self.asked.elapsed() < Duration::from_secs(5) {
            self.line.refresh();
            return;
        }
        self.asked = Instant::now();
        if let Ok(resp) = client.job(&id.to_string()) {
            if let Some(job) = resp.jobs.first() {
                self.line.set("PENDING", &job.state_reason, None);
                return;
            }
        }
        self.line.refresh();
    }

    fn finish(self) {
        self.line.finish();
    }
}
