//! Places where tools and scripts written for Slurm used to trip: each test is what real
//! Slurm 26.05 does (checked against it), through the real binary and a real daemon.

mod common;
use common::*;
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

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
            let out = text(&o.stdout);
            assert!(o.status.success(), "{cmd} {flag}: {:?} {}", o.status, text(&o.stderr));
            assert_eq!(text(&o.stderr), "", "{cmd} {flag}");
            seen.push(slurm_line(&out).unwrap_or_else(|| panic!("{cmd} {flag} printed {out:?}")));
        }
    }
    seen.dedup();
    assert_eq!(seen.len(), 1, "the commands disagree on the release: {seen:?}");
    // Options after --version do not matter, as with getopt: it exits on reading it.
    assert_eq!(text(&c.run("squeue", &["--version", "-u", "nobody"]).stdout), format!("slurm {}\n", seen[0]));
    assert!(!c.socket.exists(), "--version started a daemon");

    let own = c.run("slurmlet", &["--version"]);
    assert_eq!(text(&own.stdout), format!("slurmlet {}\n", env!("CARGO_PKG_VERSION")));
    c.start_daemon();
    let config = text(&c.run("scontrol", &["show", "config"]).stdout);
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
    assert_eq!(text(&o.stdout), "dashname c1 5:00\n", "{}", text(&o.stderr));

    std::fs::write(c.path("d2.sh"), "#!/bin/sh\n#SBATCH -J fine\n#SBATCHX -J xname\necho hi\n").unwrap();
    let o = c.run("sbatch", &["d2.sh"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(text(&o.stdout), "");
    let err = text(&o.stderr);
    assert!(err.contains("d2.sh") && err.contains('3'), "names the file and line: {err}");
    assert!(err.contains("Invalid directive found in batch script: X"), "{err}");
    let o = c.run("squeue", &["-h", "-n", "fine,xname", "-o", "%i"]);
    assert_eq!(text(&o.stdout), "", "nothing was queued");
}

/// `scancel` of an id the daemon does not know (never was, or purged) is silent with exit 0,
/// as in Slurm 22.05, 24.11 and 26.05; `-v` says it.
#[test]
fn scancel_of_an_unknown_job_is_silent_unless_verbose() {
    let c = Cluster::start("0", "");
    let o = c.run("scancel", &["999999", "999998"]);
    assert_eq!((o.status.code(), text(&o.stdout), text(&o.stderr)), (Some(0), String::new(), String::new()));
    let o = c.run("scancel", &["-v", "999999"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stderr),
        "scancel: Terminating job 999999\nscancel: error: Kill job error on job id 999999: Invalid job id specified\n"
    );
    // An id that is no id at all is still an error.
    let o = c.run("scancel", &["abc"]);
    assert_eq!((o.status.code(), text(&o.stderr)), (Some(1), "scancel: error: Invalid job id abc\n".to_string()));
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
    assert!(o.status.success(), "{}", text(&o.stderr));
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
    let show = text(&c.run("scontrol", &["show", "job", &id.to_string()]).stdout);
    assert!(show.contains(" ExitCode=0:15\n"), "{show}");
    let sacct = c.run("sacct", &["-j", &id.to_string(), "-n", "-P", "-o", "JobID,State,ExitCode"]);
    let uid = slurmlet::paths::uid();
    assert_eq!(
        text(&sacct.stdout),
        format!("{id}|CANCELLED by {uid}|0:0\n{id}.batch|CANCELLED|0:15\n{id}.0|CANCELLED|0:15\n"),
        "{}",
        text(&sacct.stderr)
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
    assert_eq!(text(&o.stderr), "", "--account is recorded, with no warning");
    let proj: u32 = text(&o.stdout).trim().parse().unwrap();
    let from_env = c
        .cmd("sbatch")
        .args(["--parsable", "--hold", "--wrap", "true"])
        .env("SBATCH_ACCOUNT", "envacct")
        .output()
        .unwrap();
    let env_id = text(&from_env.stdout).trim().to_string();
    for id in [plain, proj] {
        c.wait_state(id, &["COMPLETED"], T);
    }
    assert_eq!(read(&c.path("plain.out")), "lab\n");
    assert_eq!(read(&c.path("proj.out")), "proj\n");
    let o = c.run("squeue", &["-h", "-t", "all", "-o", "%i %a", "-S", "i"]);
    assert_eq!(text(&o.stdout), format!("{plain} lab\n{proj} proj\n{env_id} envacct\n"));
    let show = text(&c.run("scontrol", &["show", "job", &proj.to_string()]).stdout);
    assert!(show.contains(" Account=proj "), "{show}");
    // sacct's default columns include the account.
    let o = c.run("sacct", &["-X", "-j", &plain.to_string()]);
    let out = text(&o.stdout);
    assert!(out.lines().next().unwrap_or("").contains("Account"), "{out}");
    assert!(out.lines().nth(2).unwrap_or("").split_whitespace().any(|w| w == "lab"), "{out}");
}

/// With `[accounts]`, a user charges only the accounts listed for them (their default first),
/// and another is refused at submit in Slurm's words; a user not listed charges the default.
#[test]
fn accounts_a_user_may_not_charge_are_refused() {
    let me = slurmlet::paths::user_name(slurmlet::paths::uid());
    let c = Cluster::start("0", &format!("[accounts]\n{me} = [\"vision\", \"nlp\"]\n"));
    let id = c.sbatch(&["--hold", "--wrap", "true"]);
    assert_eq!(c.job(id).account, "vision", "the first listed is the default");
    let id = c.sbatch(&["--hold", "-A", "nlp", "--wrap", "true"]);
    assert_eq!(c.job(id).account, "nlp");
    let o = c.run("sbatch", &["--hold", "-A", "physics", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(
        text(&o.stderr),
        format!(
            "sbatch: error: account 'physics' is not one user {me} may charge (vision, nlp)\n\
             sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"
        )
    );
    assert_eq!(text(&c.run("squeue", &["-h", "-o", "%i"]).stdout).lines().count(), 2, "nothing more was queued");
}
