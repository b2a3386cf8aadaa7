//! The variables of a shard job under its GPU's MPS server (its batch step's and its
//! steps'), as Slurm's MPS setup gives them: where the server is, and the job's share of the
//! GPU in threads and in memory.

use super::place::Place;
use crate::config::Config;
use crate::daemon::model::job::Job;

/// `CUDA_MPS_PIPE_DIRECTORY`, `CUDA_MPS_LOG_DIRECTORY`, `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`
/// (`max(1, shards × 100 / shards_per_gpu)`) and, when the GPU's memory is known,
/// `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` (`0=<share>M`: the job's shards of the GPU's memory in
/// MiB, on the one device it sees). None for a job that is not a shard job or when the
/// daemon runs no MPS servers (`runs_mps`).
pub fn job_vars(job: &Job, config: &Config, runs_mps: bool) -> Vec<(&'static str, String)> {
    let Some(gpu) = job.gpus.first() else { return Vec::new() };
    if job.req.shards == 0 || !runs_mps {
        return Vec::new();
    }
    let place = Place::of(&config.state_dir, gpu.index, job.uid);
    let units = u64::from(config.gpu_units());
    let shards = u64::from(job.req.shards);
    let mut vars = vec![
        ("CUDA_MPS_PIPE_DIRECTORY", place.pipe_dir.display().to_string()),
        ("CUDA_MPS_LOG_DIRECTORY", place.log_dir.display().to_string()),
        ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", (shards * 100 / units).max(1).to_string()),
    ];
    if let Some(mb) = gpu.memory_mb {
        vars.push(("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", format!("0={}M", mb * shards / units)));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::model::job::Resources;

    fn config(shards_per_gpu: u32) -> Config {
        let text = format!("gpus = 2\nshards_per_gpu = {shards_per_gpu}\nmps = true\nstate_dir = \"/state\"\n");
        Config::resolve(toml::from_str(&text).unwrap(), std::path::Path::new("x")).unwrap()
    }

    fn job(shards: u32, memory_mb: Option<u64>) -> Job {
        let mut gpu = crate::gpu::Gpu::nvidia(1);
        gpu.memory_mb = memory_mb;
        Job { uid: 1234, gpus: vec![gpu], req: Resources { shards, ..Default::default() }, ..Default::default() }
    }

    #[test]
    fn a_shard_job_is_told_its_server_and_its_share() {
        let vars = job_vars(&job(3, Some(81559)), &config(8), true);
        assert_eq!(
            vars,
            vec![
                ("CUDA_MPS_PIPE_DIRECTORY", "/state/mps/gpu1-uid1234/pipe".to_string()),
                ("CUDA_MPS_LOG_DIRECTORY", "/state/mps/gpu1-uid1234/log".to_string()),
                ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "37".to_string()),
                ("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=30584M".to_string()),
            ]
        );
    }

    #[test]
    fn a_small_share_gets_one_percent_and_unknown_memory_no_limit() {
        let vars = job_vars(&job(1, None), &config(128), true);
        assert_eq!(vars.len(), 3, "{vars:?}");
        assert_eq!(vars[2], ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "1".to_string()));
    }

    #[test]
    fn no_variables_without_a_server_or_shards() {
        assert!(job_vars(&job(2, Some(1000)), &config(8), false).is_empty());
        assert!(job_vars(&job(0, Some(1000)), &config(8), true).is_empty());
    }
}
