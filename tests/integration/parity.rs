//! Places where tools and scripts written for Slurm used to trip: each test is what real
//! Slurm 26.05 does (checked against it), through the real binary and a real daemon.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

/// Every command answers `--version` and `-V` with Slurm's one line, which tools match with
/// `slurm (\d+)\.(\d+)`, without a daemon; slurmlet's own version stays on `slurmlet
/// --version` and in `scontrol show config`.
#[test]
fn every_command_answers_version_with_slurms_line() {
    let mut c = Cluster::configure("0", "");
    let slurm_line = |out: &str| {
        let rest = out.strip_prefix("slurm ").and_then(|r| r.strip_suffix('\n'))?;
        let parts: Vec<&str> = rest.split('.').collect();
        (parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
            .then(|| rest.to_string())
    };
    let mut seen = Vec::new();
    for cmd in ["sbatch", "srun", "salloc", "squeue", "scancel", "sinfo", "scontrol", "sacct"] {
        for flag in ["--version", "-V"] {
            let o = c.run(cmd, &[flag]);
            let out = stdout(&o);
            assert!(o.status.success(), "{cmd} {flag}: {:?} {}", o.status, stderr(&o));
            assert_eq!(stderr(&o), "", "{cmd} {flag}");
            seen.push(slurm_line(&out).unwrap_or_else(|| panic!("{cmd} {flag} printed {out:?}")));
        }
    }
    seen.dedup();
    assert_eq!(seen.len(), 1, "the commands disagree on the release: {seen:?}");
    // Options after --version do not matter, as with getopt: it exits on reading it.
    assert_eq!(stdout(&c.run("squeue", &["--version", "-u", "nobody"])), format!("slurm {}\n", seen[0]));
    assert!(!c.socket.exists(), "--version started a daemon");

    let own = c.run("slurmlet", &["--version"]);
    assert_eq!(stdout(&own), format!("slurmlet {}\n", env!("CARGO_PKG_VERSION")));
    c.start_daemon();
    let config = stdout(&c.run("scontrol", &["show", "config"]));
    assert!(config.contains(&format!("SLURM_VERSION           = {}\n", seen[0])), "{config}");
    assert!(config.contains(&format!("SLURMLET_VERSION        = {}\n", env!("CARGO_PKG_VERSION"))), "{config}");
}

/// `#SBATCH-J name`: Slurm reads what follows `#SBATCH` whether or not a blank comes first,
/// and refuses a word that is no option (`#SBATCHX`) with exit 255.
#[test]
fn directives_need_no_blank_after_the_prefix() {
    let c = Cluster::start("0", "");
    std::fs::write(c.path("d1.sh"), "#!/bin/sh\n#SBATCH-J dashname\n#SBATCH--comment=c1\n#SBATCH-t5\necho hi\n")
        .unwrap();
    let id = c.sbatch(&["--hold", "d1.sh"]);
    let o = c.run("squeue", &["-h", "-j", &id.to_string(), "-o", "%j %k %l"]);
    assert_eq!(stdout(&o), "dashname c1 5:00\n", "{}", stderr(&o));

    std::fs::write(c.path("d2.sh"), "#!/bin/sh\n#SBATCH -J fine\n#SBATCHX -J xname\necho hi\n").unwrap();
    let o = c.run("sbatch", &["d2.sh"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(err.contains("d2.sh") && err.contains('3'), "names the file and line: {err}");
    assert!(err.contains("Invalid directive found in batch script: X"), "{err}");
    let o = c.run("squeue", &["-h", "-n", "fine,xname", "-o", "%i"]);
    assert_eq!(stdout(&o), "", "nothing was queued");
}

/// `scancel` of an id the daemon does not know (never was, or purged) is silent with exit 0,
/// as in Slurm 22.05, 24.11 and 26.05; `-v` says it.
#[test]
fn scancel_of_an_unknown_job_is_silent_unless_verbose() {
    let c = Cluster::start("0", "");
    let o = c.run("scancel", &["999999", "999998"]);
    assert_eq!((o.status.code(), stdout(&o), stderr(&o)), (Some(0), String::new(), String::new()));
    let o = c.run("scancel", &["-v", "999999"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stderr(&o),
        "scancel: Terminating job 999999\nscancel: error: Kill job error on job id 999999: Invalid job id specified\n"
    );
    // An id that is no id at all is still an error.
    let o = c.run("scancel", &["abc"]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(1), "scancel: error: Invalid job id abc\n".to_string()));
}

/// A step that traps `sig` and notes it in `step_got`; it says it is up in `step_up`.
fn trapping_step(sig: &str) -> String {
    format!(
        "srun bash -c 'exec 2>/dev/null; trap \"echo {sig} >> step_got\" {sig}; echo up > step_up; while :; do sleep 0.1; done'"
    )
}

fn lines(c: &Cluster, rel: &str) -> usize {
    std::fs::read_to_string(c.path(rel)).map(|t| t.lines().count()).unwrap_or(0)
}

/// `scancel --signal=SIG JOB` reaches the job's steps only, never the batch shell: a script
/// without a trap keeps running when its step is told to checkpoint.
#[test]
fn scancel_signal_reaches_the_steps_not_the_batch_shell() {
    let c = Cluster::start("0", "");
    let script =
        "#!/bin/bash\nsrun bash -c 'exec 2>/dev/null; trap \"echo got > step_got; exit 0\" USR1; echo up > step_up; while :; do sleep 0.1; done'\necho \"shell went on, step exit $?\"\n";
    std::fs::write(c.path("job.sh"), script).unwrap();
    let id = c.sbatch(&["-o", "job.out", "job.sh"]);
    c.wait_file("step_up", T);
    let o = c.run("scancel", &["--signal=USR1", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = c.wait_state(id, &["COMPLETED", "FAILED", "CANCELLED"], T);
    assert_eq!(j.job_state, vec!["COMPLETED"], "{}", read(&c.path("job.out")));
    assert_eq!(read(&c.path("step_got")), "got\n");
    assert_eq!(read(&c.path("job.out")), "shell went on, step exit 0\n");
}

/// `-b` signals the batch shell alone; `-f` the shell, its children and every step.
#[test]
fn scancel_batch_and_full_signal_scopes() {
    let c = Cluster::start("0", "");
    let script = format!(
        "#!/bin/bash\ntrap 'echo USR2 >> shell_got' USR2\n{} &\nwhile :; do sleep 0.1; done\n",
        trapping_step("USR2")
    );
    std::fs::write(c.path("job.sh"), script).unwrap();
    let id = c.sbatch(&["-o", "job.out", "job.sh"]).to_string();
    c.wait_file("step_up", T);

    assert!(c.run("scancel", &["-b", "-s", "USR2", &id]).status.success());
    wait_for("the shell's trap", T, || until(lines(&c, "shell_got") == 1, || read(&c.path("job.out"))));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lines(&c, "step_got"), 0, "-b reached the step");

    assert!(c.run("scancel", &["-f", "-s", "USR2", &id]).status.success());
    wait_for("the step's trap", T, || until(lines(&c, "step_got") >= 1, || read(&c.path("job.out"))));
    wait_for("the shell's second trap", T, || until(lines(&c, "shell_got") == 2, || read(&c.path("job.out"))));
    assert_eq!(c.state(id.parse().unwrap()), "RUNNING");
}

/// A job ended by scancel is recorded as Slurm 26.05 records it: the controller shows the
/// batch script's status (`0:15`), accounting `0:0` on the job's row and `0:15` on its steps';
/// its output has slurmstepd's lines with the node in their prefix.
#[test]
fn a_cancelled_job_is_recorded_as_slurm_records_it() {
    let c = Cluster::start("0", "");
    std::fs::write(c.path("cx.sh"), "#!/bin/bash\necho start\nsrun bash -c 'echo up > step_up; sleep 300'\n").unwrap();
    let id = c.sbatch(&["-o", "cx.out", "cx.sh"]);
    c.wait_file("step_up", T);
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    c.wait_state(id, &["CANCELLED"], T);
    let show = stdout(&c.run("scontrol", &["show", "job", &id.to_string()]));
    assert!(show.contains(" ExitCode=0:15\n"), "{show}");
    let sacct = c.run("sacct", &["-j", &id.to_string(), "-n", "-P", "-o", "JobID,State,ExitCode"]);
    let uid = slurmlet::identity::uid();
    assert_eq!(
        stdout(&sacct),
        format!("{id}|CANCELLED by {uid}|0:0\n{id}.batch|CANCELLED|0:15\n{id}.0|CANCELLED|0:15\n"),
        "{}",
        stderr(&sacct)
    );
    let out = read(&c.path("cx.out"));
    for what in [format!("STEP {id}.0"), format!("JOB {id}")] {
        let prefix = format!("slurmstepd-node1: error: *** {what} ON node1 CANCELLED AT ");
        assert!(out.lines().any(|l| l.starts_with(&prefix) && l.ends_with(" ***")), "no {prefix:?} in {out}");
    }
}

/// Every job has an account, as in Slurm: the one asked for (`-A`, `SBATCH_ACCOUNT`), else
/// the configured default; squeue, scontrol, sacct and the job's environment show it.
#[test]
fn every_job_has_an_account() {
    let c = Cluster::start("0", "default_account = \"lab\"\n");
    let plain = c.sbatch(&["-o", "plain.out", "--wrap", "echo $SLURM_JOB_ACCOUNT"]);
    let o = c.run("sbatch", &["--parsable", "-A", "proj", "-o", "proj.out", "--wrap", "echo $SLURM_JOB_ACCOUNT"]);
    assert_eq!(stderr(&o), "", "--account is recorded, with no warning");
    let proj: u32 = stdout(&o).trim().parse().unwrap();
    let from_env = c
        .cmd("sbatch")
        .args(["--parsable", "--hold", "--wrap", "true"])
        .env("SBATCH_ACCOUNT", "envacct")
        .output()
        .unwrap();
    let env_id = stdout(&from_env).trim().to_string();
    for id in [plain, proj] {
        c.wait_state(id, &["COMPLETED"], T);
    }
    assert_eq!(read(&c.path("plain.out")), "lab\n");
    assert_eq!(read(&c.path("proj.out")), "proj\n");
    let o = c.run("squeue", &["-h", "-t", "all", "-o", "%i %a", "-S", "i"]);
    assert_eq!(stdout(&o), format!("{plain} lab\n{proj} proj\n{env_id} envacct\n"));
    let show = stdout(&c.run("scontrol", &["show", "job", &proj.to_string()]));
    assert!(show.contains(" Account=proj "), "{show}");
    // sacct's default columns include the account.
    let o = c.run("sacct", &["-X", "-j", &plain.to_string()]);
    let out = stdout(&o);
    assert!(out.lines().next().unwrap_or("").contains("Account"), "{out}");
    assert!(out.lines().nth(2).unwrap_or("").split_whitespace().any(|w| w == "lab"), "{out}");
}

/// With `[accounts]`, a user charges only the accounts listed for them (their default first),
/// and another is refused at submit in Slurm's words; a user not listed charges the default.
#[test]
fn accounts_a_user_may_not_charge_are_refused() {
    let me = slurmlet::identity::user_name(slurmlet::identity::uid());
    let c = Cluster::start("0", &format!("[accounts]\n{me} = [\"vision\", \"nlp\"]\n"));
    let id = c.sbatch(&["--hold", "--wrap", "true"]);
    assert_eq!(c.job(id).account, "vision", "the first listed is the default");
    let id = c.sbatch(&["--hold", "-A", "nlp", "--wrap", "true"]);
    assert_eq!(c.job(id).account, "nlp");
    let o = c.run("sbatch", &["--hold", "-A", "physics", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        format!(
            "sbatch: error: account 'physics' is not one user {me} may charge (vision, nlp)\n\
             sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"
        )
    );
    assert_eq!(stdout(&c.run("squeue", &["-h", "-o", "%i"])).lines().count(), 2, "nothing more was queued");
}

/// Slurm 24.11's batch and step environments (`../shared/reference/slurm-24.11`, section 8:
/// `--gres=gpu:2 -N1 -n2 --cpus-per-task=1`), name by name, and 26.05's for an salloc.
const BATCH_24_11: &str = "CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL SLURMD_NODENAME SLURM_CLUSTER_NAME SLURM_CONF \
    SLURM_CPUS_ON_NODE SLURM_CPUS_PER_TASK SLURM_GPUS_ON_NODE SLURM_GTIDS SLURM_JOBID SLURM_JOB_CPUS_PER_NODE \
    SLURM_JOB_END_TIME SLURM_JOB_GID SLURM_JOB_GPUS SLURM_JOB_ID SLURM_JOB_NAME SLURM_JOB_NODELIST \
    SLURM_JOB_NUM_NODES SLURM_JOB_PARTITION SLURM_JOB_START_TIME SLURM_JOB_UID SLURM_JOB_USER SLURM_LOCALID \
    SLURM_MEM_PER_CPU SLURM_NNODES SLURM_NODEID SLURM_NODELIST SLURM_NPROCS SLURM_NTASKS SLURM_OOM_KILL_STEP \
    SLURM_PRIO_PROCESS SLURM_PROCID SLURM_SUBMIT_DIR SLURM_SUBMIT_HOST SLURM_TASKS_PER_NODE SLURM_TASK_PID \
    SLURM_TOPOLOGY_ADDR SLURM_TOPOLOGY_ADDR_PATTERN SLURM_TRES_PER_TASK";
/// What a step adds to those (less the ports of srun's own listeners, which have no
/// counterpart here: `SLURM_SRUN_COMM_PORT`, `SLURM_STEP_LAUNCHER_PORT`).
const STEP_24_11: &str = "SLURMD_DEBUG SLURM_DISTRIBUTION SLURM_LABELIO SLURM_LAUNCH_NODE_IPADDR \
    SLURM_SRUN_COMM_HOST SLURM_STEPID SLURM_STEP_GPUS SLURM_STEP_ID SLURM_STEP_NODELIST SLURM_STEP_NUM_NODES \
    SLURM_STEP_NUM_TASKS SLURM_STEP_TASKS_PER_NODE SLURM_UMASK";
const SALLOC_26_05: &str = "SLURM_CLUSTER_NAME SLURM_CONF SLURM_JOBID SLURM_JOB_ACCOUNT SLURM_JOB_CPUS_PER_NODE \
    SLURM_JOB_ID SLURM_JOB_NAME SLURM_JOB_NODELIST SLURM_JOB_NUM_NODES SLURM_JOB_PARTITION SLURM_JOB_QOS SLURM_NNODES \
    SLURM_NODELIST SLURM_SUBMIT_DIR SLURM_SUBMIT_HOST SLURM_TASKS_PER_NODE";
/// Ours beyond 24.11's: the account and QOS every job has here (26.05 with accounting sets
/// them too), and `CUDA_DEVICE_ORDER=PCI_BUS_ID` so that CUDA numbers GPUs as nvidia-smi does.
const OURS_TOO: &str = "SLURM_JOB_ACCOUNT SLURM_JOB_QOS CUDA_DEVICE_ORDER";
/// Ours beyond 24.11's in a step: the CPU binding its tasks are told of, as Slurm's
/// task/affinity sets it (the reference ran with `TaskPlugin=task/none`, which sets none).
const CPU_BIND: &str = "SLURM_CPU_BIND SLURM_CPU_BIND_LIST SLURM_CPU_BIND_TYPE SLURM_CPU_BIND_VERBOSE";

/// `NAME=value` lines (a `N: ` label stripped) whose name is Slurm's or CUDA's, not ours.
fn env_of(lines: &str) -> std::collections::BTreeMap<String, String> {
    lines
        .lines()
        .map(|l| l.split_once(": ").filter(|(n, _)| n.parse::<u32>().is_ok()).map_or(l, |(_, rest)| rest))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| ["SLURM", "CUDA", "GPU"].iter().any(|p| k.starts_with(p)) && !k.starts_with("SLURMLET_"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn names(list: &[&str]) -> std::collections::BTreeSet<String> {
    list.iter().flat_map(|l| l.split_whitespace()).map(String::from).collect()
}

/// The environments of a batch step, its srun steps, an salloc and srun's own allocation,
/// name by name as Slurm's (item 9 of the parity pass).
#[test]
fn job_environments_are_slurms_name_by_name() {
    let c = Cluster::start("4", "def_mem_per_cpu = 1000\n");
    std::fs::write(
        c.path("envdump.sh"),
        "#!/bin/bash\n#SBATCH --gres=gpu:2 -N1 -n2 --cpus-per-task=1 -o envdump.out\nenv | sort > batch.env\n\
         srun -l bash -c 'env | sort' > step.env\n",
    )
    .unwrap();
    let id = c.sbatch(&["envdump.sh"]);
    let j = c.wait_state(id, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["COMPLETED"], "{}", read(&c.path("envdump.out")));
    let batch = env_of(&read(&c.path("batch.env")));
    let got: std::collections::BTreeSet<String> = batch.keys().cloned().collect();
    assert_eq!(got, names(&[BATCH_24_11, OURS_TOO]), "the batch step's variables");
    assert_eq!(batch["SLURM_CONF"], c.config.display().to_string());
    assert_eq!(batch["SLURM_OOM_KILL_STEP"], "0");
    assert_eq!(batch["SLURM_TRES_PER_TASK"], "cpu=1");
    // No time limit: Slurm's controller ends such a job a year after its start.
    let start: u64 = batch["SLURM_JOB_START_TIME"].parse().unwrap();
    assert_eq!(batch["SLURM_JOB_END_TIME"], (start + 365 * 24 * 3600).to_string());
    let step_text = read(&c.path("step.env"));
    let step0: String = step_text.lines().filter(|l| l.starts_with("0: ")).map(|l| format!("{l}\n")).collect();
    let step = env_of(&step0);
    let got: std::collections::BTreeSet<String> = step.keys().cloned().collect();
    assert_eq!(got, names(&[BATCH_24_11, STEP_24_11, OURS_TOO, CPU_BIND]), "a step's variables");
    assert_eq!(step["SLURMD_DEBUG"], "2");
    assert_eq!(step["SLURM_JOB_GPUS"], "0,1", "a step of a batch job has the job's GPUs");

    let o = c.run("salloc", &["--gres=gpu:1", "sh", "-c", "env | sort"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let salloc = env_of(&stdout(&o));
    let got: std::collections::BTreeSet<String> = salloc.keys().cloned().collect();
    // The memory per CPU comes from DefMemPerCPU here, which Slurm's salloc does not say.
    assert_eq!(got, names(&[SALLOC_26_05]), "salloc's command's variables");
    // srun's own allocation: the step's GPUs, no SLURM_JOB_GPUS (a batch job's).
    let o = c.run("srun", &["--gres=gpu:1", "sh", "-c", "echo ${SLURM_JOB_GPUS-unset} $SLURM_STEP_GPUS"]);
    assert_eq!(stdout(&o), "unset 0\n", "{}", stderr(&o));
}
