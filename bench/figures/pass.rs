//! Figure 7: the time of one scheduling pass over many pending jobs of mixed sizes.
//!
//! The daemon does not report its passes, so this is measured from outside: every REST
//! submit runs one full pass over the pending queue before it answers. With all GPUs held by
//! running jobs (so nothing can start), the submit latency with the big queue minus the submit
//! latency with an empty queue is the time of the pass.

use super::{count, summary, Ctx};
use crate::cluster::Cluster;
use crate::error::{failed, Result};
use crate::report::{Row, Unit, Value};
use slurmlet::api::noval::NoVal;
use slurmlet::api::types::JobDescMsg;
use std::time::{Duration, Instant};

/// One pending job of the mixed queue: 1, 2, 4 or 8 GPUs, 1–8 CPUs, 10 minutes to a day.
fn mixed(cluster: &Cluster, base: &JobDescMsg, i: usize) -> JobDescMsg {
    let gpus = [1, 2, 4, 8][i % 4].min(cluster.gpus().max(1));
    JobDescMsg {
        tres_per_node: Some(format!("gres/gpu:{gpus}")),
        cpus_per_task: Some(1 + (i / 4 % 8) as u32),
        time_limit: Some(NoVal::of([10, 60, 240, 1440][i / 32 % 4])),
        ..base.clone()
    }
}

/// Measures figure 7.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 7: start a daemon", || ctx.cluster("pass"))?;
    let gpus = cluster.gpus();
    let busy =
        JobDescMsg { tres_per_node: Some("gres/gpu:1".into()), ..cluster.desc("#!/bin/sh\nexec sleep 100000\n") };
    ctx.stage(format!("figure 7: occupy the {gpus} GPUs"), || {
        let client = cluster.client()?;
        for _ in 0..gpus {
            let id = Cluster::submit(&client, &busy)?;
            cluster.track_long_job(id);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let running =
                client.jobs()?.jobs.iter().filter(|j| j.job_state.first().is_some_and(|s| s == "RUNNING")).count();
            if running >= gpus {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(failed(format!("only {running} of {gpus} GPU jobs running; log:\n{}", cluster.log_tail())));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })?;

    let base = cluster.desc("#!/bin/sh\ntrue\n");
    let probe = mixed(&cluster, &base, 0);
    let samples = c.pass_samples;
    let empty = ctx.stage(format!("figure 7: {samples} submits, empty queue"), || {
        let run = cluster.rest_many(samples, 1, |client, _| Cluster::submit(client, &probe))?;
        // Keep the queue empty for what follows.
        cluster.cancel_many(&run.results, c.connections)?;
        Ok(run.latencies_ms)
    })?;
    ctx.stage(format!("figure 7: queue {} mixed pending jobs", count(c.pending_mixed)), || {
        cluster.submit_many(c.pending_mixed, c.connections, |i| mixed(&cluster, &base, i))
    })?;
    let full = ctx.stage(format!("figure 7: {samples} submits, {} pending", count(c.pending_mixed)), || {
        Ok(cluster.rest_many(samples, 1, |client, _| Cluster::submit(client, &probe))?.latencies_ms)
    })?;
    drop(cluster);

    let (e, f) = (summary(&empty)?, summary(&full)?);
    let pass = Value { median: f.median - e.median, p99: Some(f.p99 - e.median) };
    ctx.raw(
        "7",
        serde_json::json!({ "pending": c.pending_mixed, "gpus": gpus, "submit_ms_empty": e.json(), "submit_ms_pending": f.json(), "pass_ms_median": pass.median }),
    );
    ctx.note(format!(
        "figure 7: pass time = REST submit latency with {} pending mixed-size jobs (1/2/4/8 GPUs, 1-8 CPUs, 10 min-1 day limits; p50 {:.2} ms, p99 {:.2} ms) minus that with an empty queue (p50 {:.2} ms); every submit runs one full pass, all {gpus} GPUs held by running jobs so nothing starts",
        count(c.pending_mixed),
        f.median,
        f.p99,
        e.median
    ));
    Ok(vec![Row::new(format!("7 scheduler pass, {} pending mixed jobs", count(c.pending_mixed)), Unit::Ms, pass)
        .base(e.median, "REST submit latency with an empty queue")])
}
