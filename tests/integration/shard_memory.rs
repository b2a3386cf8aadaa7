//! Each shard job's share of its GPU's memory (`shards / shards_per_gpu` of it), through the
//! real daemon on the stand-in NVML of `tests/fake_nvml/` (two A100s of 40 GiB, looked at
//! every second, told of the real processes of running jobs): `slurmlet gpus` shows each
//! shard job's use against its share; a job over its share at two looks in a row gets one
//! line in its error file, and under `shard_memory = "enforce"` it ends `OUT_OF_MEMORY`
//! while its neighbour on the GPU goes on.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, UUID0, UUID1};
use common::T;
use common::*;
use std::path::Path;
use std::time::Duration;

const GIB: u64 = 1 << 30;

/// Describes the machine with `on0`, `(pid, bytes)`, as GPU 0's compute processes.
fn set_processes(machine: &Path, on0: &[(u32, u64)]) {
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["processes"] =
        on0.iter().map(|(pid, bytes)| serde_json::json!({ "pid": pid, "used_memory": bytes })).collect();
    let gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": [gpu0, gpu1] }));
}

/// Starts a shard:1 job `name` (output `NAME.out`, errors `NAME.err`) that records its
/// script's pid in `NAME.pid` and runs until `stop` exists; returns its id and that pid.
fn shard_job(c: &Cluster, name: &str) -> (u32, u32) {
    let script = format!("echo $$ > {name}.pid; while [ ! -e stop ]; do sleep 0.1; done");
    let out = format!("{name}.out");
    let err = format!("{name}.err");
    let id = c.sbatch(&["--gres=shard:1", "-t", "5", "-o", &out, "-e", &err, "--wrap", &script]);
    c.wait_state(id, &["RUNNING"], T);
    let pid = c.wait_file(&format!("{name}.pid"), T).trim().parse().expect("a pid");
    (id, pid)
}

/// The daemon's line for job `id` holding `used` of GPU 0, over its share of one shard of
/// four (10 GiB).
fn warning(id: u32, used: &str) -> String {
    format!("slurmstepd-node1: warning: Job {id} uses {used} GiB of GPU 0, its share is 10.0 GiB (1 of 4 shards)")
}

/// Waits until `NAME.err` has a line, then lets the daemon look a few times more.
fn told(c: &Cluster, name: &str) -> String {
    let path = c.path(&format!("{name}.err"));
    wait_for("the warning in the job's error file", T, || {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        until(!text.is_empty(), String::new)
    });
    // Three more looks: the line is not written again.
    std::thread::sleep(Duration::from_millis(3500));
    std::fs::read_to_string(&path).unwrap()
}

fn sacct(c: &Cluster, id: u32, fields: &str) -> Vec<String> {
    let out = c.run("sacct", &["-P", "-n", "-j", &id.to_string(), "-o", fields]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().map(String::from).collect()
}

#[test]
fn a_shard_job_over_its_share_is_warned_once_and_goes_on() {
    let (c, machine) = fake_nvml::start_watching("shards_per_gpu = 4");
    let (over, over_pid) = shard_job(&c, "over");
    let (beside, beside_pid) = shard_job(&c, "beside");

    // 12 GiB of its 10, and its neighbour 2 GiB of its 10.
    set_processes(&machine, &[(over_pid, 12 * GIB), (beside_pid, 2 * GIB)]);
    let text = told(&c, "over");
    assert_eq!(text, format!("{}\n", warning(over, "12.0")), "one line, once");
    assert_eq!(std::fs::read_to_string(c.path("beside.err")).unwrap(), "", "the neighbour is within its share");
    assert_eq!(c.state(over), "RUNNING", "warned, not ended");
    assert_eq!(c.state(beside), "RUNNING");

    // slurmlet gpus shows each one's use against its share.
    let out = c.run("slurmlet", &["gpus"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let gpu0 = table.lines().find(|l| l.trim_start().starts_with("0 ")).unwrap_or_else(|| panic!("{table}"));
    let me = fake_nvml::me();
    assert!(gpu0.contains(&format!("job {over} ({me}) 12.0/10.0 GiB (1/4 shards)")), "{table}");
    assert!(gpu0.contains(&format!("job {beside} ({me}) 2.0/10.0 GiB (1/4 shards)")), "{table}");
    let out = c.run("slurmlet", &["gpus", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["gpus"][0]["shards"], 4);
    let entry = v["gpus"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == over)
        .unwrap_or_else(|| panic!("job {over} on GPU 0: {v}"))
        .clone();
    assert_eq!(
        (&entry["shards"], &entry["share_bytes"], &entry["used_memory"]),
        (&1.into(), &(10 * GIB).into(), &(12 * GIB).into())
    );
    assert!(v["gpus"][1]["jobs"].as_array().unwrap().is_empty(), "{v}");

    // Both go on to their end.
    set_processes(&machine, &[]);
    std::fs::write(c.path("stop"), "").unwrap();
    c.wait_state(over, &["COMPLETED"], T);
    c.wait_state(beside, &["COMPLETED"], T);
    assert_eq!(std::fs::read_to_string(c.path("over.err")).unwrap().lines().count(), 1);
}

#[test]
fn under_enforce_a_shard_job_over_its_share_ends_out_of_memory_and_its_neighbour_goes_on() {
    let (c, machine) = fake_nvml::start_watching("shards_per_gpu = 4\nshard_memory = \"enforce\"");
    let (over, over_pid) = shard_job(&c, "over");
    let (beside, beside_pid) = shard_job(&c, "beside");

    // Over its share for less than a second, so at one look at most: nothing happens.
    set_processes(&machine, &[(over_pid, 11 * GIB), (beside_pid, GIB)]);
    std::thread::sleep(Duration::from_millis(400));
    set_processes(&machine, &[(beside_pid, GIB)]);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(c.state(over), "RUNNING", "one look over its share is not enough");
    assert_eq!(std::fs::read_to_string(c.path("over.err")).unwrap(), "");

    set_processes(&machine, &[(over_pid, 21_870_000_000), (beside_pid, GIB)]);
    let j = c.wait_state(over, &["OUT_OF_MEMORY", "COMPLETED", "FAILED", "CANCELLED"], T);
    assert_eq!(j.job_state, ["OUT_OF_MEMORY"], "reason {}", j.state_reason);
    assert_eq!(j.state_reason, "OutOfMemory");
    let text = std::fs::read_to_string(c.path("over.err")).unwrap();
    assert_eq!(text, format!("{}\n", warning(over, "20.4")), "one line");
    assert_eq!(
        sacct(&c, over, "JobID,State,ExitCode"),
        [format!("{over}|OUT_OF_MEMORY|0:125"), format!("{over}.batch|OUT_OF_MEMORY|0:125")]
    );
    let show = stdout(&c.run("scontrol", &["show", "job", &over.to_string()]));
    assert!(show.contains("JobState=OUT_OF_MEMORY Reason=OutOfMemory") && show.contains("ExitCode=0:125"), "{show}");

    // Its neighbour on the GPU goes on, and ends by itself.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(c.state(beside), "RUNNING", "the neighbour keeps running");
    set_processes(&machine, &[]);
    std::fs::write(c.path("stop"), "").unwrap();
    c.wait_state(beside, &["COMPLETED"], T);
    assert_eq!(std::fs::read_to_string(c.path("beside.err")).unwrap(), "");
}

#[test]
fn under_enforce_an_interactive_allocation_over_its_share_is_told_and_revoked() {
    let (c, machine) = fake_nvml::start_watching("shards_per_gpu = 4\nshard_memory = \"enforce\"");
    let salloc = c
        .cmd("salloc")
        .args(["--gres=shard:1", "srun", "sh", "-c", "echo $$ > task.pid; exec sleep 300"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid: u32 = c.wait_file("task.pid", T).trim().parse().unwrap();
    let id = wait_for("the allocation", T, || {
        let text = stdout(&c.run("squeue", &["-h", "-o", "%i"]));
        text.trim().parse::<u32>().map_err(|_| text.clone())
    });
    set_processes(&machine, &[(pid, 11 * GIB)]);
    let out = salloc.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let told: Vec<&str> = said.lines().filter(|l| l.contains("warning: Job")).collect();
    assert_eq!(told, [format!("salloc: {}", warning(id, "11.0"))], "{said}");
    assert!(
        said.lines().any(|l| l
            == format!("salloc: Job {id} has exceeded its share of GPU memory and its allocation has been revoked.")),
        "{said}"
    );
    let j = c.wait_state(id, &["OUT_OF_MEMORY", "COMPLETED", "FAILED", "CANCELLED"], T);
    assert_eq!(j.job_state, ["OUT_OF_MEMORY"], "reason {}: {said}", j.state_reason);
    set_processes(&machine, &[]);
}
