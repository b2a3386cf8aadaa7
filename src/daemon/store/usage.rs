//! The fair-share usage the store keeps: one row per association (account, uid), its
//! decayed usage as of a time, and in `meta` the time usage was last reset
//! (`usage_reset_at`). The row of a job's association is written in the same transaction as
//! the job's end, so a crash loses neither. A store without `usage_reset_at` (made before
//! usage was kept) has its usage rebuilt from the jobs it holds, once.

use super::{Store, StoreError};
use crate::daemon::model::job::Job;
use rusqlite::{params, OptionalExtension, Transaction};

/// The `meta` key of the last reset; its presence says that usage is kept.
const RESET_KEY: &str = "usage_reset_at";

/// One association's decayed usage.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    /// Its account.
    pub account: String,
    /// Its user.
    pub uid: u32,
    /// Billing-seconds as of `as_of`.
    pub usage: f64,
    /// UNIX seconds.
    pub as_of: u64,
}

/// Version 6 of the layout: the usage table.
pub fn create_table(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE usage (
             account TEXT NOT NULL,
             uid INTEGER NOT NULL,
             usage REAL NOT NULL,
             as_of INTEGER NOT NULL,
             PRIMARY KEY (account, uid)
         ) WITHOUT ROWID;",
    )
}

impl Store {
    /// The usage kept, and when it was last reset; `None`: none is kept yet.
    pub fn usage(&self) -> Result<Option<(Vec<UsageRow>, u64)>, StoreError> {
        let reset: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [RESET_KEY], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        let Some(reset) = reset else { return Ok(None) };
        let mut stmt =
            self.conn.prepare_cached("SELECT account, uid, usage, as_of FROM usage").map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(UsageRow {
                    account: r.get(0)?,
                    uid: r.get(1)?,
                    usage: r.get(2)?,
                    as_of: r.get::<_, i64>(3)?.max(0) as u64,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.sql(e))?;
        Ok(Some((rows, reset.max(0) as u64)))
    }

    /// Every run that ended: the ended jobs, and the earlier runs of requeued ones, to
    /// rebuild usage from.
    pub fn ended_runs(&self) -> Result<Vec<Job>, StoreError> {
        let mut runs = self.history(None, |_| true)?;
        runs.retain(|j| j.state().is_finished());
        let mut stmt = self.conn.prepare_cached("SELECT job_id, record FROM runs").map_err(|e| self.sql(e))?;
        let records: Vec<(u32, String)> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).and_then(Iterator::collect).map_err(|e| self.sql(e))?;
        for (id, record) in records {
            runs.push(serde_json::from_str(&record).map_err(|source| StoreError::Record { id, source })?);
        }
        Ok(runs)
    }
}

/// Writes one association's row.
pub fn write_row(tx: &Transaction, row: &UsageRow) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR REPLACE INTO usage (account, uid, usage, as_of) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![row.account, row.uid, row.usage, row.as_of as i64])?;
    Ok(())
}

/// Replaces every row (a rebuild or a reset at `reset_at`).
pub fn write_all(tx: &Transaction, rows: &[UsageRow], reset_at: u64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM usage", [])?;
    for row in rows {
        write_row(tx, row)?;
    }
    tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?
        .execute(params![RESET_KEY, reset_at as i64])?;
    Ok(())
}
