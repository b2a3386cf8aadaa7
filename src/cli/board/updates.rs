//! How changes reach the open pages: one watcher task, which asks the daemon for nothing
//! while no page listens on `/events`. While one does, it waits on the daemon's change
//! counter (`GET /slurmlet/v1/changes`, a long poll), or, where the daemon has no such call
//! (an older daemon, a cluster profile), reads the state once a second; each time the state
//! differs from the last one sent, it goes to every page as a server-sent event.

use super::state;
use crate::api::activity::ChangesResponse;
use crate::api::client::Client;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// How long one wait on the change counter lasts, seconds.
const LONG_POLL: u32 = 25;

/// How often the state is read where the daemon has no change counter.
const POLL: Duration = Duration::from_secs(1);

/// One state sent to the pages.
#[derive(Debug)]
pub struct Update {
    /// Counts the states sent; the page's `/api/live` carries it too.
    pub version: u64,
    /// `{"version":…,"now":…,"live":{…}}`, as the event's data; `"error":"…"` instead of
    /// `live` when the daemon could not be read.
    pub json: String,
}

/// The pages listening, and the last state sent to them.
pub struct Hub {
    /// The profile the board shows; `None`: this machine's daemon.
    profile: Option<String>,
    /// How many pages listen.
    viewers: AtomicUsize,
    /// Wakes the watcher when the first page comes.
    first_viewer: Notify,
    /// The last state sent (`None` before the first).
    latest: watch::Sender<Option<Arc<Update>>>,
}

/// A page listening: counted while it lives.
pub struct Viewer {
    hub: Arc<Hub>,
    /// The states sent, the last one first.
    pub updates: watch::Receiver<Option<Arc<Update>>>,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.hub.viewers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where the daemon's change counter stands, or that it has none.
enum Counter {
    /// It has one; the generation last read (`None`: not read yet).
    At(Option<u64>),
    /// It has none: the state is read every [`POLL`].
    Missing,
}

impl Hub {
    /// A hub for the board of `profile`, and its watcher started on the current runtime.
    pub fn start(profile: Option<String>) -> Arc<Hub> {
        let hub = Arc::new(Hub {
            profile,
            viewers: AtomicUsize::new(0),
            first_viewer: Notify::new(),
            latest: watch::channel(None).0,
        });
        tokio::spawn(watch_daemon(hub.clone()));
        hub
    }

    /// A client for the daemon (or cluster) the board shows.
    pub fn client(&self) -> Result<Client, String> {
        Client::connect_to(self.profile.as_deref()).map_err(|e| state::why(&e))
    }

    /// How many pages listen now.
    pub fn viewers(&self) -> usize {
        self.viewers.load(Ordering::SeqCst)
    }

    /// A page starts to listen.
    pub fn join(self: &Arc<Self>) -> Viewer {
        if self.viewers.fetch_add(1, Ordering::SeqCst) == 0 {
            self.first_viewer.notify_one();
        }
        Viewer { hub: self.clone(), updates: self.latest.subscribe() }
    }

    /// The profile the board shows, if any.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }
}

/// The board's clock, Unix seconds.
fn now() -> i64 {
    crate::sys::now() as i64
}

/// The watcher: while pages listen, the state each time it changes.
async fn watch_daemon(hub: Arc<Hub>) {
    let mut counter = Counter::At(None);
    let mut last: Option<String> = None;
    let mut version = 0u64;
    loop {
        if hub.viewers() == 0 {
            // What was sent last may be stale by the time a page comes: it waits for a fresh one.
            hub.latest.send_replace(None);
            hub.first_viewer.notified().await;
            // The state may have changed unseen meanwhile: read it whole again.
            last = None;
            continue;
        }
        let reader = hub.clone();
        let live = tokio::task::spawn_blocking(move || reader.client().map(|c| state::live(&c))).await;
        match live {
            Ok(Ok(live)) => {
                let text = serde_json::to_string(&live).unwrap_or_default();
                if last.as_deref() != Some(text.as_str()) {
                    version += 1;
                    let json = format!("{{\"version\":{version},\"now\":{},\"live\":{text}}}", now());
                    hub.latest.send_replace(Some(Arc::new(Update { version, json })));
                    last = Some(text);
                }
            }
            Ok(Err(why)) => {
                // The pages say so, and keep what they showed; the next state read goes whole.
                if last.take().is_some() || version == 0 {
                    version += 1;
                    let error = serde_json::to_string(&why).unwrap_or_default();
                    let json = format!("{{\"version\":{version},\"now\":{},\"error\":{error}}}", now());
                    hub.latest.send_replace(Some(Arc::new(Update { version, json })));
                }
                counter = Counter::At(None);
                tokio::time::sleep(POLL).await;
                continue;
            }
            Err(e) => eprintln!("slurmlet board: the daemon's reader failed: {e}"),
        }
        counter = wait_for_change(&hub, counter).await;
    }
}

/// Waits until the state may have changed: the change counter moves (or its wait ends), or,
/// without one, [`POLL`].
async fn wait_for_change(hub: &Arc<Hub>, counter: Counter) -> Counter {
    let after = match counter {
        Counter::Missing => {
            tokio::time::sleep(POLL).await;
            return Counter::Missing;
        }
        Counter::At(after) => after,
    };
    let reader = hub.clone();
    let read = tokio::task::spawn_blocking(move || {
        let client = reader.client()?;
        // Where nothing was read yet, the wait returns at once with where the counter is.
        changes(&client, after.unwrap_or(0), if after.is_some() { LONG_POLL } else { 0 })
    })
    .await;
    match read {
        Ok(Ok(Some(generation))) if after.is_none() => {
            // The state was read before the counter: wait from here on.
            Box::pin(wait_for_change(hub, Counter::At(Some(generation)))).await
        }
        Ok(Ok(Some(generation))) => Counter::At(Some(generation)),
        Ok(Ok(None)) => Counter::Missing,
        Ok(Err(_)) | Err(_) => {
            tokio::time::sleep(POLL).await;
            Counter::At(None)
        }
    }
}

/// `GET /slurmlet/v1/changes?after=…&wait=…`: the generation, or `None` when the daemon (or a
/// cluster) has no change counter.
fn changes(client: &Client, after: u64, wait: u32) -> Result<Option<u64>, String> {
    if client.profile().is_some() {
        return Ok(None);
    }
    let path = format!("/slurmlet/v1/changes?after={after}&wait={wait}");
    match client.get_with_status::<ChangesResponse>(&path) {
        Ok((200, reply)) => Ok(Some(reply.generation)),
        Ok((404 | 405, _)) => Ok(None),
        Ok((status, _)) => Err(format!("the change counter answered HTTP {status}")),
        Err(e) => Err(state::why(&e)),
    }
}
