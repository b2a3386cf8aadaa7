//! Figure 3: dispatch latency. A queue of 1-GPU jobs on all GPUs; each job stamps the
//! monotonic clock first and last thing. The gap from a job's end stamp to the start stamp of
//! the next job on the same GPU is the time from one job's exit to the next one's first
//! instruction. Baseline: the same two stamps run back to back by one shell.

use super::{count, summary, Ctx};
use crate::error::{failed, io, Result};
use crate::proc::timed_ok;
use crate::report::{Row, Unit, Value};
use crate::stamp;
use slurmlet::api::noval::NoVal;
use std::process::Command;
use std::time::Duration;

/// Measures figure 3.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let c = &ctx.counts;
    let cluster = ctx.stage("figure 3: start a daemon", || ctx.cluster("dispatch"))?;
    let gpus = cluster.gpus();
    let jobs = gpus * c.dispatch_rounds;
    let file = cluster.work.join("stamps");
    let bench = ctx.bench_exe.display().to_string();
    // Sleeps of 1 to 1.875 times the base, so that jobs do not end in lockstep.
    let sleep_ms = |i: usize| c.dispatch_sleep_ms as f64 * (1.0 + (i % 8) as f64 / 8.0);
    let script = |i: usize| {
        format!(
            "#!/bin/sh\n'{bench}' stamp '{f}' start \"$CUDA_VISIBLE_DEVICES\"\nsleep {s}\n'{bench}' stamp '{f}' end \"$CUDA_VISIBLE_DEVICES\"\n",
            f = file.display(),
            s = sleep_ms(i) / 1e3,
        )
    };
    // Every job becomes eligible at the same moment, a little after the last submit, so the
    // queue is full from the first dispatch on.
    let begin = slurmlet::sys::now() + 3;
    let desc = |i: usize| slurmlet::api::types::JobDescMsg {
        tres_per_node: Some("gres/gpu:1".into()),
        begin_time: Some(NoVal::of(begin)),
        ..cluster.desc(&script(i))
    };
    let run = ctx.stage(format!("figure 3: submit {} 1-GPU jobs", count(jobs)), || {
        cluster.submit_many(jobs, c.connections, desc)
    })?;
    let budget = Duration::from_secs(60 + (c.dispatch_rounds as u64 * (2 * c.dispatch_sleep_ms + 1000)) / 1000);
    let not_completed = ctx.stage(format!("figure 3: run {} jobs on {gpus} GPUs", count(jobs)), || {
        cluster.wait_finished(&run.results, budget)
    })?;
    if !not_completed.is_empty() {
        return Err(cluster.not_completed("dispatch", &not_completed));
    }
    let text = std::fs::read_to_string(&file).map_err(io(format!("cannot read {}", file.display())))?;
    let stamps = stamp::parse(&text);
    if stamps.len() != 2 * jobs {
        return Err(failed(format!("{} stamps from {jobs} jobs", stamps.len())));
    }
    let gaps = stamp::gaps_ms(&stamps);
    drop(cluster);

    // The floor: one stamp process ending and the next starting, chained by a shell.
    let floor_file = ctx.parent.join(format!("slurmlet-bench-{}-floor-stamps", std::process::id()));
    let chain = format!("'{bench}' stamp '{f}' end 0; '{bench}' stamp '{f}' start 0", f = floor_file.display());
    let floor_runs = c.sbatch_runs.min(200);
    let floor = ctx.stage(format!("figure 3: {floor_runs} shell-chained stamp pairs"), || {
        for _ in 0..floor_runs {
            timed_ok(Command::new("/bin/sh").args(["-c", &chain]))?;
        }
        let text = std::fs::read_to_string(&floor_file).map_err(io("cannot read the floor stamps"))?;
        Ok(stamp::gaps_ms(&stamp::parse(&text)))
    });
    let _ = std::fs::remove_file(&floor_file);
    let floor = floor?;

    let (s, b) = (summary(&gaps)?, summary(&floor)?);
    ctx.raw("3", serde_json::json!({ "jobs": jobs, "gpus": gpus, "sleep_ms": c.dispatch_sleep_ms, "gap_ms": s.json(), "floor_ms": b.json() }));
    ctx.note(format!(
        "figure 3: {} gaps from {} 1-GPU jobs on {gpus} GPUs, each sleeping {}-{} ms between its stamps (min {:.2} ms, max {:.2} ms)",
        s.n, jobs, c.dispatch_sleep_ms, sleep_ms(7), s.min, s.max
    ));
    Ok(vec![Row::new("3 dispatch: job exit -> next job's first instruction", Unit::Ms, Value::of(&s))
        .base(b.median, "two stamp processes chained by one shell")
        .target("p50 <=5 ms", Some(s.median <= 5.0))])
}
