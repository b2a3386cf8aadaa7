//! `slurmlet gpus`: one line per GPU of the node, like gpustat but aware of the queue: its
//! index, model, memory in use and in all, utilisation, and who holds it (the jobs it is given
//! to, each that holds shards of it with its memory against its share, and the processes
//! outside the queue that use it), from `GET /slurmlet/v1/gpus`; with
//! `--json`, that reply (see [`crate::api::gpus`] for its shape).

use crate::api::gpus::{GpuJob, GpuOutsider, GpuStatus, GpusResponse};
use clap::Parser;
use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use std::ffi::OsString;

/// `slurmlet gpus`'s options.
#[derive(Debug, Parser)]
#[command(about = "show the node's GPUs and who holds each")]
pub struct GpusArgs {
    /// print the daemon's reply as JSON
    #[arg(long)]
    pub json: bool,
    /// put a GPU taken out of service back (its index, or `all`); root and operators only
    #[arg(long, value_name = "GPU")]
    pub resume: Option<String>,
}

/// `3072 / 40960 MiB` (`-` for a figure not known).
fn memory(used: Option<u64>, total: Option<u64>) -> String {
    let mib = |bytes: Option<u64>| bytes.map_or_else(|| "-".to_string(), |b| (b >> 20).to_string());
    match (used, total) {
        (None, None) => "-".into(),
        _ => format!("{} / {} MiB", mib(used), mib(total)),
    }
}

/// `87%`, or `-`.
fn utilization(percent: Option<u32>, doubted: bool) -> String {
    let mark = if doubted { "*" } else { "" };
    percent.map_or_else(|| "-".to_string(), |p| format!("{p}%{mark}"))
}

/// `job 12 (alice)`, or `another user's job` for one hidden by `private_data`; a job that
/// holds shards of the GPU with its use against its share: `job 12 (alice) 3.1/10.0 GiB
/// (4/32 shards)` (`-` for a figure not known); a job whose GPUs have stayed below the idle
/// policy's threshold, for how long as of the look at `seen_at`: `job 12 (alice), idle
/// 01:02:03`.
fn job_text(job: &GpuJob, shards_per_gpu: u32, seen_at: Option<u64>) -> String {
    let mut who = match (&job.job, &job.user_name) {
        (Some(id), Some(user)) => format!("job {id} ({user})"),
        (Some(id), None) => format!("job {id}"),
        (None, _) => "another user's job".into(),
    };
    if let (Some(since), Some(at)) = (job.idle_since, seen_at) {
        who.push_str(&format!(", idle {}", crate::options::time::format_hms(at.saturating_sub(since))));
    }
    let Some(shards) = job.shards else { return who };
    let gib = |bytes: Option<u64>| bytes.map_or_else(|| "-".to_string(), crate::gpu::gib);
    format!("{who} {}/{} GiB ({shards}/{shards_per_gpu} shards)", gib(job.used_memory), gib(job.share_bytes))
}

/// `pid 4242 (bob) python train.py, outside the queue`.
fn outsider_text(p: &GpuOutsider) -> String {
    let who = match (&p.user_name, &p.command) {
        (Some(user), Some(command)) => format!(" ({user}) {command}"),
        (Some(user), None) => format!(" ({user})"),
        (None, _) => " (not in this pid namespace)".to_string(),
    };
    format!("pid {}{who}, outside the queue", p.pid)
}

/// Who holds `gpu` at the look at `seen_at`: its jobs, then the processes outside the
/// queue; `-` for nobody.
fn holders(gpu: &GpuStatus, seen_at: Option<u64>) -> String {
    let jobs = gpu.jobs.iter().map(|j| job_text(j, gpu.shards, seen_at));
    let all: Vec<String> = jobs.chain(gpu.outside_queue.iter().map(outsider_text)).collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join("; ")
    }
}

/// The line under the table: when the figures were taken, or why there are none.
fn footer(reply: &GpusResponse) -> String {
    match (reply.sampled_at, reply.sample_interval) {
        (Some(at), every) => {
            format!("figures of {}; the GPUs are looked at every {every} s", crate::sys::format_local_time(at))
        }
        (None, 0) => "figures not sampled: the daemon does not look at these GPUs".into(),
        (None, every) => format!("no figures yet: the GPUs are looked at every {every} s"),
    }
}

/// The table of `reply`'s GPUs and its footer line.
pub fn render(reply: &GpusResponse) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(["GPU", "MODEL", "MEMORY", "UTIL", "HELD BY"]);
    for gpu in &reply.gpus {
        table.add_row([
            gpu.index.to_string(),
            gpu.name.clone().unwrap_or_else(|| "-".into()),
            memory(gpu.memory_used, gpu.memory_total),
            utilization(gpu.utilization, gpu.note.is_some()),
            match &gpu.failed {
                Some(why) => format!("out of service: {why}"),
                None => holders(gpu, reply.sampled_at),
            },
        ]);
    }
    for column in [0, 2, 3] {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut lines: Vec<String> = table.lines().map(|l| l.trim_end().to_string()).collect();
    for gpu in &reply.gpus {
        if let Some(note) = &gpu.note {
            lines.push(format!("* GPU {}: the driver reported {note}; shown as it can be", gpu.index));
        }
    }
    format!("{}\n{}\n", lines.join("\n"), footer(reply))
}

/// `slurmlet gpus --resume GPU`: puts failed GPUs back in service, saying which.
pub fn resume(client: &crate::api::client::Client, which: &str) -> i32 {
    match client.resume_gpus(which) {
        Ok(reply) if !reply.errors.is_empty() => {
            for e in &reply.errors {
                super::error("slurmlet gpus", &e.description);
            }
            1
        }
        Ok(reply) => {
            for gpu in reply.resumed {
                println!("GPU {gpu} is back in service");
            }
            0
        }
        Err(e) => {
            super::error("slurmlet gpus", &e.to_string());
            1
        }
    }
}

/// Runs `slurmlet gpus [--json]`.
pub fn run(args: Vec<OsString>) -> i32 {
    let argv: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let opts: GpusArgs = match super::parse_args("slurmlet gpus", args, 2) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let client = match super::connect("slurmlet gpus") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(which) = &opts.resume {
        return resume(&client, which);
    }
    let mut reply = match client.gpus() {
        Ok(r) => r,
        Err(e) => {
            super::error("slurmlet gpus", &e.to_string());
            return 1;
        }
    };
    if opts.json {
        super::scontrol::json::stamp(&mut reply.meta, &argv);
        super::scontrol::json::print(&reply);
    } else if reply.gpus.is_empty() {
        println!("no GPUs on this node");
    } else {
        super::format::emit_text(&render(&reply));
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn gpu(index: u32) -> GpuStatus {
        GpuStatus {
            index,
            name: Some("NVIDIA A100-SXM4-40GB".into()),
            memory_used: Some(3 * GIB),
            memory_total: Some(40 * GIB),
            utilization: Some(87),
            ..Default::default()
        }
    }

    #[test]
    fn one_line_per_gpu_with_who_holds_it() {
        let mut held = gpu(0);
        held.jobs = vec![GpuJob {
            job: Some("12".into()),
            job_id: Some(12),
            user_id: Some(1000),
            user_name: Some("alice".into()),
            used_memory: Some(GIB),
            ..Default::default()
        }];
        let mut busy = gpu(1);
        busy.outside_queue = vec![GpuOutsider {
            pid: 4242,
            user_name: Some("bob".into()),
            command: Some("python train.py".into()),
            used_memory: Some(GIB),
        }];
        let private = GpuStatus { jobs: vec![GpuJob::default()], ..gpu(2) };
        let unknown = GpuStatus { name: None, memory_used: None, memory_total: None, utilization: None, ..gpu(3) };
        let reply = GpusResponse { gpus: vec![held, busy, private, unknown], ..Default::default() };
        let text = render(&reply);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(lines[0]), "GPU MODEL MEMORY UTIL HELD BY");
        assert_eq!(words(lines[1]), "0 NVIDIA A100-SXM4-40GB 3072 / 40960 MiB 87% job 12 (alice)");
        assert_eq!(
            words(lines[2]),
            "1 NVIDIA A100-SXM4-40GB 3072 / 40960 MiB 87% pid 4242 (bob) python train.py, outside the queue"
        );
        assert_eq!(words(lines[3]), "2 NVIDIA A100-SXM4-40GB 3072 / 40960 MiB 87% another user's job");
        assert_eq!(words(lines[4]), "3 - - - -");
        assert_eq!(lines[5], "figures not sampled: the daemon does not look at these GPUs");
        let header_at = lines[0].find("HELD BY").unwrap();
        assert!(lines.iter().skip(1).take(4).all(|l| l.len() > header_at), "the columns line up: {text}");
        assert_eq!(lines[1].find("job 12"), Some(header_at), "{text}");
    }

    #[test]
    fn a_figure_the_driver_got_wrong_is_marked_and_said_under_the_table() {
        let doubted = GpuStatus { utilization: Some(100), note: Some("utilisation 400%".into()), ..gpu(0) };
        let text = render(&GpusResponse { gpus: vec![doubted, gpu(1)], ..Default::default() });
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains(" 100%* "), "{text}");
        assert!(lines[2].contains(" 87% "), "{text}");
        assert_eq!(lines[3], "* GPU 0: the driver reported utilisation 400%; shown as it can be");
    }

    #[test]
    fn a_shard_job_shows_its_use_against_its_share() {
        let job = |id: u32, used: Option<u64>| GpuJob {
            job: Some(id.to_string()),
            job_id: Some(id),
            user_id: Some(1000),
            user_name: Some("alice".into()),
            used_memory: used,
            shards: Some(4),
            share_bytes: Some(5 * GIB),
            idle_since: None,
        };
        let shared = GpuStatus { shards: 32, jobs: vec![job(12, Some(3_328_599_654)), job(13, None)], ..gpu(0) };
        let text = render(&GpusResponse { gpus: vec![shared], ..Default::default() });
        let row = text.lines().nth(1).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            row,
            "0 NVIDIA A100-SXM4-40GB 3072 / 40960 MiB 87% job 12 (alice) 3.1/5.0 GiB (4/32 shards); \
             job 13 (alice) -/5.0 GiB (4/32 shards)"
        );
    }

    #[test]
    fn figures_are_dated_or_said_to_be_missing() {
        let yet = GpusResponse { sample_interval: 5, ..Default::default() };
        assert_eq!(footer(&yet), "no figures yet: the GPUs are looked at every 5 s");
        let seen = GpusResponse { sample_interval: 1, sampled_at: Some(1_795_313_294), ..Default::default() };
        assert_eq!(
            footer(&seen),
            format!("figures of {}; the GPUs are looked at every 1 s", crate::sys::format_local_time(1_795_313_294))
        );
        assert_eq!(memory(None, Some(40 * GIB)), "- / 40960 MiB");
    }
}
