//! The periodic look at the GPUs. It runs only to see; the scheduler is told when what it
//! sees changes, and a pass runs only then.

use crate::daemon::gpu_use::foreign::{foreign, ForeignProcess};
use crate::daemon::gpu_use::owners::{owners, JobProcesses, Owner};
use crate::daemon::runtime::Daemon;
use crate::gpu::{sampler_for, GpuSample, GpuSampler, TOOL_DEADLINE};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one look may take before it is given up on: the deadline of a vendor's tool,
/// twice (nvidia-smi is asked twice a look; AMD's sampler keeps all its calls within that
/// time too), and a little more. A look into a library that
/// hangs in the driver is abandoned then (its thread left to it), and no other look starts
/// while it is out.
pub const LOOK_DEADLINE: Duration = TOOL_DEADLINE.saturating_mul(2).saturating_add(Duration::from_secs(5));

/// How long what the last look saw is trusted while the later ones fail: three looks' time,
/// and at least [`LOOK_DEADLINE`]. Past it, the processes outside the queue it saw no longer
/// keep new jobs off their GPUs, whose use cannot be seen any more.
pub fn stale_after(interval: Duration) -> Duration {
    interval.saturating_mul(3).max(LOOK_DEADLINE)
}

/// Looks at the GPUs every `gpu_sample_interval` seconds (the GPUs the daemon found at its
/// start), for as long as the daemon runs; returns at once when the interval is 0 or the
/// GPUs' source cannot show their processes. Each look tallies the running steps' GPU use,
/// weighs the shard jobs' memory against their shares, counts into the GPU samples kept for
/// the board and finds the processes outside the queue. What the driver says is bounded
/// first ([`crate::gpu::GpuSample::bounded`]). A failed or hung look is logged once with its
/// cause (and its end once), and the scheduler goes on with what it last saw, for
/// [`stale_after`] the interval.
pub async fn watch(daemon: Arc<Daemon>) {
    let (interval, sampler) = {
        let core = daemon.core.lock();
        let c = &core.config;
        (c.gpu_sample_interval, sampler_for(core.machine.gpu_source.as_deref(), &c.nvml_library, &c.gpus))
    };
    let Some(sampler) = sampler.filter(|_| interval > 0) else { return };
    let sampler: Arc<dyn GpuSampler> = sampler.into();
    tracing::debug!(sampler = sampler.name(), interval, "watching the GPUs' processes");
    // The first look one interval after the start, as every other.
    let period = Duration::from_secs(interval);
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let out = Arc::new(AtomicBool::new(false));
    let mut failing: Option<Failing> = None;
    let mut doubting = false;
    loop {
        ticks.tick().await;
        let begun = Instant::now();
        match look(&daemon, &sampler, &out).await {
            Ok((sample, doubts, owners, jobs, found)) => {
                if failing.take().is_some() {
                    tracing::info!(sampler = sampler.name(), "the GPUs' processes can be seen again");
                }
                if !doubts.is_empty() && !std::mem::replace(&mut doubting, true) {
                    tracing::warn!(
                        sampler = sampler.name(),
                        "the driver reported what cannot be true, set right: {}",
                        doubts.join("; ")
                    );
                }
                doubting &= !doubts.is_empty();
                let effects = {
                    let mut core = daemon.core.lock();
                    core.tally_gpu_use(&sample.processes, &owners, &jobs);
                    core.watch_gpu_shares(&sample, &owners);
                    let mut effects = core.set_gpu_troubles(&sample.troubles);
                    effects.merge(core.watch_idle_gpus(&sample, &owners, crate::sys::now()));
                    core.record_gpu_history(&sample, &owners, &jobs);
                    core.set_gpu_sample(sample);
                    effects.merge(core.set_foreign_gpu_processes(found));
                    effects
                };
                daemon.apply(effects);
            }
            Err(why) => {
                let failing = failing.get_or_insert_with(|| {
                    tracing::warn!(
                        sampler = sampler.name(),
                        "cannot see the processes on the GPUs; scheduling on what was last seen: {why}"
                    );
                    Failing { since: begun, dropped: false }
                });
                if !failing.dropped && failing.since.elapsed() >= stale_after(period) {
                    failing.dropped = true;
                    tracing::warn!(
                        sampler = sampler.name(),
                        "the GPUs' processes have not been seen for {} s: the processes outside the queue last seen no longer keep jobs off their GPUs",
                        failing.since.elapsed().as_secs()
                    );
                    let effects = daemon.core.lock().set_foreign_gpu_processes(Vec::new());
                    daemon.apply(effects);
                }
            }
        }
    }
}

/// Since when the looks fail (the start of the first that failed), and whether what was
/// last seen was dropped for it.
struct Failing {
    since: Instant,
    dropped: bool,
}

/// What one look found: the sample (bounded), what was set right in it, the owners of its
/// processes, the jobs' processes and the processes outside the queue.
type Seen = (GpuSample, Vec<String>, HashMap<u32, Owner>, JobProcesses, Vec<ForeignProcess>);

/// One look at the GPUs, on a blocking thread, given up after [`LOOK_DEADLINE`]; none while
/// an earlier one is still `out`. `Err` says why nothing was seen.
async fn look(daemon: &Arc<Daemon>, sampler: &Arc<dyn GpuSampler>, out: &Arc<AtomicBool>) -> Result<Seen, String> {
    if out.swap(true, Ordering::SeqCst) {
        return Err("the look started earlier has not answered yet".into());
    }
    let (look, seer, done) = (sampler.clone(), daemon.clone(), out.clone());
    // The jobs are read after the look: a process seen on a GPU was started before it, so
    // the job it belongs to is known by then.
    let asked = tokio::task::spawn_blocking(move || {
        let seen = look.sample().map(|sample| {
            let (sample, doubts) = sample.bounded();
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
            (sample, doubts, owners, jobs, found)
        });
        done.store(false, Ordering::SeqCst);
        seen
    });
    match tokio::time::timeout(LOOK_DEADLINE, asked).await {
        Ok(Ok(seen)) => seen.map_err(|e| e.to_string()),
        Ok(Err(e)) => Err(format!("the look failed: {e}")),
        Err(_) => Err(format!("the look did not answer within {} s and is abandoned", LOOK_DEADLINE.as_secs())),
    }
}
