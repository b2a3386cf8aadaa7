//! AMD GPUs watched as NVIDIA's are: the daemon finds two MI210s through a stand-in
//! `rocm-smi`, and looks at their use every second through a stand-in `amd-smi` (or, where
//! there is none, through `rocm-smi`), each printing what the real tool prints (see
//! `src/gpu/amd_smi.rs` and `src/gpu/rocm_smi_use.rs` for the releases read), the processes
//! those of files the tests write. A process of no job on a GPU keeps new jobs off it, and a
//! job's GPU memory goes into its step's `gres/gpumem`.

use crate::common;
use common::fake_nvml::{me, Outsider};
use common::gpus::path_with_bin;
use common::T;
use common::*;
use std::path::{Path, PathBuf};

const GIB: u64 = 1 << 30;

/// The unique ids `rocm-smi` gives the two GPUs, and the UUIDs the node has for them.
const UNIQUE_IDS: [&str; 2] = ["0x18f68e602b8a790f", "0x28f68e602b8a7910"];

/// The two GPUs' PCI bus ids, as `rocm-smi` writes them (`amd-smi` writes them in lower case).
const BUSES: [&str; 2] = ["0000:C1:00.0", "0000:C2:00.0"];

/// A compute process on one of the GPUs: the GPU's index, the pid, its VRAM in bytes.
type OnGpu = (u32, u32, u64);

/// A cluster whose daemon finds its GPUs (none configured) and looks at them every second,
/// its NVML and `nvidia-smi` finding none; not started.
fn amd_cluster() -> Cluster {
    let c = Cluster::configure("0", "");
    let text = read(&c.config);
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("gpus =")).map(String::from).collect();
    lines.push("nvml_library = \"/nonexistent/libnvidia-ml.so.1\"".into());
    lines.push("gpu_sample_interval = 1".into());
    std::fs::write(&c.config, lines.join("\n") + "\n").unwrap();
    write_script(&c.bin.join("nvidia-smi"), "echo 'No devices were found'\nexit 6");
    c
}

/// Writes an executable shell script of `body`.
fn write_script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Replaces `path`'s contents at once, so that a tool reading it never sees half.
fn replace(path: &Path, text: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, text).unwrap();
    std::fs::rename(&next, path).unwrap();
}

/// The files a stand-in `rocm-smi` answers from, and the one it notes its arguments in.
struct RocmSmiFiles {
    usage: PathBuf,
    pid_gpus: PathBuf,
    probes: PathBuf,
}

/// Puts a `rocm-smi` on the cluster's `bin` that lists the two GPUs as `rocm-smi
/// --showproductname --showbus --showuniqueid --json` does, and answers the sampler's
/// questions with the files it returns (`--showuse … --json`, `--showpidgpus`), empty; it
/// notes each run's arguments.
fn stand_in_rocm_smi(c: &Cluster) -> RocmSmiFiles {
    let path = |name: &str| c.dir.path().join(name);
    let files = RocmSmiFiles {
        usage: path("rocm-smi-use.json"),
        pid_gpus: path("rocm-smi-pidgpus.txt"),
        probes: path("rocm-smi-probes"),
    };
    let cards: Vec<String> = (0..2)
        .map(|i| {
            format!(
                "\"card{i}\": {{\"Card Series\": \"AMD Instinct MI210\", \"Card Model\": \"0x740f\", \
                 \"Card Vendor\": \"Advanced Micro Devices, Inc. [AMD/ATI]\", \"Card SKU\": \"D67301\", \
                 \"Subsystem ID\": \"0x0c34\", \"Device Rev\": \"0x02\", \"Node ID\": \"{}\", \
                 \"GUID\": \"{}\", \"GFX Version\": \"gfx90a\", \"PCI Bus\": \"{}\", \"Unique ID\": \"{}\"}}",
                i + 2,
                45412 + i,
                BUSES[i],
                UNIQUE_IDS[i]
            )
        })
        .collect();
    write_script(
        &c.bin.join("rocm-smi"),
        &format!(
            "echo \"$*\" >> '{}'\n\
             case \"$*\" in\n\
             '--showproductname --showbus --showuniqueid --json') echo '{{{}}}';;\n\
             '--showuse --showmeminfo vram --showpids --json') cat '{}';;\n\
             '--showpidgpus') cat '{}';;\n\
             *) exit 2;;\n\
             esac",
            files.probes.display(),
            cards.join(", "),
            files.usage.display(),
            files.pid_gpus.display()
        ),
    );
    set_rocm_smi_processes(&files, &[]);
    files
}

/// What the stand-in `rocm-smi` says of the GPUs' use: `processes` on them, as `rocm_smi.py`
/// prints them (its JSON's `system`, and `--showpidgpus`'s text).
fn set_rocm_smi_processes(files: &RocmSmiFiles, processes: &[OnGpu]) {
    let mut doc = serde_json::json!({});
    for gpu in 0..2u32 {
        let used: u64 = processes.iter().filter(|p| p.0 == gpu).map(|p| p.2).sum();
        doc[format!("card{gpu}")] = serde_json::json!({
            "GPU use (%)": "0",
            "GFX Activity": "65213",
            "VRAM Total Memory (B)": "68702699520",
            "VRAM Total Used Memory (B)": (11_321_344 + used).to_string(),
        });
    }
    let mut system = serde_json::Map::new();
    let mut text = "\n\n============================ ROCm System Management Interface ============================\n\
                    ================================== GPUs Indexed by PID ==================================\n"
        .to_string();
    for (gpu, pid, bytes) in processes {
        system.insert(format!("PID{pid}"), format!("sleep, 1, {bytes}, 0, unknown").into());
        text += &format!("PID {pid} is using 1 DRM device(s):\n{gpu} \n");
    }
    if !system.is_empty() {
        doc["system"] = system.into();
    }
    text += "==========================================================================================\n\
             ================================== End of ROCm SMI Log ===================================\n";
    replace(&files.usage, &doc.to_string());
    replace(&files.pid_gpus, &text);
}

/// Puts an `amd-smi` on the cluster's `bin` that answers `list`, `metric` and `process` as
/// amd-smi 26 (ROCm 7) does, the processes those of the file it returns, none yet.
fn stand_in_amd_smi(c: &Cluster) -> PathBuf {
    let processes = c.dir.path().join("amd-smi-process.json");
    let list: Vec<serde_json::Value> = (0..2)
        .map(|i| {
            let uuid = ["18ff740f-0000-1000-80f6-8e602b8a790f", "28ff740f-0000-1000-80f6-8e602b8a7910"][i];
            serde_json::json!({ "gpu": i, "bdf": BUSES[i].to_lowercase(), "uuid": uuid,
                "kfd_id": 45412 + i, "node_id": i + 2, "partition_id": 0 })
        })
        .collect();
    let figure = |value: u64, unit: &str| serde_json::json!({ "value": value, "unit": unit });
    let metric: Vec<serde_json::Value> = (0..2)
        .map(|i| {
            serde_json::json!({ "gpu": i,
                "usage": { "gfx_activity": figure(0, "%"), "umc_activity": figure(0, "%"), "mm_activity": "N/A",
                           "vcn_activity": [figure(0, "%"), "N/A", "N/A", "N/A"], "jpeg_activity": "N/A",
                           "gfx_busy_inst": "N/A", "jpeg_busy": "N/A", "vcn_busy": "N/A" },
                "mem_usage": { "total_vram": figure(65520, "MB"), "used_vram": figure(10, "MB"),
                               "free_vram": figure(65510, "MB"), "total_visible_vram": figure(65520, "MB"),
                               "used_visible_vram": figure(10, "MB"), "free_visible_vram": figure(65510, "MB"),
                               "total_gtt": figure(128_646, "MB"), "used_gtt": figure(17, "MB"),
                               "free_gtt": figure(128_629, "MB") } })
        })
        .collect();
    write_script(
        &c.bin.join("amd-smi"),
        &format!(
            "case \"$*\" in\n\
             'list --json') echo '{}';;\n\
             'metric --usage --mem-usage --json') echo '{}';;\n\
             'process --json') cat '{}';;\n\
             *) exit 2;;\n\
             esac",
            serde_json::Value::from(list),
            serde_json::json!({ "gpu_data": metric }),
            processes.display()
        ),
    );
    set_amd_smi_processes(&processes, &[]);
    processes
}

/// What the stand-in `amd-smi process --json` says: `processes` on the GPUs.
fn set_amd_smi_processes(file: &Path, processes: &[OnGpu]) {
    let bytes = |value: u64| serde_json::json!({ "value": value, "unit": "B" });
    let ns = serde_json::json!({ "value": 0, "unit": "ns" });
    let doc: Vec<serde_json::Value> = (0..2u32)
        .map(|gpu| {
            let mut list: Vec<serde_json::Value> = processes
                .iter()
                .filter(|p| p.0 == gpu)
                .map(|&(_, pid, vram)| {
                    serde_json::json!({ "process_info": {
                        "name": "sleep", "pid": pid,
                        "memory_usage": { "gtt_mem": bytes(2 << 20), "cpu_mem": bytes(416 << 10), "vram_mem": bytes(vram) },
                        "mem_usage": bytes(vram + (2 << 20) + (416 << 10)),
                        "usage": { "gfx": ns.clone(), "enc": ns.clone() },
                        "sdma_usage": { "value": 0, "unit": "us" }, "cu_occupancy": "N/A",
                        "evicted_time": { "value": 0, "unit": "ms" } } })
                })
                .collect();
            if list.is_empty() {
                list.push(serde_json::json!({ "process_info": "No running processes detected" }));
            }
            serde_json::json!({ "gpu": gpu, "process_list": list })
        })
        .collect();
    replace(file, &serde_json::Value::from(doc).to_string());
}

/// The node's `Reason=` in `scontrol show node`, or empty.
fn node_reason(c: &Cluster) -> String {
    let out = c.run("scontrol", &["show", "node"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().find_map(|l| l.trim_start().strip_prefix("Reason=")).unwrap_or_default().to_string()
}

/// Waits until the node's reason is `wanted`.
fn wait_reason(c: &Cluster, wanted: &str) {
    wait_for(&format!("the node's reason to be {wanted:?}"), T, || {
        let reason = node_reason(c);
        until(reason == wanted, || format!("{reason}\nthe daemon's log:\n{}", c.log()))
    });
}

/// The value of `name=` in a TRES text (`cpu=…,gres/gpumem=3G,…`).
fn tres_value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.split(',').find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
}

/// What the daemon does with what its sampler sees, `set` telling the stand-in tool of the
/// processes on the GPUs: a process of no job on GPU 0 makes it busy outside the queue (a
/// two-GPU job waits, saying why; a one-GPU job gets GPU 1); a job's process on its GPU is
/// the job's, and its memory the batch step's `gres/gpumem`, in sstat while it runs and in
/// sacct after; the outsider gone, both GPUs are given again.
fn watched_as_nvidia_gpus_are(c: &Cluster, set: &dyn Fn(&[OnGpu])) {
    let outsider = Outsider::start("611");
    set(&[(0, outsider.pid(), 5 * GIB)]);
    wait_reason(c, &format!("gpu 0 busy outside the queue: pid {} ({}) sleep 611, 5.0 GiB", outsider.pid(), me()));
    let two = c.sbatch(&["--gres=gpu:2", "-o", "/dev/null", "--wrap", "true"]);
    wait_for("the two-GPU job to wait on the busy GPU", T, || {
        let reason = stdout(&c.run("squeue", &["-h", "-j", &two.to_string(), "-o", "%r"])).trim().to_string();
        until(reason == "GpusBusyOutsideQueue", || reason)
    });
    assert_eq!(c.state(two), "PENDING");
    let out = c.run("scancel", &[&two.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));

    let job = c.sbatch(&[
        "--gres=gpu:1",
        "-o",
        "one.out",
        "--wrap",
        "echo $ROCR_VISIBLE_DEVICES; echo $$ > batch.pid; while [ ! -e release ]; do sleep 0.1; done",
    ]);
    let batch: u32 = c.wait_file("batch.pid", T).trim().parse().unwrap();
    assert_eq!(c.wait_file("one.out", T), "1\n", "the job is given the GPU no outsider uses");
    set(&[(0, outsider.pid(), 5 * GIB), (1, batch, 3 * GIB)]);
    let id = format!("{job}.batch");
    wait_for("sstat to show the job's GPU memory", T, || {
        let out = c.run("sstat", &["-j", &id, "-n", "-P", "-o", "JobID,TRESUsageInMax"]);
        let text = stdout(&out);
        let usage = text.trim().split('|').nth(1).unwrap_or_default();
        until(tres_value(usage, "gres/gpumem") == Some("3G"), || format!("{text}{}", stderr(&out)))
    });
    let reason = node_reason(c);
    assert!(!reason.contains(&format!("pid {batch} ")), "the job's process is not outside the queue: {reason}");

    set(&[(1, batch, 3 * GIB)]);
    drop(outsider);
    wait_reason(c, "");
    std::fs::write(c.work.join("release"), "").unwrap();
    c.wait_state(job, &["COMPLETED"], T);
    set(&[]);
    let out = c.run("sacct", &["-j", &id, "-n", "-P", "-o", "TRESUsageInMax"]);
    assert_eq!(tres_value(stdout(&out).trim(), "gres/gpumem"), Some("3G"), "{}{}", stdout(&out), stderr(&out));
    let both = c.sbatch(&["--gres=gpu:2", "-o", "two.out", "--wrap", "echo $ROCR_VISIBLE_DEVICES"]);
    c.wait_state(both, &["COMPLETED"], T);
    assert_eq!(c.wait_file("two.out", T), "0,1\n");
}

/// Whether this machine's NVIDIA driver would be found before `rocm-smi` is asked; says so.
fn nvidia_machine(test: &str) -> bool {
    let nvidia = Path::new("/proc/driver/nvidia/gpus").exists();
    if nvidia {
        skip(test, "this machine has NVIDIA's driver, whose GPUs are found before rocm-smi is asked");
    }
    nvidia
}

#[test]
fn amd_smi_tells_the_use_of_the_gpus_rocm_smi_found() {
    if nvidia_machine("amd_smi_tells_the_use_of_the_gpus_rocm_smi_found") {
        return;
    }
    let mut c = amd_cluster();
    let rocm_smi = stand_in_rocm_smi(&c);
    let processes = stand_in_amd_smi(&c);
    c.start_daemon_with(&[("PATH", &path_with_bin(&c))]);
    let out = c.run("scontrol", &["show", "config"]);
    assert!(stdout(&out).lines().any(|l| l == "SLURMLET_GPU_SOURCE     = rocm-smi"), "{}", stdout(&out));
    watched_as_nvidia_gpus_are(&c, &|on: &[OnGpu]| set_amd_smi_processes(&processes, on));
    // What amd-smi said of the GPUs, under the UUIDs discovery gave them.
    let out = c.run("slurmlet", &["gpus"]);
    let text = stdout(&out);
    assert!(text.lines().nth(1).is_some_and(|l| l.contains("10 / 65520 MiB")), "{text}{}", stderr(&out));
    assert_eq!(
        read(&rocm_smi.probes),
        "--showproductname --showbus --showuniqueid --json\n",
        "rocm-smi only found the GPUs; amd-smi told their use"
    );
}

#[test]
fn without_amd_smi_rocm_smi_tells_the_same() {
    if nvidia_machine("without_amd_smi_rocm_smi_tells_the_same") {
        return;
    }
    let mut c = amd_cluster();
    let rocm_smi = stand_in_rocm_smi(&c);
    // The daemon's PATH: the stand-ins, then the directories of this one that have no amd-smi.
    let mut dirs = vec![c.bin.clone()];
    let path = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&path).filter(|d| !d.join("amd-smi").exists()));
    let path = std::env::join_paths(dirs).unwrap();
    c.start_daemon_with(&[("PATH", path.to_str().unwrap())]);
    watched_as_nvidia_gpus_are(&c, &|on: &[OnGpu]| set_rocm_smi_processes(&rocm_smi, on));
    let out = c.run("slurmlet", &["gpus"]);
    let text = stdout(&out);
    assert!(text.lines().nth(1).is_some_and(|l| l.contains("10 / 65520 MiB")), "{text}{}", stderr(&out));
    let probes = read(&rocm_smi.probes);
    assert!(probes.lines().any(|l| l == "--showuse --showmeminfo vram --showpids --json"), "{probes}");
    assert!(probes.lines().any(|l| l == "--showpidgpus"), "{probes}");
}
