//! The periodic look at the GPUs. It runs only to see; the scheduler is told when what it
//! sees changes, and a pass runs only then.

use super::foreign::foreign;
use super::owners::owners;
use crate::daemon::runtime::Daemon;
use crate::gpu::{sampler_for, GpuSampler};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// Looks at the GPUs every `gpu_sample_interval` seconds (the GPUs the daemon found at its
/// start), for as long as the daemon runs; returns at once when the interval is 0 or the
/// GPUs' source cannot show their processes. Each look tallies the running steps' GPU use,
/// weighs the shard jobs' memory against their shares, counts into the GPU samples kept for
/// the board and finds the processes outside the queue. A failed look is logged once with its cause
/// (and its end once), and the scheduler goes on with what it last saw.
pub async fn watch(daemon: Arc<Daemon>) {
    let (interval, sampler) = {
        let core = daemon.core.lock();
        let c = &core.config;
        (c.gpu_sample_interval, sampler_for(c.gpu_source.as_deref(), &c.nvml_library, &c.gpus))
    };
    let Some(sampler) = sampler.filter(|_| interval > 0) else { return };
    let sampler: Arc<dyn GpuSampler> = sampler.into();
    tracing::debug!(sampler = sampler.name(), interval, "watching the GPUs' processes");
    // The first look one interval after the start, as every other.
    let period = Duration::from_secs(interval);
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        ticks.tick().await;
        let (look, seer) = (sampler.clone(), daemon.clone());
        // The jobs are read after the look: a process seen on a GPU was started before it,
        // so the job it belongs to is known by then.
        let seen = tokio::task::spawn_blocking(move || {
            let sample = look.sample()?;
            let (jobs, gpus, threshold) = {
                let core = seer.core.lock();
                (
                    core.job_processes(),
                    core.config.gpus.clone(),
                    core.config.foreign_gpu_memory_mib.saturating_mul(1 << 20),
                )
            };
            let pids: HashSet<u32> = sample.processes.iter().map(|p| p.pid).collect();
            let owners = owners(&pids, &jobs);
            let found = foreign(&sample.processes, &gpus, &owners, threshold);
            Ok::<_, crate::gpu::GpuError>((sample, owners, jobs, found))
        })
        .await;
        match seen {
            Ok(Ok((sample, owners, jobs, found))) => {
                if std::mem::take(&mut failing) {
                    tracing::info!(sampler = sampler.name(), "the GPUs' processes can be seen again");
                }
                let effects = {
                    let mut core = daemon.core.lock();
                    core.tally_gpu_use(&sample.processes, &owners, &jobs);
                    core.watch_gpu_shares(&sample, &owners);
                    core.record_gpu_history(&sample, &owners, &jobs);
                    core.set_gpu_sample(sample);
                    core.set_foreign_gpu_processes(found)
                };
                daemon.apply(effects);
            }
            Ok(Err(e)) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::warn!(
                        sampler = sampler.name(),
                        "cannot see the processes on the GPUs; scheduling on what was last seen: {e}"
                    );
                }
            }
            Err(e) => tracing::error!("the look at the GPUs' processes failed: {e}"),
        }
    }
}
