//! Sends the notices of job events (`--mail-type`) that the scheduler puts in its outbox
//! (see [`crate::daemon::scheduling::core::Outgoing`]), off the scheduler's path: each once
//! the change it tells of is durable, through the configured mail program and webhooks, a
//! few at a time, each within a deadline and with a bounded number of tries. A destination
//! that fails is logged once, until it works again. The timers of time-limit notices run
//! here too.

mod failing;
mod mail;
mod webhook;

use super::Daemon;
use crate::daemon::model::notice::Notice;
use crate::daemon::scheduling::core::{Outgoing, TimeMark};
use std::sync::Arc;

/// How many notices are sent at once (a mail program that hangs holds one until its
/// deadline).
const AT_ONCE: usize = 4;

/// Takes what the outbox carries until the daemon stops.
pub async fn run(daemon: Arc<Daemon>, mut outbox: tokio::sync::mpsc::Receiver<Outgoing>) {
    let turns = Arc::new(tokio::sync::Semaphore::new(AT_ONCE));
    let failing = Arc::new(failing::Failing::default());
    while let Some(out) = outbox.recv().await {
        match out {
            Outgoing::Mark(mark) => {
                tokio::spawn(wait_for_mark(daemon.clone(), mark));
            }
            Outgoing::Notice(notice, durable) => {
                let Ok(turn) = turns.clone().acquire_owned().await else { return };
                let (daemon, failing) = (daemon.clone(), failing.clone());
                tokio::spawn(async move {
                    // Told only once it is so: a change lost in a crash is never told of.
                    if durable.await.is_ok() {
                        let settings = daemon.core.lock().config.notify.clone();
                        let _ = tokio::task::spawn_blocking(move || deliver(&notice, &settings, &failing)).await;
                    }
                    drop(turn);
                });
            }
        }
    }
}

/// Sends `notice` everywhere `settings` say, blocking (on a thread of its own).
fn deliver(notice: &Notice, settings: &crate::config::notify::Notify, failing: &failing::Failing) {
    if let Some(program) = &settings.mail_program {
        let destination = program.display().to_string();
        failing.note(&destination, mail::send(program, notice));
    }
    for url in settings.webhooks_for(notice.uid) {
        failing.note(&webhook::shown(&url), webhook::post(&url, notice));
    }
}

/// Waits for time-limit notice `mark` to fall due, and asks the scheduler to send it;
/// again later while the job's suspension moves it.
async fn wait_for_mark(daemon: Arc<Daemon>, mut mark: TimeMark) {
    loop {
        let wait = mark.at.saturating_sub(crate::sys::now());
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        match daemon.core.lock().time_mark(mark, crate::sys::now()) {
            Some(at) => mark.at = at,
            None => return,
        }
    }
}
