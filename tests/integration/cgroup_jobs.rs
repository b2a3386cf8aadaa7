//! Jobs contained in cgroups, through the real binary and daemon, on this machine's own
//! hierarchies (as root): a job over its memory ends `OUT_OF_MEMORY` while its neighbour
//! lives, processes that left the job's session end with it, what a job used is read from
//! its groups, and a daemon killed with `kill -9` finds its contained jobs again. Skipped,
//! loudly, where this process may not make groups or a controller is missing.

use crate::common;
use common::device_nodes::Nodes;
use common::*;
use slurmlet::stepd::containment::cgroup::hierarchy::{Controller, Hierarchies};
use slurmlet::stepd::containment::cgroup::setup::base_for;
use std::path::PathBuf;
use std::time::Duration;

/// A daemon that contains its jobs in cgroups (memory and cores constrained), or why none
/// can be had here. (Its cluster removes the daemon's groups when dropped.)
struct Contained {
    /// The cluster.
    cluster: Option<Cluster>,
}

impl Contained {
    fn start(extra: &str) -> Result<Contained, String> {
        Contained::start_with(
            "0",
            &format!("[cgroup]\nconstrain_ram_space = true\n{extra}"),
            &[Controller::Memory, Controller::Freezer, Controller::CpuAccounting],
        )
    }

    /// A daemon with `gpus` and the `[cgroup]` table `table`, on a machine that has
    /// `needed`.
    fn start_with(gpus: &str, table: &str, needed: &[Controller]) -> Result<Contained, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: this process may not make cgroups".into());
        }
        let machine = Hierarchies::of_this_machine();
        for c in needed {
            if machine.choose(*c).is_none() {
                return Err(format!("no {} controller is mounted", c.name()));
            }
        }
        let c = Cluster::start(gpus, &format!("cpus = 2\n{table}"));
        Ok(Contained { cluster: Some(c) })
    }

    fn c(&self) -> &Cluster {
        self.cluster.as_ref().expect("the cluster")
    }
}

/// `sacct -P -n -j ID -o FIELDS` for the job's rows.
fn sacct(c: &Cluster, id: u32, fields: &str) -> Vec<String> {
    let out = c.run("sacct", &["-P", "-n", "-j", &id.to_string(), "-o", fields]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().map(String::from).collect()
}

/// A size as sacct and sstat print it (`103152K`, `50.50M`, `1.20G`), in KiB.
fn kib(text: &str) -> Option<f64> {
    let (number, unit) = text.split_at(text.len().checked_sub(1)?);
    let scale = match unit {
        "K" => 1.0,
        "M" => 1024.0,
        "G" => 1024.0 * 1024.0,
        _ => return None,
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

/// Whether a process whose command line is exactly `cmdline` (with spaces for NULs) runs.
fn running_cmdline(cmdline: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|b| String::from_utf8_lossy(&b).replace('\0', " ").trim_end() == cmdline)
    })
}

#[test]
fn a_job_over_its_memory_ends_out_of_memory_while_its_neighbour_completes() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("a_job_over_its_memory_ends_out_of_memory_while_its_neighbour_completes", &why),
    };
    let c = t.c();
    let beside = c.sbatch(&["--mem=64M", "-o", "beside.out", "--wrap", "sleep 3; echo lived"]);
    c.wait_state(beside, &["RUNNING"], Duration::from_secs(20));
    // tail holds its whole input, which has no line end: 200 MB.
    let oom = c.sbatch(&[
        "--mem=64M",
        "-o",
        "oom.out",
        "--wrap",
        "head -c 200000000 /dev/zero | tail >/dev/null; echo after",
    ]);
    let j = c.wait_state(oom, &["OUT_OF_MEMORY", "COMPLETED", "FAILED"], Duration::from_secs(30));
    assert_eq!(j.job_state, ["OUT_OF_MEMORY"], "reason {}", j.state_reason);
    assert_eq!(j.state_reason, "OutOfMemory");
    assert_eq!(c.state(beside), "RUNNING", "the job beside it keeps running");
    let out = c.wait_file("oom.out", Duration::from_secs(5));
    let line = format!(
        "slurmstepd-node1: error: Detected 1 oom_kill event in StepId={oom}.batch. Some of the step tasks have been OOM Killed."
    );
    assert!(out.lines().any(|l| l == line), "{out}");
    assert_eq!(
        sacct(c, oom, "JobID,State,ExitCode"),
        [format!("{oom}|OUT_OF_MEMORY|0:125"), format!("{oom}.batch|OUT_OF_MEMORY|0:125")]
    );
    let show = stdout(&c.run("scontrol", &["show", "job", &oom.to_string()]));
    assert!(show.contains("JobState=OUT_OF_MEMORY Reason=OutOfMemory") && show.contains("ExitCode=0:125"), "{show}");
    c.wait_state(beside, &["COMPLETED"], Duration::from_secs(20));
    assert_eq!(c.wait_file("beside.out", Duration::from_secs(5)), "lived\n");
}

/// Slurm's srun (`launch.c`, `_task_finish`) says a task whose step the kernel killed for
/// want of memory is `Out Of Memory`, once, and exits 1 (`srun.c`); its own job ends
/// `OUT_OF_MEMORY` with `0:125`, as slurmctld records a job completed with `SIG_OOM`
/// (`tests/fixtures/real-slurm-parity-third/FINDINGS-oom-and-gpu-types.md`, experiment A). A second task
/// that ends later is reported out of memory too, not by its own exit code.
#[test]
fn srun_says_a_task_ran_out_of_memory_and_exits_1() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("srun_says_a_task_ran_out_of_memory_and_exits_1", &why),
    };
    let c = t.c();
    let out = c.run(
        "srun",
        &[
            "--mem=64M",
            "-n2",
            "-J",
            "oomstep",
            "sh",
            "-c",
            "if [ $SLURM_PROCID = 0 ]; then head -c 200000000 /dev/zero | tail >/dev/null; else sleep 4; exit 3; fi",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.lines().any(|l| l == "srun: error: node1: task 0: Out Of Memory"), "{err}");
    assert!(!err.contains("Exited with exit code"), "{err}");
    let stepd_line = err.lines().position(|l| l.contains("oom_kill event in StepId=")).expect(&err);
    let srun_line = err.lines().position(|l| l.ends_with("Out Of Memory")).expect(&err);
    assert!(stepd_line < srun_line, "slurmstepd's line comes first, as on a cluster: {err}");
    let id: u32 = stdout(&c.run("sacct", &["-X", "-n", "-P", "--name=oomstep", "-o", "JobID"])).trim().parse().unwrap();
    // As a Slurm 26.05 with cgroups records it.
    let rows = sacct(c, id, "JobID,State,ExitCode,DerivedExitCode");
    assert_eq!(rows, [format!("{id}|OUT_OF_MEMORY|0:125|0:125"), format!("{id}.0|OUT_OF_MEMORY|0:125|")]);

    // In a batch job whose script goes on: the job completes, its derived code tells.
    let batch = c.sbatch(&[
        "--mem=64M",
        "-o",
        "batch-oom.out",
        "--wrap",
        "srun sh -c 'head -c 200000000 /dev/zero | tail >/dev/null'; echo rc=$?",
    ]);
    c.wait_state(batch, &["COMPLETED", "FAILED", "OUT_OF_MEMORY"], std::time::Duration::from_secs(30));
    let out = c.wait_file("batch-oom.out", std::time::Duration::from_secs(5));
    assert!(out.contains("srun: error: node1: task 0: Out Of Memory\nrc=1"), "{out}");
    let rows = sacct(c, batch, "JobID,State,ExitCode,DerivedExitCode");
    assert_eq!(rows[0], format!("{batch}|COMPLETED|0:0|0:125"), "{rows:?}");
    assert!(rows.contains(&format!("{batch}.0|OUT_OF_MEMORY|0:125|")), "{rows:?}");
}

#[test]
fn processes_that_left_the_jobs_session_end_with_it() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("processes_that_left_the_jobs_session_end_with_it", &why),
    };
    let c = t.c();
    // Each job double-forks a `sleep` into a session of its own, out of its process group
    // and session, as a daemonising program does. (The time limit has a test of its own.)
    // Each is told by its duration, unique to this test and run.
    let cmd = |tag: &str| format!("sleep 1000.{}{}", std::process::id(), tag.len());
    let escapee = |tag: &str| format!("setsid sh -c '{} &'; sleep 1000", cmd(tag));
    let gone = |tag: &str| {
        let cmdline = cmd(tag);
        wait_for(&format!("{cmdline} to end"), Duration::from_secs(15), || {
            until(!running_cmdline(&cmdline), || "it runs".into())
        })
    };

    // scancel.
    let id = c.sbatch(&["--wrap", &escapee("cancel")]);
    wait_for("the escapee", Duration::from_secs(15), || until(running_cmdline(&cmd("cancel")), || "not yet".into()));
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(20));
    gone("cancel");

    // A requeue: the first run's escapee ends before the job runs again.
    let id = c.sbatch(&["--requeue", "--wrap", &escapee("requeue")]);
    wait_for("the escapee", Duration::from_secs(15), || until(running_cmdline(&cmd("requeue")), || "not yet".into()));
    assert!(c.run("scontrol", &["requeue", &id.to_string()]).status.success());
    gone("requeue");
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
}

#[test]
fn processes_that_left_the_jobs_session_end_at_its_time_limit() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("processes_that_left_the_jobs_session_end_at_its_time_limit", &why),
    };
    let c = t.c();
    let escapee = format!("sleep 1000.{}8", std::process::id());
    // A minute is the shortest limit Slurm's words can give.
    let id = c.sbatch(&["-t", "1", "--wrap", &format!("setsid sh -c '{escapee} &'; sleep 1000")]);
    wait_for("the escapee", Duration::from_secs(15), || until(running_cmdline(&escapee), || "not yet".into()));
    c.wait_state(id, &["TIMEOUT"], Duration::from_secs(100));
    wait_for("the escapee to end", Duration::from_secs(15), || until(!running_cmdline(&escapee), || "it runs".into()));
}

#[test]
fn what_a_job_used_is_read_from_its_groups() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("what_a_job_used_is_read_from_its_groups", &why),
    };
    let c = t.c();
    // dd holds a 100 MiB buffer it fills; the subshell spins one CPU until the kernel stops
    // it at 2 s of CPU time.
    let script = "dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null; (ulimit -t 2; while :; do :; done); true";
    let id = c.sbatch(&["--wrap", script]);
    c.wait_state(id, &["COMPLETED"], Duration::from_secs(60));
    let rows = sacct(c, id, "JobID,MaxRSS,TotalCPU,State");
    let batch = rows.iter().find(|r| r.starts_with(&format!("{id}.batch|"))).unwrap_or_else(|| panic!("{rows:?}"));
    let fields: Vec<&str> = batch.split('|').collect();
    let rss_kb = kib(fields[1]).unwrap_or_else(|| panic!("MaxRSS {batch}"));
    assert!((rss_kb - 102_400.0).abs() <= 10_240.0, "MaxRSS within 10% of 100 MiB: {batch}");
    // TotalCPU is `MM:SS.mmm`.
    let (min, sec) = fields[2].split_once(':').unwrap_or_else(|| panic!("TotalCPU {batch}"));
    let cpu = min.parse::<f64>().unwrap() * 60.0 + sec.parse::<f64>().unwrap();
    assert!((1.6..=2.4).contains(&cpu), "TotalCPU within 20% of 2 s: {batch}");
    assert_eq!(fields[3], "COMPLETED");
}

#[test]
fn a_daemon_killed_finds_its_contained_jobs_again() {
    let mut t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("a_daemon_killed_finds_its_contained_jobs_again", &why),
    };
    let escapee = format!("sleep 1000.{}9", std::process::id());
    let script =
        format!("dd if=/dev/zero of=/dev/null bs=50M count=1 2>/dev/null; setsid sh -c '{escapee} &'; sleep 1000");
    let id = t.c().sbatch(&["--mem=64M", "--wrap", &script]);
    wait_for("the escapee", Duration::from_secs(15), || until(running_cmdline(&escapee), || "not yet".into()));
    let c = t.cluster.as_mut().unwrap();
    c.kill_daemon();
    // Its groups, with its limit, outlive the daemon.
    let memory = Hierarchies::of_this_machine().choose(Controller::Memory).unwrap();
    let base = base_for(false, 0, &c.dir.path().join("state"));
    let job_group = memory.mount.join(&base).join(format!("job_{id}"));
    let limit = std::fs::read_to_string(job_group.join("memory.limit_in_bytes"))
        .or_else(|_| std::fs::read_to_string(job_group.join("memory.max")))
        .unwrap_or_else(|e| panic!("{}: {e}", job_group.display()));
    assert_eq!(limit.trim(), (64u64 << 20).to_string());
    c.start_daemon();
    assert_eq!(c.state(id), "RUNNING", "re-adopted");
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(20));
    wait_for("the escapee to end", Duration::from_secs(15), || until(!running_cmdline(&escapee), || "it runs".into()));
    let rows = sacct(c, id, "JobID,MaxRSS");
    let batch = rows.iter().find(|r| r.starts_with(&format!("{id}.batch|"))).unwrap_or_else(|| panic!("{rows:?}"));
    let rss_kb = kib(batch.split('|').nth(1).unwrap()).unwrap_or(0.0);
    assert!(rss_kb >= 45_000.0, "the peak from before the restart is kept: {batch}");
    wait_for("the job's groups to be removed", Duration::from_secs(10), || {
        until(!job_group.exists(), || format!("{} remains", job_group.display()))
    });
}

/// A job given GPU 0 of two whose device files are stand-in nodes opens its own and is
/// refused the other's, with `CUDA_VISIBLE_DEVICES` unset, through `plugin`'s hierarchy.
fn a_job_opens_only_its_own_gpu(test: &str, plugin: &str, mount: Option<PathBuf>) {
    let nodes = match (mount, Nodes::make(test)) {
        (None, _) => return skip(test, &format!("no hierarchy for {plugin} filters devices here")),
        (_, Err(why)) => return skip(test, &why),
        (Some(_), Ok(nodes)) => nodes,
    };
    let gpus = format!("{{ ids = [0, 1], files = [\"{}\", \"{}\"] }}", nodes.allowed.display(), nodes.denied.display());
    let table = format!("[cgroup]\ncgroup_plugin = \"{plugin}\"\nconstrain_devices = true");
    let t = match Contained::start_with(&gpus, &table, &[Controller::Devices]) {
        Ok(t) => t,
        Err(why) => return skip(test, &why),
    };
    let c = t.c();
    let script = format!(
        "unset CUDA_VISIBLE_DEVICES; for f in {} {}; do head -c 1 $f >/dev/null && echo \"$f opened\" || echo \"$f refused\"; done",
        nodes.allowed.display(),
        nodes.denied.display()
    );
    let id = c.sbatch(&["--gres=gpu:1", "-o", "devices.out", "--wrap", &script]);
    c.wait_state(id, &["COMPLETED", "FAILED"], Duration::from_secs(30));
    let out = c.wait_file("devices.out", Duration::from_secs(5));
    assert!(out.contains(&format!("{} opened", nodes.allowed.display())), "its own GPU: {out}");
    assert!(out.contains(&format!("{} refused", nodes.denied.display())), "the other GPU: {out}");
    assert!(out.contains("Operation not permitted"), "{out}");
    assert!(!c.log().contains("held by its process groups alone"), "{}", c.log());
}

#[test]
fn a_job_opens_only_its_own_gpu_through_v1_devices() {
    let mount = Hierarchies::of_this_machine().legacy.get("devices").cloned();
    a_job_opens_only_its_own_gpu("a_job_opens_only_its_own_gpu_through_v1_devices", "cgroup/v1", mount);
}

#[test]
fn a_job_opens_only_its_own_gpu_through_a_bpf_program_on_v2() {
    let mount = Hierarchies::of_this_machine().unified.map(|(m, _)| m);
    a_job_opens_only_its_own_gpu("a_job_opens_only_its_own_gpu_through_a_bpf_program_on_v2", "cgroup/v2", mount);
}

#[test]
fn a_jobs_steps_have_groups_of_their_own_below_the_jobs() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("a_jobs_steps_have_groups_of_their_own_below_the_jobs", &why),
    };
    let c = t.c();
    let id =
        c.sbatch(&["-o", "groups.out", "--wrap", "grep memory /proc/self/cgroup; srun grep memory /proc/self/cgroup"]);
    c.wait_state(id, &["COMPLETED", "FAILED"], Duration::from_secs(30));
    let out = c.wait_file("groups.out", Duration::from_secs(5));
    let base = base_for(false, 0, &c.dir.path().join("state"));
    for step in ["batch", "0"] {
        let group = format!("/{}/job_{id}/step_{step}", base.display());
        assert!(out.lines().any(|l| l.ends_with(&group)), "{group} in {out}");
    }
}

#[test]
fn a_process_adopted_into_the_extern_step_ends_with_the_job() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("a_process_adopted_into_the_extern_step_ends_with_the_job", &why),
    };
    let c = t.c();
    let id = c.sbatch(&["--wrap", "sleep 1000"]);
    c.wait_state(id, &["RUNNING"], Duration::from_secs(20));
    // As pam_slurm_adopt does with an ssh session: a process from outside is put in the job's
    // extern step.
    let freezer = Hierarchies::of_this_machine().choose(Controller::Freezer).unwrap();
    let base = base_for(false, 0, &c.dir.path().join("state"));
    let external = freezer.mount.join(&base).join(format!("job_{id}/step_extern"));
    // Made by the job's supervisor as it starts the script.
    wait_for("the extern step's group", Duration::from_secs(10), || {
        until(external.join("cgroup.procs").exists(), || format!("no {}", external.display()))
    });
    let mut adopted = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
    std::fs::write(external.join("cgroup.procs"), adopted.id().to_string())
        .unwrap_or_else(|e| panic!("{}: {e}", external.display()));
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(20));
    let status = adopted.wait().unwrap();
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    assert!(matches!(signal, Some(libc::SIGTERM | libc::SIGKILL)), "ended with the job: {status:?}");
}

#[test]
fn one_cpu_jobs_are_pinned_each_to_a_cpu_of_its_own() {
    let t = match Contained::start_with("0", "[cgroup]\nconstrain_cores = true", &[Controller::Cpuset]) {
        Ok(t) => t,
        Err(why) => return skip("one_cpu_jobs_are_pinned_each_to_a_cpu_of_its_own", &why),
    };
    let c = t.c();
    let script = "grep Cpus_allowed_list /proc/self/status; sleep 2";
    let ids: Vec<u32> =
        ["a.out", "b.out"].iter().map(|out| c.sbatch(&["-c", "1", "-o", out, "--wrap", script])).collect();
    for &id in &ids {
        c.wait_state(id, &["RUNNING", "COMPLETED"], Duration::from_secs(20));
    }
    let cpus: Vec<String> = ["a.out", "b.out"]
        .iter()
        .map(|out| {
            let text = c.wait_file(out, Duration::from_secs(10));
            text.trim().strip_prefix("Cpus_allowed_list:").unwrap_or_else(|| panic!("{text}")).trim().to_string()
        })
        .collect();
    for list in &cpus {
        assert!(list.parse::<u32>().is_ok(), "exactly one CPU: {list:?}");
    }
    assert_ne!(cpus[0], cpus[1], "two jobs running at once get different CPUs");
    for (id, list) in ids.iter().zip(&cpus) {
        let show = stdout(&c.run("scontrol", &["-d", "show", "job", &id.to_string()]));
        assert!(show.contains(&format!("CPU_IDs={list} ")), "scontrol agrees on {list}: {show}");
    }
}

#[test]
fn a_steps_average_memory_is_measured_while_it_runs() {
    // Looks every second: a job that holds 60 MB for 2 s, then little for 3 s.
    let t = match Contained::start_with(
        "0",
        "job_acct_gather_frequency = 1\n[cgroup]\nconstrain_ram_space = true",
        &[Controller::Memory],
    ) {
        Ok(t) => t,
        Err(why) => return skip("a_steps_average_memory_is_measured_while_it_runs", &why),
    };
    let c = t.c();
    let script = "sh -c 'x=$(head -c 60000000 /dev/zero | tr \"\\0\" a); sleep 2'; sleep 3";
    let id = c.sbatch(&["--wrap", script]);
    c.wait_state(id, &["COMPLETED"], Duration::from_secs(60));
    let rows = sacct(c, id, "JobID,MaxRSS,AveRSS,TRESUsageInAve");
    let batch = rows.iter().find(|r| r.starts_with(&format!("{id}.batch|"))).unwrap_or_else(|| panic!("{rows:?}"));
    let fields: Vec<&str> = batch.split('|').collect();
    let kb = |f: &str| kib(f).unwrap_or_else(|| panic!("{f} in {batch}"));
    let (max, ave) = (kb(fields[1]), kb(fields[2]));
    assert!(max > 50_000.0, "the peak: {batch}");
    assert!(ave > 0.0 && ave < max / 2.0, "the average of the looks, not the peak: {batch}");
    assert!(fields[3].ends_with(&format!("mem={}", fields[2])), "TRESUsageInAve's mem is the average: {batch}");
}

#[test]
fn on_the_unified_hierarchy_cgroup_kill_ends_what_left_the_session() {
    let test = "on_the_unified_hierarchy_cgroup_kill_ends_what_left_the_session";
    if Hierarchies::of_this_machine().unified.is_none() {
        return skip(test, "no cgroup2 mount");
    }
    let t = match Contained::start_with("0", "[cgroup]\ncgroup_plugin = \"cgroup/v2\"", &[Controller::Freezer]) {
        Ok(t) => t,
        Err(why) => return skip(test, &why),
    };
    let c = t.c();
    let escapee = format!("sleep 1000.{}7", std::process::id());
    let id = c.sbatch(&[
        "-o",
        "v2.out",
        "--wrap",
        &format!("cat /proc/self/cgroup; setsid sh -c '{escapee} &'; sleep 1000"),
    ]);
    wait_for("the escapee", Duration::from_secs(15), || until(running_cmdline(&escapee), || "not yet".into()));
    let out = c.wait_file("v2.out", Duration::from_secs(5));
    assert!(out.lines().any(|l| l.starts_with("0::/") && l.ends_with(&format!("/job_{id}/step_batch"))), "{out}");
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], Duration::from_secs(20));
    wait_for("the escapee to end", Duration::from_secs(15), || until(!running_cmdline(&escapee), || "it runs".into()));
}

#[test]
fn sstat_reads_a_running_steps_group() {
    let t = match Contained::start("") {
        Ok(t) => t,
        Err(why) => return skip("sstat_reads_a_running_steps_group", &why),
    };
    let c = t.c();
    // dd held 40 MiB and is gone by the time sstat looks: the processes alive then hold
    // little, but the step group's peak keeps it.
    let id = c.sbatch(&["--wrap", "srun sh -c 'dd if=/dev/zero of=/dev/null bs=40M count=1 2>/dev/null; sleep 60'"]);
    let row = wait_for("sstat's row", Duration::from_secs(30), || {
        let out = c.run("sstat", &["-n", "-P", "-j", &id.to_string(), "-o", "JobID,MaxRSS"]);
        let text = stdout(&out);
        let row = text.lines().find(|l| l.starts_with(&format!("{id}.0|"))).map(String::from);
        match row {
            Some(r) if r.split('|').nth(1).and_then(kib) > Some(40_000.0) => Ok(r),
            _ => Err(format!("{text}{}", stderr(&out))),
        }
    });
    assert!(row.starts_with(&format!("{id}.0|")), "{row}");
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
}
