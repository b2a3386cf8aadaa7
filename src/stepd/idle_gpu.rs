//! A job whose GPUs stayed idle, as the daemon tells the job's supervisor (`[idle_gpus]` in
//! the configuration).
//!
//! The daemon, which looks at the GPUs every `gpu_sample_interval` seconds, finds a job whose
//! every GPU stayed below `below` percent busy for `after`. It writes
//! `JOBDIR/idle_gpu.json` ([`IdleGpus`]), once for the job's run, and sends the supervisor
//! [`super::timing::NOTIFY`] (under `action = "cancel"` it then cancels the job). The
//! supervisor writes the line into the job's error output, as it writes its other
//! `slurmstepd-NODE:` lines, so that the daemon never opens a file a user names; it reads
//! the file before it acts on a cancel too, so that the line comes before the cancel's.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name, in the job's directory.
pub const FILE: &str = "idle_gpu.json";

/// A job found with idle GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleGpus {
    /// When the job's run started (UNIX seconds): a file of an earlier run is not this one's.
    pub start_time: u64,
    /// The threshold, percent.
    pub below: u32,
    /// How long it stayed below, seconds.
    pub for_secs: u64,
    /// Its GPUs with how busy each was at the last look, percent.
    pub gpus: Vec<(u32, u32)>,
    /// Whether the job is being cancelled for it.
    pub cancelled: bool,
}

impl IdleGpus {
    /// The line in the job's error output: `slurmstepd-NODE: warning: Job 12 has kept its
    /// GPUs below 5% busy for 01:00:00 (GPU 0: 0%)`, and `; it is cancelled` when it is.
    pub fn line(&self, node: &str, job: u32) -> String {
        let gpus: Vec<String> = self.gpus.iter().map(|(gpu, busy)| format!("GPU {gpu}: {busy}%")).collect();
        format!(
            "slurmstepd-{node}: warning: Job {job} has kept its GPUs below {}% busy for {} ({}){}",
            self.below,
            crate::options::time::format_hms(self.for_secs),
            gpus.join(", "),
            if self.cancelled { "; it is cancelled" } else { "" }
        )
    }

    /// What the job's record says of it (its `AdminComment`).
    pub fn comment(&self) -> String {
        format!(
            "{} by the idle GPU policy: its GPUs stayed below {}% busy for {}",
            if self.cancelled { "Cancelled" } else { "Warned" },
            self.below,
            crate::options::time::format_hms(self.for_secs)
        )
    }

    /// Puts the notice in `job_dir`, whole, unless one is there: `Ok(false)` when it was.
    pub fn write_once(&self, job_dir: &Path) -> std::io::Result<bool> {
        super::notice_file::write_once(&job_dir.join(FILE), self)
    }

    /// The notice in `job_dir` for the run that started at `start_time`, if there is one.
    pub fn read(job_dir: &Path, start_time: u64) -> Option<IdleGpus> {
        let notice: IdleGpus = super::notice_file::read(&job_dir.join(FILE))?;
        (notice.start_time == start_time).then_some(notice)
    }
}

/// A supervisor's reading of the notice for the job of `spec` (its directory `dir`), unless
/// it read it already (`told`): the notice's line goes to `say`, once.
pub(crate) fn follow(spec: &super::LaunchSpec, dir: &Path, told: &mut bool, say: impl FnOnce(&str)) {
    if *told {
        return;
    }
    let Some(notice) = IdleGpus::read(dir, spec.start_time) else { return };
    *told = true;
    say(&notice.line(&spec.node_name, spec.job_id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_is_written_once_and_read_for_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let notice =
            IdleGpus { start_time: 100, below: 5, for_secs: 3600, gpus: vec![(0, 0), (2, 3)], cancelled: false };
        assert_eq!(IdleGpus::read(dir.path(), 100), None);
        assert!(notice.write_once(dir.path()).unwrap());
        assert!(!IdleGpus { cancelled: true, ..notice.clone() }.write_once(dir.path()).unwrap(), "told once");
        assert_eq!(IdleGpus::read(dir.path(), 100), Some(notice.clone()));
        assert_eq!(IdleGpus::read(dir.path(), 99), None, "an earlier run's notice");
        assert_eq!(
            notice.line("n1", 12),
            "slurmstepd-n1: warning: Job 12 has kept its GPUs below 5% busy for 01:00:00 (GPU 0: 0%, GPU 2: 3%)"
        );
        let cancelled = IdleGpus { cancelled: true, ..notice };
        assert!(cancelled.line("n1", 12).ends_with("(GPU 0: 0%, GPU 2: 3%); it is cancelled"));
        assert_eq!(cancelled.comment(), "Cancelled by the idle GPU policy: its GPUs stayed below 5% busy for 01:00:00");
    }
}
