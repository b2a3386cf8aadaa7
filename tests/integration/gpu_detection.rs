//! GPUs of a configuration without a `gpus` key: the daemon finds them at its start
//! (`nvidia-smi -L`, then `/proc/driver/nvidia/gpus`, then `SLURMLET_GPUS`), and client
//! commands, which only read the configuration, never look for them.

use crate::common;
use common::gpus::{self, path_with_bin, show_node_gres};
use common::T;
use common::*;
use std::time::Duration;

/// A cluster whose configuration has no `gpus` key, its daemon not started. Its NVML
/// library is one that does not exist, so that the sources after NVML are the ones asked
/// even on a machine with NVIDIA's driver (`tests/integration/gpu_nvml.rs` tests NVML). Its
/// daemon does not look at the GPUs' processes (`tests/integration/gpu_busy.rs` does), so that
/// the stand-in `nvidia-smi` runs only to list them.
fn detecting_cluster() -> Cluster {
    let c = Cluster::configure("0", "");
    let text = read(&c.config);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("gpus =")).collect();
    lines.insert(0, "nvml_library = \"/nonexistent/libnvidia-ml.so.1\"");
    lines.insert(0, "gpu_sample_interval = 0");
    std::fs::write(&c.config, lines.join("\n")).unwrap();
    c
}

/// Puts a stand-in `nvidia-smi` on the cluster's `PATH` that notes each run in the file it
/// returns.
fn stand_in_nvidia_smi(c: &Cluster) -> std::path::PathBuf {
    let probes = c.dir.path().join("probes");
    gpus::stand_in_nvidia_smi(c, &probes);
    probes
}

#[test]
fn the_daemon_finds_gpus_and_clients_never_look() {
    let mut c = detecting_cluster();
    let probes = stand_in_nvidia_smi(&c);
    c.start_daemon_with(&[("PATH", &path_with_bin(&c))]);
    assert_eq!(read(&probes), "-L\n", "the daemon lists GPUs once, at its start");

    // Typed by the model nvidia-smi gives, as NVML's name would type it.
    assert_eq!(show_node_gres(&c), "Gres=gpu:nvidia_h100_80gb_hbm3:2");
    let out = c.run("sinfo", &["-h", "-o", "%G"]);
    assert_eq!(stdout(&out).trim(), "gpu:nvidia_h100_80gb_hbm3:2", "{}", stderr(&out));
    // The daemon, not sbatch, knows that three GPUs are more than the node has.
    let out = c.run("sbatch", &["--test-only", "--gres=gpu:3", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let id = c.sbatch(&["--gres=gpu:2", "-o", "job.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(c.wait_file("job.out", T), "0,1 0,1\n");
    let out = c.run("srun", &["--gres=gpu:1", "printenv", "CUDA_VISIBLE_DEVICES"]);
    assert_eq!(stdout(&out), "0\n", "{}", stderr(&out));

    // The supervisor is told which GPUs the job has, found records and all.
    let held = c.sbatch(&["--gres=gpu:1", "-o", "/dev/null", "--wrap", "while [ ! -e done ]; do sleep 0.1; done"]);
    c.wait_state(held, &["RUNNING"], T);
    // The job is RUNNING once it has its GPUs; its supervisor's files are written just after.
    let spec_file = c.dir.path().join("state/jobs").join(held.to_string()).join("spec.json");
    let spec: serde_json::Value = wait_for("the job's spec.json", T, || {
        let text = std::fs::read_to_string(&spec_file).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| e.to_string())
    });
    assert_eq!(spec["gpus"][0]["uuid"], "GPU-4a0c6b4e-9f0d-2a51-7c3e-8d1f2b6e0a93", "{spec}");
    assert_eq!(spec["gpus"][0]["model"], "NVIDIA H100 80GB HBM3", "{spec}");
    std::fs::write(c.work.join("done"), "").unwrap();
    c.wait_state(held, &["COMPLETED"], T);

    assert_eq!(read(&probes), "-L\n", "no client command ran nvidia-smi");
}

#[test]
fn stand_in_gpus_when_none_is_found() {
    if std::path::Path::new("/proc/driver/nvidia/gpus").exists() {
        skip("stand_in_gpus_when_none_is_found", "this machine has NVIDIA GPUs");
        return;
    }
    let mut c = detecting_cluster();
    // An nvidia-smi that finds nothing, as on a machine without GPUs.
    let script = c.bin.join("nvidia-smi");
    std::fs::write(&script, "#!/bin/sh\necho 'No devices were found'\nexit 6\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    c.start_daemon_with(&[("PATH", &path_with_bin(&c)), ("SLURMLET_GPUS", "3")]);
    assert_eq!(show_node_gres(&c), "Gres=gpu:3");
    c.kill_daemon();
    c.start_daemon_with(&[("PATH", &path_with_bin(&c))]);
    assert_eq!(show_node_gres(&c), "Gres=(null)");
}

#[test]
fn amd_gpus_are_found_through_rocm_smi_and_shown_through_rocr_visible_devices() {
    if std::path::Path::new("/proc/driver/nvidia/gpus").exists() {
        skip(
            "amd_gpus_are_found_through_rocm_smi_and_shown_through_rocr_visible_devices",
            "this machine has NVIDIA's driver, whose GPUs are found before rocm-smi is asked",
        );
        return;
    }
    let mut c = detecting_cluster();
    // No NVIDIA tool finds anything; AMD's lists two MI210s as `rocm-smi --json` does.
    let nvidia = c.bin.join("nvidia-smi");
    std::fs::write(&nvidia, "#!/bin/sh\necho 'No devices were found'\nexit 6\n").unwrap();
    let rocm = c.bin.join("rocm-smi");
    std::fs::write(
        &rocm,
        "#!/bin/sh\n\
         [ \"$*\" = '--showproductname --showbus --showuniqueid --json' ] || exit 2\n\
         echo '{\"card0\": {\"PCI Bus\": \"0000:C1:00.0\", \"Unique ID\": \"0x18f68e602b8a790f\", \"Card series\": \"AMD Instinct MI210\"}, \
         \"card1\": {\"PCI Bus\": \"0000:C2:00.0\", \"Unique ID\": \"0x28f68e602b8a7910\", \"Card series\": \"AMD Instinct MI210\"}}'\n",
    )
    .unwrap();
    for script in [&nvidia, &rocm] {
        std::fs::set_permissions(script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    c.start_daemon_with(&[("PATH", &path_with_bin(&c))]);
    assert_eq!(show_node_gres(&c), "Gres=gpu:amd_instinct_mi210:2");
    let out = c.run("scontrol", &["show", "config"]);
    assert!(stdout(&out).lines().any(|l| l == "SLURMLET_GPU_SOURCE     = rocm-smi"), "{}", stdout(&out));
    let id = c.sbatch(&[
        "--gres=gpu:amd_instinct_mi210:1",
        "-o",
        "amd.out",
        "--wrap",
        "echo \"ROCR=$ROCR_VISIBLE_DEVICES CUDA=${CUDA_VISIBLE_DEVICES-unset} JOB=$SLURM_JOB_GPUS\"",
    ]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(c.wait_file("amd.out", T), "ROCR=0 CUDA=unset JOB=0\n");
}

#[test]
fn a_hung_nvidia_smi_is_killed_at_its_deadline_at_the_start_and_on_a_reload() {
    let mut c = detecting_cluster();
    let marker = c.dir.path().join("hung-pids");
    let script = c.bin.join("nvidia-smi");
    std::fs::write(&script, format!("#!/bin/sh\necho $$ >> '{}'\nexec sleep 600\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let begun = std::time::Instant::now();
    c.start_daemon_with(&[("PATH", &path_with_bin(&c))]);
    assert!(begun.elapsed() < Duration::from_secs(20), "the start took {:?}", begun.elapsed());
    assert!(c.log().contains("did not finish within 10 s and was killed"), "{}", c.log());
    let first: i32 = read(&marker).trim().parse().unwrap();
    assert!(!std::path::Path::new(&format!("/proc/{first}")).exists(), "the hung nvidia-smi {first} was left running");

    // A reload asks again; the daemon answers meanwhile.
    let pid = c.daemon.as_ref().unwrap().id() as i32;
    // SAFETY: kill has no memory preconditions.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    wait_for("the reload to run nvidia-smi", T, || until(read(&marker).lines().count() == 2, || read(&marker)));
    for _ in 0..5 {
        let asked = std::time::Instant::now();
        let out = c.run("squeue", &[]);
        assert!(out.status.success() && asked.elapsed() < Duration::from_secs(2), "squeue took {:?}", asked.elapsed());
        std::thread::sleep(Duration::from_millis(500));
    }
    wait_for("the reload to end", T, || until(c.log().contains("configuration reloaded"), || c.log()));
}
