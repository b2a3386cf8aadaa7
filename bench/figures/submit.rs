//! Figure 2: submit throughput. Sequential `sbatch --hold` processes (baseline: as many
//! `/bin/true` processes), and REST submits of held jobs over concurrent keep-alive
//! connections (baseline: REST pings over the same connections).

use super::{count, summary, Ctx};
use crate::error::Result;
use crate::proc::{bin_true, interleaved, parsable_id, timed_ok};
use crate::report::{Real, Row, Unit, Value};

const ARGS: &[&str] = &["--parsable", "--hold", "--wrap", "true"];

/// Measures figure 2.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 2: start a daemon", || ctx.cluster("submit"))?;
    let (seq, seq_base) = ctx.stage(format!("figure 2: {} sequential sbatch", count(c.seq_sbatch)), || {
        interleaved(
            c.seq_sbatch,
            || {
                let (ms, out) = timed_ok(cluster.cmd("sbatch").args(ARGS))?;
                parsable_id(&out)?;
                Ok(ms)
            },
            || Ok(timed_ok(&mut bin_true())?.0),
        )
    })?;
    drop(cluster);
    let rate = |samples: &[f64]| samples.len() as f64 / (samples.iter().sum::<f64>() / 1e3);

    let cluster = ctx.stage("figure 2: start a daemon", || ctx.cluster("rest"))?;
    let desc = cluster.held_desc();
    let pings = ctx.stage(format!("figure 2: {} REST pings", count(c.rest_submits)), || {
        cluster.rest_many(c.rest_submits, c.connections, |client, _| Ok(client.ping().map(|_| ())?))
    })?;
    let submits = ctx.stage(format!("figure 2: {} REST submits", count(c.rest_submits)), || {
        cluster.submit_many(c.rest_submits, c.connections, |_| desc.clone())
    })?;
    drop(cluster);

    let real = match &ctx.real {
        None => ctx.real_skipped(),
        Some(real) => {
            let waited = ctx.stage("figure 2: room in real Slurm", || real.make_room(c.seq_sbatch))?;
            if waited.as_secs() >= 1 {
                ctx.note(format!(
                    "figure 2: waited {:.0} s for real Slurm to drop ended jobs (MaxJobCount)",
                    waited.as_secs_f64()
                ));
            }
            let samples = ctx.stage(format!("figure 2: {} sequential real sbatch", count(c.seq_sbatch)), || {
                let r = (0..c.seq_sbatch).map(|_| real.sbatch(ARGS).map(|(ms, _)| ms)).collect::<Result<Vec<_>>>();
                real.cancel_all()?;
                r
            })?;
            ctx.raw("2_real", serde_json::json!({ "sequential_sbatch_per_s": rate(&samples) }));
            Real::Measured(Value::one(rate(&samples)))
        }
    };

    let (seq_s, sub_s, ping_s) = (summary(&seq)?, summary(&submits.latencies_ms)?, summary(&pings.latencies_ms)?);
    ctx.raw(
        "2",
        serde_json::json!({
            "sequential": { "n": c.seq_sbatch, "sbatch_per_s": rate(&seq), "bin_true_per_s": rate(&seq_base), "sbatch_ms": seq_s.json() },
            "rest": {
                "n": c.rest_submits, "connections": c.connections,
                "submits_per_s": submits.rate(), "submit_ms": sub_s.json(),
                "pings_per_s": pings.rate(), "ping_ms": ping_s.json(),
            },
        }),
    );
    ctx.note(format!(
        "figure 2: sequential sbatch p50 {:.2} ms, p99 {:.2} ms per process; REST submit p50 {:.2} ms, p99 {:.2} ms per request (ping p50 {:.2} ms, p99 {:.2} ms) over {} connections",
        seq_s.median, seq_s.p99, sub_s.median, sub_s.p99, ping_s.median, ping_s.p99, c.connections
    ));
    Ok(vec![
        Row::new(
            format!("2 sequential sbatch --hold processes ({})", count(c.seq_sbatch)),
            Unit::PerSec,
            Value::one(rate(&seq)),
        )
        .base(rate(&seq_base), "sequential /bin/true processes")
        .real(real)
        .target(">=600/s", Some(rate(&seq) >= 600.0)),
        Row::new(
            format!("2 REST submits, {} keep-alive connections ({})", c.connections, count(c.rest_submits)),
            Unit::PerSec,
            Value::one(submits.rate()),
        )
        .base(pings.rate(), "REST pings over the same connections")
        .target(">=20000/s", Some(submits.rate() >= 20_000.0)),
    ])
}
