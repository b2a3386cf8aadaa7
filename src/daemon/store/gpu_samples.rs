//! The GPU samples the store keeps (tables `gpu_samples` and `job_gpu_samples`, see
//! [`super::schema`]): one row per GPU and one per job using a GPU for each closed step of
//! `gpu_history_resolution` seconds, written by the writer thread (`write`), pruned past
//! `gpu_history_days` (`prune`) and read for the board ([`Store::gpu_samples`],
//! [`Store::job_gpu_samples`]).

use super::{Store, StoreError};
use crate::api::activity::Sample;
use rusqlite::params;

/// The figures of one closed step: the means of the looks within it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepSamples {
    /// The step's start, UNIX seconds (a multiple of the resolution).
    pub time: i64,
    /// Each GPU's: `(index, memory used, utilisation)`.
    pub gpus: Vec<(u32, u64, u32)>,
    /// Each job's, summed over its processes: `(job id, memory used, utilisation)`.
    pub jobs: Vec<(u32, u64, u32)>,
}

/// Writes the rows of `step` (a step written again replaces its rows).
pub(super) fn write(tx: &rusqlite::Transaction, step: &StepSamples) -> rusqlite::Result<()> {
    let mut gpu = tx.prepare_cached(
        "INSERT OR REPLACE INTO gpu_samples (time, gpu, memory_used, utilization) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for &(index, memory, util) in &step.gpus {
        gpu.execute(params![step.time, index, memory as i64, util])?;
    }
    let mut job = tx.prepare_cached(
        "INSERT OR REPLACE INTO job_gpu_samples (job_id, time, memory_used, utilization) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for &(id, memory, util) in &step.jobs {
        job.execute(params![id, step.time, memory as i64, util])?;
    }
    Ok(())
}

/// Removes the rows of the steps that started before `before` (UNIX seconds).
pub(super) fn prune(tx: &rusqlite::Transaction, before: i64) -> rusqlite::Result<()> {
    let gpus = tx.prepare_cached("DELETE FROM gpu_samples WHERE time < ?1")?.execute([before])?;
    let jobs = tx.prepare_cached("DELETE FROM job_gpu_samples WHERE time < ?1")?.execute([before])?;
    if gpus + jobs > 0 {
        tracing::debug!(gpus, jobs, "GPU samples older than gpu_history_days removed");
    }
    Ok(())
}

impl Store {
    /// The GPUs' samples of the steps that started at or after `since`, as `(index,
    /// samples)` by index, each GPU's oldest first.
    pub fn gpu_samples(&self, since: i64) -> Result<Vec<(u32, Vec<Sample>)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT gpu, time, memory_used, utilization FROM gpu_samples WHERE time >= ?1 ORDER BY gpu, time",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([since], |r| {
                Ok((r.get::<_, u32>(0)?, (r.get::<_, i64>(1)?, r.get::<_, i64>(2)? as u64, r.get::<_, u32>(3)?)))
            })
            .map_err(|e| self.sql(e))?;
        let mut found: Vec<(u32, Vec<Sample>)> = Vec::new();
        for row in rows {
            let (gpu, sample) = row.map_err(|e| self.sql(e))?;
            match found.last_mut() {
                Some((index, samples)) if *index == gpu => samples.push(sample),
                _ => found.push((gpu, vec![sample])),
            }
        }
        Ok(found)
    }

    /// Job `job`'s samples, oldest first.
    pub fn job_gpu_samples(&self, job: u32) -> Result<Vec<Sample>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT time, memory_used, utilization FROM job_gpu_samples WHERE job_id = ?1 ORDER BY time",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([job], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64, r.get::<_, u32>(2)?)))
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.sql(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::store::writer::Writer;

    #[test]
    fn samples_are_written_read_back_by_gpu_and_job_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let store = Store::open(&path).unwrap();
        let writer = Writer::start(&path).unwrap();
        for (time, util) in [(60, 10), (120, 20), (180, 30)] {
            let step = StepSamples {
                time,
                gpus: vec![(1, 5 << 30, util), (0, 1 << 30, util + 1)],
                jobs: vec![(7, 4 << 30, util)],
            };
            writer.gpu_samples(step);
        }
        writer.flush();
        assert_eq!(
            store.gpu_samples(120).unwrap(),
            [(0, vec![(120, 1 << 30, 21), (180, 1 << 30, 31)]), (1, vec![(120, 5 << 30, 20), (180, 5 << 30, 30)])]
        );
        assert_eq!(store.job_gpu_samples(7).unwrap(), [(60, 4 << 30, 10), (120, 4 << 30, 20), (180, 4 << 30, 30)]);
        assert!(store.job_gpu_samples(8).unwrap().is_empty());
        assert_eq!(writer.prune_gpu_samples(180).wait(), Ok(()));
        assert_eq!(store.gpu_samples(0).unwrap().iter().map(|(_, s)| s.len()).collect::<Vec<_>>(), [1, 1]);
        assert_eq!(store.job_gpu_samples(7).unwrap(), [(180, 4 << 30, 30)]);
    }
}
