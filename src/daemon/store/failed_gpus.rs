//! The GPUs taken out of service for what their driver reported (an XID event, memory that
//! waits for a reset, a GPU lost), kept in `meta` (`failed_gpus`, a JSON object of index to
//! reason) so that a restart of the daemon does not hand a failed GPU out again: it stays
//! out until an administrator puts it back.

use super::{Store, StoreError};
use rusqlite::OptionalExtension;
use std::collections::BTreeMap;

/// The `meta` key.
pub const KEY: &str = "failed_gpus";

impl Store {
    /// The failed GPUs by index, with why; none when the store keeps none.
    pub fn failed_gpus(&self) -> Result<BTreeMap<u32, String>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1", [KEY], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default())
    }
}

/// The failed GPUs as the store keeps them.
pub fn text(failed: &BTreeMap<u32, String>) -> String {
    serde_json::to_string(failed).expect("a map of strings serializes")
}
