//! The queue end to end: GPUs, pending reasons, event-driven dispatch, refusals, cancel,
//! exit codes, output patterns.

use crate::common;
use common::T;
use common::*;
use std::time::{Duration, Instant};

#[test]
fn concurrent_gpu_jobs_get_disjoint_devices_and_a_third_waits_for_resources() {
    let c = Cluster::start("4", "");
    let hold = "while [ ! -e release ]; do sleep 0.02; done";
    let submitted_a = unix_now();
    let a = c.sbatch(&[
        "--gres=gpu:2",
        "-o",
        "a.out",
        "--wrap",
        &format!("date +%s.%N > a.start; echo $CUDA_VISIBLE_DEVICES; {hold}; date +%s.%N > a.end"),
    ]);
    let b = c.sbatch(&["--gres=gpu:2", "-o", "b.out", "--wrap", &format!("echo $CUDA_VISIBLE_DEVICES; {hold}")]);
    let third = c.sbatch(&[
        "--gres=gpu:1",
        "-o",
        "c.out",
        "--wrap",
        "date +%s.%N; echo $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS $GPU_DEVICE_ORDINAL",
    ]);
    let ga = c.wait_file("a.out", T);
    let gb = c.wait_file("b.out", T);
    let ids = |s: &str| s.trim().split(',').map(|x| x.parse::<u32>().unwrap()).collect::<Vec<_>>();
    let (ga, gb) = (ids(&ga), ids(&gb));
    assert_eq!(ga.len(), 2);
    assert_eq!(gb.len(), 2);
    assert!(ga.iter().all(|g| !gb.contains(g)), "GPU sets overlap: {ga:?} {gb:?}");
    assert_eq!(c.state(a), "RUNNING");
    assert_eq!(c.state(b), "RUNNING");
    let p = c.job(third);
    assert_eq!(p.job_state, vec!["PENDING"]);
    assert_eq!(p.state_reason, "Resources");

    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(third, &["COMPLETED"], T);
    let out = read(&c.path("c.out"));
    let end_a: f64 = c.wait_file("a.end", T).trim().parse().unwrap();
    let mut lines = out.lines();
    let start_c: f64 = lines.next().unwrap().parse().unwrap();
    let gpus: Vec<&str> = lines.next().unwrap().split(' ').collect();
    // Event-driven: the third job starts right after a GPU frees up, not on a polling tick.
    // Nothing else happened that could have started it (the daemon has no tick now), and it
    // took about as long as the first job took from its submission to its start (one
    // scheduling pass and one launch each): a second, or a few such launches on a slow
    // machine.
    let launch_a = c.wait_file("a.start", T).trim().parse::<f64>().unwrap() - submitted_a;
    let gap = start_c - end_a;
    eprintln!("dispatch gap after a job ended: {:.1} ms (submit to start: {:.1} ms)", gap * 1000.0, launch_a * 1000.0);
    let bound = (5.0 * launch_a).max(1.0);
    assert!(gap < bound, "third job started {gap:.3} s after the first ended (a launch took {launch_a:.3} s)");
    assert_eq!(gpus[0], gpus[1]);
    assert_eq!(gpus[1], gpus[2]);
    assert!(ga.contains(&gpus[0].parse().unwrap()) || gb.contains(&gpus[0].parse().unwrap()));
}

#[test]
fn impossible_requests_are_refused_with_slurms_text() {
    let c = Cluster::start("4", "");
    for (args, extra) in [
        (vec!["--gres=gpu:99", "--wrap", "true"], "GPUs"),
        (vec!["-N", "2", "--wrap", "true"], "one node"),
        (vec!["--gpus=9", "--wrap", "true"], "GPUs"),
        (vec!["-c", "64", "--wrap", "true"], "CPUs"),
        (vec!["--mem=999999999", "--wrap", "true"], "Memory specification can not be satisfied"),
    ] {
        let out = c.run("sbatch", &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("sbatch: error: Batch job submission failed: Requested node configuration is not available"),
            "{args:?}: {err}"
        );
        assert!(err.contains(extra), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = c.run("sbatch", &["-p", "nope", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n"
    );
    // Nothing was queued by the refusals.
    assert!(c.client().jobs().unwrap().jobs.is_empty());
}

#[test]
fn time_limit_ends_jobs_with_timeout_and_sigkill_after_kill_wait() {
    let c = Cluster::start("0", "");
    let plain = c.sbatch(&["-t", "1", "-o", "plain.out", "--wrap", "echo start; sleep 300; echo not-reached"]);
    let trap = c.sbatch(&[
        "-t",
        "1",
        "-o",
        "trap.out",
        "--wrap",
        "trap 'echo got TERM' TERM; echo start; while true; do sleep 0.1; done",
    ]);
    let begun = Instant::now();
    let jp = c.wait_state(plain, &["TIMEOUT"], Duration::from_secs(90));
    let jt = c.wait_state(trap, &["TIMEOUT"], Duration::from_secs(90));
    assert!(begun.elapsed() >= Duration::from_secs(55));
    let out = read(&c.path("plain.out"));
    assert!(out.starts_with("start\n"), "{out}");
    assert!(out.contains("CANCELLED AT") && out.contains("DUE TO TIME LIMIT ***"), "{out}");
    assert!(!out.contains("not-reached"));
    let tout = read(&c.path("trap.out"));
    assert!(tout.contains("got TERM"), "the trap ran: {tout}");
    // The trapping job outlived SIGTERM by KillWait (2 s) before SIGKILL.
    let plain_end = jp.end_time.number;
    let trap_end = jt.end_time.number;
    assert!(trap_end > plain_end, "trap job ended at {trap_end}, plain at {plain_end}");
}

#[test]
fn scancel_ends_a_running_job_and_frees_its_gpus() {
    let c = Cluster::start("2", "");
    let run = c.sbatch(&["--gres=gpu:2", "-o", "run.out", "--wrap", "echo up; sleep 300"]);
    let waiting = c.sbatch(&["--gres=gpu:2", "-o", "wait.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    c.wait_file("run.out", T);
    // The scheduling pass after the submit sets it (the submit answers before it runs).
    wait_for("the waiting job's reason", T, || {
        let reason = c.job(waiting).state_reason;
        until(reason == "Resources", || reason)
    });
    let out = c.run("scancel", &[&run.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = c.wait_state(run, &["CANCELLED"], T);
    assert_eq!(j.exit_code.return_code.number, 0);
    assert_eq!(c.wait_file("wait.out", T).trim(), "0,1");
    // Cancelling a finished job again is silent and succeeds, as in Slurm.
    let again = c.run("scancel", &[&run.to_string()]);
    assert!(again.status.success());
    assert!(again.stderr.is_empty());
    // A pending job is cancelled at once.
    let held = c.sbatch(&["--hold", "--wrap", "true"]);
    assert_eq!(c.job(held).state_reason, "JobHeldUser");
    assert!(c.run("scancel", &[&held.to_string()]).status.success());
    assert_eq!(c.state(held), "CANCELLED");
    // Bad ids.
    let bad = c.run("scancel", &["abc"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "scancel: error: Invalid job id abc\n");
    let none = c.run("scancel", &[]);
    assert_eq!(String::from_utf8_lossy(&none.stderr), "scancel: error: No job identification provided\n");
}

#[test]
fn exit_codes_and_states_follow_slurm() {
    let c = Cluster::start("0", "");
    let ok = c.sbatch(&["--wrap", "true"]);
    let three = c.sbatch(&["--wrap", "exit 3"]);
    let killed = c.sbatch(&["--wrap", "kill -9 $$"]);
    let j = c.wait_state(ok, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["COMPLETED"]);
    let j = c.wait_state(three, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["FAILED"]);
    assert_eq!(j.exit_code.return_code.number, 3);
    let j = c.wait_state(killed, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["FAILED"]);
    assert_eq!(j.exit_code.signal.id.number, 9);
    // sbatch --wait exits with the job's exit code.
    let out = c.run("sbatch", &["--wait", "--wrap", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Submitted batch job "));
    let out = c.run("sbatch", &["--wait", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn sbatch_wait_outlasts_the_daemons_bounded_wait() {
    // The daemon answers a wait after 20 s at most (202, the job still running); sbatch
    // --wait asks again until the job has ended.
    let c = Cluster::start("0", "");
    let started = Instant::now();
    let out = c.run("sbatch", &["--wait", "--wrap", "sleep 21; exit 4"]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() >= Duration::from_secs(21));
}

#[test]
fn output_files_follow_patterns_and_missing_directories_are_created() {
    let c = Cluster::start("0", "");
    let id =
        c.sbatch(&["-J", "pat", "-o", "logs/%x-%j.out", "-e", "logs/err-%4j.txt", "--wrap", "echo out; echo err >&2"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path(&format!("logs/pat-{id}.out"))), "out\n");
    assert_eq!(read(&c.path(&format!("logs/err-{id:04}.txt"))), "err\n");
    let id = c.sbatch(&["-o", "o_%x_%j_%u_%N_%%.txt", "-J", "n", "--wrap", "echo hi"]);
    c.wait_state(id, &["COMPLETED"], T);
    let user = slurmlet::identity::user_name(slurmlet::identity::uid());
    assert_eq!(read(&c.path(&format!("o_n_{id}_{user}_node1_%.txt"))), "hi\n");
    // Default output name.
    let id = c.sbatch(&["--wrap", "echo default"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path(&format!("slurm-{id}.out"))), "default\n");
    // A directory that can never be created is refused at submit time, naming the path.
    std::fs::write(c.path("afile"), "").unwrap();
    let out = c.run("sbatch", &["-o", "afile/sub/x.out", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("afile/sub"), "{err}");
}

#[test]
fn the_script_is_saved_at_submit_and_directives_apply() {
    let c = Cluster::start("2", "");
    let script = c.path("job.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\n#SBATCH -J early\n#SBATCH --gres=gpu:1\n#SBATCH -o job-%j.out\necho name=$SLURM_JOB_NAME gpus=$CUDA_VISIBLE_DEVICES args=\"$*\"\nsleep 0.5\n#SBATCH -J late_ignored\n",
    )
    .unwrap();
    let id = c.sbatch(&[script.to_str().unwrap(), "one", "two"]);
    std::fs::remove_file(&script).unwrap();
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path(&format!("job-{id}.out"))), "name=early gpus=0 args=one two\n");
    // The command line wins over directives.
    std::fs::write(&script, "#!/bin/sh\n#SBATCH -J fromfile\necho $SLURM_JOB_NAME\n").unwrap();
    let id = c.sbatch(&["-J", "cli_wins", "-o", "cli.out", script.to_str().unwrap()]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("cli.out")), "cli_wins\n");
}

#[test]
fn batch_environment_has_slurm_variables() {
    let c = Cluster::start("4", "");
    let id = c.sbatch(&[
        "-J",
        "envdump",
        "--gres=gpu:2",
        "-n",
        "2",
        "-c",
        "1",
        "-o",
        "env.out",
        "--wrap",
        "env | grep -E '^(SLURM|CUDA|GPU)' | sort",
    ]);
    c.wait_state(id, &["COMPLETED"], T);
    let env = read(&c.path("env.out"));
    for line in [
        "CUDA_VISIBLE_DEVICES=0,1",
        "CUDA_DEVICE_ORDER=PCI_BUS_ID",
        "GPU_DEVICE_ORDINAL=0,1",
        "SLURMD_NODENAME=node1",
        "SLURM_CLUSTER_NAME=testcluster",
        "SLURM_CPUS_ON_NODE=2",
        "SLURM_CPUS_PER_TASK=1",
        "SLURM_GPUS_ON_NODE=2",
        &format!("SLURM_JOB_ID={id}"),
        &format!("SLURM_JOBID={id}"),
        "SLURM_JOB_GPUS=0,1",
        "SLURM_JOB_NAME=envdump",
        "SLURM_JOB_NODELIST=node1",
        "SLURM_JOB_NUM_NODES=1",
        "SLURM_JOB_PARTITION=gpu",
        "SLURM_NTASKS=2",
        "SLURM_NPROCS=2",
        "SLURM_PROCID=0",
        "SLURM_LOCALID=0",
        "SLURM_NODEID=0",
        &format!("SLURM_SUBMIT_DIR={}", c.work.display()),
    ] {
        assert!(env.lines().any(|l| l == line), "missing {line} in:\n{env}");
    }
    assert!(env.lines().any(|l| l.starts_with("SLURM_TASK_PID=") && l.len() > 15), "{env}");
    // A job without GPUs sees none.
    let id = c.sbatch(&["-o", "nogpu.out", "--wrap", "echo \"[$CUDA_VISIBLE_DEVICES]\""]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("nogpu.out")), "[]\n");
}

#[test]
fn jobs_start_with_default_signal_handling() {
    let c = Cluster::start("0", "");
    // With SIGPIPE ignored, `yes` would report "Broken pipe" instead of dying quietly.
    let id = c.sbatch(&["-o", "pipe.out", "--wrap", "yes | head -n1; grep -E '^Sig(Ign|Blk)' /proc/self/status"]);
    c.wait_state(id, &["COMPLETED"], T);
    let out = read(&c.path("pipe.out"));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("y"), "{out}");
    let mask = |l: Option<&str>| u64::from_str_radix(l.unwrap().split('\t').nth(1).unwrap(), 16).unwrap();
    assert_eq!(mask(lines.next()), 0, "signals blocked in the job: {out}");
    // None of the standard signals (1-31) is ignored; SIGPIPE in particular.
    assert_eq!(mask(lines.next()) & 0x7fff_ffff, 0, "signals ignored in the job: {out}");
}

#[test]
fn a_burst_of_trivial_jobs_all_complete() {
    // Many supervisors start at once: none of their scripts may fail to exec (a script still
    // open for writing in a concurrently forked process makes exec fail with ETXTBSY).
    use slurmlet::api::types::{JobDescMsg, JobSubmitReq};
    let c = Cluster::start("8", "cpus = 64\n");
    let client = c.client();
    let mut ids = Vec::new();
    for _ in 0..600 {
        let job = JobDescMsg {
            script: Some("#!/bin/sh\ntrue\n".into()),
            current_working_directory: Some(c.path("").display().to_string()),
            environment: Some(vec!["PATH=/usr/bin:/bin".into()]),
            standard_output: Some("/dev/null".into()),
            ..Default::default()
        };
        ids.push(client.submit(&JobSubmitReq { script: None, job: Some(job) }).unwrap().job_id);
    }
    for id in ids {
        let j = c.wait_state(id, &["COMPLETED", "FAILED", "NODE_FAIL"], std::time::Duration::from_secs(120));
        assert_eq!(j.job_state, vec!["COMPLETED".to_string()], "job {id}: {:?}", j.exit_code);
    }
}

/// This machine's clock, in seconds since the epoch.
fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}
