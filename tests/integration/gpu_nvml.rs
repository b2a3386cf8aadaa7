//! GPUs found through NVML: a daemon whose configuration has no `gpus` key loads the library
//! `nvml_library` names (here the stand-in of `tests/fake_nvml/`, loaded as the real one
//! is), types the node's GPUs from their names as Slurm's `AutoDetect=nvml` does, and says
//! where its GPUs came from; without the library, or when it fails, the next source is asked.

use crate::common;
use common::fake_nvml::{self, MACHINE_VARIABLE};
use common::gpus::{self, show_node_gres};
use common::T;
use common::*;
use std::path::{Path, PathBuf};

/// What the A100s of [`two_a100s`] are typed as: their name in lower case, spaces made
/// underscores.
const A100: &str = "nvidia_a100-sxm4-40gb";
/// What the H100s of the stand-in `nvidia-smi` are typed as.
const H100: &str = "nvidia_h100_80gb_hbm3";
const UUID0: &str = "GPU-6f3a2e1d-0b9c-4d8e-a7f6-5e4d3c2b1a09";
const UUID1: &str = "GPU-8b7a6f5e-4d3c-2b1a-0f9e-8d7c6b5a4f3e";
const UUID2: &str = "GPU-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";

/// A cluster whose configuration has no `gpus` key and loads NVML from `library`, its
/// daemon not started. It does not look at the GPUs' processes
/// (`tests/integration/gpu_busy.rs` does), so that NVML and the stand-in `nvidia-smi` are
/// asked only to list them.
fn nvml_cluster(library: &Path) -> Cluster {
    let c = Cluster::configure("0", "");
    let text = read(&c.config);
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("gpus =")).map(String::from).collect();
    lines.insert(0, "gpu_sample_interval = 0".to_string());
    lines.push(format!("nvml_library = \"{}\"", library.display()));
    std::fs::write(&c.config, lines.join("\n") + "\n").unwrap();
    c
}

/// Writes the fake machine `machine` (the JSON of `tests/fake_nvml/src/lib.rs`) into the
/// cluster's directory, and returns its path.
fn write_machine(c: &Cluster, machine: serde_json::Value) -> PathBuf {
    let path = c.dir.path().join("nvml.json");
    std::fs::write(&path, machine.to_string()).unwrap();
    path
}

/// Two A100s, as NVML names them, the calls into the fake noted in `log`.
fn two_a100s(log: &Path) -> serde_json::Value {
    serde_json::json!({
        "gpus": [
            fake_nvml::gpu(0, "NVIDIA A100-SXM4-40GB", UUID0),
            fake_nvml::gpu(1, "NVIDIA A100-SXM4-40GB", UUID1),
        ],
        "log": log,
    })
}

/// Puts a stand-in `nvidia-smi` that notes each run in `probes` on the cluster's `PATH`,
/// and returns that `PATH`.
fn stand_in_nvidia_smi(c: &Cluster, probes: &Path) -> String {
    gpus::stand_in_nvidia_smi(c, probes);
    gpus::path_with_bin(c)
}

/// `scontrol show config`'s `SLURMLET_GPU_SOURCE` value.
fn gpu_source(c: &Cluster) -> String {
    let out = c.run("scontrol", &["show", "config"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("SLURMLET_GPU_SOURCE ")).unwrap_or_else(|| panic!("{text}"));
    line.split_once('=').map(|(_, v)| v.trim().to_string()).unwrap_or_default()
}

/// The calls noted in the fake's log that are `function`.
fn calls(log: &Path, function: &str) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter(|l| *l == function).count()
}

#[test]
fn nvml_finds_and_types_the_gpus() {
    let library = fake_nvml::library();
    let mut c = nvml_cluster(&library);
    let log = c.dir.path().join("nvml-calls");
    let machine = write_machine(&c, two_a100s(&log));
    let probes = c.dir.path().join("probes");
    let path = stand_in_nvidia_smi(&c, &probes);
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap()), ("PATH", &path)]);

    assert_eq!(show_node_gres(&c), format!("Gres=gpu:{A100}:2"));
    let out = c.run("sinfo", &["-h", "-o", "%G"]);
    assert_eq!(stdout(&out).trim(), format!("gpu:{A100}:2"), "{}", stderr(&out));
    assert_eq!(gpu_source(&c), "nvml");
    assert!(c.log().contains(&format!("GPUs found by nvml: gpu:{A100}:2")), "the log names the source:\n{}", c.log());
    let status = c.run("slurmlet", &["daemon", "status"]);
    assert!(stdout(&status).lines().any(|l| l == "GPUs: found by nvml"), "{}", stdout(&status));
    assert!(!probes.exists(), "NVML answered: nvidia-smi was not run");

    let id = c.sbatch(&[&format!("--gres=gpu:{A100}:1"), "-o", "job.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(c.wait_file("job.out", T), "0\n");
    let out = c.run("sbatch", &["--test-only", "--gres=gpu:h100:1", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1), "no H100 here: {}", stderr(&out));
    assert!(stderr(&out).contains(&format!("gpu:{A100}:2")), "{}", stderr(&out));

    // The supervisor is told which GPUs the job has, as NVML described them.
    let held = c.sbatch(&[
        "--gres=gpu:2",
        "-o",
        "held.out",
        "--wrap",
        "echo $CUDA_VISIBLE_DEVICES; while [ ! -e done ]; do sleep 0.1; done",
    ]);
    c.wait_state(held, &["RUNNING"], T);
    let spec_file = c.dir.path().join("state/jobs").join(held.to_string()).join("spec.json");
    let spec: serde_json::Value = wait_for("the job's spec.json", T, || {
        let text = std::fs::read_to_string(&spec_file).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| e.to_string())
    });
    let second = &spec["gpus"][1];
    assert_eq!(second["uuid"], UUID1, "{spec}");
    assert_eq!(second["model"], "NVIDIA A100-SXM4-40GB", "{spec}");
    assert_eq!(second["gres_type"], A100, "{spec}");
    assert_eq!(second["pci_bus_id"], "00000000:0F:00.0", "{spec}");
    assert_eq!(second["memory_mb"], 40 * 1024, "{spec}");
    assert_eq!(second["devices"], serde_json::json!(["/dev/nvidia1"]), "{spec}");
    std::fs::write(c.work.join("done"), "").unwrap();
    c.wait_state(held, &["COMPLETED"], T);
    assert_eq!(c.wait_file("held.out", T), "0,1\n");

    // A re-read configuration asks NVML again, without initialising it again.
    let pid = c.daemon.as_ref().expect("the daemon").id().to_string();
    assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    wait_for("the configuration to be reloaded", T, || until(c.log().contains("configuration reloaded"), || c.log()));
    assert_eq!(calls(&log, "nvmlDeviceGetCount_v2"), 2, "{}", read(&log));
    assert_eq!(calls(&log, "nvmlInit_v2"), 1, "NVML is initialised once per daemon: {}", read(&log));
}

#[test]
fn a_missing_library_falls_back_to_nvidia_smi_silently() {
    let mut c = nvml_cluster(Path::new("/nonexistent/libnvidia-ml.so.1"));
    let probes = c.dir.path().join("probes");
    let path = stand_in_nvidia_smi(&c, &probes);
    c.start_daemon_with(&[("PATH", &path)]);

    assert_eq!(show_node_gres(&c), format!("Gres=gpu:{H100}:2"), "typed by the model nvidia-smi gives");
    assert_eq!(gpu_source(&c), "nvidia-smi");
    assert_eq!(read(&probes), "-L\n");
    let log = c.log();
    assert!(log.contains(&format!("GPUs found by nvidia-smi: gpu:{H100}:2")), "{log}");
    assert!(!log.contains("WARN"), "a missing library is no news: {log}");
}

/// The same machine shows the same gres whichever source found its GPUs: `nvidia-smi -L`
/// gives the model NVML names, and the GPUs are typed from it as NVML's are, so a script's
/// `--gres=gpu:TYPE:N` does not stop working when the library is missing.
#[test]
fn nvml_and_nvidia_smi_type_the_same_gpus_alike() {
    let library = fake_nvml::library();
    let mut by_nvml = nvml_cluster(&library);
    let machine = write_machine(&by_nvml, two_a100s(&by_nvml.dir.path().join("nvml-calls")));
    by_nvml.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    assert_eq!(gpu_source(&by_nvml), "nvml");

    let mut by_smi = nvml_cluster(Path::new("/nonexistent/libnvidia-ml.so.1"));
    let script = by_smi.bin.join("nvidia-smi");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$1\" = -L ] || exit 2\n\
             echo 'GPU 0: NVIDIA A100-SXM4-40GB (UUID: {UUID0})'\n\
             echo 'GPU 1: NVIDIA A100-SXM4-40GB (UUID: {UUID1})'\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    by_smi.start_daemon_with(&[("PATH", &gpus::path_with_bin(&by_smi))]);
    assert_eq!(gpu_source(&by_smi), "nvidia-smi");

    for c in [&by_nvml, &by_smi] {
        assert_eq!(show_node_gres(c), format!("Gres=gpu:{A100}:2"));
        let id =
            c.sbatch(&[&format!("--gres=gpu:{A100}:1"), "-o", "typed.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
        c.wait_state(id, &["COMPLETED"], T);
        assert_eq!(c.wait_file("typed.out", T), "0\n");
    }
}

/// A workstation with two A100s and a T4: a gres group for each model, in the order of the
/// GPUs, with shards of each; a job naming a type gets a GPU of that type only (and waits
/// for it while GPUs of the other type are free), an untyped job gets any, `GresUsed` counts
/// each type apart, a request no GPU of its type can meet is refused, and the GPU list the
/// board draws types each GPU.
#[test]
fn a_machine_with_two_gpu_models_has_a_gres_group_for_each() {
    const T4: &str = "tesla_t4";
    let library = fake_nvml::library();
    let mut c = nvml_cluster(&library);
    let config = read(&c.config);
    std::fs::write(&c.config, format!("{config}shards_per_gpu = 4\n")).unwrap();
    let mut machine = two_a100s(&c.dir.path().join("nvml-calls"));
    machine["gpus"].as_array_mut().unwrap().push(fake_nvml::gpu(2, "Tesla T4", UUID2));
    let machine = write_machine(&c, machine);
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    assert_eq!(show_node_gres(&c), format!("Gres=gpu:{A100}:2,gpu:{T4}:1,shard:{A100}:8,shard:{T4}:4"));
    let sinfo = stdout(&c.run("sinfo", &["-h", "-o", "%G"]));
    assert_eq!(sinfo.trim(), format!("gpu:{A100}:2,gpu:{T4}:1,shard:{A100}:8,shard:{T4}:4"));

    let show_node = || stdout(&c.run("scontrol", &["-d", "show", "node"]));
    let gres_used = || {
        let text = show_node();
        text.split_whitespace()
            .find(|w| w.starts_with("GresUsed="))
            .map(String::from)
            .unwrap_or_else(|| panic!("{text}"))
    };
    // Two of the T4's shards; whole T4 jobs then wait for it, though both A100s are free.
    let shard = c.sbatch(&[&format!("--gres=shard:{T4}:2"), "--wrap", "sleep 300"]);
    c.wait_state(shard, &["RUNNING"], T);
    assert_eq!(c.job(shard).gres_detail, ["shard:2(0/4,0/4,2/4)"], "on the T4, untyped as Slurm shows shards");
    let t4 = c.sbatch(&[&format!("--gres=gpu:{T4}:1"), "-o", "t4.out", "--wrap", "echo $SLURM_JOB_GPUS; sleep 300"]);
    c.wait_state(t4, &["PENDING"], T);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!((c.state(t4), c.job(t4).state_reason), ("PENDING".to_string(), "Resources".to_string()));
    let any = c.sbatch(&["--gres=gpu:1", "-o", "any.out", "--wrap", "echo $SLURM_JOB_GPUS; sleep 300"]);
    c.wait_state(any, &["RUNNING"], T);
    assert_eq!(c.wait_file("any.out", T), "0\n", "an untyped job gets the first free GPU");
    assert_eq!(
        gres_used(),
        format!("GresUsed=gpu:{A100}:1(IDX:0),gpu:{T4}:0(IDX:N/A),shard:{A100}:0(-/4,0/4),shard:{T4}:2(2/4)")
    );
    assert_eq!(c.state(t4), "PENDING");

    assert!(c.run("scancel", &[&shard.to_string()]).status.success());
    c.wait_state(t4, &["RUNNING"], T);
    assert_eq!(c.wait_file("t4.out", T), "2\n", "the T4 job runs on the T4");
    assert_eq!(
        gres_used(),
        format!("GresUsed=gpu:{A100}:1(IDX:0),gpu:{T4}:1(IDX:2),shard:{A100}:0(-/4,0/4),shard:{T4}:0(-/4)")
    );
    let a100 = c.sbatch(&[&format!("--gres=gpu:{A100}:1"), "-o", "a100.out", "--wrap", "echo $SLURM_JOB_GPUS"]);
    c.wait_state(a100, &["COMPLETED"], T);
    assert_eq!(c.wait_file("a100.out", T), "1\n");

    // Refused at submit time: more T4s than there are, a type there is none of, two types.
    for (gres, says) in [
        (format!("gpu:{T4}:2"), format!("the job asks for 2 GPUs of type '{T4}'; node node1 has 1")),
        ("gpu:nvidia_h100:1".to_string(), "no GPU of type 'nvidia_h100' here".to_string()),
        (format!("gpu:{T4}:1,gpu:{A100}:1"), "a job's GPUs are of one type here".to_string()),
    ] {
        let out = c.run("sbatch", &[&format!("--gres={gres}"), "--wrap", "true"]);
        assert_eq!(out.status.code(), Some(1), "--gres={gres}");
        assert!(stderr(&out).contains(&says), "--gres={gres}: {}", stderr(&out));
    }
    // The board's list of GPUs types each.
    let gpus = c.client().gpus().unwrap();
    let types: Vec<Option<String>> = gpus.gpus.iter().map(|g| g.gres_type.clone()).collect();
    assert_eq!(types, [Some(A100.to_string()), Some(A100.to_string()), Some(T4.to_string())]);
}

#[test]
fn nvml_that_fails_is_logged_once_and_passed_over() {
    let library = fake_nvml::library();
    let mut c = nvml_cluster(&library);
    let log = c.dir.path().join("nvml-calls");
    let mut machine = two_a100s(&log);
    // NVML_ERROR_UNKNOWN.
    machine["fail"] = serde_json::json!({ "nvmlDeviceGetCount_v2": 999 });
    let machine = write_machine(&c, machine);
    let probes = c.dir.path().join("probes");
    let path = stand_in_nvidia_smi(&c, &probes);
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap()), ("PATH", &path)]);

    assert_eq!(show_node_gres(&c), format!("Gres=gpu:{H100}:2"));
    assert_eq!(gpu_source(&c), "nvidia-smi");
    let text = c.log();
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].contains("nvmlDeviceGetCount"), "the warning says which call failed: {text}");
    assert!(warnings[0].contains(&library.display().to_string()), "and in which library: {text}");
    assert_eq!(calls(&log, "nvmlInit_v2"), 1, "{}", read(&log));
}

const MIG0: &str = "MIG-0d8c7b6a-5f4e-3d2c-1b0a-9f8e7d6c5b4a";
const MIG1: &str = "MIG-1e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b";
const MIG2: &str = "MIG-2fae9d8c-7b6a-4f5e-3d2c-1b0a9f8e7d6c";

/// A 3g.20gb MIG instance of an A100 with `uuid`, in `slot`, GPU instance `slot + 1` and its
/// compute instance 0.
fn a100_3g(uuid: &str, slot: u32) -> serde_json::Value {
    serde_json::json!({ "name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": uuid, "memory_total": 20u64 << 30,
                        "slot": slot, "gi": slot + 1, "ci": 0 })
}

/// The driver's capability minors of the machines here (`/proc/driver/nvidia-caps/mig-minors`):
/// GPU instances 1 to 3 of both GPUs with their compute instance 0, less GPU 1's instance 1's.
const MIG_MINORS: &str = "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu0/gi2/access 21\n\
                          gpu0/gi2/ci0/access 22\ngpu0/gi3/access 30\ngpu0/gi3/ci0/access 31\ngpu1/gi1/access 147\n";

/// Starts a daemon on the fake machine whose GPUs are `gpus`, its driver's capability
/// minors [`MIG_MINORS`].
fn start_on(gpus: serde_json::Value) -> Cluster {
    let mut c = nvml_cluster(&fake_nvml::library());
    let machine = write_machine(&c, serde_json::json!({ "gpus": gpus }));
    let caps = c.dir.path().join("nvidia-caps");
    std::fs::create_dir_all(&caps).unwrap();
    std::fs::write(caps.join("mig-minors"), MIG_MINORS).unwrap();
    c.start_daemon_with(&[
        (MACHINE_VARIABLE, machine.to_str().unwrap()),
        (slurmlet::gpu::NVIDIA_CAPS_VARIABLE, caps.to_str().unwrap()),
    ]);
    c
}

/// The output of a batch job given `gres` that prints its GPU variables.
fn gpu_variables(c: &Cluster, gres: &str) -> String {
    let id = c.sbatch(&[gres, "-o", "vars.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS"]);
    c.wait_state(id, &["COMPLETED"], T);
    let out = c.wait_file("vars.out", T);
    std::fs::remove_file(c.work.join("vars.out")).unwrap();
    out
}

#[test]
fn mig_instances_take_the_place_of_their_gpus() {
    let mut first = fake_nvml::gpu(0, "NVIDIA A100-SXM4-40GB", UUID0);
    // Slots 0 and 2: the empty slot between them is passed over.
    first["mig"] = serde_json::json!([a100_3g(MIG0, 0), a100_3g(MIG1, 2)]);
    let mut second = fake_nvml::gpu(1, "NVIDIA A100-SXM4-40GB", UUID1);
    second["mig"] = serde_json::json!([a100_3g(MIG2, 0)]);
    let c = start_on(serde_json::json!([first, second]));

    // Typed as Slurm types MIG instances: the GPU's type up to its first `-`, and the profile.
    let mig_type = "nvidia_a100_3g.20gb";
    assert_eq!(show_node_gres(&c), format!("Gres=gpu:{mig_type}:3"));
    assert_eq!(gpu_variables(&c, &format!("--gres=gpu:{mig_type}:1")), format!("{MIG0} 0\n"));
    assert_eq!(gpu_variables(&c, "--gres=gpu:3"), format!("{MIG0},{MIG1},{MIG2} 0,1,2\n"));

    let held = c.sbatch(&["--gres=gpu:3", "-o", "/dev/null", "--wrap", "while [ ! -e done ]; do sleep 0.1; done"]);
    c.wait_state(held, &["RUNNING"], T);
    let spec_file = c.dir.path().join("state/jobs").join(held.to_string()).join("spec.json");
    let spec: serde_json::Value = wait_for("the job's spec.json", T, || {
        let text = std::fs::read_to_string(&spec_file).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| e.to_string())
    });
    // Each instance's device files: its GPU's, its GPU instance's and its compute
    // instance's capabilities, so that a device filter confines a job to its instance.
    let first = &spec["gpus"][0];
    assert_eq!(
        first["devices"],
        serde_json::json!(["/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap12", "/dev/nvidia-caps/nvidia-cap13"]),
        "{spec}"
    );
    assert_eq!(
        spec["gpus"][1]["devices"],
        serde_json::json!(["/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap30", "/dev/nvidia-caps/nvidia-cap31"]),
        "slot 2 is GPU instance 3: {spec}"
    );
    let third = &spec["gpus"][2];
    assert_eq!(third["uuid"], MIG2, "{spec}");
    assert_eq!(third["mig_parent"], UUID1, "{spec}");
    assert_eq!(third["model"], "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "{spec}");
    assert_eq!(third["memory_mb"], 20 * 1024, "{spec}");
    // The driver lists no compute instance capability for it: its GPU's file alone, said.
    assert_eq!(third["devices"], serde_json::json!(["/dev/nvidia1"]), "{spec}");
    assert!(c.log().contains("capability device files are not known"), "{}", c.log());
    std::fs::write(c.work.join("done"), "").unwrap();
    c.wait_state(held, &["COMPLETED"], T);
}

#[test]
fn whole_gpus_numbered_after_mig_instances_are_visible_by_uuid() {
    let mut first = fake_nvml::gpu(0, "NVIDIA A100-SXM4-40GB", UUID0);
    first["mig"] = serde_json::json!([a100_3g(MIG0, 0), a100_3g(MIG1, 1)]);
    let second = fake_nvml::gpu(1, "NVIDIA A100-SXM4-40GB", UUID1);
    let c = start_on(serde_json::json!([first, second]));

    // Two types on one node: a group for each, in the order of the slots.
    assert_eq!(show_node_gres(&c), "Gres=gpu:nvidia_a100_3g.20gb:2,gpu:nvidia_a100-sxm4-40gb:1");
    assert_eq!(gpu_variables(&c, "--gres=gpu:3"), format!("{MIG0},{MIG1},{UUID1} 0,1,2\n"));
}
