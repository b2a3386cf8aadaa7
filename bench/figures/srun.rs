//! Figure 8: srun. (a) `srun true` outside an allocation: the allocation, the step, its
//! stream and the release, timed end to end. Baseline: `/bin/true`. Real Slurm: its own
//! `srun true`. (b) Output throughput: a step that `cat`s a file to its stdout, with srun's
//! stdout going to a file. Baseline: the same `cat` run directly. Real Slurm: its own
//! `srun cat`.

use super::{summary, Ctx};
use crate::error::{failed, io, Result};
use crate::proc::{bin_true, timed_ok};
use crate::report::{Real, Row, Unit, Value};
use std::process::{Command, Stdio};

/// Measures figure 8.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 8: start a daemon", || ctx.cluster("srun"))?;
    let ours = ctx.stage(format!("figure 8: {} srun true", c.srun_runs), || {
        (0..c.srun_runs).map(|_| Ok(timed_ok(cluster.cmd("srun").arg("true"))?.0)).collect::<Result<Vec<f64>>>()
    })?;
    let floor = ctx.stage(format!("figure 8: {} /bin/true", c.srun_runs), || {
        (0..c.srun_runs).map(|_| Ok(timed_ok(&mut bin_true())?.0)).collect::<Result<Vec<f64>>>()
    })?;

    let input = cluster.work.join("stream.bin");
    let output = cluster.work.join("stream.out");
    let bytes = c.srun_mib << 20;
    let data: Vec<u8> = (0..bytes).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&input, &data).map_err(io("cannot write the input file"))?;
    let to_file = |cmd: &mut Command| -> Result<f64> {
        let out = std::fs::File::create(&output).map_err(io("cannot create the output file"))?;
        let (ms, _) = timed_ok(cmd.stdout(Stdio::from(out)))?;
        let got = std::fs::metadata(&output).map_err(io("cannot read the output file"))?.len();
        if got != bytes as u64 {
            return Err(failed(format!("{got} bytes arrived of {bytes}")));
        }
        Ok(bytes as f64 / (1 << 20) as f64 / (ms / 1e3))
    };
    let through = ctx.stage(format!("figure 8: srun cat of {} MiB", c.srun_mib), || {
        (0..3).map(|_| to_file(cluster.cmd("srun").arg("cat").arg(&input))).collect::<Result<Vec<f64>>>()
    })?;
    let direct = ctx.stage(format!("figure 8: cat of {} MiB", c.srun_mib), || {
        (0..3).map(|_| to_file(Command::new("cat").arg(&input))).collect::<Result<Vec<f64>>>()
    })?;
    let (real, real_through) = match &ctx.real {
        None => (ctx.real_skipped(), ctx.real_skipped()),
        Some(real) => {
            let n = c.srun_runs.min(30);
            let times = ctx.stage(format!("figure 8: {n} srun true through real Slurm"), || {
                (0..n).map(|_| Ok(timed_ok(real.cmd("srun").arg("true"))?.0)).collect::<Result<Vec<f64>>>()
            })?;
            let through = ctx.stage(format!("figure 8: srun cat of {} MiB through real Slurm", c.srun_mib), || {
                (0..3).map(|_| to_file(real.cmd("srun").arg("cat").arg(&input))).collect::<Result<Vec<f64>>>()
            })?;
            let best = through.iter().copied().fold(0.0, f64::max);
            ctx.raw("8_real", serde_json::json!({ "srun_true_ms": times, "srun_cat_mib_s": through }));
            (Real::Measured(Value::of(&summary(&times)?)), Real::Measured(Value::one(best)))
        }
    };
    drop(cluster);
    let (s, b) = (summary(&ours)?, summary(&floor)?);
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (mib_s, cat_mib_s) = (best(&through), best(&direct));
    ctx.raw(
        "8",
        serde_json::json!({ "srun_true_ms": s.json(), "true_ms": b.json(), "srun_cat_mib_s": through, "cat_mib_s": direct, "mib": c.srun_mib }),
    );
    ctx.note(format!(
        "figure 8: {} MiB through `srun cat` into a file, best of 3: {mib_s:.0} MiB/s (cat alone: {cat_mib_s:.0} MiB/s); every byte arrived",
        c.srun_mib
    ));
    Ok(vec![
        Row::new("8a srun true (allocate, step, release)", Unit::Ms, Value::of(&s))
            .base(b.median, "/bin/true")
            .real(real)
            .faster_than_slurm(2.0),
        Row::new(format!("8b srun cat {} MiB to a file", c.srun_mib), Unit::PerSec, Value::one(mib_s))
            .base(cat_mib_s, "the same cat run directly (MiB/s)")
            .real(real_through)
            .target(">=100 MiB/s", Some(mib_s >= 100.0)),
    ])
}
