//! The clients of interactive jobs and steps, once their requests have become streams (see
//! `http/interactive.rs`): a pending allocation's client held until its job runs (its leaving
//! cancels the job), and a step started, or kept waiting for its share, on its connection.

use crate::api::step::StepRequest;
use crate::api::stream::Frame;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job;
use crate::daemon::runtime::Daemon;
use crate::daemon::scheduling::steps::StepRefusal;
use crate::daemon::supervision::step_spec::NewStep;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// The client of a pending interactive job, held until the job gets its resources.
pub struct PendingClient {
    conn: UnixStream,
    /// Cancels the job if the client goes away first.
    watcher: tokio::task::AbortHandle,
}

/// A second descriptor of `conn`, watched for readability by the runtime.
pub fn watchable(conn: &UnixStream) -> std::io::Result<Readable> {
    let copy = std::os::fd::OwnedFd::from(conn.try_clone()?);
    // SAFETY: the AsyncFd owns this descriptor, so it stays open while it is registered and
    // is closed only after it is deregistered, when the AsyncFd drops.
    Ok(unsafe { tokio::io::unix::AsyncFd::register_with_interest(copy, tokio::io::Interest::READABLE)? })
}

/// Sends one frame on a connection the daemon still holds (a short write on an idle socket).
fn send(conn: &UnixStream, frame: Frame) {
    if let Err(e) = frame.write_to(&mut &*conn) {
        tracing::debug!("cannot write to a stream client: {e}");
    }
}

impl Daemon {
    /// Takes the connection of interactive job `id`'s client, to hand it to the job's
    /// supervisor. `None`: the client is gone.
    pub fn take_client(&self, id: u32) -> Option<UnixStream> {
        let client = self.clients.lock().expect("clients lock").remove(&id)?;
        client.watcher.abort();
        Some(client.conn)
    }

    /// Holds the connection of pending interactive job `id` and makes the job schedulable.
    /// Tells the client when the job must wait, before anyone else may write to it.
    pub fn hold_client(self: &Arc<Self>, job: job::Job, conn: UnixStream, readable: Readable) {
        let id = job.id;
        let daemon = self.clone();
        let mut clients = self.clients.lock().expect("clients lock");
        let watcher = tokio::spawn(async move {
            // A pending job's client says nothing until it is granted: anything readable
            // (its end, most likely) means that it gave up.
            let _ = readable.readable().await;
            if daemon.clients.lock().expect("clients lock").remove(&id).is_some() {
                tracing::info!(job = id, "the client of a pending interactive job went away; cancelling it");
                let cancelled = daemon.core.lock().cancel_abandoned(id);
                if let Some(effects) = cancelled {
                    daemon.apply(effects);
                }
            }
        })
        .abort_handle();
        let (started, reason, effects) = {
            let mut core = self.core.lock();
            let mut effects = core.admit(vec![job]);
            effects.merge(core.schedule());
            let job = &core.jobs[&id];
            (job.state() != job::JobState::Pending, job.reason.to_string(), effects)
        };
        if !started {
            send(&conn, Frame::Queued { job_id: id, reason });
        }
        clients.insert(id, PendingClient { conn, watcher });
        drop(clients);
        self.apply(effects);
    }

    /// Starts the supervisor of a step given its share, handing it the client's connection.
    fn start_step(self: &Arc<Self>, id: u32, new: NewStep, conn: UnixStream) {
        let daemon = self.clone();
        tokio::task::spawn_blocking(move || {
            let step = new.spec.step_id;
            let exe = daemon.core.lock().exe().to_path_buf();
            let started = crate::daemon::supervision::step_spec::write_spec(&new.dir, &new).and_then(|()| {
                crate::daemon::supervision::launch::start_supervisor(
                    crate::stepd::Kind::Step,
                    &exe,
                    &new.dir,
                    Some(&conn),
                )
            });
            if let Err(e) = &started {
                send(&conn, Frame::Error(format!("cannot start step {id}.{step}: {e}")));
            }
            let failed = started.is_err();
            let effects = daemon.core.lock().step_started(id, step, started);
            daemon.apply(effects);
            if failed {
                // Its share is free again.
                daemon.steps_changed.notify_waiters();
            }
        });
    }

    /// Holds the client of interactive job `job`, just stored, once its connection is `held`;
    /// when the upgrade failed, the job is admitted and cancelled at once.
    pub fn hold_or_cancel(self: &Arc<Self>, job: job::Job, held: std::io::Result<(UnixStream, Readable)>) {
        let id = job.id;
        match held {
            Ok((conn, readable)) => self.hold_client(job, conn, readable),
            Err(e) => {
                tracing::info!(
                    job = id,
                    "the client of an interactive job left before it was held ({e}); cancelling it"
                );
                let mut core = self.core.lock();
                let _queued_then_cancelled = core.admit(vec![job]);
                let cancelled = core.cancel_abandoned(id);
                drop(core);
                if let Some(effects) = cancelled {
                    self.apply(effects);
                }
            }
        }
    }

    /// Gives back the share of step `first` of job `id`, whose client left before its
    /// connection was upgraded.
    pub fn step_abandoned(&self, id: u32, first: Result<NewStep, StepRefusal>) {
        if let Ok(new) = first {
            self.core.lock().step_ended(id, new.spec.step_id);
        }
    }

    /// Starts step `req` of job `id` on its client's connection `conn`: at once when `first`
    /// (the try made before the upgrade) gave it its share, else once other steps free one,
    /// having told the client once that it waits. A step that can never start is told so on
    /// the connection.
    pub async fn run_step(
        self: &Arc<Self>,
        id: u32,
        req: StepRequest,
        caller: Caller,
        first: Result<NewStep, StepRefusal>,
        conn: UnixStream,
    ) {
        let mut attempt = first;
        let mut told = false;
        loop {
            match attempt {
                Ok(new) => return self.start_step(id, new, conn),
                Err(StepRefusal::Fatal(why)) => {
                    return send(&conn, Frame::Error(format!("Unable to create step for job {id}: {why}")))
                }
                Err(StepRefusal::Busy(why)) => {
                    if !told {
                        send(&conn, Frame::StepWaiting(why));
                        told = true;
                    }
                }
            }
            let freed = self.steps_changed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            attempt = self.core.lock().create_step(id, &req, caller);
            if matches!(attempt, Err(StepRefusal::Busy(_))) {
                freed.await;
                attempt = self.core.lock().create_step(id, &req, caller);
            }
        }
    }
}

/// A second descriptor of a client's connection, watched for readability by the runtime
/// (the connection itself stays in blocking mode for the supervisor it goes to).
pub type Readable = tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>;
