//! Scheduling order and pending reasons: backfill that never delays an earlier job,
//! begin times, partition limits, --test-only, and the auto-started daemon.

use crate::common;
use common::T;
use common::*;

#[test]
fn backfill_starts_short_jobs_but_never_delays_the_job_ahead() {
    let c = Cluster::start("4", "");
    // 2 of 4 GPUs busy for up to 10 minutes.
    let a = c.sbatch(&["-t", "10", "--gres=gpu:2", "-o", "a.out", "--wrap", "echo up; sleep 300"]);
    c.wait_file("a.out", T);
    // The head job needs all 4 GPUs: it waits for A (Resources) and has the GPUs reserved
    // from A's end on.
    let head = c.sbatch(&["-t", "10", "--gres=gpu:4", "--wrap", "true"]);
    // A 1-GPU job that ends before A's limit can go first (backfill).
    let short = c.sbatch(&["-t", "5", "--gres=gpu:1", "-o", "short.out", "--wrap", "echo ran; sleep 300"]);
    // One that would run past A's limit would delay the head job: it waits its turn.
    let long = c.sbatch(&["-t", "20", "--gres=gpu:1", "--wrap", "true"]);
    let unlimited = c.sbatch(&["--gres=gpu:1", "--wrap", "true"]);
    c.wait_file("short.out", T);
    assert_eq!(c.state(short), "RUNNING");
    assert_eq!(c.job(head).state_reason, "Resources");
    assert_eq!(c.job(long).state_reason, "Priority");
    assert_eq!(c.job(unlimited).state_reason, "Priority");
    assert_eq!(c.state(a), "RUNNING");
}

#[test]
fn begin_time_holds_a_job_until_then_and_the_timer_starts_it() {
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["--begin=now+2", "-o", "b.out", "--wrap", "date +%s"]);
    // The reason comes with the scheduling pass that follows the submit.
    wait_for("the reason BeginTime", T, || {
        let j = c.job(id);
        until(j.job_state == ["PENDING"] && j.state_reason == "BeginTime", || format!("{j:?}"))
    });
    let j = c.wait_state(id, &["COMPLETED"], T);
    assert!(j.start_time.number >= j.submit_time.number + 2, "{} {}", j.start_time.number, j.submit_time.number);
}

#[test]
fn a_time_limit_over_the_partition_maximum_waits_with_a_warning() {
    let c = Cluster::start(
        "0",
        "[[partitions]]\nname = \"gpu\"\ndefault = true\n[[partitions]]\nname = \"debug\"\nmax_time = \"30\"\n",
    );
    let o = c.run("sbatch", &["--parsable", "-p", "debug", "-t", "1:00:00", "--wrap", "true"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("sbatch: warning: ") && err.contains("MaxTime"), "{err}");
    let id: u32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    // The reason comes with the scheduling pass that follows the submit.
    wait_for("the reason PartitionTimeLimit", T, || {
        let reason = c.job(id).state_reason;
        until(reason == "PartitionTimeLimit", || reason)
    });
    // Without -t the partition's limit applies and the job runs.
    let short = c.sbatch(&["-p", "debug", "--wrap", "true"]);
    let j = c.wait_state(short, &["COMPLETED"], T);
    assert_eq!(j.time_limit.number, 30);
    // Raising the limit and reloading the configuration (SIGHUP) lets the waiting job run.
    let conf = read(&c.config).replace("max_time = \"30\"", "max_time = \"2:00:00\"");
    std::fs::write(&c.config, conf).unwrap();
    let pid = c.daemon.as_ref().unwrap().id() as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    c.wait_state(id, &["COMPLETED"], T);
}

#[test]
fn test_only_estimates_without_queueing() {
    let c = Cluster::start("2", "");
    let o = c.run("sbatch", &["--test-only", "-n", "2", "--gres=gpu:2", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("sbatch: Job 1 to start at "), "{err}");
    assert!(err.trim_end().ends_with("using 2 processors on nodes node1 in partition gpu"), "{err}");
    assert!(o.stdout.is_empty());
    assert!(c.client().jobs().unwrap().jobs.is_empty());
    let o = c.run("sbatch", &["--test-only", "--gres=gpu:3", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn racing_commands_start_one_daemon() {
    let c = Cluster::configure("0", "");
    let handles: Vec<_> = (0..4)
        .map(|_| {
            c.cmd("sbatch")
                .args(["--parsable", "--hold", "--wrap", "true"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids: Vec<u32> = handles
        .into_iter()
        .map(|h| {
            let o = h.wait_with_output().unwrap();
            assert!(o.status.success());
            String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3, 4]);
    let log = read(&c.socket.parent().unwrap().join("slurmletd.log"));
    assert_eq!(log.matches("slurmletd listening").count(), 1, "{log}");
    assert!(!log.contains("already running"), "{log}");
}

#[test]
fn commands_find_the_socket_named_in_the_configuration() {
    let c = Cluster::configure("0", "");
    let o = c
        .cmd("sbatch")
        .env_remove("SLURMLET_SOCKET")
        .args(["--parsable", "--hold", "--wrap", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(c.socket.exists(), "the daemon listens where the configuration says");
    let o = c.cmd("slurmlet").env_remove("SLURMLET_SOCKET").args(["daemon", "status"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(c.socket.to_str().unwrap()));
}

#[test]
fn a_bad_configuration_is_reported_by_the_command_that_starts_the_daemon() {
    let c = Cluster::configure("0", "gpuz = 4");
    let o = c.run("sbatch", &["--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("sbatch: error: "), "{err}");
    assert!(err.contains("unknown field `gpuz`") && err.contains("slurmlet.toml"), "{err}");
}

#[test]
fn per_user_limits_hold_jobs_with_slurms_reasons_and_refuse_what_passes_them() {
    let c = Cluster::start(
        "4",
        "[limits]\nmax_running_jobs_per_user = 2\nmax_submitted_jobs_per_user = 4\nmax_gpus_per_user = 2\n",
    );
    let a = c.sbatch(&["--gres=gpu:2", "--wrap", "sleep 30"]);
    c.wait_state(a, &["RUNNING"], T);
    // GPUs are free on the node, but not for this user; a CPU job still runs.
    let b = c.sbatch(&["--gres=gpu:1", "--wrap", "sleep 30"]);
    let cpu = c.sbatch(&["--wrap", "sleep 30"]);
    c.wait_state(cpu, &["RUNNING"], T);
    assert_eq!(c.job(b).state_reason, "QOSMaxGRESPerUser");
    // Two running jobs is this user's limit.
    let e = c.sbatch(&["--wrap", "sleep 30"]);
    // The scheduling pass that sets its reason follows the submit.
    let reason = wait_for("the job's pending reason", T, || {
        let j = c.job(e);
        if j.state_reason == "None" {
            Err(j.state_reason)
        } else {
            Ok(j.state_reason)
        }
    });
    assert_eq!(reason, "QOSMaxJobsPerUserLimit");
    // A job asking for 3 GPUs could never start; a fifth job passes the submit limit.
    let refused = |args: &[&str], reason: &str| {
        let out = c.run("sbatch", args);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason) && err.contains("Job violates accounting/QOS policy"), "{err}");
    };
    refused(&["--gres=gpu:3", "--wrap", "true"], "QOSMaxGRESPerUser");
    refused(&["--wrap", "true"], "QOSMaxSubmitJobPerUserLimit");
    // The GPU job's end lets the waiting GPU job start; the CPU job still waits for a slot.
    assert!(c.run("scancel", &[&a.to_string()]).status.success());
    c.wait_state(b, &["RUNNING"], T);
    assert_eq!(c.job(e).state_reason, "QOSMaxJobsPerUserLimit");
}
