//! seff over a real daemon's accounting: a finished CPU job's lines agree with sacct's
//! record of it, an array task names its array, a GPU job (on the stand-in NVML of
//! `tests/fake_nvml/`, with figures set for each GPU) shows each GPU's utilisation and
//! memory as jobstats prints them, and a job not known, a malformed id or a wrong command
//! line get the script's texts and exit codes.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, UUID0, UUID1};
use common::T;
use common::*;
use std::path::Path;

const GIB: u64 = 1 << 30;

/// `seff ARGS`: (stdout, stderr, exit code).
fn seff(c: &Cluster, args: &[&str]) -> (String, String, Option<i32>) {
    outcome(&c.run("seff", args))
}

/// `seff ARGS`, asserting success and silence on stderr: its output.
fn report(c: &Cluster, args: &[&str]) -> String {
    let (out, err, code) = seff(c, args);
    assert_eq!(code, Some(0), "seff {args:?}: {err}\n{out}");
    assert!(err.is_empty(), "seff {args:?}: {err}");
    out
}

/// One field of sacct's allocation row of `job`.
fn sacct_field(c: &Cluster, job: &str, field: &str) -> String {
    let out = c.run("sacct", &["-j", job, "-X", "-n", "-P", "-o", field]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// The value after `label: ` on its line of `text`.
fn line_value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(label)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {label} line in\n{text}"))
}

#[test]
fn a_finished_cpu_jobs_report_agrees_with_sacct() {
    let c = Cluster::start("0", "");
    let job = c.sbatch(&[
        "-c",
        "2",
        "--mem=100M",
        "-o",
        "cpu.out",
        "--wrap",
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 1",
    ]);
    c.wait_state(job, &["COMPLETED"], T);
    let id = job.to_string();
    let out = report(&c, &[&id]);
    let me = fake_nvml::me();
    let group = String::from_utf8(std::process::Command::new("id").arg("-gn").output().unwrap().stdout).unwrap();
    assert!(
        out.starts_with(&format!(
            "Job ID: {job}\nCluster: testcluster\nUser/Group: {me}/{}\nState: COMPLETED (exit code 0)\nNodes: 1\nCores per node: 2\n",
            group.trim()
        )),
        "{out}"
    );
    // The wall-clock time is sacct's Elapsed; the core-walltime twice it, for two cores.
    let elapsed = sacct_field(&c, &id, "Elapsed");
    assert_eq!(line_value(&out, "Job Wall-clock time"), elapsed, "{out}");
    let secs = elapsed.split(':').fold(0u64, |a, p| a * 60 + p.parse::<u64>().unwrap());
    assert!(secs >= 1, "{elapsed}");
    let core = secs * 2;
    let core_text = format!("{:02}:{:02}:{:02}", core / 3600, core % 3600 / 60, core % 60);
    let cpu = line_value(&out, "CPU Efficiency");
    assert!(cpu.ends_with(&format!("% of {core_text} core-walltime")), "{out}");
    // Memory: what the script's steps used, of the 100 MB given to the node.
    assert!(line_value(&out, "Memory Utilized").ends_with(" MB"), "{out}");
    assert!(line_value(&out, "Memory Efficiency").ends_with("% of 100.00 MB (100.00 MB/node)"), "{out}");
    assert!(!out.contains("GPU"), "no GPU lines for a job without GPUs: {out}");
    assert_eq!(out.lines().count(), 11, "{out}");

    // A failing job: its exit code; and -d puts the raw figures first; `slurmlet seff` too.
    let failed = c.sbatch(&["-o", "fail.out", "--wrap", "exit 3"]);
    c.wait_state(failed, &["FAILED"], T);
    let out = outcome(&c.run("slurmlet", &["seff", "-d", &failed.to_string()]));
    assert_eq!(out.2, Some(0), "{}", out.1);
    let lines: Vec<&str> = out.0.lines().collect();
    assert!(lines[0].starts_with("Slurm data: JobID ArrayJobID User Group State"), "{}", out.0);
    assert!(lines[1].starts_with(&format!("Slurm data: {failed}  {me} ")), "{}", out.0);
    assert_eq!(lines[2], "");
    assert!(lines.contains(&"State: FAILED (exit code 3)"), "{}", out.0);
    assert!(lines.contains(&"Cores: 1"), "{}", out.0);
}

#[test]
fn an_array_task_names_its_array() {
    let c = Cluster::start("0", "");
    let array = c.sbatch(&["--array=1-2", "-o", "a-%a.out", "--wrap", "true"]);
    let task = format!("{array}_2");
    let raw = wait_for("task 2 done", T, || {
        let state = sacct_field(&c, &task, "JobIDRaw,State");
        until(state.ends_with("|COMPLETED"), || state.clone()).map(|()| state.split('|').next().unwrap().to_string())
    });
    let out = report(&c, &[&task]);
    assert!(out.starts_with(&format!("Job ID: {raw}\nArray Job ID: {task}\nCluster: testcluster\n")), "{out}");
}

#[test]
fn unknown_jobs_bad_ids_and_bad_command_lines_are_refused_as_the_script_does() {
    let c = Cluster::start("0", "");
    assert_eq!(seff(&c, &["999999"]), (String::new(), "Job not found.\n".to_string(), Some(2)));
    let (out, err, code) = seff(&c, &["abc"]);
    assert_eq!((out.as_str(), err.as_str(), code), ("", "seff: fatal: Bad job/step specified: abc\n", Some(1)));
    let usage = "Usage: seff [Options] <Jobid>\n       Options:\n       -h    Help menu\n       -v    Version\n       -d    Debug mode: display raw Slurm data\n";
    assert_eq!(seff(&c, &[]), (usage.to_string(), String::new(), Some(1)));
    assert_eq!(seff(&c, &["1", "2"]), (usage.to_string(), String::new(), Some(1)));
    assert_eq!(seff(&c, &["-h"]), (usage.to_string(), String::new(), Some(1)));
    assert_eq!(seff(&c, &["-v"]), ("seff Version 2.1\n".to_string(), String::new(), Some(1)));
    assert_eq!(seff(&c, &["-x", "1"]), (usage.to_string(), "Unknown option: x\n".to_string(), Some(1)));
}

/// Describes the machine: GPU 0 busy (`util` %, `used` bytes), GPU 1 idle; no processes.
fn set_machine(machine: &Path, used: u64, util: u32) {
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["memory_used"] = used.into();
    gpu0["utilization"] = util.into();
    let gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": [gpu0, gpu1] }));
}

#[test]
fn a_gpu_jobs_report_shows_each_gpus_use() {
    let (c, machine) = fake_nvml::start_watching("gpu_history_resolution = 1");
    set_machine(&machine, 12 * GIB, 87);
    // Every sample from here on is the machine just described.
    let since = slurmlet::sys::now() as i64;
    wait_for("GPU 0 sampled at 87 %", T, || {
        let reply = c.client().gpu_samples(Some(since)).unwrap();
        let busy =
            reply.gpus.iter().find(|g| g.index == 0).map_or(0, |g| g.samples.iter().filter(|s| s.2 == 87).count());
        until(busy >= 2, || format!("{reply:?}"))
    });
    let job = c.sbatch(&["--gres=gpu:2", "-o", "gpu.out", "--wrap", "sleep 3"]);
    c.wait_state(job, &["COMPLETED"], T);
    let out = report(&c, &[&job.to_string()]);
    assert!(out.contains("State: COMPLETED (exit code 0)\n"), "{out}");
    assert!(
        out.ends_with(
            "\n  GPU utilization per node\n\
             \x20     node1 (GPU 0): 87%\n\
             \x20     node1 (GPU 1): 0% <-- GPU was not used\n\
             \n  GPU memory usage per node - maximum used/total\n\
             \x20     node1 (GPU 0): 12.0GB/40GB (30.0%)\n\
             \x20     node1 (GPU 1): 0.0B/40GB (0.0%)\n"
        ),
        "{out}"
    );
    // A job given one GPU has one line of each.
    let one = c.sbatch(&["--gres=gpu:1", "-o", "one.out", "--wrap", "sleep 2"]);
    c.wait_state(one, &["COMPLETED"], T);
    let out = report(&c, &[&one.to_string()]);
    assert_eq!(out.matches(" (GPU ").count(), 2, "{out}");
}
