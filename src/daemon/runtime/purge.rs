//! The purge of old finished jobs from the accounting history, once a day.

use crate::daemon::runtime::Daemon;
use std::sync::Arc;

/// Removes the history older than `history_days`, and the GPU samples older than
/// `gpu_history_days`, now and every hour.
pub async fn purge_periodically(d: Arc<Daemon>) {
    loop {
        d.core.lock().purge_history(crate::sys::now());
        tokio::time::sleep(PURGE_EVERY).await;
    }
}

/// How often the history older than `history_days` is removed.
const PURGE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);
