//! Real Slurm, when its commands are on `PATH`: found, driven with the same command lines,
//! and cleaned up after (every job the harness submitted is cancelled).

use crate::error::{failed, io, Result};
use crate::proc::{parsable_id, timed_ok};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A real Slurm cluster reachable through its client commands.
pub struct RealSlurm {
    dir: PathBuf,
    /// The version `sbatch --version` printed (`slurm 22.05.8`, `slurm-wlm 22.05.8`).
    pub version: String,
    /// The controller's MaxJobCount, when `scontrol show config` tells it.
    pub max_job_count: Option<usize>,
    work: PathBuf,
    submitted: Mutex<Vec<u32>>,
}

impl RealSlurm {
    /// Looks for a real `sbatch` on `PATH`: one that is not a link to a slurmlet binary and
    /// whose `--version` says `slurm …`. The error says why none is used.
    pub fn detect(ours: &Path, parent: &Path) -> std::result::Result<RealSlurm, String> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let ours = std::fs::canonicalize(ours).unwrap_or_else(|_| ours.to_path_buf());
        for dir in std::env::split_paths(&path) {
            let sbatch = dir.join("sbatch");
            let Ok(target) = std::fs::canonicalize(&sbatch) else { continue };
            if target == ours || target.file_name().is_some_and(|n| n.to_string_lossy().starts_with("slurmlet")) {
                continue;
            }
            let Ok(out) = Command::new(&sbatch).arg("--version").stdin(Stdio::null()).output() else { continue };
            let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
            // `slurm 24.11.5` from a source build, `slurm-wlm 22.05.8` from Debian's packages.
            if !out.status.success() || !(version.starts_with("slurm ") || version.starts_with("slurm-wlm ")) {
                continue;
            }
            if !dir.join("squeue").exists() || !dir.join("scancel").exists() {
                return Err(format!("{} has sbatch but no squeue/scancel", dir.display()));
            }
            let work = parent.join(format!("slurmlet-bench-{}-real", std::process::id()));
            std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
            let mut real = RealSlurm { dir, version, max_job_count: None, work, submitted: Mutex::new(Vec::new()) };
            real.max_job_count = real.read_max_job_count();
            // The controller must answer, or every figure would fail one by one.
            let ping = real.cmd("squeue").args(["-h", "-o", "%i"]).output();
            return match ping {
                Ok(o) if o.status.success() => Ok(real),
                Ok(o) => Err(format!("real squeue fails: {}", String::from_utf8_lossy(&o.stderr).trim())),
                Err(e) => Err(format!("cannot run real squeue: {e}")),
            };
        }
        Err("not on PATH".into())
    }

    fn read_max_job_count(&self) -> Option<usize> {
        let out = self.cmd("scontrol").args(["show", "config"]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "MaxJobCount").then(|| v.trim().parse().ok()).flatten()
        })
    }

    /// A real Slurm command, run in the harness's work directory without the caller's
    /// `SBATCH_*` variables.
    pub fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(self.dir.join(name));
        c.current_dir(&self.work).stdin(Stdio::null());
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("SBATCH_") || k.starts_with("SLURMLET_") {
                c.env_remove(&*k);
            }
        }
        c
    }

    /// Runs `sbatch --parsable ARGS`, remembering the job for cleanup; returns the wall time
    /// in ms and the id.
    pub fn sbatch(&self, args: &[&str]) -> Result<(f64, u32)> {
        let (ms, out) = timed_ok(self.cmd("sbatch").arg("--parsable").args(args))?;
        let id = parsable_id(&out)?;
        self.submitted.lock().expect("job list").push(id);
        Ok((ms, id))
    }

    /// Submits `n` held jobs one after another.
    pub fn fill_held(&self, n: usize) -> Result<()> {
        for _ in 0..n {
            self.sbatch(&["--hold", "-J", "slurmlet-bench-held", "-o", "/dev/null", "--wrap", "true"])?;
        }
        Ok(())
    }

    /// How many jobs real `squeue` lists.
    pub fn queue_len(&self) -> Result<usize> {
        let (_, out) = timed_ok(self.cmd("squeue").args(["-h", "-o", "%i"]))?;
        Ok(out.stdout.iter().filter(|&&b| b == b'\n').count())
    }

    /// How many jobs the controller holds in any state: ended ones stay for its MinJobAge,
    /// and its `squeue` reads through them all.
    pub fn jobs_held(&self) -> Result<usize> {
        let (_, out) = timed_ok(self.cmd("squeue").args(["-h", "-t", "all", "-o", "%i"]))?;
        Ok(out.stdout.iter().filter(|&&b| b == b'\n').count())
    }

    /// Waits until the controller can take `n` more jobs: ended jobs count against its
    /// MaxJobCount until its MinJobAge has passed. Returns how long it waited.
    pub fn make_room(&self, n: usize) -> Result<Duration> {
        let Some(max) = self.max_job_count else { return Ok(Duration::ZERO) };
        let start = std::time::Instant::now();
        loop {
            let held = self.jobs_held()?;
            if held + n <= max {
                return Ok(start.elapsed());
            }
            if start.elapsed() > Duration::from_secs(600) {
                return Err(failed(format!(
                    "real Slurm still holds {held} jobs after 10 minutes; {n} more would pass its MaxJobCount {max}"
                )));
            }
            std::thread::sleep(Duration::from_secs(5));
        }
    }

    /// Waits until `squeue` lists no job named `name` (polling every 200 ms).
    pub fn wait_gone(&self, name: &str, timeout: Duration) -> Result<Duration> {
        let t0 = Instant::now();
        loop {
            let (_, out) = timed_ok(self.cmd("squeue").args(["-h", "-n", name, "-o", "%i"]))?;
            if out.stdout.iter().all(u8::is_ascii_whitespace) {
                return Ok(t0.elapsed());
            }
            if t0.elapsed() > timeout {
                return Err(failed(format!("real Slurm jobs named {name} still queued after {timeout:?}")));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Cancels every job the harness submitted (500 ids per `scancel`).
    pub fn cancel_all(&self) -> Result<()> {
        let ids = std::mem::take(&mut *self.submitted.lock().expect("job list"));
        for chunk in ids.chunks(500) {
            let mut c = self.cmd("scancel");
            c.args(chunk.iter().map(u32::to_string));
            // Jobs that already ended make scancel complain; that is fine.
            c.output().map_err(io("cannot run real scancel"))?;
        }
        Ok(())
    }
}

impl Drop for RealSlurm {
    fn drop(&mut self) {
        let _ = self.cancel_all();
        let _ = std::fs::remove_dir_all(&self.work);
    }
}
