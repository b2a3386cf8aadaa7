//! `slurmlet-bench`: measures the queue's speed against the physical floor and, when its
//! commands are on `PATH`, against real Slurm, and prints one table of every figure with its
//! targets. See docs/performance.md.
//!
//! Each figure starts its own daemon (8 GPUs, CPUs and memory to spare) in a temporary
//! directory, drives it through the command symlinks and the REST socket, and stops it again.

mod cluster;
mod counts;
mod error;
mod figures;
mod load;
mod proc;
mod real;
mod report;
mod stamp;
mod stats;

use clap::Parser;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The harness's options.
#[derive(Debug, Parser)]
#[command(
    name = "slurmlet-bench",
    about = "Measure slurmlet's queue against the physical floor and real Slurm",
    after_help = "Figures: 1 sbatch latency, 2 submit throughput, 3 dispatch latency, 4 trivial-job throughput, \
                  5 squeue with a large store, 6 daemon memory and restart, 7 scheduler pass, 8 srun start and output throughput.\n\
                  Real Slurm is compared when a real sbatch/squeue is on PATH.\n\
                  `slurmlet-bench load --help`: many concurrent clients against a daemon with a long job history."
)]
struct Args {
    /// Tiny sizes: only checks that every figure works (seconds, not minutes)
    #[arg(long)]
    smoke: bool,
    /// Run only these figures (comma-separated numbers, e.g. 1,5)
    #[arg(long, value_delimiter = ',', value_name = "N,M")]
    only: Vec<u32>,
    /// Multiply every job and queue count by F (e.g. 0.1 for a quicker run)
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    scale: f64,
    /// Write the raw numbers as JSON to PATH
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Also print the table as Markdown (for docs/performance.md)
    #[arg(long)]
    markdown: bool,
    /// The slurmlet binary to measure (default: the one next to this program)
    #[arg(long, value_name = "PATH")]
    slurmlet: Option<PathBuf>,
    /// Where to create the temporary cluster directories (default: the system temp dir)
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Do not compare with real Slurm even when it is on PATH
    #[arg(long)]
    no_real: bool,
    /// Leave the temporary cluster directories (daemon logs, job stores) behind
    #[arg(long)]
    keep: bool,
    /// Add this file's lines to every daemon's configuration (e.g. `gpu_sample_interval = 1`
    /// and an `nvml_library`: the GPUs are then found through it instead of configured)
    #[arg(long, value_name = "FILE")]
    daemon_config: Option<PathBuf>,
    /// Figure 4's jobs ask for this generic resource (e.g. `shard:1`, with `shards_per_gpu`
    /// in the --daemon-config file): the throughput of many small jobs sharing GPUs
    #[arg(long, value_name = "GRES")]
    job_gres: Option<String>,
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "stamp") {
        std::process::exit(stamp::run(&args[2..]));
    }
    if args.get(1).is_some_and(|a| a == "load") {
        std::process::exit(load::run(&args[2..]));
    }
    let args = Args::parse_from(args);
    std::process::exit(run(args));
}

/// Measures the figures asked for and prints the table; the exit code: 2 for a bad
/// option, 1 when the binary is missing or a figure failed.
fn run(args: Args) -> i32 {
    let (slurmlet, bench_exe) = match prepare(&args) {
        Ok(paths) => paths,
        Err(code) => return code,
    };
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let counts = if args.smoke { counts::Counts::smoke() } else { counts::Counts::full(args.scale) };
    let real = if args.no_real {
        Err("not asked for (--no-real)".to_string())
    } else {
        real::RealSlurm::detect(&slurmlet, &parent)
    };
    print_heading(&args, &slurmlet, &bench_exe, &parent, &real);

    let ctx = figures::Ctx::new(slurmlet, bench_exe, parent, counts, real);
    if let Some(r) = &ctx.real {
        if let Ok(n) = r.queue_len() {
            ctx.note(format!("real Slurm had {n} jobs queued before the run"));
        }
    }
    let (rows, failures) = run_figures(&args, &ctx);
    print_report(&args, &ctx, &rows, &failures);
    if let Some(path) = &args.json {
        if let Err(e) = write_json(path, &args, &ctx, &rows, &failures) {
            eprintln!("slurmlet-bench: cannot write {}: {e}", path.display());
            return 1;
        }
    }
    if failures.is_empty() {
        0
    } else {
        1
    }
}

/// Checks the options and applies those the clusters read (`--keep`, `--daemon-config`,
/// `--job-gres`); the `slurmlet` binary to measure and this program's own, or the exit
/// code (after the message).
fn prepare(args: &Args) -> Result<(PathBuf, PathBuf), i32> {
    if !(args.scale > 0.0 && args.scale.is_finite()) {
        eprintln!("slurmlet-bench: --scale must be a positive number");
        return Err(2);
    }
    if let Some(bad) = args.only.iter().find(|n| !figures::FIGURES.iter().any(|f| f.number == **n)) {
        eprintln!("slurmlet-bench: there is no figure {bad} (figures are 1 to {})", figures::FIGURES.len());
        return Err(2);
    }
    let bench_exe = std::env::current_exe().map_err(|e| {
        eprintln!("slurmlet-bench: cannot find my own executable: {e}");
        1
    })?;
    let slurmlet = args.slurmlet.clone().unwrap_or_else(|| bench_exe.with_file_name("slurmlet"));
    if !slurmlet.is_file() {
        eprintln!(
            "slurmlet-bench: {} not found; build it first (cargo build --release) or pass --slurmlet",
            slurmlet.display()
        );
        return Err(1);
    }
    cluster::KEEP.store(args.keep, std::sync::atomic::Ordering::Relaxed);
    if let Some(path) = &args.daemon_config {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let _ = cluster::EXTRA_CONFIG.set(text);
            }
            Err(e) => {
                eprintln!("slurmlet-bench: cannot read --daemon-config {}: {e}", path.display());
                return Err(1);
            }
        }
    }
    if let Some(gres) = &args.job_gres {
        match slurmlet::options::gres::parse_gres(gres) {
            Ok(requests) => {
                let _ = cluster::JOB_GRES.set(slurmlet::options::gres::to_tres(&requests));
            }
            Err(e) => {
                eprintln!("slurmlet-bench: --job-gres {gres}: {e}");
                return Err(2);
            }
        }
    }
    Ok((slurmlet, bench_exe))
}

/// What the run measures and where: the date, machine, binary, temporary directory and the
/// real Slurm compared with (or why none is).
fn print_heading(
    args: &Args,
    slurmlet: &Path,
    bench_exe: &Path,
    parent: &Path,
    real: &Result<real::RealSlurm, String>,
) {
    println!("slurmlet-bench{}", if args.smoke { " (smoke: tiny sizes, timings mean nothing)" } else { "" });
    println!("date:      {}", now_utc());
    println!("machine:   {}", machine());
    if let Some(extra) = cluster::EXTRA_CONFIG.get() {
        println!(
            "daemons:   configured with {}",
            extra.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("; ")
        );
    }
    if let Some(gres) = cluster::JOB_GRES.get() {
        println!("figure 4:  each job asks for {gres}");
    }
    println!("slurmlet:  {}{}", slurmlet.display(), stale_warning(slurmlet, bench_exe));
    println!("temp dir:  {} ({})", parent.display(), filesystem(parent));
    match real {
        Ok(r) => println!(
            "real Slurm: {} (MaxJobCount {})",
            r.version,
            r.max_job_count.map(|n| n.to_string()).unwrap_or_else(|| "unknown".into())
        ),
        Err(why) => println!("real Slurm: {why}"),
    }
    if cfg!(debug_assertions) {
        println!("warning:   this is a debug build; timings are not representative (use --release)");
    }
    println!();
}

/// Runs the figures `--only` names (all without it): their rows in figure order, and a line
/// for each figure that failed.
fn run_figures(args: &Args, ctx: &figures::Ctx) -> (Vec<report::Row>, Vec<String>) {
    let mut by_figure = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    for f in figures::in_run_order() {
        if !args.only.is_empty() && !args.only.contains(&f.number) {
            continue;
        }
        match (f.run)(ctx) {
            Ok(r) => {
                by_figure.insert(f.number, r);
            }
            Err(e) => {
                let e = error::chain(&e);
                eprintln!("slurmlet-bench: figure {} ({}) failed: {e}", f.number, f.title);
                failures.push(format!("figure {} ({}): {e}", f.number, f.title));
            }
        }
    }
    (by_figure.into_values().flatten().collect(), failures)
}

/// The table and what its columns mean, the baselines, notes, stages and failures, and with
/// `--markdown` the table again in Markdown.
fn print_report(args: &Args, ctx: &figures::Ctx, rows: &[report::Row], failures: &[String]) {
    println!("{}", report::table(rows));
    println!("ours/base: our time per operation divided by the baseline's (rates inverted); lower is better.");
    println!("Slurm/ours: real Slurm's time per operation divided by ours: how many times faster slurmlet is.");
    println!("met?: one word per target, in order (? = not measurable in this run, e.g. real Slurm absent).");
    println!("\nbaselines:");
    for r in rows.iter().filter(|r| r.base.is_some()) {
        println!("  {}: {}", r.figure, r.base_what);
    }
    let notes = ctx.notes();
    if !notes.is_empty() {
        println!("\nnotes:");
        for n in &notes {
            println!("  {n}");
        }
    }
    println!("\nstages (seconds):");
    for (what, secs) in ctx.stages() {
        println!("  {secs:8.1}  {what}");
    }
    println!("  {:8.1}  total", ctx.start.elapsed().as_secs_f64());
    if !failures.is_empty() {
        println!("\nfailed:");
        for f in failures {
            println!("  {f}");
        }
    }
    if args.markdown {
        println!("\n{}", report::markdown(rows));
    }
}

/// Writes `--json`'s file: the run's options and counts, every row, the raw numbers, the
/// stages, notes and failures.
fn write_json(
    path: &Path,
    args: &Args,
    ctx: &figures::Ctx,
    rows: &[report::Row],
    failures: &[String],
) -> std::io::Result<()> {
    let doc = serde_json::json!({
        "date": now_utc(),
        "machine": machine(),
        "smoke": args.smoke,
        "scale": args.scale,
        "counts": ctx.counts,
        "real_slurm": ctx.real.as_ref().map(|r| r.version.clone()),
        "rows": rows.iter().map(report::Row::json).collect::<Vec<_>>(),
        "raw": ctx.raw_numbers(),
        "stages": ctx.stages().iter().map(|(w, s)| serde_json::json!({ "stage": w, "seconds": s })).collect::<Vec<_>>(),
        "notes": ctx.notes(),
        "failures": failures,
    });
    let text = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
    std::fs::write(path, text + "\n")
}

/// The current UTC date and time (`2026-05-01 12:00 UTC`).
fn now_utc() -> String {
    let secs = slurmlet::sys::now();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// CPU model, CPU count, memory and kernel of this machine.
pub(crate) fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().to_string())))
        .and_then(|v| v.split_whitespace().next().and_then(|kb| kb.parse::<f64>().ok()))
        .map(|kb| kb / 1024.0 / 1024.0)
        .unwrap_or(0.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpus} CPUs ({model}), {mem_gib:.0} GiB memory, Linux {}", kernel.trim())
}

/// The type of the filesystem holding `dir` (the job store's speed depends on it).
fn filesystem(dir: &Path) -> String {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (_, at, kind) = (w.next()?, w.next()?, w.next()?);
            dir.starts_with(at).then(|| (at.len(), kind.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, kind)| kind)
        .unwrap_or_else(|| "unknown filesystem".into())
}

/// A warning when the slurmlet binary is older than the library this program was linked
/// with: it was probably not rebuilt (`cargo run --bin slurmlet-bench` builds only this one).
fn stale_warning(slurmlet: &Path, bench: &Path) -> &'static str {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest_lib = bench.parent().and_then(|d| std::fs::read_dir(d.join("deps")).ok()).and_then(|entries| {
        entries
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("libslurmlet-") && name.ends_with(".rlib")
            })
            .filter_map(|e| e.metadata().ok()?.modified().ok())
            .max()
    });
    match (modified(slurmlet), newest_lib) {
        (Some(s), Some(lib)) if s < lib => "  (older than the library: rebuild it with cargo build --release)",
        _ => "",
    }
}
