//! Who holds which GPU, now: `GresUsed` in `scontrol -d show node` and `sinfo -O GresUsed`
//! as Slurm prints them, and `slurmlet gpus` (table and `--json`) with the figures of the
//! stand-in NVML of `tests/fake_nvml/`, the jobs given each GPU and the processes outside the
//! queue that use one.

use crate::common;
use common::fake_nvml::{self, me, Outsider, A100_MODEL as MODEL, UUID0, UUID1};
use common::T;
use common::*;
use std::path::{Path, PathBuf};

const A100: &str = "nvidia_a100-sxm4-40gb";
const GIB: u64 = 1 << 30;

/// A daemon on a fake machine of two A100s that looks at them every second; and the file
/// that describes the machine (both GPUs idle at first).
fn start() -> (Cluster, PathBuf) {
    fake_nvml::start_watching("")
}

/// What the fake machine says of one GPU.
struct Reading {
    memory_used: u64,
    utilization: u32,
    /// Its compute processes, `(pid, bytes)`.
    processes: Vec<(u32, u64)>,
}

impl Reading {
    fn idle() -> Reading {
        Reading { memory_used: 0, utilization: 0, processes: Vec::new() }
    }
}

/// Writes the machine whole and renames it into place: the fake reads it on every call.
fn write_machine(machine: &Path, readings: &[Reading; 2]) {
    let gpus: Vec<serde_json::Value> = readings
        .iter()
        .zip([UUID0, UUID1])
        .enumerate()
        .map(|(index, (r, uuid))| {
            let mut gpu = fake_nvml::gpu(index as u32, MODEL, uuid);
            gpu["memory_used"] = r.memory_used.into();
            gpu["utilization"] = r.utilization.into();
            gpu["processes"] = r
                .processes
                .iter()
                .map(|(pid, bytes)| serde_json::json!({ "pid": pid, "used_memory": bytes }))
                .collect();
            gpu
        })
        .collect();
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": gpus }));
}

/// The lines of `scontrol [ARGS] show node` that start with `Gres`, trimmed.
fn gres_lines(c: &Cluster, args: &[&str]) -> Vec<String> {
    let out = c.run("scontrol", &[args, &["show", "node"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().map(str::trim).filter(|l| l.starts_with("Gres")).map(String::from).collect()
}

/// `sinfo -h -O Gres:30,GresUsed:40`, its columns (wide enough: Slurm cuts a field to its
/// width, 20 by default).
fn sinfo_gres(c: &Cluster) -> Vec<String> {
    let out = c.run("sinfo", &["-h", "-O", "Gres:30,GresUsed:40"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).split_whitespace().map(String::from).collect()
}

/// `slurmlet gpus ARGS`, asserting success.
fn gpus(c: &Cluster, args: &[&str]) -> String {
    let out = c.run("slurmlet", &[&["gpus"], args].concat());
    assert!(out.status.success(), "slurmlet gpus {args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The table's row of GPU `index`, its words joined by single spaces.
fn row(table: &str, index: u32) -> String {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&index.to_string()))
        .unwrap_or_else(|| panic!("no row for GPU {index}: {table}"));
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn gres_used_names_the_gpus_given_to_running_jobs() {
    let (c, _machine) = start();
    // Without -d, as Slurm: the node's gres only.
    assert_eq!(gres_lines(&c, &[]), [format!("Gres=gpu:{A100}:2")]);
    assert_eq!(
        gres_lines(&c, &["-d"]),
        [format!("Gres=gpu:{A100}:2"), "GresDrain=N/A".into(), format!("GresUsed=gpu:{A100}:0(IDX:N/A)")]
    );
    assert_eq!(sinfo_gres(&c), [format!("gpu:{A100}:2"), format!("gpu:{A100}:0(IDX:N/A)")]);

    let job = c.sbatch(&["--gres=gpu:2", "-o", "job.out", "--wrap", "sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    assert_eq!(gres_lines(&c, &["-d"])[2], format!("GresUsed=gpu:{A100}:2(IDX:0-1)"));
    let one_line = c.run("scontrol", &["-d", "-o", "show", "node"]);
    assert!(stdout(&one_line).contains(&format!(" GresUsed=gpu:{A100}:2(IDX:0-1) ")), "{}", stdout(&one_line));
    assert_eq!(sinfo_gres(&c), [format!("gpu:{A100}:2"), format!("gpu:{A100}:2(IDX:0-1)")]);

    let out = c.run("scancel", &[&job.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    c.wait_state(job, &["CANCELLED"], T);
    wait_for("the GPUs to be free again", T, || {
        let used = sinfo_gres(&c);
        until(used[1] == format!("gpu:{A100}:0(IDX:N/A)"), || format!("{used:?}"))
    });
}

#[test]
fn slurmlet_gpus_shows_each_gpus_figures_and_who_holds_it() {
    let (c, machine) = start();
    let job = c.sbatch(&["--gres=gpu:1", "-o", "job.out", "--wrap", "sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    let outsider = Outsider::start("611");
    write_machine(
        &machine,
        &[
            Reading { memory_used: 12 * GIB, utilization: 87, processes: Vec::new() },
            Reading { memory_used: 2 * GIB, utilization: 5, processes: vec![(outsider.pid(), 2 * GIB)] },
        ],
    );
    let outside = format!("pid {} ({}) sleep 611, outside the queue", outsider.pid(), me());
    let table = wait_for("slurmlet gpus to show the process outside the queue", T, || {
        let table = gpus(&c, &[]);
        until(table.contains(&outside) && table.contains("87%"), || table.clone()).map(|_| table)
    });
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "a header, a row per GPU and the footer: {table}");
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["GPU", "MODEL", "MEMORY", "UTIL", "HELD", "BY"]);
    assert_eq!(row(&table, 0), format!("0 {MODEL} 12288 / 40960 MiB 87% job {job} ({})", me()));
    assert_eq!(row(&table, 1), format!("1 {MODEL} 2048 / 40960 MiB 5% {outside}"));
    assert!(lines[3].starts_with("figures of 20"), "{table}");
    assert!(lines[3].ends_with("; the GPUs are looked at every 1 s"), "{table}");

    let out = c.run("slurmlet", &["gpus", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("slurmlet gpus --json is JSON");
    assert_eq!(v["sample_interval"], 1);
    assert!(v["sampled_at"].as_u64().is_some_and(|t| t > 1_700_000_000), "{v}");
    assert_eq!(v["meta"]["command"], serde_json::json!(["slurmlet gpus", "--json"]));
    let list = v["gpus"].as_array().expect("a list of GPUs");
    assert_eq!(list.len(), 2, "{v}");
    let (gpu0, gpu1) = (&list[0], &list[1]);
    assert_eq!(gpu0["index"], 0);
    assert_eq!(gpu0["uuid"], UUID0);
    assert_eq!(gpu0["name"], MODEL);
    assert_eq!(gpu0["gres_type"], A100);
    assert_eq!(gpu0["memory_used"], 12 * GIB);
    assert_eq!(gpu0["memory_total"], 40 * GIB);
    assert_eq!(gpu0["utilization"], 87);
    assert_eq!(gpu0["shards"], 0, "not split");
    assert_eq!(
        gpu0["jobs"],
        serde_json::json!([{
            "job": job.to_string(),
            "job_id": job,
            "user_id": slurmlet::identity::uid(),
            "user_name": me(),
            // None of its processes was on the GPU; it holds the GPU whole.
            "used_memory": 0,
            "shards": null,
            "share_bytes": null
        }])
    );
    assert_eq!(gpu0["outside_queue"], serde_json::json!([]));
    assert_eq!(gpu1["index"], 1);
    assert_eq!(gpu1["memory_used"], 2 * GIB);
    assert_eq!(gpu1["utilization"], 5);
    assert_eq!(gpu1["jobs"], serde_json::json!([]));
    assert_eq!(
        gpu1["outside_queue"],
        serde_json::json!([{ "pid": outsider.pid(), "user_name": me(), "command": "sleep 611", "used_memory": 2 * GIB }])
    );

    // The job ends and the process goes: nobody holds either GPU.
    let out = c.run("scancel", &[&job.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    c.wait_state(job, &["CANCELLED"], T);
    write_machine(&machine, &[Reading::idle(), Reading::idle()]);
    wait_for("both GPUs to be free", T, || {
        let table = gpus(&c, &[]);
        let rows = [row(&table, 0), row(&table, 1)];
        until(rows.iter().all(|r| r.ends_with(" 0 / 40960 MiB 0% -")), || table.clone())
    });
}

#[test]
fn configured_gpus_are_not_looked_at_and_their_figures_are_unknown() {
    let c = Cluster::start("2", "");
    let job = c.sbatch(&["--gres=gpu:1", "-o", "job.out", "--wrap", "sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    let table = gpus(&c, &[]);
    assert_eq!(row(&table, 0), format!("0 - - - job {job} ({})", me()));
    assert_eq!(row(&table, 1), "1 - - - -");
    assert_eq!(table.lines().last(), Some("figures not sampled: the daemon does not look at these GPUs"), "{table}");
    let v: serde_json::Value = serde_json::from_str(&gpus(&c, &["--json"])).expect("JSON");
    assert_eq!((&v["sample_interval"], &v["sampled_at"]), (&serde_json::json!(0), &serde_json::Value::Null));
    assert_eq!(v["gpus"][0]["memory_used"], serde_json::Value::Null);
    assert_eq!(v["gpus"][0]["utilization"], serde_json::Value::Null);
    assert_eq!(v["gpus"][0]["jobs"][0]["job_id"], job);

    // A node without GPUs says so.
    let none = Cluster::start("0", "");
    assert_eq!(gpus(&none, &[]), "no GPUs on this node\n");
    let out = none.run("slurmlet", &["gpus", "--bogus"]);
    assert!(!out.status.success());
}
