//! The advance reservations, kept in `meta` (`reservations`, one JSON document: the
//! reservations and the number the next unnamed one is given) so that a restart of the
//! daemon keeps every reservation, and its windows hold for the jobs queued meanwhile.

use super::{Store, StoreError};
use crate::daemon::model::reservation::Reservation;
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

/// The `meta` key.
pub const KEY: &str = "reservations";

/// What the store keeps of the reservations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Kept {
    /// The number in the name of the next reservation made without one (`alice_3`).
    pub next_id: u32,
    /// The reservations.
    pub reservations: Vec<Reservation>,
}

impl Store {
    /// The reservations kept; none when the store keeps none. A document that does not read
    /// is refused rather than taken as none: reservations silently lost would let jobs onto
    /// what was set aside.
    pub fn reservations(&self) -> Result<Kept, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1", [KEY], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        match text {
            None => Ok(Kept::default()),
            Some(t) => serde_json::from_str(&t).map_err(|e| {
                self.sql(rusqlite::Error::ToSqlConversionFailure(
                    format!("the reservations kept in meta do not read: {e}").into(),
                ))
            }),
        }
    }
}

/// The reservations as the store keeps them.
pub fn text(kept: &Kept) -> String {
    serde_json::to_string(kept).expect("reservations serialize")
}
