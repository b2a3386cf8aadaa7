//! Each job's and step's GPU use in its records: the daemon looks at the processes on its
//! GPUs (here through the stand-in NVML of `tests/fake_nvml/`, told of the real processes
//! of a running job), finds the step each belongs to, and keeps the peak and the average of
//! their GPU memory and SM utilisation; sacct shows them as Slurm's `gres/gpumem` and
//! `gres/gpuutil`, and the slurmdb records carry them.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, MACHINE_VARIABLE, UUID0, UUID1};
use common::T;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const GIB: u64 = 1 << 30;

/// A daemon on a fake machine of two A100s that looks at them every second, and the file
/// that describes the machine.
fn start() -> (Cluster, PathBuf) {
    fake_nvml::start_watching("")
}

/// Describes the machine with `on0`, `(pid, bytes, SM %)`, as GPU 0's compute processes.
fn set_processes(machine: &Path, on0: &[(u32, u64, u32)]) {
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["processes"] = fake_nvml::processes(on0);
    let gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": [gpu0, gpu1] }));
}

/// The value of `name=` in a TRES text (`cpu=…,gres/gpumem=3G,…`).
fn tres_value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.split(',').find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
}

/// Bytes from sacct's size text (`3G`, `512M`, `1.50G`).
fn bytes(text: &str) -> u64 {
    let (number, unit) = text.split_at(text.len() - 1);
    let scale = match unit {
        "K" => 1u64 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return text.parse().unwrap(),
    };
    (number.parse::<f64>().unwrap() * scale as f64) as u64
}

#[test]
fn the_gpu_use_of_a_jobs_script_and_of_its_step_are_recorded_apart() {
    let (c, machine) = start();
    std::fs::write(
        c.path("job.sh"),
        "#!/bin/sh\n\
         echo $$ > batch.pid\n\
         srun sh -c 'echo $$ > step.pid; while [ ! -e release ]; do sleep 0.1; done'\n",
    )
    .unwrap();
    let job = c.sbatch(&["--gres=gpu:1", "-o", "job.out", "job.sh"]);
    let batch: u32 = c.wait_file("batch.pid", T).trim().parse().unwrap();
    let step: u32 = c.wait_file("step.pid", T).trim().parse().unwrap();

    // The script holds 1 GiB at 30 %, its step 3 GiB at 80 %, then 2 GiB at 40 %.
    set_processes(&machine, &[(batch, GIB, 30), (step, 3 * GIB, 80)]);
    std::thread::sleep(Duration::from_millis(3500));

    // sstat shows the running step's figures now: its processes and its GPU use so far.
    let live = c.run("sstat", &["-j", &job.to_string(), "-n", "-P", "-o", "JobID,NTasks,Pids,TRESUsageInMax"]);
    assert!(live.status.success(), "{}", stderr(&live));
    let text = stdout(&live);
    let fields: Vec<&str> = text.trim().split('|').collect();
    assert_eq!(fields[..2], [format!("{job}.0").as_str(), "1"], "{text}");
    assert!(fields[2].split(',').any(|p| p == step.to_string()), "the step's pid {step} in {text}");
    assert_eq!(tres_value(fields[3], "gres/gpumem"), Some("3G"), "{text}");
    assert_eq!(tres_value(fields[3], "gres/gpuutil"), Some("80"), "{text}");
    let script = c.run("sstat", &["-j", &format!("{job}.batch"), "-n", "-P", "-o", "JobID,Pids,TRESUsageInMax"]);
    let text = stdout(&script);
    assert!(text.starts_with(&format!("{job}.batch|")), "{text}");
    assert!(text.split('|').nth(1).unwrap().split(',').any(|p| p == batch.to_string()), "{text}");
    assert!(!text.split('|').nth(1).unwrap().split(',').any(|p| p == step.to_string()), "not the step's: {text}");
    assert_eq!(tres_value(text.trim().split('|').nth(2).unwrap(), "gres/gpumem"), Some("1G"), "{text}");
    set_processes(&machine, &[(batch, GIB, 30), (step, 2 * GIB, 40)]);
    std::thread::sleep(Duration::from_millis(2500));
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(job, &["COMPLETED"], T);
    set_processes(&machine, &[]);

    let out = c.run("sacct", &["-j", &job.to_string(), "-n", "-P", "-o", "JobID,TRESUsageInMax,TRESUsageInAve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |id: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.split('|').next() == Some(id))
            .unwrap_or_else(|| panic!("no row {id} in\n{text}"))
            .split('|')
            .map(String::from)
            .collect()
    };
    // As in Slurm, the job's own row has no usage; its steps have.
    assert_eq!(row(&job.to_string())[1..], ["", ""], "{text}");
    let script = row(&format!("{job}.batch"));
    assert_eq!(tres_value(&script[1], "gres/gpumem"), Some("1G"), "{text}");
    assert_eq!(tres_value(&script[1], "gres/gpuutil"), Some("30"), "{text}");
    let srun = row(&format!("{job}.0"));
    assert_eq!(tres_value(&srun[1], "gres/gpumem"), Some("3G"), "{text}");
    assert_eq!(tres_value(&srun[1], "gres/gpuutil"), Some("80"), "{text}");
    // The average counts every look while the step ran, those before its processes were
    // described too: below the peak, above nothing.
    let average = bytes(tres_value(&srun[2], "gres/gpumem").unwrap());
    assert!(average > 0 && average < 3 * GIB, "{text}");
    let util: u32 = tres_value(&srun[2], "gres/gpuutil").unwrap().parse().unwrap();
    assert!(util > 0 && util < 80, "{text}");
    // Slurm's order of names.
    let names: Vec<&str> = srun[1].split(',').map(|p| p.split('=').next().unwrap()).collect();
    assert_eq!(names, ["cpu", "energy", "gres/gpumem", "gres/gpuutil", "mem"], "{text}");

    // The slurmdb record carries them where slurmrestd does: the step's usage TRES.
    let out = c.run("sacct", &["-j", &job.to_string(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let steps = doc["jobs"][0]["steps"].as_array().unwrap();
    let step0 = steps.iter().find(|s| s["step"]["id"] == format!("{job}.0")).expect("step 0");
    let peak = step0["tres"]["requested"]["max"].as_array().unwrap();
    let gpumem = peak.iter().find(|t| t["type"] == "gres" && t["name"] == "gpumem").expect("gres/gpumem");
    assert_eq!(gpumem["count"], 3 * GIB);
    let gpuutil = peak.iter().find(|t| t["type"] == "gres" && t["name"] == "gpuutil").expect("gres/gpuutil");
    assert_eq!(gpuutil["count"], 80);

    // And they outlive the daemon: they are in the store.
    let mut c = c;
    c.kill_daemon();
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    let again = c.run("sacct", &["-j", &format!("{job}.0"), "-n", "-P", "-o", "TRESUsageInMax"]);
    assert_eq!(tres_value(stdout(&again).trim(), "gres/gpumem"), Some("3G"), "{}", stdout(&again));
}

#[test]
fn a_job_without_gpus_whose_processes_stay_off_them_has_no_gpu_figures() {
    let (c, _machine) = start();
    let job = c.sbatch(&["-o", "cpu.out", "--wrap", "sleep 2.5"]);
    c.wait_state(job, &["COMPLETED"], T);
    let out = c.run("sacct", &["-j", &format!("{job}.batch"), "-n", "-P", "-o", "TRESUsageInMax"]);
    let text = stdout(&out);
    assert!(text.contains("cpu=") && !text.contains("gres/"), "{text}");
}
