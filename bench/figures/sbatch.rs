//! Figure 1: `sbatch --parsable --wrap true`, process start to exit (the id printed), with an
//! empty queue and with many held jobs queued; baseline `/bin/true` started the same way,
//! interleaved.

use super::{count, summary, Ctx};
use crate::cluster::Cluster;
use crate::error::Result;
use crate::proc::{bin_true, interleaved, parsable_id, timed_ok};
use crate::report::{Real, Row, Unit, Value};
use crate::stats::Summary;

const ARGS: &[&str] = &["--parsable", "--wrap", "true"];

fn ours(cluster: &Cluster) -> Result<f64> {
    let (ms, out) = timed_ok(cluster.cmd("sbatch").args(ARGS))?;
    parsable_id(&out)?;
    Ok(ms)
}

fn floor() -> Result<f64> {
    Ok(timed_ok(&mut bin_true())?.0)
}

/// Measures figure 1.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 1: start a daemon", || ctx.cluster("sbatch"))?;
    // Warm the page cache and the daemon before timing.
    for _ in 0..5 {
        ours(&cluster)?;
        floor()?;
    }
    let (ours0, base0) = ctx.stage(format!("figure 1: {} sbatch, 0 queued", c.sbatch_runs), || {
        interleaved(c.sbatch_runs, || ours(&cluster), floor)
    })?;
    ctx.stage(format!("figure 1: queue {} held jobs over REST", count(c.queued_held)), || {
        cluster.submit_many(c.queued_held, c.connections, |_| cluster.held_desc())
    })?;
    let (ours_q, base_q) = ctx
        .stage(format!("figure 1: {} sbatch, {} queued", c.sbatch_runs, count(c.queued_held)), || {
            interleaved(c.sbatch_runs, || ours(&cluster), floor)
        })?;
    drop(cluster);

    let (real0, real_q) = match &ctx.real {
        None => (ctx.real_skipped(), ctx.real_skipped()),
        Some(real) => {
            let sample = || -> Result<f64> {
                let (ms, id) = real.sbatch(ARGS)?;
                // Keep the queue as it was: cancel the job outside the timing.
                let _ = real.cmd("scancel").arg(id.to_string()).output();
                Ok(ms)
            };
            let waited =
                ctx.stage("figure 1: room in real Slurm", || real.make_room(2 * c.real_sbatch_runs + c.queued_held))?;
            if waited.as_secs() >= 1 {
                ctx.note(format!(
                    "figure 1: waited {:.0} s for real Slurm to drop ended jobs (MaxJobCount)",
                    waited.as_secs_f64()
                ));
            }
            let r0 = ctx.stage(format!("figure 1: {} real sbatch, 0 queued", c.real_sbatch_runs), || {
                interleaved(c.real_sbatch_runs, sample, floor).map(|(r, _)| r)
            })?;
            let rq = ctx.stage(format!("figure 1: real Slurm, {} held jobs queued", count(c.queued_held)), || {
                real.fill_held(c.queued_held)?;
                let r = interleaved(c.real_sbatch_runs, sample, floor).map(|(r, _)| r);
                real.cancel_all()?;
                r
            })?;
            let (s0, sq) = (summary(&r0)?, summary(&rq)?);
            ctx.raw("1_real", serde_json::json!({ "queued_0": s0.json(), "queued_n": sq.json() }));
            (Real::Measured(Value::of(&s0)), Real::Measured(Value::of(&sq)))
        }
    };

    let (s0, b0, sq, bq) = (summary(&ours0)?, summary(&base0)?, summary(&ours_q)?, summary(&base_q)?);
    ctx.raw(
        "1",
        serde_json::json!({
            "queued_0": { "sbatch_ms": s0.json(), "bin_true_ms": b0.json() },
            "queued_n": { "queued": c.queued_held, "sbatch_ms": sq.json(), "bin_true_ms": bq.json() },
        }),
    );
    let row = |label: String, s: &Summary, b: &Summary, real: Real| {
        let r = Row::new(label, Unit::Ms, Value::of(s)).base(b.median, "/bin/true started the same way").real(real);
        let ratio = r.base_ratio();
        r.target("p50 <=2.5 ms", Some(s.median <= 2.5)).target("<=2.2x base", ratio.map(|x| x <= 2.2))
    };
    let flat = sq.median / s0.median;
    ctx.note(format!(
        "figure 1: sbatch p50 with {} queued is {flat:.2}x the p50 with none (target <=1.2x); {} runs each, /bin/true interleaved",
        count(c.queued_held),
        c.sbatch_runs
    ));
    Ok(vec![
        row("1 sbatch --parsable --wrap true, 0 queued".into(), &s0, &b0, real0).faster_than_slurm(2.0),
        row(format!("1 sbatch --parsable --wrap true, {} queued", count(c.queued_held)), &sq, &bq, real_q)
            .target("<=1.2x 0 queued", Some(flat <= 1.2))
            .faster_than_slurm(2.0),
    ])
}
