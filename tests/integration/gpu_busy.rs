//! GPUs busy outside the queue: the daemon looks at the processes on its GPUs (here through
//! the stand-in NVML of `tests/fake_nvml/`, told of real processes the tests start), keeps
//! new jobs off a GPU that a process of no job uses while it runs, says why they wait, and
//! shows the process in `scontrol show node` and `sinfo -R`.

use crate::common;
use common::fake_nvml::{self, me, write_machine, Outsider, A100_MODEL, UUID0, UUID1};
use common::T;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const GIB: u64 = 1 << 30;

/// A daemon on a fake machine of two A100s that looks at their processes every second,
/// with `extra` configuration lines; and the file that describes the machine.
fn start(extra: &str) -> (Cluster, PathBuf) {
    fake_nvml::start_watching(extra)
}

/// Describes the machine with `on0` and `on1`, `(pid, bytes)`, as the compute processes of
/// GPU 0 and GPU 1.
fn set_processes(machine: &Path, on0: &[(u32, u64)], on1: &[(u32, u64)]) {
    write_machine(machine, described(on0, on1));
}

/// The machine with `on0` and `on1` as the compute processes of its GPUs.
fn described(on0: &[(u32, u64)], on1: &[(u32, u64)]) -> serde_json::Value {
    let processes = |list: &[(u32, u64)]| -> serde_json::Value {
        list.iter().map(|(pid, bytes)| serde_json::json!({ "pid": pid, "used_memory": bytes })).collect()
    };
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["processes"] = processes(on0);
    let mut gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    gpu1["processes"] = processes(on1);
    serde_json::json!({ "gpus": [gpu0, gpu1] })
}

/// The node's `Reason=` in `scontrol show node`, or empty.
fn node_reason(c: &Cluster) -> String {
    let out = c.run("scontrol", &["show", "node"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    text.lines().find_map(|l| l.trim_start().strip_prefix("Reason=")).unwrap_or_default().to_string()
}

/// Waits until the node's reason is `wanted`.
fn wait_reason(c: &Cluster, wanted: &str) {
    wait_for(&format!("the node's reason to be {wanted:?}"), T, || {
        let reason = node_reason(c);
        until(reason == wanted, || format!("{reason}\nthe daemon's log:\n{}", c.log()))
    });
}

/// squeue's reason for job `id`.
fn reason_of(c: &Cluster, id: u32) -> String {
    stdout(&c.run("squeue", &["-h", "-j", &id.to_string(), "-o", "%r"])).trim().to_string()
}

#[test]
fn a_process_outside_the_queue_keeps_new_jobs_off_its_gpu_until_it_ends() {
    let (c, machine) = start("");
    let outsider = Outsider::start("601");
    set_processes(&machine, &[(outsider.pid(), 11 * GIB + GIB / 5)], &[]);
    let line = format!("gpu 0 busy outside the queue: pid {} ({}) sleep 601, 11.2 GiB", outsider.pid(), me());
    wait_reason(&c, &line);
    let out = c.run("sinfo", &["-R"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.lines().next().unwrap_or_default().starts_with("REASON"), "{text}");
    let row = text.lines().nth(1).unwrap_or_else(|| panic!("a row for the node: {text}"));
    assert!(row.starts_with(&line), "the whole reason: {text}");
    assert!(row.trim_end().ends_with("node1"), "{text}");

    // A one-GPU job is given the other GPU.
    let one = c.sbatch(&["--gres=gpu:1", "-o", "one.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(one, &["COMPLETED"], T);
    assert_eq!(c.wait_file("one.out", T), "1\n");

    // A two-GPU job waits, saying why, and starts by itself once the process is gone.
    let two = c.sbatch(&["--gres=gpu:2", "-o", "two.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    wait_for("the job to wait on the busy GPU", T, || {
        let reason = reason_of(&c, two);
        until(reason == "GpusBusyOutsideQueue", || reason)
    });
    assert_eq!(c.state(two), "PENDING");
    set_processes(&machine, &[], &[]);
    c.wait_state(two, &["COMPLETED"], T);
    assert_eq!(c.wait_file("two.out", T), "0,1\n");
    wait_reason(&c, "");
    let out = c.run("sinfo", &["-R", "-h"]);
    assert_eq!(stdout(&out), "", "no reason left: {}", stderr(&out));
}

#[test]
fn a_jobs_own_processes_and_small_ones_are_not_outside_the_queue() {
    let (c, machine) = start("");
    let job =
        c.sbatch(&["--gres=gpu:1", "-o", "job.out", "--wrap", "echo $$ > pid; sleep 600 & echo $! > child; wait"]);
    c.wait_state(job, &["RUNNING"], T);
    let pid = |file: &str| -> u32 {
        wait_for(file, T, || {
            let text = std::fs::read_to_string(c.work.join(file)).map_err(|e| e.to_string())?;
            text.trim().parse().map_err(|e| format!("{e}: {text:?}"))
        })
    };
    let (script, child) = (pid("pid"), pid("child"));
    let small = Outsider::start("602");
    let large = Outsider::start("603");
    // The job's processes on its GPU, a small outsider beside them, and a large one on the
    // other GPU, whose report shows that the daemon has looked since.
    set_processes(&machine, &[(script, 4 * GIB), (child, 2 * GIB), (small.pid(), 100 << 20)], &[(large.pid(), GIB)]);
    wait_reason(&c, &format!("gpu 1 busy outside the queue: pid {} ({}) sleep 603, 1.0 GiB", large.pid(), me()));
    let out = c.run("scancel", &[&job.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    c.wait_state(job, &["CANCELLED"], T);
}

#[test]
fn ignored_processes_outside_the_queue_leave_their_gpu_to_jobs() {
    let (c, machine) = start("foreign_gpu_processes = \"ignore\"");
    let outsider = Outsider::start("604");
    set_processes(&machine, &[], &[(outsider.pid(), 8 * GIB)]);
    wait_reason(&c, &format!("gpu 1 busy outside the queue: pid {} ({}) sleep 604, 8.0 GiB", outsider.pid(), me()));
    let two = c.sbatch(&["--gres=gpu:2", "-o", "two.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(two, &["COMPLETED"], T);
    assert_eq!(c.wait_file("two.out", T), "0,1\n");
}

#[test]
fn processes_are_reported_with_what_can_be_known_of_them() {
    let (c, machine) = start("foreign_gpu_memory = 1024");
    // No process has this pid here (pid_max is at most 2^22).
    let elsewhere = 4_000_000_000u32;
    // A command line with a newline and an escape character, shown escaped.
    let odd = Outsider(Command::new("sh").args(["-c", "sleep 607; exit", "a\nb\x1b[31m"]).spawn().expect("start sh"));
    set_processes(&machine, &[(elsewhere, 3 * GIB), (odd.pid(), 2 * GIB), (std::process::id(), 1023 << 20)], &[]);
    let reason = [
        format!(
            "gpu 0 busy outside the queue: pid {} ({}) sh -c sleep 607; exit a\\nb\\x1b[31m, 2.0 GiB",
            odd.pid(),
            me()
        ),
        format!("gpu 0 busy outside the queue: pid {elsewhere} (not in this pid namespace), 3.0 GiB"),
    ];
    wait_reason(&c, &reason.join("; "));
    let one = c.sbatch(&["--gres=gpu:1", "-o", "one.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(one, &["COMPLETED"], T);
    assert_eq!(c.wait_file("one.out", T), "1\n");
}

#[test]
fn a_failing_driver_is_told_once_and_what_was_seen_last_stays() {
    let (c, machine) = start("");
    let outsider = Outsider::start("605");
    set_processes(&machine, &[(outsider.pid(), 2 * GIB)], &[]);
    let line = format!("gpu 0 busy outside the queue: pid {} ({}) sleep 605, 2.0 GiB", outsider.pid(), me());
    wait_reason(&c, &line);

    // NVML_ERROR_UNKNOWN from then on, and the process is gone.
    let calls = c.dir.path().join("nvml-calls");
    let mut failing = described(&[], &[]);
    failing["fail"] = serde_json::json!({ "nvmlDeviceGetComputeRunningProcesses_v3": 999 });
    failing["log"] = serde_json::json!(calls);
    write_machine(&machine, failing);
    let noted = || std::fs::read_to_string(&calls).unwrap_or_default();
    let failed_calls = || noted().lines().filter(|l| *l == "nvmlDeviceGetComputeRunningProcesses_v3").count();
    wait_for("three failed looks", T, || until(failed_calls() >= 3, noted));
    let log = c.log();
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].contains("nvmlDeviceGetComputeRunningProcesses"), "the warning says what failed: {log}");
    assert_eq!(node_reason(&c), line, "what was seen last stays");
    let one = c.sbatch(&["--gres=gpu:1", "-o", "one.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(one, &["COMPLETED"], T);
    assert_eq!(c.wait_file("one.out", T), "1\n");

    // Once NVML answers again, the process is seen gone.
    set_processes(&machine, &[], &[]);
    wait_reason(&c, "");
    assert!(c.log().contains("can be seen again"), "{}", c.log());
}

#[test]
fn without_nvml_nvidia_smi_tells_the_gpus_processes() {
    let mut c = Cluster::configure("0", "");
    let text = read(&c.config);
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("gpus =")).map(String::from).collect();
    lines.push("nvml_library = \"/nonexistent/libnvidia-ml.so.1\"".into());
    lines.push("gpu_sample_interval = 1".into());
    std::fs::write(&c.config, lines.join("\n") + "\n").unwrap();
    // An nvidia-smi that lists two GPUs, and the compute processes of a file.
    let apps = c.dir.path().join("compute-apps");
    std::fs::write(&apps, "").unwrap();
    let script = c.bin.join("nvidia-smi");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -L ]; then\n\
             echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: {UUID0})'\n\
             echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: {UUID1})'\n\
             elif [ \"$*\" = '--query-gpu=uuid,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits' ]; then\n\
             echo '{UUID0}, 5120, 81559, 12'\n\
             echo '{UUID1}, 0, 81559, 0'\n\
             elif [ \"$*\" = '--query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits' ]; then\n\
             cat '{}'\n\
             else exit 2; fi\n",
            apps.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", c.bin.display(), std::env::var("PATH").unwrap_or_default());
    c.start_daemon_with(&[("PATH", &path)]);

    let outsider = Outsider::start("606");
    let set_apps = |text: String| {
        std::fs::write(apps.with_extension("next"), text).unwrap();
        std::fs::rename(apps.with_extension("next"), &apps).unwrap();
    };
    set_apps(format!("{UUID0}, {}, 5120\n", outsider.pid()));
    wait_reason(&c, &format!("gpu 0 busy outside the queue: pid {} ({}) sleep 606, 5.0 GiB", outsider.pid(), me()));
    let two = c.sbatch(&["--gres=gpu:2", "-o", "two.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    wait_for("the job to wait on the busy GPU", T, || {
        let reason = reason_of(&c, two);
        until(reason == "GpusBusyOutsideQueue", || reason)
    });
    set_apps(String::new());
    c.wait_state(two, &["COMPLETED"], T);
    assert_eq!(c.wait_file("two.out", T), "0,1\n");
}

/// `squeue` answers, and at once, whatever the GPUs' watch is doing.
fn squeue_answers(c: &Cluster) {
    let begun = std::time::Instant::now();
    let out = c.run("squeue", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(begun.elapsed() < Duration::from_secs(2), "squeue took {:?}", begun.elapsed());
}

#[test]
fn a_look_hung_in_the_driver_is_given_up_and_what_it_last_saw_expires() {
    let (c, machine) = start("");
    let outsider = Outsider::start("607");
    set_processes(&machine, &[(outsider.pid(), 2 * GIB)], &[]);
    let line = format!("gpu 0 busy outside the queue: pid {} ({}) sleep 607, 2.0 GiB", outsider.pid(), me());
    wait_reason(&c, &line);

    // The driver stops answering: the process list never comes back.
    let mut hung = described(&[(outsider.pid(), 2 * GIB)], &[]);
    hung["hang"] = serde_json::json!(["nvmlDeviceGetComputeRunningProcesses_v3"]);
    write_machine(&machine, hung.clone());
    let two = c.sbatch(&["--gres=gpu:2", "-o", "two.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    // Meanwhile the daemon answers at once, and the busy GPU keeps the job waiting, for a while.
    for _ in 0..10 {
        squeue_answers(&c);
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(reason_of(&c, two), "GpusBusyOutsideQueue");
    // The look is given up on, and what it last saw expires: the job runs.
    wait_for("the hung look to be given up and its facts to expire", Duration::from_secs(60), || {
        squeue_answers(&c);
        until(c.state(two) == "COMPLETED", || format!("{}; log:\n{}", c.state(two), c.log()))
    });
    assert_eq!(c.wait_file("two.out", T), "0,1\n");
    let log = c.log();
    assert!(log.contains("did not answer within 25 s and is abandoned"), "{log}");
    assert!(log.contains("no longer keep jobs off their GPUs"), "{log}");
    assert_eq!(log.matches("cannot see the processes on the GPUs").count(), 1, "said once: {log}");
    assert_eq!(node_reason(&c), "");

    // The driver answers again: the process is seen again.
    let mut answering = hung;
    answering.as_object_mut().unwrap().remove("hang");
    write_machine(&machine, answering);
    wait_reason(&c, &line);
    assert!(c.log().contains("can be seen again"), "{}", c.log());
}

#[test]
fn a_flooding_tool_and_impossible_figures_are_bounded_and_said_so() {
    let mut c = Cluster::configure("0", "");
    let text = read(&c.config);
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("gpus =")).map(String::from).collect();
    lines.push("nvml_library = \"/nonexistent/libnvidia-ml.so.1\"".into());
    lines.push("gpu_sample_interval = 1".into());
    std::fs::write(&c.config, lines.join("\n") + "\n").unwrap();
    // An nvidia-smi that says GPU 0 is 400% busy with more memory used than it has, and lists
    // 200,000 compute processes on it at every look.
    let script = c.bin.join("nvidia-smi");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -L ]; then\n\
             echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: {UUID0})'\n\
             echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: {UUID1})'\n\
             elif [ \"$*\" = '--query-gpu=uuid,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits' ]; then\n\
             echo '{UUID0}, 90000, 81559, 400'\n\
             echo '{UUID1}, 0, 81559, 0'\n\
             elif [ \"$*\" = '--query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits' ]; then\n\
             yes '{UUID0}, 4194000, 5120' | head -n 200000\n\
             else exit 2; fi\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", c.bin.display(), std::env::var("PATH").unwrap_or_default());
    c.start_daemon_with(&[("PATH", &path)]);
    wait_for("a look to see the flood", T, || {
        let reason = node_reason(&c);
        until(reason.starts_with("gpu 0 busy outside the queue: pid 4194000"), || reason)
    });
    for _ in 0..5 {
        squeue_answers(&c);
        std::thread::sleep(Duration::from_millis(300));
    }
    let reason = node_reason(&c);
    assert!(reason.len() < 1000, "the node's reason is bounded: {} bytes", reason.len());
    let out = c.run("slurmlet", &["gpus"]);
    let text = stdout(&out);
    assert!(text.lines().nth(1).is_some_and(|l| l.contains("81559 / 81559 MiB") && l.contains(" 100%* ")), "{text}");
    assert!(text.contains("* GPU 0: the driver reported utilisation 400%, "), "{text}");
    let log = c.log();
    assert_eq!(log.matches("the driver reported what cannot be true").count(), 1, "said once: {log}");
    assert!(log.contains("compute processes listed; only the first 4096 are kept"), "{log}");
    // A job on the other GPU runs.
    let one = c.sbatch(&["--gres=gpu:1", "-o", "one.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_state(one, &["COMPLETED"], T);
    assert_eq!(c.wait_file("one.out", T), "1\n");
}
