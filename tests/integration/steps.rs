//! srun and salloc against a real daemon with 4 fake GPUs: steps inside batch jobs and
//! allocations, srun's own allocations, GPU isolation, exit codes and error texts.

use crate::common;
use common::T;
use common::{process_running, until, wait_for, Cluster};
use std::process::Output;
use std::time::Duration;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn cluster() -> Cluster {
    Cluster::start("4", "")
}

fn run(c: &Cluster, cmd: &str, args: &[&str]) -> Output {
    c.run(cmd, args)
}

/// Submits `script` (written to `name`) and returns the text of its output once it ended.
fn batch(c: &Cluster, name: &str, script: &str) -> String {
    std::fs::write(c.path(name), script).unwrap();
    let id = c.sbatch(&["-o", "out-%j.txt", name]);
    c.wait_state(id, &["COMPLETED", "FAILED"], Duration::from_secs(30));
    common::read(&c.path(&format!("out-{id}.txt")))
}

#[test]
fn srun_in_a_batch_job_starts_labelled_tasks_with_their_step_variables() {
    let c = cluster();
    let out = batch(
        &c,
        "two.sh",
        "#!/bin/bash\n#SBATCH -n2\n#SBATCH --gres=gpu:2\nsrun -n2 -l bash -c 'echo $SLURM_PROCID' | sort\n\
         srun -l bash -c 'echo step=$SLURM_STEP_ID tasks=$SLURM_STEP_NUM_TASKS local=$SLURM_LOCALID gtids=$SLURM_GTIDS gpus=$SLURM_STEP_GPUS cvd=$CUDA_VISIBLE_DEVICES label=$SLURM_LABELIO job=$SLURM_JOB_ID' | sort\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["0: 0", "1: 1"], "{out}");
    assert!(lines[2].starts_with("0: step=1 tasks=2 local=0 gtids=0,1 gpus="), "{out}");
    assert!(lines[3].starts_with("1: step=1 tasks=2 local=1 gtids=0,1 gpus="), "{out}");
    // Without a GPU request the step sees the job's two GPUs.
    let gpus = lines[2].split("gpus=").nth(1).unwrap().split(' ').next().unwrap();
    assert_eq!(gpus.split(',').count(), 2, "{out}");
    assert!(lines[2].contains(&format!("cvd={gpus} label=1")), "{out}");
}

#[test]
fn two_background_steps_pinned_to_the_node_both_run() {
    let c = cluster();
    let out = batch(
        &c,
        "bg.sh",
        "#!/bin/bash\n#SBATCH -n2\nsrun -n1 -w node1 bash -c 'sleep 0.3; echo A $SLURM_STEP_ID' &\n\
         srun -n1 -w node1 bash -c 'sleep 0.3; echo B $SLURM_STEP_ID' &\nwait\necho done\n",
    );
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("A ") && lines[1].starts_with("B ") && lines[2] == "done", "{out}");
    let steps: std::collections::BTreeSet<&str> = lines[..2].iter().map(|l| &l[2..]).collect();
    assert_eq!(steps.len(), 2, "each background srun is its own step: {out}");
}

#[test]
fn srun_outside_an_allocation_gets_its_own_gpu_and_releases_it() {
    let c = cluster();
    let spawn = || {
        c.cmd("srun")
            // Each holds its GPU until both run (or 10 s pass).
            .args([
                "--gres=gpu:1",
                "bash",
                "-c",
                "touch started-$$; for i in $(seq 200); do [ $(ls started-* | wc -l) -ge 2 ] && break; sleep 0.05; done; echo $CUDA_VISIBLE_DEVICES",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    let (ga, gb) = (text(&a.stdout).trim().to_string(), text(&b.stdout).trim().to_string());
    assert!(ga.parse::<u32>().is_ok() && gb.parse::<u32>().is_ok(), "one GPU each: {ga:?} {gb:?}");
    assert_ne!(ga, gb, "two concurrent sruns must not share a GPU");
    // Both allocations ended with their steps (the daemon records an end as its
    // supervisor closes its end pipe, which may come just after srun has its status).
    wait_for("both allocations to be recorded ended", Duration::from_secs(5), || {
        let q = run(&c, "squeue", &["-h", "-t", "all", "-o", "%T %j"]);
        let states = text(&q.stdout);
        until(states.matches("COMPLETED bash").count() == 2, || states.clone())
    });
}

#[test]
fn salloc_runs_the_command_with_the_allocation_and_its_steps_see_its_gpus() {
    let c = cluster();
    let out = run(&c, "salloc", &["--gres=gpu:2", "srun", "env"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let env = text(&out.stdout);
    let var = |name: &str| {
        env.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap_or_else(|| panic!("no {name} in {env}"))
    };
    // The step's GPUs; SLURM_JOB_GPUS is a batch job's, unset in an allocation's steps as in
    // Slurm 26.05.
    assert_eq!(var("CUDA_VISIBLE_DEVICES"), var("SLURM_STEP_GPUS"));
    assert!(!env.lines().any(|l| l.starts_with("SLURM_JOB_GPUS=")), "{env}");
    assert_eq!(var("CUDA_VISIBLE_DEVICES").split(',').count(), 2);
    assert_eq!(var("SLURM_STEP_ID"), "0");
    let err = text(&out.stderr);
    let id = var("SLURM_JOB_ID");
    assert!(err.contains(&format!("salloc: Granted job allocation {id}")), "{err}");
    assert!(err.contains(&format!("salloc: Relinquishing job allocation {id}")), "{err}");
    // The command's exit code is salloc's.
    let out = run(&c, "salloc", &["sh", "-c", "exit 5"]);
    assert_eq!(out.status.code(), Some(5));
}

#[test]
fn exit_codes_and_error_lines_follow_slurm() {
    let c = cluster();
    let out = run(&c, "srun", &["false"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "srun: error: node1: task 0: Exited with exit code 1\n");
    let out = run(&c, "srun", &["bash", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(text(&out.stderr).contains("srun: error: node1: task 0: Exited with exit code 7"));
    let out = run(&c, "srun", &["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("srun: error: node1: task 0: Exited with exit code 2"), "{err}");
    assert!(err.contains("slurmstepd-node1: error: execve(): no-such-command: No such file or directory"), "{err}");
    let out = run(&c, "srun", &["-n2", "-l", "bash", "-c", "exit $SLURM_PROCID"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "srun: error: node1: task 1: Exited with exit code 1\n");
    let out = run(&c, "srun", &["bash", "-c", "echo out; echo err >&2"]);
    assert_eq!((text(&out.stdout).as_str(), text(&out.stderr).as_str()), ("out\n", "err\n"));
}

#[test]
fn bad_requests_get_slurms_errors() {
    let c = cluster();
    let out = run(&c, "srun", &["-t", "abc", "hostname"]);
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "srun: error: Invalid --time specification\n");
    let out = run(&c, "srun", &["-p", "nope", "hostname"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "srun: error: invalid partition specified: nope\nsrun: error: Unable to allocate resources: Invalid partition name specified\n"
    );
    let out = run(&c, "srun", &["--gres=gpu:99", "hostname"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr)
        .ends_with("srun: error: Unable to allocate resources: Requested node configuration is not available\n"));
    // A step asking for more than its job holds is refused, not left waiting.
    let out = batch(&c, "big.sh", "#!/bin/bash\nsrun -n2 true; echo rc=$?\n");
    assert!(out.contains("More processors requested than permitted") && out.contains("rc=1"), "{out}");
}

#[test]
fn per_task_output_files_and_stdin() {
    let c = cluster();
    let out = run(&c, "srun", &["-n2", "-o", "task-%t-of-%j.txt", "bash", "-c", "echo me=$SLURM_PROCID"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut files: Vec<String> = std::fs::read_dir(&c.work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("task-"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(common::read(&c.path(&files[0])), "me=0\n");
    assert_eq!(common::read(&c.path(&files[1])), "me=1\n");
    let mut child = c
        .cmd("srun")
        .args(["cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"through the step\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stdout), "through the step\n");
}

#[test]
fn a_hundred_megabytes_of_output_arrive_intact() {
    let c = cluster();
    let big = c.path("big.bin");
    let mut data = Vec::with_capacity(100 << 20);
    let mut x: u32 = 12345;
    while data.len() < 100 << 20 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        data.extend_from_slice(&x.to_le_bytes());
    }
    std::fs::write(&big, &data).unwrap();
    let out = run(&c, "srun", &["cat", big.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout.len(), data.len());
    assert!(out.stdout == data, "the bytes differ");
}

#[test]
fn scancel_ends_the_steps_then_the_job() {
    let c = cluster();
    std::fs::write(c.path("long.sh"), "#!/bin/bash\nsrun sleep 101\necho after\n").unwrap();
    let id = c.sbatch(&["-o", "long.txt", "long.sh"]);
    c.wait_state(id, &["RUNNING"], Duration::from_secs(10));
    wait_for("the step to start", T, || until(process_running("^sleep 101$"), String::new));
    assert!(run(&c, "scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(10));
    let out = c.wait_file("long.txt", Duration::from_secs(5));
    assert!(out.contains(&format!("*** STEP {id}.0 ON node1 CANCELLED AT")), "{out}");
}

#[test]
fn a_client_that_dies_takes_its_step_and_allocation_with_it() {
    let c = cluster();
    let mut srun = c.cmd("srun").args(["--gres=gpu:1", "sleep", "77.5"]).spawn().unwrap();
    let running = || process_running("^sleep 77.5$");
    wait_for("the step to start", T, || until(running(), String::new));
    srun.kill().unwrap();
    srun.wait().unwrap();
    wait_for("the task to end with its srun", T, || until(!running(), String::new));
    wait_for_empty_queue(&c, "the allocation to end with its srun");
}

/// Waits until squeue lists no pending or running job.
fn wait_for_empty_queue(c: &Cluster, what: &str) {
    wait_for(what, T, || {
        let listed = text(&run(c, "squeue", &["-h", "-o", "%i %T"]).stdout);
        until(listed.trim().is_empty(), || listed)
    });
}

#[test]
fn running_steps_survive_a_daemon_restart_and_keep_their_gpus() {
    let mut c = cluster();
    std::fs::write(
        c.path("keep.sh"),
        "#!/bin/bash\n#SBATCH -n2\n#SBATCH --gres=gpu:2\n\
         srun -n1 --gres=gpu:1 bash -c 'echo A $CUDA_VISIBLE_DEVICES; echo x > ready; while [ ! -e go ]; do sleep 0.05; done; sleep 0.5; echo A done' &\n\
         while [ ! -e go ]; do sleep 0.05; done\n\
         srun -n1 --gres=gpu:1 bash -c 'echo B $CUDA_VISIBLE_DEVICES'\n\
         srun -n1 --gres=gpu:2 bash -c 'echo C $CUDA_VISIBLE_DEVICES'\nwait\n",
    )
    .unwrap();
    let id = c.sbatch(&["-o", "keep.txt", "keep.sh"]);
    c.wait_file("ready", Duration::from_secs(10));
    c.kill_daemon();
    c.start_daemon();
    std::fs::write(c.path("go"), "").unwrap();
    c.wait_state(id, &["COMPLETED"], Duration::from_secs(30));
    let out = common::read(&c.path("keep.txt"));
    let line = |tag: &str| out.lines().position(|l| l.starts_with(tag)).unwrap_or_else(|| panic!("no {tag} in {out}"));
    let gpu = |tag: &str| out.lines().nth(line(tag)).unwrap()[2..].to_string();
    // A's output went on through the restart; B got the other GPU at once; C, which needs
    // both, waited for A.
    assert_ne!(gpu("A "), gpu("B "), "{out}");
    assert!(line("A done") < line("C "), "{out}");
    assert_eq!(gpu("C ").split(',').count(), 2, "{out}");
}

#[test]
fn scancel_of_a_step_signals_or_ends_only_that_step() {
    let c = cluster();
    std::fs::write(
        c.path("stepped.sh"),
        "#!/bin/bash\nsrun bash -c 'trap \"echo got USR1\" USR1; echo x > ready; while true; do sleep 0.05; done'\necho after rc=$?\n",
    )
    .unwrap();
    let id = c.sbatch(&["-o", "stepped.txt", "stepped.sh"]);
    c.wait_file("ready", Duration::from_secs(10));
    let step = format!("{id}.0");
    let out = run(&c, "scancel", &["-s", "USR1", &step]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    wait_for("the signal to reach the step's task", T, || {
        let out = std::fs::read_to_string(c.path("stepped.txt")).unwrap_or_default();
        until(out.contains("got USR1"), || out)
    });
    assert!(run(&c, "scancel", &[&step]).status.success());
    c.wait_state(id, &["COMPLETED"], Duration::from_secs(10));
    let out = common::read(&c.path("stepped.txt"));
    assert!(out.contains(&format!("*** STEP {id}.0 ON node1 CANCELLED AT")), "{out}");
    assert!(out.contains("after rc="), "the batch script goes on after its step: {out}");
    let unknown = run(&c, "scancel", &[&format!("{id}.7")]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        text(&unknown.stderr).contains(&format!("Kill job error on job step id {id}.7")),
        "{}",
        text(&unknown.stderr)
    );
}

#[test]
fn salloc_no_shell_keeps_the_allocation_for_later_steps_until_scancel() {
    let c = cluster();
    let out = run(&c, "salloc", &["--no-shell", "--gres=gpu:1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let id: u32 = err.trim().rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{err}"));
    assert_eq!(c.state(id), "RUNNING");
    let step = run(&c, "srun", &["--jobid", &id.to_string(), "bash", "-c", "echo $SLURM_JOB_ID $CUDA_VISIBLE_DEVICES"]);
    assert!(step.status.success(), "{}", text(&step.stderr));
    let seen = text(&step.stdout);
    assert!(
        seen.starts_with(&format!("{id} ")) && seen.trim().split(' ').nth(1).unwrap().parse::<u32>().is_ok(),
        "{seen}"
    );
    assert_eq!(c.state(id), "RUNNING", "the allocation outlives its steps");
    assert!(run(&c, "scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(10));
}

#[test]
fn kill_on_bad_exit_wait_and_test_only() {
    let c = cluster();
    // -K: task 1 fails, so task 0's long sleep is cut short.
    let t = std::time::Instant::now();
    let out = run(&c, "srun", &["-K", "-n2", "bash", "-c", "[ $SLURM_PROCID = 1 ] && exit 3; exec sleep 30"]);
    assert!(t.elapsed() < Duration::from_secs(20), "-K did not end the step");
    let err = text(&out.stderr);
    assert!(err.contains("task 1: Exited with exit code 3") && err.contains("CANCELLED AT"), "{err}");
    assert_ne!(out.status.code(), Some(0));
    // -W 1: task 1 ends at once, task 0 gets one more second.
    let t = std::time::Instant::now();
    let out = run(&c, "srun", &["-W", "1", "-n2", "bash", "-c", "[ $SLURM_PROCID = 1 ] && exit 0; exec sleep 30"]);
    assert!(t.elapsed() < Duration::from_secs(20), "-W did not end the step");
    assert!(text(&out.stderr).contains("task 0: Terminated"), "{}", text(&out.stderr));
    // --test-only: an estimate, and no job.
    let out = run(&c, "srun", &["--test-only", "--gres=gpu:1", "hostname"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("using 1 processors on nodes node1 in partition"), "{}", text(&out.stderr));
    let out = run(&c, "srun", &["--prolog=/bin/true", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("srun: error: --prolog is not supported"), "{}", text(&out.stderr));
}

#[test]
fn scancel_of_an_interactive_allocation_signals_its_command_with_kill_command() {
    let c = cluster();
    let salloc = c
        .cmd("salloc")
        .args(["--kill-command=KILL", "bash", "-c", "echo $SLURM_JOB_ID > alloc-id; exec sleep 60"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id: u32 = c.wait_file("alloc-id", Duration::from_secs(10)).trim().parse().unwrap();
    assert!(run(&c, "scancel", &[&id.to_string()]).status.success());
    let out = salloc.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(err.contains(&format!("salloc: Job allocation {id} has been revoked.")), "{err}");
    assert_eq!(out.status.code(), Some(128 + libc::SIGKILL), "{err}");
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(10));
}

#[test]
fn sigterm_to_srun_ends_its_step_and_releases_its_allocation() {
    let c = cluster();
    let srun = c.cmd("srun").args(["sleep", "78.5"]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let running = || process_running("^sleep 78.5$");
    wait_for("the step to start", T, || until(running(), String::new));
    // SAFETY: kill on a child we started.
    unsafe { libc::kill(srun.id() as i32, libc::SIGTERM) };
    let out = srun.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(err.contains("srun: forcing job termination") && err.contains("CANCELLED AT"), "{err}");
    assert!(!running(), "the task outlived its step");
    wait_for_empty_queue(&c, "the allocation to end with srun");
}

#[test]
fn the_time_limit_ends_a_running_step_with_its_own_line_then_the_job() {
    let c = cluster();
    std::fs::write(
        c.path("limited.sh"),
        "#!/bin/bash\n#SBATCH -t 1\nsrun bash -c 'trap \"echo step got TERM; exit 9\" TERM; while :; do sleep 0.1; done'\n",
    )
    .unwrap();
    let id = c.sbatch(&["-o", "limited.txt", "limited.sh"]);
    c.wait_state(id, &["TIMEOUT"], Duration::from_secs(100));
    let out = common::read(&c.path("limited.txt"));
    assert!(
        out.contains(&format!("*** STEP {id}.0 ON node1 CANCELLED AT")) && out.contains("DUE TO TIME LIMIT ***"),
        "{out}"
    );
    assert!(out.contains("step got TERM"), "the step's task got SIGTERM and its output arrived: {out}");
    assert!(out.contains(&format!("*** JOB {id} ON node1 CANCELLED AT")), "{out}");
}

#[test]
fn a_pending_allocation_whose_client_left_with_the_daemon_is_cancelled_on_restart() {
    let mut c = cluster();
    let busy = c.sbatch(&["--gres=gpu:4", "--wrap", "sleep 30"]);
    c.wait_state(busy, &["RUNNING"], Duration::from_secs(10));
    let salloc = c.cmd("salloc").args(["--gres=gpu:1", "true"]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let pending = wait_for("a pending allocation", T, || {
        let listed = text(&run(&c, "squeue", &["-h", "-t", "PD", "-o", "%i"]).stdout);
        listed.trim().parse::<u32>().map_err(|_| listed)
    });
    c.kill_daemon();
    let out = salloc.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    c.start_daemon();
    assert_eq!(c.state(pending), "CANCELLED");
    assert_eq!(c.state(busy), "RUNNING", "the batch job was re-adopted");
}

#[test]
fn a_cancel_interrupted_by_a_daemon_crash_is_finished_by_the_next_daemon() {
    let mut c = cluster();
    std::fs::write(
        c.path("stubborn.sh"),
        "#!/bin/bash\nsrun bash -c 'trap \"\" TERM; echo x > ready; while :; do sleep 0.05; done'\nsleep 100\n",
    )
    .unwrap();
    let id = c.sbatch(&["-o", "stubborn.txt", "stubborn.sh"]);
    c.wait_file("ready", Duration::from_secs(10));
    // The step ignores SIGTERM: the batch script's SIGTERM waits for the step's KillWait.
    assert!(run(&c, "scancel", &[&id.to_string()]).status.success());
    c.kill_daemon();
    c.start_daemon();
    let job = c.wait_state(id, &["CANCELLED"], Duration::from_secs(20));
    assert_eq!(job.job_state, vec!["CANCELLED"]);
}
