//! Figure 5: `squeue` (default format) and `squeue --json` wall time, and the JSON's size,
//! with growing numbers of jobs in the store: mostly held jobs, with held job arrays (whose
//! pending tasks squeue folds into one line each) and finished jobs (which it reads through
//! without listing), so that what each costs is measured. Baseline: `/bin/true`, interleaved.

use super::{count, summary, Ctx};
use crate::cluster::Cluster;
use crate::error::{failed, Result};
use crate::proc::{bin_true, interleaved, timed_ok};
use crate::real::RealSlurm;
use crate::report::{Real, Row, Unit, Value};
use crate::stats::Summary;
use slurmlet::api::types::JobDescMsg;
use std::process::Command;

/// Timings of one command at one store size.
struct Timed {
    /// The command's wall times.
    ours: Summary,
    /// `/bin/true`'s, interleaved.
    base: Summary,
    /// Size of the command's output.
    bytes: usize,
    /// Lines of the command's output.
    lines: usize,
}

/// Longest a stage of repeated timings should take: slower commands get fewer runs.
const STAGE_BUDGET_MS: f64 = 30_000.0;

/// Times `runs` runs of `make()` interleaved with `/bin/true`, after one untimed run that
/// warms caches and tells how long a run takes: when `runs` of them would exceed
/// [`STAGE_BUDGET_MS`], fewer are taken (never fewer than 3).
fn time_cmd(runs: usize, mut make: impl FnMut() -> Command) -> Result<Timed> {
    let (first, _) = timed_ok(&mut make())?;
    let runs = runs.min(((STAGE_BUDGET_MS / first.max(1e-3)) as usize).max(3));
    let (mut bytes, mut lines) = (0, 0);
    let (ours, base) = interleaved(
        runs,
        || {
            let (ms, out) = timed_ok(&mut make())?;
            bytes = out.stdout.len();
            lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
            Ok(ms)
        },
        || Ok(timed_ok(&mut bin_true())?.0),
    )?;
    Ok(Timed { ours: summary(&ours)?, base: summary(&base)?, bytes, lines })
}

/// Measures figure 5.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 5: start a daemon", || ctx.cluster("store"))?;
    let mut held = 0;
    let mut listed = 0;
    let mut rows = Vec::new();
    let mut raw = Vec::new();
    let max_real = ctx.real.as_ref().map(|r| r.max_job_count.unwrap_or(10_000));
    let mut real_filled = 0;
    for (i, &level) in c.store_levels.iter().enumerate() {
        fill(ctx, &cluster, &mut held, &mut listed, level)?;
        let (runs, json_runs) = (c.squeue_runs[i], c.squeue_json_runs[i]);
        let plain = ctx.stage(format!("figure 5: {runs} squeue, {} jobs", count(level)), || {
            let t = time_cmd(runs, || cluster.cmd("squeue"))?;
            // The header plus one line per pending job or folded array.
            if t.lines < listed + 1 {
                return Err(failed(format!("squeue listed {} lines, {listed} expected", t.lines.saturating_sub(1))));
            }
            Ok(t)
        })?;
        let json = ctx.stage(format!("figure 5: {json_runs} squeue --json, {} jobs", count(level)), || {
            time_cmd(json_runs, || {
                let mut cmd = cluster.cmd("squeue");
                cmd.arg("--json");
                cmd
            })
        })?;

        let (real_plain, real_json, real_raw) = match (&ctx.real, max_real) {
            (Some(real), Some(max)) => {
                real_at_level(ctx, real, max, level, (runs, json_runs), json.bytes, &mut real_filled)?
            }
            _ => (ctx.real_skipped(), ctx.real_skipped(), serde_json::Value::Null),
        };
        for (what, t, asked) in [("squeue", &plain, runs), ("squeue --json", &json, json_runs)] {
            if t.ours.n < asked {
                ctx.note(format!(
                    "figure 5: {what} at {} jobs timed {} times instead of {asked} (one run takes {:.1} s)",
                    count(level),
                    t.ours.n,
                    t.ours.median / 1e3
                ));
            }
        }
        raw.push(serde_json::json!({
            "jobs": level,
            "squeue_ms": plain.ours.json(), "squeue_bin_true_ms": plain.base.json(), "squeue_bytes": plain.bytes,
            "squeue_json_ms": json.ours.json(), "squeue_json_bin_true_ms": json.base.json(), "json_bytes": json.bytes,
            "real": real_raw,
        }));
        let mut row = Row::new(format!("5 squeue, {} jobs", count(level)), Unit::Ms, Value::of(&plain.ours))
            .base(plain.base.median, "/bin/true started the same way")
            .real(real_plain);
        // The absolute targets are set for these two sizes only.
        match level {
            10_000 => row = row.target("p50 <=10 ms", Some(plain.ours.median <= 10.0)),
            100_000 => row = row.target("p50 <=100 ms", Some(plain.ours.median <= 100.0)),
            _ => {}
        }
        rows.push(row.faster_than_slurm(8.0));
        rows.push(
            Row::new(
                format!("5 squeue --json, {} jobs ({:.1} MB)", count(level), json.bytes as f64 / 1e6),
                Unit::Ms,
                Value::of(&json.ours),
            )
            .base(json.base.median, "/bin/true started the same way")
            .real(real_json)
            .faster_than_slurm(20.0),
        );
    }
    if let Some(real) = &ctx.real {
        real.cancel_all()?;
    }
    ctx.raw("5", serde_json::Value::Array(raw));
    Ok(rows)
}

/// Tasks of each held array in figure 5's store.
const ARRAY_TASKS: usize = 10;

/// How `n` more jobs are made up: (held plain jobs, held arrays of [`ARRAY_TASKS`] tasks,
/// finished jobs), about 80%, 10% and 10%.
fn mix(n: usize) -> (usize, usize, usize) {
    let arrays = n / 100;
    let finished = n / 10;
    (n - arrays * ARRAY_TASKS - finished, arrays, finished)
}

/// Real Slurm's `squeue` and `squeue --json` (`runs`: how many of each) at `level` held
/// jobs, filled up from the `real_filled` it holds; `our_json_bytes`: the size of our
/// `--json` output, for the note that compares the two. Its two cells of the table and its
/// raw numbers; skipped, with a note, beyond its MaxJobCount `max`.
fn real_at_level(
    ctx: &Ctx,
    real: &RealSlurm,
    max: usize,
    level: usize,
    (runs, json_runs): (usize, usize),
    our_json_bytes: usize,
    real_filled: &mut usize,
) -> Result<(Real, Real, serde_json::Value)> {
    if level > max {
        let why = format!("{} jobs exceed real Slurm's MaxJobCount {max}", count(level));
        ctx.note(format!("figure 5: real Slurm not run at {} jobs: {why}", count(level)));
        return Ok((Real::Skipped(why.clone()), Real::Skipped(why), serde_json::Value::Null));
    }
    let (p, j) = ctx.stage(format!("figure 5: real Slurm at {} held jobs", count(level)), || {
        real.fill_held(level - *real_filled)?;
        *real_filled = level;
        Ok((
            time_cmd(runs, || real.cmd("squeue"))?,
            time_cmd(json_runs, || {
                let mut cmd = real.cmd("squeue");
                cmd.arg("--json");
                cmd
            })?,
        ))
    })?;
    let held = real.jobs_held()?;
    let raw = serde_json::json!({
        "squeue_ms": p.ours.json(), "squeue_json_ms": j.ours.json(), "json_bytes": j.bytes, "jobs_held": held,
    });
    if held > level {
        ctx.note(format!(
            "figure 5: real Slurm at {} held jobs also kept {} ended jobs of earlier figures (MinJobAge), which its squeue reads through",
            count(level),
            count(held - level)
        ));
    }
    ctx.note(format!(
        "figure 5: squeue --json output at {} jobs: slurmlet {:.1} MB, real Slurm {:.1} MB",
        count(level),
        our_json_bytes as f64 / 1e6,
        j.bytes as f64 / 1e6
    ));
    Ok((Real::Measured(Value::of(&p.ours)), Real::Measured(Value::of(&j.ours)), raw))
}

/// Brings the store from `held` to `level` jobs, submitted over REST (the finished ones held,
/// then cancelled); `listed` counts the lines squeue lists for them.
fn fill(ctx: &Ctx, cluster: &Cluster, held: &mut usize, listed: &mut usize, level: usize) -> Result<()> {
    if *held >= level {
        return Ok(());
    }
    let (plain, arrays, finished) = mix(level - *held);
    let desc = cluster.held_desc();
    let array = JobDescMsg { array: Some(format!("0-{}", ARRAY_TASKS - 1)), ..cluster.held_desc() };
    let conns = ctx.counts.connections;
    let run = ctx.stage(format!("figure 5: fill the store to {} jobs", count(level)), || {
        let plain = cluster.submit_many(plain, conns, |_| desc.clone())?;
        cluster.submit_many(arrays, conns, |_| array.clone())?;
        let ended = cluster.submit_many(finished, conns, |_| desc.clone())?;
        cluster.cancel_many(&ended.results, conns)?;
        Ok(plain)
    })?;
    ctx.note(format!(
        "figure 5: store fill {} -> {} jobs ({} held, {} held arrays of {ARRAY_TASKS}, {} finished) at {:.0} REST submits/s",
        count(*held),
        count(level),
        count(plain),
        count(arrays),
        count(finished),
        run.rate()
    ));
    *held = level;
    *listed += plain + arrays;
    Ok(())
}
