//! The running daemon: its shared state ([`Daemon`]), and what it does between requests:
//! applying the effects of a change, starting supervisors, watching them end, the scheduler
//! and its timer, reloading the configuration; and the tasks that run beside requests: the
//! GPU watch, the MPS servers' idle quit, the history's purge, the backstop for stuck
//! supervisors, the clients of interactive jobs, and the one way submits come in.

pub mod backstop;
pub mod gpu_watch;
pub mod interactive;
pub mod mps;
pub mod notify;
pub mod purge;
pub mod submit;

use crate::daemon::accounting::history;
use crate::daemon::auth;
use crate::daemon::scheduling::core::{Effects, Watch};
use crate::daemon::scheduling::core_lock;
use crate::daemon::store::writer::{self, WriteFailed};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Shared state of the running daemon.
pub struct Daemon {
    /// The state, behind one lock.
    pub core: core_lock::CoreLock,
    /// The next time a pending job becomes eligible (0: none).
    pub timer: tokio::sync::watch::Sender<u64>,
    /// Notified to shut down.
    pub shutdown: tokio::sync::Notify,
    /// Notified when a scheduling pass is due; a burst of notices makes one pass.
    pub kick: tokio::sync::Notify,
    /// The clients of pending interactive jobs, by job id.
    pub clients: Mutex<HashMap<u32, interactive::PendingClient>>,
    /// Notified (all waiters) when a step or a job ends: steps waiting for their share try
    /// again.
    pub steps_changed: tokio::sync::Notify,
    /// The key REST tokens are signed with.
    pub jwt_key: auth::Key,
    /// One permit: full JSON listings (`GET /jobs`, `squeue --json`) are built one at a
    /// time, each a few kilobytes per job. (Their writing is not waited for: a client that
    /// does not read would stop every other listing.)
    pub listings: tokio::sync::Semaphore,
    /// The checks of the paths users name at submit, each user's turns at them.
    pub path_checks: crate::daemon::supervision::path_check::PathChecks,
    /// The accounting history's read connections.
    pub history: history::History,
    /// The MPS servers of shard jobs, when the daemon runs them.
    pub mps: Option<crate::daemon::mps::Servers>,
    /// The change counter the board waits on (`GET /slurmlet/v1/changes`): moved by the
    /// store's writer whenever a job's record changes, and at each look at the GPUs.
    pub changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// Becomes true when the daemon is told to stop: the long polls answer then, rather than
    /// keep the stop waiting for them.
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

impl Daemon {
    /// Carries out the effects of a state change: start supervisors once their allocation is
    /// durable, watch them, re-arm the timer. Returns the change to wait for before answering.
    pub fn apply(self: &Arc<Self>, effects: Effects) -> Option<writer::Durable> {
        for w in effects.watch {
            let daemon = self.clone();
            tokio::spawn(async move { daemon.watch(w).await });
        }
        for (id, durable) in effects.launch {
            let daemon = self.clone();
            // The job's files are written while its allocation is being committed; the
            // supervisor starts once the allocation is durable. Files and a process start
            // run on a blocking thread, not under the lock.
            tokio::task::spawn_blocking(move || {
                let more = daemon.launch(id, durable);
                daemon.apply(more);
            });
        }
        for (id, pid) in effects.end_after_steps {
            let daemon = self.clone();
            tokio::spawn(async move { daemon.end_after_steps(id, pid).await });
        }
        if effects.reschedule {
            self.kick.notify_one();
        }
        if let Some(at) = effects.wake_at {
            self.timer.send_if_modified(|cur| {
                if *cur == 0 || at < *cur {
                    *cur = at;
                    true
                } else {
                    false
                }
            });
        }
        effects.durable
    }

    /// Starts the supervisor of job `id` (on a blocking thread): writes its directory, waits
    /// until its allocation is durable, checks that it may still start, readies its GPUs'
    /// MPS servers, starts it.
    fn launch(&self, id: u32, durable: writer::Durable) -> Effects {
        // The payload is read on a connection of its own, without the lock.
        let payload_id = self.core.lock().payload_id(id);
        let payload = self.history.payload(payload_id);
        let prepared = self.core.lock().prepare_launch(id, payload);
        let written = prepared.map(|p| {
            let files = p.write_files();
            (p, files)
        });
        match durable.wait() {
            Ok(()) => tracing::debug!(job = id, "allocation stored"),
            // The allocation is not stored: starting the job could hand its GPUs out twice
            // after a restart. It stays recorded as running in memory only; the store error
            // is in the log.
            _ => {
                tracing::error!(job = id, "not starting the job: its allocation could not be stored");
                return Effects::default();
            }
        }
        let (prepared, files) = match written {
            Ok(w) => w,
            Err(effects) => return effects,
        };
        if let Err(e) = files {
            return self.core.lock().launch_failed(id, &e.to_string());
        }
        if let Err(effects) = self.core.lock().confirm_launch(id) {
            return effects;
        }
        // A change of the drained GPUs, to apply with the outcome of the start.
        let mut drained = Effects::default();
        if let Some(servers) = &self.mps {
            let tenant = mps::tenant(&self.core.lock(), id);
            let served = tenant.map_or(Ok(()), |t| servers.serve(&t));
            let mut core = self.core.lock();
            let mut effects = core.set_gpu_drains(servers.troubles());
            if let Err(e) = served {
                // The GPU is drained now: the job waits again, and goes elsewhere or waits
                // saying why.
                effects.merge(core.launch_deferred(id, &e.to_string()));
                return effects;
            }
            // It may have been cancelled while its GPUs were made ready.
            if let Err(more) = core.confirm_launch(id) {
                effects.merge(more);
                return effects;
            }
            drop(core);
            drained = effects;
        }
        let conn = if prepared.interactive() {
            match self.take_client(id) {
                Some(conn) => Some(conn),
                None => {
                    let mut effects = self.core.lock().launch_failed(id, "its client is gone");
                    effects.merge(drained);
                    return effects;
                }
            }
        } else {
            None
        };
        let started = prepared.start(conn.as_ref());
        let mut effects = self.core.lock().supervisor_started(id, started);
        effects.merge(drained);
        effects
    }

    /// Waits for a supervisor to record the end (or, without an end pipe, to exit), records
    /// it, then waits for the supervisor's exit and reaps it. Steps waiting for a share of a
    /// job are told each time a step or a job ends.
    async fn watch(self: Arc<Self>, w: Watch) {
        let (id, pid) = (w.job, w.pid);
        if let Some(ended) = w.ended {
            match crate::sys::wait_closed(ended).await {
                Ok(()) => match w.step {
                    // A step's end pipe closes once its tasks are gone.
                    Some(step) => {
                        self.core.lock().step_ended(id, step);
                        self.steps_changed.notify_waiters();
                    }
                    None => {
                        let dir = self.core.lock().job_dir(id);
                        let status = crate::stepd::read_status(&dir);
                        let effects = self.core.lock().end_recorded(id, pid, status);
                        if let Some(effects) = effects {
                            tracing::debug!(job = id, pid, "end recorded");
                            self.apply(effects);
                        }
                    }
                },
                Err(e) => tracing::error!(job = id, pid, "cannot watch the supervisor's end pipe: {e}"),
            }
        }
        let exited = match w.pidfd {
            Some(fd) => crate::sys::wait_pidfd(fd).await,
            None => crate::sys::wait_exit(pid).await,
        };
        if let Err(e) = exited {
            tracing::error!(job = id, pid, "cannot watch the supervisor: {e}");
        }
        crate::sys::reap(pid);
        tracing::debug!(job = id, step = w.step, pid, "supervisor exited");
        match w.step {
            Some(step) => self.core.lock().step_ended(id, step),
            None => {
                let dir = self.core.lock().job_dir(id);
                let status = crate::stepd::read_status(&dir);
                let effects = self.core.lock().stepd_exited(id, pid, status);
                self.apply(effects);
            }
        }
        self.steps_changed.notify_waiters();
    }

    /// Tells the supervisor `pid` of cancelled job `id` to end the job once its steps have
    /// ended, or after KillWait if they take longer.
    async fn end_after_steps(self: Arc<Self>, id: u32, pid: i32) {
        let kill_wait = self.core.lock().config.kill_wait;
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(kill_wait as u64);
        loop {
            let ended = self.steps_changed.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if !self.core.lock().has_steps(id) {
                break;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                break;
            }
        }
        let _ = crate::sys::kill_pid(pid, libc::SIGTERM);
    }

    /// Re-reads the configuration on SIGHUP and schedules with it. SIGHUP is caught from
    /// the call on, not from the first poll: one sent as soon as the daemon listens must not
    /// find the signal's default action (the end of the daemon) still in place.
    pub fn reload_on_hangup(self: Arc<Self>, path: std::path::PathBuf) -> impl std::future::Future<Output = ()> {
        use tokio::signal::unix::{signal, SignalKind};
        let hup = signal(SignalKind::hangup());
        async move {
            let Ok(hup) = hup else { return };
            self.reload_each_hangup(hup, path).await;
        }
    }

    /// Re-reads the configuration at each signal `hup` receives.
    async fn reload_each_hangup(self: Arc<Self>, mut hup: tokio::signal::unix::Signal, path: std::path::PathBuf) {
        while hup.recv().await.is_some() {
            let mode = self.core.lock().config.mode;
            // GPU discovery runs programs and library calls (each to a deadline): on a
            // blocking thread, not on one of the threads that answer requests.
            let file = path.clone();
            let read = tokio::task::spawn_blocking(move || {
                crate::config::Config::load_as(&file, mode).map(|mut new| {
                    new.discover_gpus();
                    new
                })
            })
            .await;
            let Ok(read) = read else { continue };
            let effects = match read {
                Ok(new) => {
                    let mut core = self.core.lock();
                    for ignored in core.reload(new) {
                        tracing::warn!("configuration reload: {ignored} changed; it takes effect after a restart");
                    }
                    tracing::info!(path = %path.display(), "configuration reloaded");
                    Effects::reschedule()
                }
                Err(e) => {
                    tracing::error!("configuration reload failed, keeping the old one: {e}");
                    continue;
                }
            };
            self.apply(effects);
        }
    }

    /// Runs a scheduling pass whenever the earliest begin time arrives.
    pub async fn run_timer(self: Arc<Self>) {
        let mut rx = self.timer.subscribe();
        loop {
            let at = *rx.borrow_and_update();
            if at == 0 {
                if rx.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let now = crate::sys::now();
            let wait = std::time::Duration::from_secs(at.saturating_sub(now));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {
                    self.timer.send_replace(0);
                    self.kick.notify_one();
                }
                r = rx.changed() => if r.is_err() { return },
            }
        }
    }

    /// Runs a scheduling pass each time one is due. Passes asked for while one runs are
    /// folded into the next, so a burst of submits or job ends costs one pass, not one each.
    pub async fn run_scheduler(self: Arc<Self>) {
        loop {
            self.kick.notified().await;
            let effects = self.core.lock().schedule();
            self.apply(effects);
        }
    }

    /// Applies `effects` and waits until their last change is durable.
    pub async fn apply_durably(self: &Arc<Self>, effects: Effects) -> Result<(), WriteFailed> {
        match self.apply(effects) {
            Some(durable) => durable.await,
            None => Ok(()),
        }
    }
}
