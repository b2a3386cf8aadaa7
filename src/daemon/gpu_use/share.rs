//! Each job's GPU memory on each GPU at the last look, and the shard jobs that hold more than
//! their share of their GPU's memory at two looks in a row ([`ShareWatch`]); the scheduler
//! tells those jobs' supervisors (see [`crate::stepd::gpu_share`]).

use super::foreign::node_index;
use super::owners::Owner;
use crate::gpu::{Gpu, GpuProcess, GpuReading};
use std::collections::{HashMap, HashSet};

/// The GPU memory of each job on each of `gpus` at one look, bytes, keyed by (job, the
/// node's index of the GPU): the sums over its processes among `processes` (found by
/// `owners`), its steps' included. A job with no process on a GPU has no entry for it.
pub fn job_memory(processes: &[GpuProcess], owners: &HashMap<u32, Owner>, gpus: &[Gpu]) -> HashMap<(u32, u32), u64> {
    let mut found = HashMap::new();
    for p in processes {
        let (Some((job, _)), Some(gpu)) = (owners.get(&p.pid), node_index(gpus, &p.gpu_uuid)) else { continue };
        *found.entry((*job, gpu)).or_default() += p.used_memory.unwrap_or(0);
    }
    found
}

/// What the last look read of `gpu`: its own figures, or for a MIG instance none (the
/// driver reports whole GPUs).
pub fn reading_of<'a>(gpu: &Gpu, readings: &'a [GpuReading]) -> Option<&'a GpuReading> {
    let uuid = gpu.uuid.as_deref().filter(|_| gpu.mig_parent.is_none())?;
    readings.iter().find(|r| r.uuid == uuid)
}

/// `gpu`'s memory in all, bytes: as the last look read it (`reading`, see [`reading_of`]),
/// else as found when the daemon started; `None` when neither says.
pub fn total_memory(gpu: &Gpu, reading: Option<&GpuReading>) -> Option<u64> {
    reading.and_then(|r| r.memory_total).or(gpu.memory_mb.map(|mb| mb << 20))
}

/// A running shard job's share of its GPU's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// The job.
    pub job: u32,
    /// The node's index of its GPU.
    pub gpu: u32,
    /// Its shards.
    pub shards: u32,
    /// Its share of the GPU's memory, bytes.
    pub bytes: u64,
}

/// The jobs' GPU memory at the last look, and how many looks in a row each shard job held
/// more than its share.
#[derive(Debug, Clone, Default)]
pub struct ShareWatch {
    /// Each job's memory on each GPU at the last look (see [`job_memory`]).
    used: HashMap<(u32, u32), u64>,
    /// The looks in a row at which each shard job was over its share.
    over: HashMap<u32, u32>,
    /// The jobs found over their share already, told once.
    found: HashSet<u32>,
}

/// The looks in a row at which a job holds more than its share before its supervisor is
/// told: one look may catch a passing peak.
pub const LOOKS_OVER: u32 = 2;

impl ShareWatch {
    /// Counts a look at which the jobs held `used` (see [`job_memory`]), the running shard
    /// jobs having `shares`. Returns the shares over which a job went at [`LOOKS_OVER`] looks
    /// in a row, each with the memory the job holds now; a job is found once.
    pub fn look(&mut self, used: HashMap<(u32, u32), u64>, shares: &[Share]) -> Vec<(Share, u64)> {
        self.used = used;
        let mut over = HashMap::new();
        let mut found = Vec::new();
        for share in shares {
            let now = self.used_by(share.job, share.gpu);
            if now <= share.bytes {
                continue;
            }
            let looks = self.over.get(&share.job).copied().unwrap_or(0) + 1;
            over.insert(share.job, looks);
            if looks >= LOOKS_OVER && self.found.insert(share.job) {
                found.push((*share, now));
            }
        }
        self.over = over;
        found
    }

    /// The memory job `job` held on GPU `gpu` at the last look (0: none of its processes
    /// were seen on it).
    pub fn used_by(&self, job: u32, gpu: u32) -> u64 {
        self.used.get(&(job, gpu)).copied().unwrap_or(0)
    }

    /// Forgets job `job`, which ended.
    pub fn forget(&mut self, job: u32) {
        self.used.retain(|(j, _), _| *j != job);
        self.over.remove(&job);
        self.found.remove(&job);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::StepId;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_jobs_processes_are_summed_per_gpu() {
        let gpus = [
            Gpu { uuid: Some("GPU-a".into()), ..Gpu::nvidia(0) },
            Gpu { uuid: Some("GPU-b".into()), ..Gpu::nvidia(1) },
        ];
        let on = |uuid: &str, pid: u32, memory: u64| GpuProcess {
            gpu_uuid: uuid.into(),
            pid,
            used_memory: Some(memory),
            sm_util: None,
        };
        let owners = HashMap::from([(10, (7, StepId::Batch)), (11, (7, StepId::Number(0))), (12, (8, StepId::Batch))]);
        let processes = [on("GPU-a", 10, GIB), on("GPU-a", 11, 2 * GIB), on("GPU-b", 12, GIB), on("GPU-a", 99, GIB)];
        let found = job_memory(&processes, &owners, &gpus);
        assert_eq!(found, HashMap::from([((7, 0), 3 * GIB), ((8, 1), GIB)]));
    }

    #[test]
    fn a_job_is_found_once_after_two_looks_over_its_share_in_a_row() {
        let mut watch = ShareWatch::default();
        let share = Share { job: 7, gpu: 0, shards: 1, bytes: 10 * GIB };
        let neighbour = Share { job: 8, gpu: 0, shards: 1, bytes: 10 * GIB };
        let shares = [share, neighbour];
        let at = |seven: u64| HashMap::from([((7, 0), seven), ((8, 0), GIB)]);
        assert!(watch.look(at(11 * GIB), &shares).is_empty(), "one look may be a passing peak");
        assert!(watch.look(at(9 * GIB), &shares).is_empty());
        assert!(watch.look(at(11 * GIB), &shares).is_empty(), "the count starts again");
        assert_eq!(watch.look(at(12 * GIB), &shares), [(share, 12 * GIB)]);
        assert!(watch.look(at(13 * GIB), &shares).is_empty(), "found once");
        assert_eq!((watch.used_by(7, 0), watch.used_by(8, 0), watch.used_by(8, 1)), (13 * GIB, GIB, 0));
        watch.forget(7);
        assert_eq!(watch.used_by(7, 0), 0);
        // Exactly its share is not over it.
        assert!(watch.look(at(10 * GIB), &shares).is_empty());
        assert!(watch.look(at(10 * GIB), &shares).is_empty());
    }

    #[test]
    fn a_gpus_size_is_read_or_as_found() {
        let gpu = Gpu { uuid: Some("GPU-a".into()), memory_mb: Some(40960), ..Gpu::nvidia(0) };
        let reading = GpuReading {
            uuid: "GPU-a".into(),
            memory_used: None,
            memory_total: Some(39 * GIB),
            utilization: None,
            note: None,
        };
        let readings = [reading];
        assert_eq!(total_memory(&gpu, reading_of(&gpu, &readings)), Some(39 * GIB));
        assert_eq!(total_memory(&gpu, None), Some(40 * GIB));
        let mig = Gpu { mig_parent: Some("GPU-a".into()), ..gpu.clone() };
        assert_eq!(reading_of(&mig, &readings), None, "the driver reads whole GPUs");
        assert_eq!(total_memory(&Gpu::nvidia(1), reading_of(&Gpu::nvidia(1), &readings)), None);
    }
}
