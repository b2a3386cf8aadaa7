//! Slurm parity, third pass: what real clients and machines still tripped on, each test
//! checked against a real Slurm 26.05.5 (`scripts/real-slurm/`), through the real binary and
//! a real daemon.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

/// The `KEY=value` of a `scontrol show` listing.
fn field(text: &str, key: &str) -> String {
    let at = format!(" {key}=");
    let line = text.lines().map(|l| format!(" {}", l.trim_start())).find(|l| l.contains(&at));
    let line = line.unwrap_or_else(|| panic!("no {key} in:\n{text}"));
    let rest = &line[line.find(&at).unwrap() + at.len()..];
    rest.split(' ').next().unwrap_or_default().to_string()
}

/// The node's `AllocTRES` counts the memory its jobs hold, as Slurm's does
/// (`AllocTRES=cpu=1,mem=1000M,gres/gpu=1` for one GPU job under `DefMemPerCPU=1000`), with
/// `AllocMem` beside it; an idle node's is empty.
#[test]
fn the_nodes_alloc_tres_counts_memory() {
    let c = Cluster::start("2", "def_mem_per_cpu = 1000\n");
    let node = || stdout(&c.run("scontrol", &["show", "node"]));
    assert_eq!(field(&node(), "AllocTRES"), "");
    let gpu = c.sbatch(&["--gres=gpu:1", "--wrap", "sleep 300"]);
    c.wait_state(gpu, &["RUNNING"], T);
    let text = node();
    assert_eq!(field(&text, "AllocTRES"), "cpu=1,mem=1000M,gres/gpu=1", "{text}");
    assert_eq!(field(&text, "AllocMem"), "1000", "{text}");
    let job = stdout(&c.run("scontrol", &["show", "job", &gpu.to_string()]));
    assert_eq!(field(&job, "AllocTRES"), "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1", "{job}");
    let big = c.sbatch(&["-c", "2", "--mem=2500", "--wrap", "sleep 300"]);
    c.wait_state(big, &["RUNNING"], T);
    assert_eq!(field(&node(), "AllocTRES"), "cpu=3,mem=3500M,gres/gpu=1");
    assert!(c.run("scancel", &[&gpu.to_string(), &big.to_string()]).status.success());
}

/// `scontrol show job -d`'s `DerivedExitCode` is the highest raw wait status of the job's
/// steps, as Slurm's controller keeps it (an exit code counts over a signal), and agrees
/// with sacct's; a job without steps has `0:0` whatever its script's code. It is kept over
/// a restart of the daemon.
#[test]
fn derived_exit_code_is_the_highest_steps_status() {
    let mut c = Cluster::start("0", "");
    let derived = |c: &Cluster, id: u32| {
        field(&stdout(&c.run("scontrol", &["show", "job", "-d", &id.to_string()])), "DerivedExitCode")
    };
    let sacct = |c: &Cluster, id: u32| {
        let o = c.run("sacct", &["-X", "-n", "-P", "-j", &id.to_string(), "-o", "ExitCode,DerivedExitCode"]);
        stdout(&o).trim().to_string()
    };
    let three = c.sbatch(&["--wrap", "srun sh -c 'exit 3'; srun sh -c 'exit 5'; srun sh -c 'kill -9 $$'; exit 0"]);
    let killed = c.sbatch(&["--wrap", "srun sh -c 'kill -9 $$'; exit 0"]);
    let none = c.sbatch(&["--wrap", "exit 4"]);
    for id in [three, killed, none] {
        c.wait_state(id, &["COMPLETED", "FAILED"], T);
    }
    let seen = |c: &Cluster| [three, killed, none].map(|id| (derived(c, id), sacct(c, id)));
    let want = [
        ("5:0".to_string(), "0:0|5:0".to_string()),
        ("0:9".to_string(), "0:0|0:9".to_string()),
        ("0:0".to_string(), "4:0|0:0".to_string()),
    ];
    assert_eq!(seen(&c), want);
    // `-d` alone shows it, as Slurm's scontrol.
    let plain = stdout(&c.run("scontrol", &["show", "job", &three.to_string()]));
    assert!(!plain.contains("DerivedExitCode"), "{plain}");
    c.kill_daemon();
    c.start_daemon();
    assert_eq!(seen(&c), want, "after a restart");
}

/// The memory variables of salloc's command are those of its own options: Slurm's salloc
/// sets `SLURM_MEM_PER_CPU` for `--mem-per-cpu` and `SLURM_MEM_PER_NODE` for `--mem`, and
/// neither from `DefMemPerCPU`, which a batch job's variables do show.
#[test]
fn sallocs_memory_variables_are_those_asked_for() {
    let c = Cluster::start("0", "def_mem_per_cpu = 1000\n");
    let mem_vars = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["sh", "-c", "env | grep '^SLURM_MEM' | sort"]);
        let o = c.run("salloc", &all);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(mem_vars(&["-n1"]), "");
    assert_eq!(mem_vars(&["-n1", "--mem-per-cpu=500"]), "SLURM_MEM_PER_CPU=500\n");
    assert_eq!(mem_vars(&["-n1", "--mem=800"]), "SLURM_MEM_PER_NODE=800\n");
    let o = c
        .cmd("salloc")
        .env("SALLOC_MEM_PER_CPU", "700")
        .args(["-n1", "printenv", "SLURM_MEM_PER_CPU"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "700\n", "an input variable asks too: {}", stderr(&o));
    // A batch job's show the default, as Slurm's do.
    let id = c.sbatch(&["-o", "mem.out", "--wrap", "env | grep '^SLURM_MEM' | sort"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(c.wait_file("mem.out", T), "SLURM_MEM_PER_CPU=1000\n");
}

/// `--signal=SIG@T` without `B:` reaches the tasks of the job's srun steps, and neither the
/// batch shell nor the other processes it started, as Slurm 26.05 does.
#[test]
fn a_warning_signal_without_b_reaches_the_steps_only() {
    let c = Cluster::start("0", "");
    std::fs::write(
        c.path("warned.sh"),
        "#!/bin/bash\n\
         trap 'echo shell got USR1' USR1\n\
         srun bash -c 'trap \"echo step got USR1\" USR1; while [ ! -e stop ]; do sleep 0.1; done' &\n\
         bash -c 'trap \"echo child got USR1\" USR1; while [ ! -e stop ]; do sleep 0.1; done' &\n\
         while [ ! -e stop ]; do sleep 0.1; done\n\
         wait\n",
    )
    .unwrap();
    // A one-minute limit, USR1 50 s before it: about 10 s after the start.
    let id = c.sbatch(&["-t", "1", "--signal=USR1@50", "-o", "warned.out", "warned.sh"]);
    c.wait_state(id, &["RUNNING"], T);
    wait_for("the step's trap", Duration::from_secs(40), || {
        let out = std::fs::read_to_string(c.path("warned.out")).unwrap_or_default();
        until(out.contains("step got USR1"), || out.clone())
    });
    // Whatever else was to be signalled has been by now.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(c.work.join("stop"), "").unwrap();
    let j = c.wait_state(id, &["COMPLETED", "FAILED", "TIMEOUT"], T);
    let out = read(&c.path("warned.out"));
    assert_eq!(j.job_state, vec!["COMPLETED"], "{out}");
    // The step's `sleep` dies of it too, and its bash says so, as under Slurm.
    assert!(out.lines().any(|l| l == "step got USR1"), "{out}");
    assert!(!out.contains("shell got") && !out.contains("child got"), "{out}");
}

/// The keys of a step in Slurm 26.05.5's `squeue -s --json`, in its order.
const STEP_KEYS: &[&str] = &[
    "array",
    "cluster",
    "container",
    "container_id",
    "container_type",
    "cpu",
    "tres",
    "name",
    "network",
    "nodes",
    "number_cpus",
    "number_tasks",
    "partition",
    "reserved_ports",
    "time",
    "srun",
    "state",
    "sluid",
    "id",
    "stderr",
    "stdin",
    "stdout",
    "stdin_expanded",
    "stdout_expanded",
    "stderr_expanded",
    "submit_line",
    "task",
    "user",
];

/// `squeue -s --json` and `scontrol show step --json` print the steps as Slurm 26.05's data
/// parser does: ids the jobs' own (`42.0`), the array and task beside them, the command line
/// in `meta`. With `--json`, `A_T.S` is step S of job A whatever its task, and an id that
/// names no step lists none with exit 0; in text, `A_T.S` is step S of job A when job A is
/// task T, else `Job step A_T.S not found`, as 26.05 answers it.
#[test]
fn steps_print_as_slurms_json() {
    let c = Cluster::start("0", "");
    let a = c.sbatch(&["--array=0-1", "-o", "/dev/null", "--wrap", "srun sleep 60"]);
    let b = a + 1;
    let want_ids = [format!("{a}_0.0"), format!("{a}_0.batch"), format!("{a}_1.0"), format!("{a}_1.batch")];
    wait_for("the steps to run", T, || {
        let seen: Vec<String> = stdout(&c.run("squeue", &["-s", "-h", "-o", "%i"])).lines().map(String::from).collect();
        until(seen == want_ids, || format!("{seen:?}"))
    });
    let json = |cmd: &str, args: &[&str]| {
        let o = c.run(cmd, args);
        assert_eq!(o.status.code(), Some(0), "{cmd} {args:?}: {}", stderr(&o));
        let text = stdout(&o);
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (doc, text)
    };
    let ids = |doc: &serde_json::Value| -> Vec<String> {
        doc["steps"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
    };
    let (doc, text) = json("squeue", &["-s", "--json"]);
    assert_eq!(ids(&doc), [format!("{a}.batch"), format!("{a}.0"), format!("{b}.batch"), format!("{b}.0")]);
    assert_eq!(doc["meta"]["command"], serde_json::json!(["squeue", "-s", "--json"]));
    for key in ["last_update", "errors", "warnings"] {
        assert!(doc.get(key).is_some(), "{key} in {text}");
    }
    let step = &doc["steps"][3];
    // A step's keys, in the order printed (pretty: a step's own keys are 6 blanks in).
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("      \"").filter(|_| !l.starts_with("       ")))
        .filter_map(|l| l.split('"').next())
        .take(STEP_KEYS.len())
        .collect();
    assert_eq!(keys, STEP_KEYS, "{text}");
    assert_eq!(step["array"], serde_json::json!({"job_id": a, "task_id": 1}));
    assert_eq!(step["cluster"], "testcluster");
    assert_eq!(
        (step["name"].as_str(), step["nodes"].as_str(), step["state"][0].as_str()),
        (Some("sleep"), Some("node1"), Some("RUNNING"))
    );
    assert_eq!((step["number_tasks"].as_u64(), step["task"]["distribution"].as_str()), (Some(1), Some("Cyclic")));
    assert!(step["tres"]["allocation"].as_str().unwrap().starts_with("cpu=1,"), "{step}");
    assert_eq!(doc["steps"][2]["task"]["distribution"], "Unknown", "a batch step's");

    let (doc, _) = json("scontrol", &["show", "step", "--json"]);
    assert_eq!(ids(&doc).len(), 4);
    assert_eq!(doc["meta"]["command"], serde_json::json!(["scontrol", "show", "step", "--json"]));
    // The task is not looked at with --json: step 0 of job A, which is task 0.
    let (doc, _) = json("scontrol", &["show", "step", &format!("{a}_1.0"), "--json"]);
    assert_eq!(ids(&doc), [format!("{a}.0")]);
    let (doc, _) = json("scontrol", &["--json", "show", "step", "99999.0"]);
    assert_eq!(doc["steps"], serde_json::json!([]));
    // In text it is: job A is task 0, not task 1.
    let o = c.run("scontrol", &["show", "step", &format!("{a}_1.0")]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), format!("Job step {a}_1.0 not found\n")));
    let o = c.run("scontrol", &["-o", "show", "step", &format!("{a}_0.0")]);
    assert!(stdout(&o).starts_with(&format!("StepId={a}_0.0 ")), "{}", stdout(&o));
    assert!(c.run("scancel", &[&a.to_string()]).status.success());
}

/// A cancelled job's step that has not ended yet is still listed, with its job's state, as
/// Slurm's controller lists the steps of a completing job.
#[test]
fn a_completing_jobs_steps_are_listed() {
    let mut c = Cluster::configure("0", "");
    let text = read(&c.config).replace("kill_wait = 2", "kill_wait = 30");
    std::fs::write(&c.config, text).unwrap();
    c.start_daemon();
    let id = c.sbatch(&[
        "-o",
        "/dev/null",
        "--wrap",
        "srun bash -c \"trap '' TERM; echo up > ready; while [ ! -e stop ]; do sleep 0.1; done\"",
    ]);
    let listed = || stdout(&c.run("squeue", &["-s", "-h", "-O", "StepId,StepState"]));
    // Once its step ignores SIGTERM, the job is cancelled.
    c.wait_file("ready", T);
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    assert_eq!(stdout(&c.run("squeue", &["-h", "-j", &id.to_string(), "-o", "%T"])), "COMPLETING\n");
    let seen = listed();
    let step = seen.lines().find(|l| l.starts_with(&format!("{id}.0 "))).unwrap_or_else(|| panic!("{seen}"));
    assert!(step.trim_end().ends_with("COMPLETING"), "{seen}");
    let o = c.run("scontrol", &["-o", "show", "step", &format!("{id}.0")]);
    assert!(stdout(&o).contains(" State=COMPLETING "), "{}", stdout(&o));
    std::fs::write(c.work.join("stop"), "").unwrap();
    c.wait_state(id, &["CANCELLED"], T);
    assert_eq!(listed(), "");
}

/// `--get-user-env` starts the batch script from the user's login environment, as Slurm
/// 26.05 does: the user's login shell runs as the user, what it exports is added where the
/// submitted environment has nothing, and `--export=NONE` implies it. A profile that hangs
/// costs the job its timeout and a line in its error output, never the daemon.
#[test]
fn get_user_env_adds_the_login_environment() {
    if !common::system::is_root("get_user_env_adds_the_login_environment") {
        return;
    }
    use std::os::unix::fs::chown;
    let shared = common::system::Shared::start("");
    let alice = shared.user("ue");
    let profile = alice.home.join(".profile");
    std::fs::write(
        &profile,
        "echo noise from the profile\nexport FROM_PROFILE=yes MINE=profile\nid -u > \"$HOME/ran-as\"\n",
    )
    .unwrap();
    chown(&profile, Some(alice.uid), Some(alice.gid)).unwrap();
    let show = "echo \"[${FROM_PROFILE-}][${MINE-}][${SLURM_GET_USER_ENV-unset}]\"";
    let run = |out: &str, args: &[&str]| {
        let mut cmd = shared.command_as(&alice, "sbatch", &[&["--parsable", "-o", out, "--wrap", show], args].concat());
        let o = cmd.env("MINE", "submitted").output().unwrap();
        let (stdout, stderr) = common::system::text(&o);
        assert!(o.status.success(), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}: done, so nothing is said");
        let id: u32 = stdout.trim().parse().unwrap();
        shared.wait_state(id, "COMPLETED");
        read(&alice.home.join(out))
    };
    assert_eq!(run("asked.out", &["--get-user-env"]), "[yes][submitted][unset]\n");
    assert_eq!(read(&alice.home.join("ran-as")).trim(), alice.uid.to_string(), "the profile ran as the user");
    assert_eq!(run("long.out", &["--get-user-env=10L"]), "[yes][submitted][unset]\n");
    assert_eq!(run("none.out", &["--export=NONE"]), "[yes][profile][unset]\n");
    assert_eq!(run("plain.out", &[]), "[][submitted][unset]\n");

    // A profile that never ends: the job starts after the timeout, with what was submitted.
    std::fs::write(&profile, "sleep 1000\n").unwrap();
    let started = std::time::Instant::now();
    let id = shared.sbatch_as(&alice, &["--get-user-env=2", "-o", "hung.out", "--wrap", show]);
    shared.wait_state(id, "COMPLETED");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let out = read(&alice.home.join("hung.out"));
    assert!(out.contains("--get-user-env:") && out.contains("the job runs with the submitted environment"), "{out}");
    assert!(out.lines().any(|l| l == "[][][unset]"), "{out}");
    assert!(!process_running("sleep 1000"), "the profile's processes were killed");
}

/// A user who owns the directory another user's home is in can swap that home for a link
/// into a directory only root may reach. The login shell of `--get-user-env` enters the home
/// as its user, never as root, so it does not find itself inside that directory.
#[test]
fn the_login_shell_enters_the_home_as_its_user() {
    if !common::system::is_root("the_login_shell_enters_the_home_as_its_user") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let shared = common::system::Shared::start("");
    let alice = shared.user("uea");
    let bob_home = alice.home.join("bob");
    let bob = common::system::User::create(&format!("sl{}ueb", std::process::id() % 100_000), &bob_home);
    // Root's: a directory only root may pass, with an open one inside.
    let locked = shared.dir.path().join("locked");
    std::fs::create_dir_all(locked.join("inner")).unwrap();
    std::fs::write(locked.join("inner/secret"), "").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(locked.join("inner"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Bob's shell says what the directory it starts in holds.
    let shell = shared.dir.path().join("look-shell");
    std::fs::write(
        &shell,
        "#!/bin/sh\nprintf '\\nSLURMLET_LOGIN_ENVIRONMENT_FOLLOWS\\n'\nprintf 'SEEN=%s\\0' \"$(ls 2>&1 | head -n 1)\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    let usermod = std::process::Command::new("usermod").arg("-s").arg(&shell).arg(&bob.name).output().unwrap();
    assert!(usermod.status.success(), "{}", String::from_utf8_lossy(&usermod.stderr));
    // Alice, who owns the directory bob's home is in, swaps it for a link.
    std::fs::remove_dir_all(&bob_home).unwrap();
    std::os::unix::fs::symlink(locked.join("inner"), &bob_home).unwrap();
    let out_dir = shared.dir.path().join("bob-out");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::set_permissions(&out_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = out_dir.join("seen.out");
    let mut cmd = shared.command_as(&bob, "sbatch", &["--parsable", "--get-user-env", "-o"]);
    cmd.current_dir(&out_dir).env("HOME", &out_dir);
    let o = cmd.arg(&out).args(["--wrap", "echo \"[$SEEN]\""]).output().unwrap();
    let (stdout, stderr) = common::system::text(&o);
    assert!(o.status.success(), "{stderr}");
    let id: u32 = stdout.trim().parse().unwrap();
    shared.wait_state(id, "COMPLETED");
    let seen = read(&out);
    assert!(seen.starts_with('[') && !seen.contains("secret"), "the shell started inside root's directory: {seen}");
}
