//! The supervisor of an interactive allocation (srun or salloc outside a job): there is no
//! script to run. The supervisor holds the client's stream connection, tells the client its
//! allocation is granted, and waits for the client to release it. A minute before the time
//! limit the client is warned. A cancel or the time limit revokes the allocation: the client is told, and gets KillWait seconds to end what it runs
//! and release it. A client that goes away releases it too, unless it detached first
//! (`salloc --no-shell`). So does a shard job over its share of GPU memory under
//! `shard_memory = "enforce"` (see [`super::gpu_share`]), after the client is told.

use super::client_link::{ClientLink, Incoming};
use super::events::{Event, Events};
use super::EndCause;
use super::{EndStatus, LaunchSpec};
use crate::api::stream::{Frame, Grant};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// How long before the time limit the client is warned.
const WARN_AHEAD: Duration = Duration::from_secs(60);

/// Holds the allocation of `spec` (its directory `dir`) for the client at the other end of
/// `conn` until it ends. While the job is suspended its time limit waits (see
/// [`super::timing`]); the client's own processes are the client's to stop. The client is
/// never waited on (see [`super::client_link`]): one that does not read, or stops half-way
/// through a frame, loses its allocation to a cancel or the time limit all the same.
pub fn hold(spec: &LaunchSpec, dir: &std::path::Path, conn: UnixStream) -> std::io::Result<EndStatus> {
    let link = std::cell::RefCell::new(ClientLink::new(conn)?);
    let grant = Grant { job_id: spec.job_id, nodes: spec.node_name.clone(), env: spec.env.clone() };
    // A client already gone is seen as the end of its stream below.
    link.borrow_mut().send(&Frame::Granted(grant));
    let mut events = Events::on_readable(link.borrow().stream().try_clone()?.into())?;
    let mut timing =
        super::timing::Follower::start(dir, spec.start_time, spec.time_limit_secs.map(|l| spec.start_time + l));
    let mut limit_at = timing.deadline().map(crate::sys::instant_at);
    let mut warn_at = warn_of(limit_at);
    let mut warned = false;
    let mut release_by: Option<Instant> = None;
    let mut cause = EndCause::Exited;
    let mut detached = false;
    let revoke = |cause_now: EndCause, why: String, cause: &mut EndCause| {
        if *cause == EndCause::Exited {
            *cause = cause_now;
            link.borrow_mut().send(&Frame::Revoked(why));
            return Some(Instant::now() + Duration::from_secs(spec.kill_wait as u64));
        }
        None
    };
    // Over its share of GPU memory (see `gpu_share`): the client is told once, and the
    // allocation revoked for it at the top of the next turn.
    let mut share_told = false;
    let tell = |line: &str| link.borrow_mut().send(&Frame::Message(line.to_string()));
    let mut end_for_share = super::gpu_share::follow(spec, dir, &mut share_told, tell);
    // Told its GPUs stayed idle (see `idle_gpu`): once, and before a revocation that follows.
    let mut idle_told = false;
    super::idle_gpu::follow(spec, dir, &mut idle_told, tell);
    loop {
        if std::mem::take(&mut end_for_share) {
            let why = format!(
                "Job {} has exceeded its share of GPU memory and its allocation has been revoked.",
                spec.job_id
            );
            release_by = release_by.or(revoke(EndCause::OutOfMemory, why, &mut cause));
            if detached {
                return Ok(ended(0, cause));
            }
        }
        let flush_at = link.borrow().flush_due();
        let deadline = [warn_at, limit_at, release_by, flush_at].into_iter().flatten().min();
        let event = events.next(deadline)?;
        link.borrow_mut().flush();
        match event {
            Event::Exited => {
                let said = client_said(&mut link.borrow_mut());
                match said {
                    // srun releases with slurmstepd's `SIG_OOM` when its step ran out of
                    // memory: the job then ended out of memory, as slurmctld records it.
                    ClientSaid::Released(wait_status) if wait_status & 0xff == super::SIG_OOM => {
                        return Ok(ended(wait_status, EndCause::OutOfMemory))
                    }
                    ClientSaid::Released(wait_status) => return Ok(ended(wait_status, cause)),
                    // Held without a client until cancelled or out of time: what follows (its
                    // end, as it leaves) is no longer heard.
                    ClientSaid::Detached => {
                        detached = true;
                        events.forget_source();
                    }
                    // The client went away without a word: its allocation goes with it.
                    ClientSaid::Gone => {
                        let cause = if cause == EndCause::Exited { EndCause::Cancelled } else { cause };
                        return Ok(ended(0, cause));
                    }
                    ClientSaid::Nothing => {}
                }
            }
            Event::Terminate => {
                super::idle_gpu::follow(spec, dir, &mut idle_told, tell);
                let why = format!("Job allocation {} has been revoked.", spec.job_id);
                release_by = release_by.or(revoke(EndCause::Cancelled, why, &mut cause));
                if detached {
                    return Ok(ended(0, cause));
                }
            }
            Event::Notify => {
                end_for_share = super::gpu_share::follow(spec, dir, &mut share_told, tell);
                super::idle_gpu::follow(spec, dir, &mut idle_told, tell);
                if cause == EndCause::Exited {
                    timing.reread(dir);
                    limit_at = timing.deadline().map(crate::sys::instant_at);
                    warn_at = if warned { None } else { warn_of(limit_at) };
                }
            }
            Event::Deadline => {
                let now = Instant::now();
                if release_by.is_some_and(|t| t <= now) {
                    return Ok(ended(0, cause));
                }
                if warn_at.is_some_and(|t| t <= now) {
                    warn_at = None;
                    warned = true;
                    let end = crate::sys::format_local_time(timing.deadline().unwrap_or_default());
                    let warning = format!("Job {} time limit to be reached at {end}", spec.job_id);
                    link.borrow_mut().send(&Frame::Message(warning));
                }
                if limit_at.is_some_and(|t| t <= now) {
                    limit_at = None;
                    let why =
                        format!("Job {} has exceeded its time limit and its allocation has been revoked.", spec.job_id);
                    release_by = release_by.or(revoke(EndCause::TimeLimit, why, &mut cause));
                    if detached {
                        return Ok(ended(0, cause));
                    }
                }
            }
        }
    }
}

/// When the client is warned of the time limit at `limit_at`: a minute ahead, at once if
/// less is left.
fn warn_of(limit_at: Option<Instant>) -> Option<Instant> {
    limit_at.map(|at| at.checked_sub(WARN_AHEAD).unwrap_or(at).max(Instant::now()))
}

/// How the allocation ended: `wait_status` as the client reported it, `cause` as the
/// supervisor saw it.
fn ended(wait_status: i32, cause: EndCause) -> EndStatus {
    EndStatus {
        // Ended over its share of GPU memory: slurmstepd's status for a step out of memory.
        wait_status: if cause == EndCause::OutOfMemory { super::SIG_OOM } else { wait_status },
        cause,
        end_time: crate::sys::now(),
        usage: None,
    }
}

/// What the client's frames since the last look come to.
enum ClientSaid {
    /// It released the allocation, with the wait status of what it ran.
    Released(i32),
    /// It detached (`salloc --no-shell`): the allocation is held without it.
    Detached,
    /// Its stream ended without a word.
    Gone,
    /// Nothing that changes the allocation.
    Nothing,
}

/// Reads what the client sent: the first frame (or end) that changes the allocation; those
/// after it are not heard.
fn client_said(link: &mut ClientLink) -> ClientSaid {
    for got in link.receive() {
        match got {
            Incoming::Frame(Frame::Release(wait_status)) => return ClientSaid::Released(wait_status),
            Incoming::Frame(Frame::Detach) => return ClientSaid::Detached,
            Incoming::Frame(_) => {}
            Incoming::Ended => return ClientSaid::Gone,
        }
    }
    ClientSaid::Nothing
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn spec(time_limit_secs: Option<u64>, kill_wait: u32) -> LaunchSpec {
        LaunchSpec {
            job_id: 42,
            script: PathBuf::new(),
            argv: Vec::new(),
            env: vec!["SLURM_JOB_ID=42".into()],
            cwd: PathBuf::from("/"),
            stdout: PathBuf::new(),
            stderr: None,
            stdin: None,
            append: false,
            start_time: crate::sys::now(),
            time_limit_secs,
            kill_wait,
            warn_signal: None,
            node_name: "n1".into(),
            umask: None,
            interactive: true,
            run_as: None,
            share: Default::default(),
        }
    }

    /// Runs `hold` on its own thread (it blocks SIGTERM there) with the client's end returned.
    fn holding(spec: LaunchSpec) -> (UnixStream, std::thread::JoinHandle<EndStatus>) {
        holding_in(spec, tempfile::tempdir().unwrap())
    }

    /// The same, for the job directory `dir`.
    fn holding_in(spec: LaunchSpec, dir: tempfile::TempDir) -> (UnixStream, std::thread::JoinHandle<EndStatus>) {
        let (client, ours) = UnixStream::pair().unwrap();
        (client, std::thread::spawn(move || hold(&spec, dir.path(), ours).unwrap()))
    }

    #[test]
    fn an_allocation_over_its_gpu_share_is_told_and_under_enforce_revoked_out_of_memory() {
        let s = spec(None, 30);
        let dir = tempfile::tempdir().unwrap();
        let notice = crate::stepd::gpu_share::OverShare {
            start_time: s.start_time,
            gpu: 1,
            used: 11 << 30,
            share: 10 << 30,
            shards: 1,
            shards_per_gpu: 4,
            end_job: true,
        };
        assert!(notice.write_once(dir.path()).unwrap());
        let (mut client, held) = holding_in(s, dir);
        assert!(matches!(Frame::read_from(&mut client).unwrap(), Some(Frame::Granted(_))));
        assert_eq!(
            next_message(&mut client),
            "slurmstepd-n1: warning: Job 42 uses 11.0 GiB of GPU 1, its share is 10.0 GiB (1 of 4 shards)"
        );
        assert_eq!(
            next_revocation(&mut client),
            "Job 42 has exceeded its share of GPU memory and its allocation has been revoked."
        );
        Frame::Release(0).write_to(&mut client).unwrap();
        let end = held.join().unwrap();
        assert_eq!((end.wait_status, end.cause), (crate::stepd::SIG_OOM, EndCause::OutOfMemory));
    }

    /// The next frame, which must be a message for the client.
    fn next_message(client: &mut UnixStream) -> String {
        match Frame::read_from(client).unwrap() {
            Some(Frame::Message(m)) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// The next frame, which must revoke the allocation; its reason.
    fn next_revocation(client: &mut UnixStream) -> String {
        match Frame::read_from(client).unwrap() {
            Some(Frame::Revoked(why)) => why,
            other => panic!("expected the revocation, got {other:?}"),
        }
    }

    #[test]
    fn the_grant_comes_first_and_a_release_ends_the_job_with_its_status() {
        let (mut client, held) = holding(spec(None, 30));
        match Frame::read_from(&mut client).unwrap() {
            Some(Frame::Granted(g)) => assert_eq!((g.job_id, g.nodes.as_str(), g.env.len()), (42, "n1", 1)),
            other => panic!("expected the grant, got {other:?}"),
        }
        Frame::Release(5 << 8).write_to(&mut client).unwrap();
        let end = held.join().unwrap();
        assert_eq!((end.wait_status, end.cause), (5 << 8, EndCause::Exited));
    }

    #[test]
    fn a_client_that_reads_nothing_still_loses_its_allocation_at_the_time_limit() {
        // A grant far larger than the socket holds, to a client that never reads it.
        let mut s = spec(Some(60), 0);
        s.start_time -= 61;
        s.env.push(format!("BIG={}", "x".repeat(4 << 20)));
        let (client, held) = holding(s);
        let (done, end) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(held.join().unwrap()));
        let end = end.recv_timeout(Duration::from_secs(30)).expect("the supervisor waited on its client");
        assert_eq!(end.cause, EndCause::TimeLimit);
        drop(client);
    }

    #[test]
    fn a_client_that_detaches_and_leaves_at_once_keeps_its_allocation() {
        // Its time limit a second or two away.
        let mut s = spec(Some(60), 0);
        s.start_time -= 58;
        let (mut client, held) = holding(s);
        assert!(matches!(Frame::read_from(&mut client).unwrap(), Some(Frame::Granted(_))));
        Frame::Detach.write_to(&mut client).unwrap();
        drop(client);
        std::thread::sleep(Duration::from_millis(300));
        assert!(!held.is_finished(), "a detached allocation is held until cancelled or out of time");
        assert_eq!(held.join().unwrap().cause, EndCause::TimeLimit);
    }

    #[test]
    fn a_client_that_goes_away_cancels_its_allocation() {
        let (client, held) = holding(spec(None, 30));
        drop(client);
        assert_eq!(held.join().unwrap().cause, EndCause::Cancelled);
    }

    #[test]
    fn the_time_limit_revokes_the_allocation_and_the_client_gets_kill_wait_to_release_it() {
        // A limit already reached: revoked at once, released by the client.
        let mut s = spec(Some(60), 30);
        s.start_time -= 61;
        let (mut client, held) = holding(s);
        assert!(matches!(Frame::read_from(&mut client).unwrap(), Some(Frame::Granted(_))));
        let warning = next_message(&mut client);
        assert!(warning.starts_with("Job 42 time limit to be reached at "), "{warning}");
        assert_eq!(
            next_revocation(&mut client),
            "Job 42 has exceeded its time limit and its allocation has been revoked."
        );
        Frame::Release(0).write_to(&mut client).unwrap();
        assert_eq!(held.join().unwrap().cause, EndCause::TimeLimit);
        // A client that does not release it loses it after KillWait.
        let mut s = spec(Some(60), 0);
        s.start_time -= 61;
        let (_client, held) = holding(s);
        assert_eq!(held.join().unwrap().cause, EndCause::TimeLimit);
    }
}
