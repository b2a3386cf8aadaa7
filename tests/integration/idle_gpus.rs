//! The `[idle_gpus]` policy through a real daemon on the stand-in NVML library: a job whose
//! GPU stays idle is told so in its error output, marked in `slurmlet gpus`, and (under
//! `action = "cancel"`) cancelled with the reason in its record, while a neighbour that keeps
//! its GPU busy, and a job of an exempt QOS, run on untouched.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, UUID0, UUID1};
use common::{until, wait_for, Cluster, T};
use std::path::Path;

/// Describes the machine with each GPU's own utilisation.
fn set_busy(machine: &Path, busy: [u32; 2]) {
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["utilization"] = busy[0].into();
    let mut gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    gpu1["utilization"] = busy[1].into();
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": [gpu0, gpu1] }));
}

/// The node index of the one GPU job `id` was given.
fn gpu_of(c: &Cluster, id: u32) -> usize {
    let detail = c.wait_state(id, &["RUNNING"], T).gres_detail.join(",");
    let index = detail.split("IDX:").nth(1).and_then(|r| r.split(')').next()).unwrap_or_default();
    index.parse().unwrap_or_else(|_| panic!("job {id}'s GPU in {detail:?}"))
}

/// The job output file `rel` in the cluster's work directory, as it is now.
fn output(c: &Cluster, rel: &str) -> String {
    std::fs::read_to_string(c.path(rel)).unwrap_or_default()
}

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn an_idle_job_is_cancelled_with_the_reason_recorded_and_a_busy_neighbour_runs_on() {
    let (c, machine) = fake_nvml::start_watching("[idle_gpus]\nafter = \"3s\"\nbelow = 5\naction = \"cancel\"\n");
    let idle = c.sbatch(&["--gres=gpu:1", "-J", "idle", "-o", "idle.out", "--wrap", "sleep 300"]);
    let busy = c.sbatch(&["--gres=gpu:1", "-J", "busy", "-o", "busy.out", "--wrap", "sleep 300"]);
    let mut load = [0; 2];
    load[gpu_of(&c, busy)] = 90;
    set_busy(&machine, load);
    c.wait_state(idle, &["CANCELLED"], T);
    let out = c.wait_file("idle.out", T);
    let warning = format!("slurmstepd-node1: warning: Job {idle} has kept its GPUs below 5% busy for 00:00:0");
    let at = out.find(&warning).unwrap_or_else(|| panic!("{out}"));
    let line = out[at..].lines().next().unwrap();
    assert!(line.ends_with(&format!("(GPU {}: 0%); it is cancelled", gpu_of_done(&c, idle))), "{line}");
    let cancelled = out.find(&format!("*** JOB {idle} ON node1 CANCELLED AT")).unwrap_or_else(|| panic!("{out}"));
    assert!(at < cancelled, "the reason comes before the cancel:\n{out}");
    // Its record says why, in sacct and in scontrol.
    let o = c.run("sacct", &["-j", &idle.to_string(), "-X", "-n", "-P", "-o", "State,AdminComment"]);
    let record = text(&o);
    assert!(
        record
            .starts_with("CANCELLED by 0|Cancelled by the idle GPU policy: its GPUs stayed below 5% busy for 00:00:0"),
        "{record}"
    );
    let o = c.run("scontrol", &["show", "job", &idle.to_string()]);
    assert!(text(&o).contains("AdminComment=Cancelled by the idle GPU policy"), "{}", text(&o));
    // The neighbour that uses its GPU runs on, untouched.
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(c.state(busy), "RUNNING");
    assert!(!output(&c, "busy.out").contains("idle"), "{}", output(&c, "busy.out"));
    assert!(c.run("scancel", &[&busy.to_string()]).status.success());
}

/// The GPU a finished job was given.
fn gpu_of_done(c: &Cluster, id: u32) -> usize {
    let detail = c.job(id).gres_detail.join(",");
    let index = detail.split("IDX:").nth(1).and_then(|r| r.split(')').next()).unwrap_or_default();
    index.parse().unwrap_or_else(|_| panic!("job {id}'s GPU in {detail:?}"))
}

#[test]
fn a_warned_job_runs_on_marked_idle_and_an_exempt_qos_is_left_alone() {
    let extra = "[qos.exempt]\n[idle_gpus]\nafter = \"2s\"\nbelow = 5\naction = \"warn\"\nexempt_qos = [\"exempt\"]\n";
    let (c, machine) = fake_nvml::start_watching(extra);
    set_busy(&machine, [0, 0]);
    let warned = c.sbatch(&["--gres=gpu:1", "-o", "warned.out", "--wrap", "sleep 300"]);
    let exempt = c.sbatch(&["--gres=gpu:1", "--qos=exempt", "-o", "exempt.out", "--wrap", "sleep 300"]);
    let out = wait_for("the warning", T, || {
        let out = output(&c, "warned.out");
        until(out.contains("has kept its GPUs below 5% busy"), || out.clone()).map(|()| out.clone())
    });
    assert!(!out.contains("it is cancelled"), "{out}");
    // It runs on, marked idle in `slurmlet gpus`, its record saying it was warned.
    let listing = text(&c.run("slurmlet", &["gpus"]));
    let holder = |id: u32| listing.lines().find(|l| l.contains(&format!("job {id} ("))).unwrap_or_default();
    assert!(holder(warned).contains(", idle 00:00:0"), "{listing}");
    assert!(!holder(exempt).contains("idle"), "{listing}");
    let json: serde_json::Value = serde_json::from_str(&text(&c.run("slurmlet", &["gpus", "--json"]))).unwrap();
    let holders: Vec<&serde_json::Value> =
        json["gpus"].as_array().unwrap().iter().flat_map(|g| g["jobs"].as_array().unwrap()).collect();
    let of = |id: u32| holders.iter().find(|j| j["job_id"] == id).copied().unwrap();
    assert!(of(warned)["idle_since"].as_u64().is_some(), "{json}");
    assert!(of(exempt).get("idle_since").is_none(), "{json}");
    assert_eq!(c.state(warned), "RUNNING");
    let o = c.run("sacct", &["-j", &warned.to_string(), "-X", "-n", "-P", "-o", "AdminComment"]);
    assert!(text(&o).starts_with("Warned by the idle GPU policy"), "{}", text(&o));
    // Busy again: the mark goes at the next look; the warning is not repeated.
    set_busy(&machine, [60, 60]);
    wait_for("the idle mark to go", T, || {
        let listing = text(&c.run("slurmlet", &["gpus"]));
        until(!listing.contains("idle"), || listing.clone())
    });
    assert_eq!(output(&c, "warned.out").matches("has kept its GPUs").count(), 1);
    assert!(!output(&c, "exempt.out").contains("idle"));
    for id in [warned, exempt] {
        assert!(c.run("scancel", &[&id.to_string()]).status.success());
    }
}
