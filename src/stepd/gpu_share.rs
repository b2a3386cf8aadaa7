//! A shard job that uses more of its GPU's memory than its share, as the daemon tells the
//! job's supervisor (`shard_memory` in the configuration).
//!
//! A GPU split into shards does not hold each job to its share of the GPU's memory: the
//! driver knows no such limit. The daemon, which looks at the GPUs' processes every
//! `gpu_sample_interval` seconds, finds a shard job whose processes hold more than
//! `shards / shards_per_gpu` of its GPU's memory at two looks in a row. It then writes
//! `JOBDIR/gpu_share.json` ([`OverShare`]), once for the job's run, and sends the job's
//! supervisor [`super::timing::NOTIFY`], the signal by which the daemon already tells it to
//! read the job's directory again.
//!
//! The supervisor, not the daemon, writes the line into the job's error output: it owns that
//! file (opened as the job's owner, where its other `slurmstepd-NODE:` lines go), so the
//! daemon never opens a file that a user names. Under `shard_memory = "enforce"` the
//! supervisor then ends the job as it ends one whose processes the kernel killed for want of
//! memory (an interactive allocation's supervisor tells its client the line and revokes the
//! allocation): it is recorded `OUT_OF_MEMORY`, with slurmstepd's `SIG_OOM` status (sacct's
//! `0:125`), and the other jobs on the GPU go on. A notice that reaches the supervisor before
//! it blocked the signal is not lost: the supervisor reads the file when it starts watching
//! the job.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name, in the job's directory.
pub const FILE: &str = "gpu_share.json";

/// A shard job found over its share of its GPU's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverShare {
    /// When the job's run started (UNIX seconds): a file of an earlier run is not this one's.
    pub start_time: u64,
    /// The node's index of its GPU.
    pub gpu: u32,
    /// The GPU memory its processes held at the second look, bytes.
    pub used: u64,
    /// Its share of the GPU's memory, bytes.
    pub share: u64,
    /// Its shards.
    pub shards: u32,
    /// The shards each GPU is split into.
    pub shards_per_gpu: u32,
    /// Whether the job is to be ended for it (`shard_memory = "enforce"`).
    pub end_job: bool,
}

impl OverShare {
    /// The line in the job's error output: `slurmstepd-NODE: warning: Job 12 uses 21.3 GiB
    /// of GPU 0, its share is 10.0 GiB (4 of 32 shards)`.
    pub fn line(&self, node: &str, job: u32) -> String {
        format!(
            "slurmstepd-{node}: warning: Job {job} uses {} GiB of GPU {}, its share is {} GiB ({} of {} shards)",
            crate::gpu::gib(self.used),
            self.gpu,
            crate::gpu::gib(self.share),
            self.shards,
            self.shards_per_gpu
        )
    }

    /// Puts the notice in `job_dir`, whole, unless one is there: `Ok(false)` when it was
    /// (the job was told already, by this daemon or by one before a restart).
    pub fn write_once(&self, job_dir: &Path) -> std::io::Result<bool> {
        super::notice_file::write_once(&job_dir.join(FILE), self)
    }

    /// The notice in `job_dir` for the run that started at `start_time`, if there is one.
    pub fn read(job_dir: &Path, start_time: u64) -> Option<OverShare> {
        let notice: OverShare = super::notice_file::read(&job_dir.join(FILE))?;
        (notice.start_time == start_time).then_some(notice)
    }
}

/// A supervisor's reading of the notice for the job of `spec` (its directory `dir`), unless
/// it read it already (`told`): the notice's line goes to `say` (the job's error output, or
/// an interactive allocation's client), once. Returns whether the job is to be ended for it.
pub(crate) fn follow(spec: &super::LaunchSpec, dir: &Path, told: &mut bool, say: impl FnOnce(&str)) -> bool {
    if *told {
        return false;
    }
    let Some(notice) = OverShare::read(dir, spec.start_time) else { return false };
    *told = true;
    say(&notice.line(&spec.node_name, spec.job_id));
    notice.end_job
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_is_written_once_and_read_for_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let notice = OverShare {
            start_time: 100,
            gpu: 0,
            used: 22_870_700_000,
            share: 10 << 30,
            shards: 4,
            shards_per_gpu: 32,
            end_job: false,
        };
        assert_eq!(OverShare::read(dir.path(), 100), None);
        assert!(notice.write_once(dir.path()).unwrap());
        let again = OverShare { used: 1, ..notice };
        assert!(!again.write_once(dir.path()).unwrap(), "a job is told once");
        assert_eq!(OverShare::read(dir.path(), 100), Some(notice));
        assert_eq!(OverShare::read(dir.path(), 99), None, "an earlier run's notice");
        assert_eq!(
            notice.line("n1", 12),
            "slurmstepd-n1: warning: Job 12 uses 21.3 GiB of GPU 0, its share is 10.0 GiB (4 of 32 shards)"
        );
        assert!(!dir.path().join("gpu_share.tmp").exists());
    }
}
