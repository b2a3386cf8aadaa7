//! A failing GPU, as the stand-in NVML library reports it (a critical XID event, a GPU lost,
//! memory rows waiting for a reset): the daemon takes that GPU alone out of service, the job
//! on it ends `NODE_FAIL` (requeued when it may be), the other jobs run on, the node's
//! reason says which GPU and why, a restart keeps it out, and the administrator's command
//! puts it back.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, UUID0, UUID1};
use common::{until, wait_for, Cluster, T};
use serde_json::Value;
use std::path::Path;

/// Describes the machine's two GPUs, with `health` merged into each (`{}` for a healthy one).
fn set_health(machine: &Path, health: [Value; 2]) {
    let gpus: Vec<Value> = [(0, UUID0), (1, UUID1)]
        .into_iter()
        .zip(health)
        .map(|((i, uuid), extra)| {
            let mut gpu = fake_nvml::gpu(i, A100_MODEL, uuid);
            for (k, v) in extra.as_object().cloned().unwrap_or_default() {
                gpu[k] = v;
            }
            gpu
        })
        .collect();
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": gpus }));
}

/// The node index of the one GPU running job `id` was given.
fn gpu_of(c: &Cluster, id: u32) -> usize {
    let detail = c.wait_state(id, &["RUNNING"], T).gres_detail.join(",");
    let index = detail.split("IDX:").nth(1).and_then(|r| r.split(')').next()).unwrap_or_default();
    index.parse().unwrap_or_else(|_| panic!("job {id}'s GPU in {detail:?}"))
}

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `scontrol show node`'s `Reason=` text, once it holds `part`.
fn reason_with(c: &Cluster, part: &str) -> String {
    wait_for(&format!("the node's reason to say {part:?}"), T, || {
        let shown = text(&c.run("scontrol", &["show", "node"]));
        until(shown.contains(part), || shown.clone()).map(|()| shown.clone())
    })
}

#[test]
fn an_xid_79_takes_its_gpu_out_the_job_on_it_is_requeued_and_the_admin_puts_it_back() {
    let (mut c, machine) = fake_nvml::start_watching("");
    let hit = c.sbatch(&["--gres=gpu:1", "-J", "hit", "-o", "hit.out", "--wrap", "sleep 300"]);
    let other = c.sbatch(&["--gres=gpu:1", "-J", "other", "-o", "/dev/null", "--wrap", "sleep 300"]);
    let gpu = gpu_of(&c, hit);
    gpu_of(&c, other);
    let mut health = [serde_json::json!({}), serde_json::json!({})];
    health[gpu] = serde_json::json!({ "xid_events": [13, 79] });
    set_health(&machine, health);

    // The job on it ends (NODE_FAIL) and goes back to the queue; its neighbour runs on.
    let why = format!("gpu {gpu} failed: XID 79: GPU has fallen off the bus");
    reason_with(&c, &format!("Reason={why}"));
    let runs = wait_for("the first run's record", T, || {
        let o = c.run("sacct", &["-j", &hit.to_string(), "-X", "-n", "-P", "--duplicates", "-o", "State"]);
        let states = text(&o);
        until(states == "REQUEUED\nPENDING\n", || states.clone()).map(|()| states.clone())
    });
    assert_eq!(runs, "REQUEUED\nPENDING\n");
    let out = c.wait_file("hit.out", T);
    assert!(
        out.contains(&format!("*** JOB {hit} ON node1 CANCELLED AT "))
            && out.contains(" DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***"),
        "{out}"
    );
    assert_eq!(c.state(other), "RUNNING");
    let job = c.job(hit);
    assert_eq!(
        (job.job_state.join("+").as_str(), job.state_reason.as_str(), job.restart_cnt),
        ("PENDING", "Resources", 1)
    );
    // XID 13 (an application's fault) is not in the reason; sinfo -R shows it.
    assert!(!reason_with(&c, &why).contains("XID 13"));
    let sinfo = text(&c.run("sinfo", &["-R", "-h"]));
    assert!(sinfo.starts_with(&why), "{sinfo}");
    let listing = text(&c.run("slurmlet", &["gpus"]));
    assert!(listing.contains("out of service: XID 79: GPU has fallen off the bus"), "{listing}");

    // A restart keeps it out (the event is not raised again: the store remembers).
    set_health(&machine, [serde_json::json!({}), serde_json::json!({})]);
    c.kill_daemon();
    c.start_daemon_with(&[(fake_nvml::MACHINE_VARIABLE, machine.to_str().unwrap())]);
    reason_with(&c, &why);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(c.state(hit), "PENDING", "a failed GPU is not handed out after a restart");

    // The administrator puts it back: the job starts again on it.
    let o = c.run("slurmlet", &["gpus", "--resume", "7"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("GPU 7 is not out of service"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = c.run("slurmlet", &["gpus", "--resume", &gpu.to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(text(&o), format!("GPU {gpu} is back in service\n"));
    assert_eq!(gpu_of(&c, hit), gpu);
    assert!(!text(&c.run("scontrol", &["show", "node"])).contains("failed"));
    for id in [hit, other] {
        assert!(c.run("scancel", &[&id.to_string()]).status.success());
    }
}

#[test]
fn a_lost_gpu_and_rows_waiting_for_a_reset_go_out_until_scontrol_resumes_the_node() {
    let (c, machine) = fake_nvml::start_watching("");
    let stays = c.sbatch(&["--gres=gpu:2", "--no-requeue", "-o", "stays.out", "--wrap", "sleep 300"]);
    c.wait_state(stays, &["RUNNING"], T);
    set_health(
        &machine,
        [serde_json::json!({ "remapped_rows": { "pending": true } }), serde_json::json!({ "lost": true })],
    );
    let shown = reason_with(&c, "gpu 1 failed: the GPU is lost");
    assert!(shown.contains("gpu 0 failed: remapped memory rows wait for a reset of the GPU"), "{shown}");
    // Not requeued (--no-requeue): it ends NODE_FAIL for good.
    let job = c.wait_state(stays, &["NODE_FAIL"], T);
    assert_eq!(job.restart_cnt, 0);
    // A job that needs a GPU waits while both are out.
    let next = c.sbatch(&["--gres=gpu:1", "-o", "/dev/null", "--wrap", "sleep 300"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(c.state(next), "PENDING");
    // scontrol's node update: the wrong node, an unsupported state, then RESUME.
    let o = c.run("scontrol", &["update", "nodename=nosuch", "state=resume"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("Invalid node name specified"));
    let o = c.run("scontrol", &["update", "nodename=node1", "state=drain"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("only State=RESUME"), "{}", String::from_utf8_lossy(&o.stderr));
    set_health(&machine, [serde_json::json!({}), serde_json::json!({})]);
    let o = c.run("scontrol", &["update", "nodename=node1", "state=resume"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    c.wait_state(next, &["RUNNING"], T);
    assert!(!text(&c.run("scontrol", &["show", "node"])).contains("failed"));
    assert!(c.run("scancel", &[&next.to_string()]).status.success());
}

#[test]
fn only_root_and_operators_put_a_gpu_back() {
    use common::system::{is_root, Shared};
    if !is_root("only_root_and_operators_put_a_gpu_back") {
        return;
    }
    let shared = Shared::start("");
    let mallory = shared.user("resume");
    for (command, args) in [
        ("slurmlet", &["gpus", "--resume", "all"][..]),
        ("scontrol", &["update", "nodename=node1", "state=resume"][..]),
    ] {
        let o = shared.run_as(&mallory, command, args);
        assert!(!o.status.success(), "{command} {args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("only root and the operators may put a GPU back in service"), "{command}: {err}");
    }
    // Root may; with nothing out of service it says so.
    let o = std::process::Command::new(shared.bin.join("slurmlet"))
        .args(["gpus", "--resume", "all"])
        .env("SLURMLET_CONF", &shared.config)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no GPU is out of service"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
