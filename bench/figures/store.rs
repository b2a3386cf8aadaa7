//! Figure 6: the daemon's resident memory with a large store (half pending, half finished),
//! and its restart time: `kill -9` to the first answer. Baselines: the same with an empty store.

use super::{count, summary, Ctx};
use crate::cluster::Cluster;
use crate::error::{failed, io, Result};
use crate::report::{Row, Unit, Value};

/// `VmRSS` and `VmHWM` of a process, in MiB.
pub fn memory_mib(pid: u32) -> Result<(f64, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(io("cannot read the daemon's status"))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .ok_or_else(|| failed(format!("no {name} in /proc/{pid}/status")))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

fn restarts(ctx: &Ctx, cluster: &mut Cluster, label: &str) -> Result<Vec<f64>> {
    let n = ctx.counts.restarts;
    ctx.stage(format!("figure 6: {n} restarts, {label}"), || {
        (0..n).map(|_| cluster.restart_after_kill9().map(|d| d.as_secs_f64() * 1e3)).collect()
    })
}

/// Measures figure 6.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let level = *c.store_levels.last().expect("store levels");

    let mut empty = ctx.stage("figure 6: start a daemon", || ctx.cluster("empty"))?;
    let (empty_rss, _) = memory_mib(empty.daemon_pid().expect("daemon runs"))?;
    let empty_restarts = restarts(ctx, &mut empty, "empty store")?;
    drop(empty);

    let mut cluster = ctx.stage("figure 6: start a daemon", || ctx.cluster("memory"))?;
    let desc = cluster.held_desc();
    // The finished half first, each job cancelled right after its submit (a cancelled
    // pending job is a finished one), while the pending queue is short; then the pending half.
    let finished = level / 2;
    let run = ctx.stage(format!("figure 6: {} jobs submitted and cancelled", count(finished)), || {
        cluster.rest_many(finished, c.connections, |client, _| {
            let id = Cluster::submit(client, &desc)?;
            let r = client.cancel(&id.to_string(), None, slurmlet::api::types::SignalScope::Steps)?;
            match r.status.first().filter(|s| s.error.code != 0) {
                Some(s) => Err(failed(format!("cancel of job {id} refused: {}", s.error.message))),
                None => Ok(id),
            }
        })
    })?;
    ctx.note(format!("figure 6: {:.0} submit+cancel pairs/s for the finished half", run.rate()));
    let pending = level - finished;
    let run = ctx.stage(format!("figure 6: {} held jobs", count(pending)), || {
        cluster.submit_many(pending, c.connections, |_| desc.clone())
    })?;
    ctx.note(format!("figure 6: {:.0} REST submits/s for the pending half", run.rate()));
    let last = *run.results.last().expect("jobs were submitted");
    let (rss, hwm) = memory_mib(cluster.daemon_pid().expect("daemon runs"))?;
    let times = restarts(ctx, &mut cluster, &format!("{} jobs", count(level)))?;
    // The restarted daemon still knows the newest job.
    if cluster.client()?.job(&last.to_string())?.jobs.is_empty() {
        return Err(failed(format!("job {last} is gone after the restarts")));
    }
    let (after_rss, _) = memory_mib(cluster.daemon_pid().expect("daemon runs"))?;
    drop(cluster);

    let (t, b) = (summary(&times)?, summary(&empty_restarts)?);
    ctx.raw(
        "6",
        serde_json::json!({
            "jobs": level, "finished": finished,
            "rss_mib": rss, "hwm_mib": hwm, "rss_after_restart_mib": after_rss, "empty_rss_mib": empty_rss,
            "restart_ms": t.json(), "empty_restart_ms": b.json(),
        }),
    );
    ctx.note(format!(
        "figure 6: VmHWM {hwm:.1} MiB; RSS {after_rss:.1} MiB after the restarts (the {} jobs loaded from the store)",
        count(level)
    ));
    Ok(vec![
        Row::new(format!("6 daemon RSS, {} jobs, half finished", count(level)), Unit::MiB, Value::one(rss))
            .base(empty_rss, "RSS of a daemon with an empty store")
            .target("<=100 MB", Some(rss * 1.048_576 <= 100.0)),
        Row::new(format!("6 restart: kill -9 -> first answer, {} jobs", count(level)), Unit::Ms, Value::of(&t))
            .base(b.median, "the same with an empty store")
            .target("p50 <=1 s", Some(t.median <= 1000.0)),
    ])
}
