//! What the crash tests share: a seeded random source, jobs that record when they held which
//! GPUs, and the checks run on those records and on the daemon's listings.

use crate::common::Cluster;
use slurmlet::api::types::{JobDescMsg, JobInfo, JobSubmitReq};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A small xorshift generator: the tests print their seed, and `SLURMLET_TORTURE_SEED`
/// replays a run.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `SLURMLET_TORTURE_SEED`, else from the clock; says which.
    pub fn from_env(test: &str) -> Rng {
        let seed = std::env::var("SLURMLET_TORTURE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
        });
        eprintln!("{test}: SLURMLET_TORTURE_SEED={seed}");
        Rng::new(seed)
    }

    /// A generator for `seed` (a zero seed is moved off zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// How many kill rounds a crash test runs: `SLURMLET_TORTURE_ROUNDS`, else `default`.
pub fn rounds(default: usize) -> usize {
    std::env::var("SLURMLET_TORTURE_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// A bash script that appends `start TIME GPUS` to `rec/$SLURM_JOB_ID` first thing and
/// `end TIME` last thing (also when it is cancelled: SIGTERM is trapped first of all), with
/// the job's process id on a `pid` line. In between it sleeps `sleep_ms`, or, with `release`, waits
/// until that file exists. It exits with `exit`.
pub fn recording_script(sleep_ms: u64, release: Option<&str>, exit: i32) -> String {
    let work = match release {
        Some(file) => format!("while [ ! -e {file} ]; do sleep 0.005; done"),
        None => format!("sleep {}.{:03} & wait $!", sleep_ms / 1000, sleep_ms % 1000),
    };
    format!(
        "#!/bin/bash\n\
         r=rec/$SLURM_JOB_ID\n\
         trap 'echo \"end $EPOCHREALTIME\" >> $r; exit 143' TERM\n\
         echo \"start $EPOCHREALTIME $CUDA_VISIBLE_DEVICES\" >> $r\n\
         echo \"pid $$\" >> $r\n\
         {work}\n\
         echo \"end $EPOCHREALTIME\" >> $r\n\
         exit {exit}\n"
    )
}

/// A job description as a REST client sends it: the script, the work directory `work`, a
/// name unique to this submission, output to /dev/null, `gpus` GPUs.
pub fn desc(work: &Path, name: &str, script: String, gpus: u32) -> JobSubmitReq {
    let env = ["PATH", "HOME", "USER", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect();
    JobSubmitReq {
        script: None,
        job: Some(JobDescMsg {
            script: Some(script),
            environment: Some(env),
            current_working_directory: Some(work.display().to_string()),
            name: Some(name.into()),
            standard_output: Some("/dev/null".into()),
            tres_per_node: (gpus > 0).then(|| format!("gres/gpu:{gpus}")),
            ..Default::default()
        }),
    }
}

/// What one job recorded.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// When its script started (seconds, wall clock).
    pub start: f64,
    /// When it ended, if it got to say so.
    pub end: Option<f64>,
    /// Its `CUDA_VISIBLE_DEVICES`.
    pub gpus: Vec<u32>,
    /// The batch shell's pid.
    pub pid: Option<i32>,
    /// Lines that do not parse, or a second start.
    pub garbled: Vec<String>,
}

/// Reads every job's record under `work/rec`, by job id. A job cancelled before its first
/// line is written (its shell was killed before it set its trap, or its trap ran first)
/// recorded nothing and is left out.
pub fn read_records(work: &Path) -> BTreeMap<u32, Record> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(work.join("rec")) else { return out };
    for entry in dir.flatten() {
        let Some(id) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let mut r = Record::default();
        let mut starts = 0;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["start", t, rest @ ..] => {
                    starts += 1;
                    r.start = t.parse().unwrap_or(f64::NAN);
                    r.gpus =
                        rest.first().map(|g| g.split(',').filter_map(|x| x.parse().ok()).collect()).unwrap_or_default();
                    if starts > 1 {
                        r.garbled.push(format!("started again: {line}"));
                    }
                }
                ["pid", p] => r.pid = p.parse().ok(),
                ["end", t] if r.end.is_none() => r.end = t.parse().ok(),
                ["end", _] => {}
                _ => r.garbled.push(line.to_string()),
            }
        }
        if starts > 0 {
            out.insert(id, r);
        }
    }
    out
}

/// Every pair of jobs that held one GPU at overlapping times, by their own records. A job
/// without an end is left out (it never said when it stopped; see the callers).
pub fn gpu_overlaps(records: &BTreeMap<u32, Record>) -> Vec<String> {
    let mut by_gpu: HashMap<u32, Vec<(f64, f64, u32)>> = HashMap::new();
    for (&id, r) in records {
        if let Some(end) = r.end {
            for &g in &r.gpus {
                by_gpu.entry(g).or_default().push((r.start, end, id));
            }
        }
    }
    let mut found = Vec::new();
    for (gpu, mut spans) in by_gpu {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            let ((s1, e1, j1), (s2, e2, j2)) = (w[0], w[1]);
            if s2 < e1 {
                found.push(format!("GPU {gpu}: job {j1} [{s1:.6}, {e1:.6}] and job {j2} [{s2:.6}, {e2:.6}]"));
            }
        }
    }
    found
}

/// The GPU ids of a job's `gres_detail` (`gpu:3(IDX:0-1,3)`).
pub fn gres_ids(detail: &[String]) -> Vec<u32> {
    let mut ids = Vec::new();
    for d in detail {
        let Some(list) = d.split_once("(IDX:").and_then(|(_, l)| l.strip_suffix(')')) else { continue };
        for part in list.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                        ids.extend(a..=b);
                    }
                }
                None => ids.extend(part.parse::<u32>().ok()),
            }
        }
    }
    ids
}

/// Whether a listed job still holds its resources (running, or completing).
pub fn holds(j: &JobInfo) -> bool {
    j.job_state.iter().any(|s| s == "RUNNING" || s == "COMPLETING")
}

/// A GPU that two jobs of one listing hold at once, if any.
pub fn listing_overlap(jobs: &[JobInfo]) -> Option<String> {
    let mut owner: HashMap<u32, u32> = HashMap::new();
    for j in jobs.iter().filter(|j| holds(j)) {
        for g in gres_ids(&j.gres_detail) {
            if let Some(other) = owner.insert(g, j.job_id) {
                return Some(format!("GPU {g} held by jobs {other} and {} in one listing", j.job_id));
            }
        }
    }
    None
}

/// Whether process `pid` still runs (exists and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Whether process `pid` runs, and nothing ends it: no signal waits for it, and it is not
/// exiting (PF_EXITING, 0x4, in the flags of `/proc/PID/stat`).
pub fn untouched(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let Some((_, rest)) = stat.rsplit_once(") ") else { return false };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let exiting = fields.get(6).and_then(|f| f.parse::<u64>().ok()).is_none_or(|f| f & 0x4 != 0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let pending = status
        .lines()
        .filter_map(|l| l.strip_prefix("SigPnd:").or_else(|| l.strip_prefix("ShdPnd:")))
        .any(|v| u64::from_str_radix(v.trim(), 16) != Ok(0));
    !matches!(fields.first(), None | Some(&"Z") | Some(&"X")) && !exiting && !pending
}

/// Whether process `pid` runs job `id`'s batch script: a pid seen long ago may have been
/// handed to another process since.
pub fn runs_script_of(pid: i32, id: u32) -> bool {
    let script = format!("jobs/{id}/slurm_script");
    alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&script))
}

/// The pid of job `id`'s supervisor, from `stepd.pid` in its job directory.
pub fn stepd_pid(c: &Cluster, id: u32) -> Option<i32> {
    let text = std::fs::read_to_string(c.dir.path().join("state/jobs").join(id.to_string()).join("stepd.pid")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_detail_and_overlaps_read_as_meant() {
        assert_eq!(gres_ids(&["gpu:3(IDX:0-1,3)".into()]), vec![0, 1, 3]);
        let rec = |s: f64, e: f64, g: Vec<u32>| Record { start: s, end: Some(e), gpus: g, ..Default::default() };
        let mut r = BTreeMap::new();
        r.insert(1, rec(1.0, 2.0, vec![0]));
        r.insert(2, rec(2.0, 3.0, vec![0, 1]));
        assert!(gpu_overlaps(&r).is_empty());
        r.insert(3, rec(2.5, 2.6, vec![1]));
        assert_eq!(gpu_overlaps(&r).len(), 1);
    }
}
