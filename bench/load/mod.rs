//! `slurmlet-bench load`: many concurrent clients against one daemon whose store holds a long
//! history of finished jobs, for a bounded time. Each client has its own keep-alive
//! connection on the Unix socket and sends a fixed random mix of submits, `squeue` listings,
//! full REST listings, single-job queries and cancels. Reports requests per second and
//! latency (p50, p99) by kind, failures by kind, and the daemon's peak memory. Not a timed
//! test: nothing here is asserted but the absence of failures.

mod client;
mod tally;

use crate::cluster::Cluster;
use crate::error::{failed, Result};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tally::{Kind, Tally};

/// The load's options.
#[derive(Debug, Parser)]
#[command(
    name = "slurmlet-bench load",
    about = "Many concurrent clients submitting, listing and cancelling against one daemon with a long job history"
)]
struct Args {
    /// Concurrent clients, each on its own connection
    #[arg(long, default_value_t = 50)]
    clients: usize,
    /// How long the load runs, in seconds
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Finished jobs put in the store before the load
    #[arg(long, default_value_t = 100_000)]
    prefill: usize,
    /// The daemon's MinJobAge in seconds: finished jobs stay in its memory (and listings)
    /// this long; the prefilled history is older than that when the load starts
    #[arg(long, default_value_t = 10)]
    min_job_age: u32,
    /// The slurmlet binary to measure (default: the one next to this program)
    #[arg(long, value_name = "PATH")]
    slurmlet: Option<PathBuf>,
    /// Where to create the temporary cluster directory (default: the system temp dir)
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Also write the numbers as JSON to PATH
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
}

/// Runs `slurmlet-bench load ARGS`; returns the exit code (1 when a request failed).
pub fn run(args: &[OsString]) -> i32 {
    let args = Args::parse_from(std::iter::once(OsString::from("slurmlet-bench load")).chain(args.iter().cloned()));
    match measure(&args) {
        Ok(errors) => i32::from(errors > 0),
        Err(e) => {
            eprintln!("slurmlet-bench load: {}", crate::error::chain(&e));
            1
        }
    }
}

/// Prints a stage's progress to stderr.
fn stage(start: Instant, what: &str) {
    eprintln!("[{:7.1} s] {what}", start.elapsed().as_secs_f64());
}

/// Runs the load; returns the number of failed requests.
fn measure(args: &Args) -> Result<usize> {
    let start = Instant::now();
    let slurmlet = match &args.slurmlet {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(crate::error::io("cannot find my own executable"))?
            .with_file_name("slurmlet"),
    };
    if !slurmlet.is_file() {
        return Err(failed(format!("{} not found; build it first (cargo build --release)", slurmlet.display())));
    }
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut cluster = Cluster::start_with(&slurmlet, &parent, "load", 8, args.min_job_age)?;
    stage(start, &format!("prefilling {} finished jobs", args.prefill));
    let prefill = prefill(&cluster, args.prefill)?;
    // The history is older than MinJobAge before the daemon that serves the load starts, so
    // that it sits in the store only, as a long-lived daemon's would.
    std::thread::sleep(Duration::from_secs(args.min_job_age as u64 + 1));
    cluster.stop_daemon();
    let restart = cluster.start_daemon()?;
    let pid = cluster.daemon_pid().ok_or_else(|| failed("no daemon"))?;
    stage(
        start,
        &format!(
            "daemon restarted on the store in {:.0} ms; {} clients for {} s",
            restart.as_secs_f64() * 1e3,
            args.clients,
            args.seconds
        ),
    );

    let jobs = client::Jobs::from(cluster.desc("#!/bin/sh\ntrue\n"));
    // A job's end is recorded in whole seconds, so one submitted less than MinJobAge - 1 s
    // ago is still in the daemon's memory.
    let recent = Duration::from_secs(args.min_job_age.saturating_sub(1) as u64);
    let barrier = std::sync::Barrier::new(args.clients + 1);
    let (tally, elapsed) = std::thread::scope(|s| -> Result<(Tally, Duration)> {
        let handles: Vec<_> = (0..args.clients)
            .map(|i| {
                let (cluster, jobs, barrier) = (&cluster, &jobs, &barrier);
                let seconds = args.seconds;
                s.spawn(move || -> Result<Tally> {
                    let client = cluster.client()?;
                    let connected = client.ping().map(|_| ());
                    barrier.wait();
                    connected?;
                    let deadline = Instant::now() + Duration::from_secs(seconds);
                    Ok(client::run(&client, jobs, i as u64 + 1, deadline, recent))
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let mut all = Tally::default();
        for h in handles {
            all.merge(h.join().expect("a load client panicked")?);
        }
        Ok((all, t0.elapsed()))
    })?;
    let (rss, hwm) = crate::figures::store::memory_mib(pid)?;
    stage(start, "done");

    report(args, &tally, elapsed, prefill, restart, rss, hwm);
    if let Some(path) = &args.json {
        let doc = json(args, &tally, elapsed, prefill, restart, rss, hwm);
        std::fs::write(path, serde_json::to_string_pretty(&doc).expect("JSON values serialize") + "\n")
            .map_err(crate::error::io(format!("cannot write {}", path.display())))?;
    }
    Ok(tally.total_errors())
}

/// Puts `n` finished jobs in the store (each submitted, then cancelled while pending, over
/// 8 connections, as figure 6 does); returns the rate.
fn prefill(cluster: &Cluster, n: usize) -> Result<f64> {
    let desc = cluster.held_desc();
    let run = cluster.rest_many(n, 8, |client, _| {
        let id = Cluster::submit(client, &desc)?;
        let r = client.cancel(&id.to_string(), None, slurmlet::api::types::SignalScope::Steps)?;
        match r.status.first().filter(|s| s.error.code != 0) {
            Some(s) => Err(failed(format!("cancel of job {id} refused: {}", s.error.message))),
            None => Ok(()),
        }
    })?;
    Ok(run.rate())
}

/// Prints the results.
fn report(args: &Args, t: &Tally, elapsed: Duration, prefill: f64, restart: Duration, rss: f64, hwm: f64) {
    let secs = elapsed.as_secs_f64();
    println!("slurmlet-bench load: {} clients for {secs:.1} s; {} finished jobs in the store (filled at {prefill:.0} submit+cancel pairs/s); MinJobAge {} s", args.clients, args.prefill, args.min_job_age);
    println!("machine: {}", crate::machine());
    if cfg!(debug_assertions) {
        println!("warning: this is a debug build; timings are not representative (use --release)");
    }
    println!();
    println!("| request | count | per second | p50 | p99 | max | errors |");
    println!("|---|---|---|---|---|---|---|");
    for kind in Kind::ALL {
        let s = t.summary(kind);
        let ms = |f: fn(&crate::stats::Summary) -> f64| s.as_ref().map_or("-".into(), |s| format!("{:.2} ms", f(s)));
        println!(
            "| {} | {} | {:.0} | {} | {} | {} | {} |",
            kind.name(),
            t.count(kind),
            t.count(kind) as f64 / secs,
            ms(|s| s.median),
            ms(|s| s.p99),
            ms(|s| s.max),
            t.errors(kind)
        );
    }
    println!("| all | {} | {:.0} | | | | {} |", t.total(), t.total() as f64 / secs, t.total_errors());
    println!();
    println!(
        "daemon: restart on the store {:.0} ms; VmHWM (peak RSS) {hwm:.1} MiB; VmRSS at the end {rss:.1} MiB",
        restart.as_secs_f64() * 1e3
    );
    for s in &t.samples {
        println!("failure: {s}");
    }
}

/// The results as JSON.
fn json(
    args: &Args,
    t: &Tally,
    elapsed: Duration,
    prefill: f64,
    restart: Duration,
    rss: f64,
    hwm: f64,
) -> serde_json::Value {
    let kinds: Vec<_> = Kind::ALL
        .iter()
        .map(|&k| {
            serde_json::json!({
                "kind": k.name(),
                "count": t.count(k),
                "per_second": t.count(k) as f64 / elapsed.as_secs_f64(),
                "latency_ms": t.summary(k).map(|s| s.json()),
                "errors": t.errors(k),
            })
        })
        .collect();
    serde_json::json!({
        "clients": args.clients, "seconds": elapsed.as_secs_f64(), "prefill": args.prefill,
        "prefill_rate": prefill, "min_job_age": args.min_job_age, "machine": crate::machine(),
        "restart_ms": restart.as_secs_f64() * 1e3, "vm_hwm_mib": hwm, "vm_rss_mib": rss,
        "kinds": kinds, "failures": t.samples,
    })
}
