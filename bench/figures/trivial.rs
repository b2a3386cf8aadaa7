//! Figure 4: trivial-job throughput. Many `true` jobs submitted over REST, timed from the
//! first submit until every one is COMPLETED. Baseline: sequential `sh -c true` processes,
//! the shell each job runs. Real Slurm: sequential `sbatch` until its queue is empty.

use super::{count, Ctx};
use crate::error::Result;
use crate::proc::timed_ok;
use crate::report::{Real, Row, Unit, Value};
use std::process::Command;
use std::time::{Duration, Instant};

/// Measures figure 4.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 4: start a daemon", || ctx.cluster("trivial"))?;
    let desc = slurmlet::api::types::JobDescMsg {
        tres_per_node: crate::cluster::JOB_GRES.get().cloned(),
        ..cluster.desc("#!/bin/sh\ntrue\n")
    };
    let (elapsed, submit_secs) =
        ctx.stage(format!("figure 4: {} true jobs to COMPLETED", count(c.trivial_jobs)), || {
            let t0 = Instant::now();
            let run = cluster.submit_many(c.trivial_jobs, c.connections, |_| desc.clone())?;
            let submitted = t0.elapsed();
            let not_completed = cluster.wait_finished(&run.results, Duration::from_secs(600))?;
            if !not_completed.is_empty() {
                return Err(cluster.not_completed("trivial", &not_completed));
            }
            Ok((t0.elapsed(), submitted.as_secs_f64()))
        })?;
    drop(cluster);
    let rate = c.trivial_jobs as f64 / elapsed.as_secs_f64();

    let base = ctx.stage(format!("figure 4: {} sequential sh -c true", count(c.trivial_jobs)), || {
        let mut total = 0.0;
        for _ in 0..c.trivial_jobs {
            total += timed_ok(Command::new("/bin/sh").args(["-c", "true"]))?.0;
        }
        Ok(c.trivial_jobs as f64 / (total / 1e3))
    })?;

    let real = match &ctx.real {
        None => ctx.real_skipped(),
        Some(real) => {
            let n = c.real_trivial_jobs;
            let name = "slurmlet-bench-trivial";
            let secs = ctx.stage(format!("figure 4: {n} true jobs through real Slurm"), || {
                let t0 = Instant::now();
                for _ in 0..n {
                    real.sbatch(&["-J", name, "-o", "/dev/null", "--wrap", "true"])?;
                }
                real.wait_gone(name, Duration::from_secs(3600))?;
                let secs = t0.elapsed().as_secs_f64();
                real.cancel_all()?;
                Ok(secs)
            })?;
            ctx.note(format!(
                "figure 4: real Slurm ran {n} jobs (it starts about one a second), slurmlet {}",
                count(c.trivial_jobs)
            ));
            ctx.raw("4_real", serde_json::json!({ "jobs": n, "seconds": secs, "jobs_per_s": n as f64 / secs }));
            Real::Measured(Value::one(n as f64 / secs))
        }
    };
    ctx.raw(
        "4",
        serde_json::json!({ "jobs": c.trivial_jobs, "seconds": elapsed.as_secs_f64(), "submit_seconds": submit_secs, "jobs_per_s": rate, "sh_true_per_s": base }),
    );
    ctx.note(format!(
        "figure 4: {} jobs submitted over {} REST connections in {submit_secs:.2} s, all COMPLETED after {:.2} s",
        count(c.trivial_jobs),
        c.connections,
        elapsed.as_secs_f64()
    ));
    Ok(vec![Row::new(
        format!("4 trivial jobs, submit -> all COMPLETED ({})", count(c.trivial_jobs)),
        Unit::PerSec,
        Value::one(rate),
    )
    .base(base, "sequential sh -c true processes")
    .real(real)
    .target(">=500/s", Some(rate >= 500.0))])
}
