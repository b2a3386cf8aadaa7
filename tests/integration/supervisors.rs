//! How supervisors are started: forked by the fork server, and directly when it is gone.

use crate::common;
use common::T;
use common::*;

/// The pid, parent pid and command name of process `pid`, from `/proc`.
fn stat(pid: u32) -> (u32, u32, String) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (head, tail) = text.rsplit_once(") ").unwrap();
    let comm = head.split_once(" (").unwrap().1.to_string();
    let ppid = tail.split(' ').nth(1).unwrap().parse().unwrap();
    (pid, ppid, comm)
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap()
        .split(|&b| b == 0)
        .map(|w| String::from_utf8_lossy(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts a job that writes its supervisor's pid and waits; returns the job id and the
/// supervisor's pid.
fn running_job(c: &Cluster, name: &str) -> (u32, u32) {
    let out = format!("{name}.pid");
    let id = c.sbatch(&["-o", &out, "--wrap", "echo $PPID; exec sleep 30"]);
    let text = c.wait_file(&out, T);
    let stepd = text.trim().parse().unwrap();
    assert_eq!(c.wait_state(id, &["RUNNING"], T).job_state, vec!["RUNNING"]);
    (id, stepd)
}

#[test]
fn supervisors_are_forked_by_the_fork_server_and_started_directly_without_it() {
    let c = Cluster::start("0", "");
    let (first, stepd) = running_job(&c, "first");
    let (_, parent, comm) = stat(stepd);
    assert_eq!(comm, "slurmstepd");
    let server = parent;
    assert!(cmdline(server).contains("stepd-server"), "parent {server}: {}", cmdline(server));

    // A second job is forked by the same server.
    let (second, stepd2) = running_job(&c, "second");
    assert_eq!(stat(stepd2).1, server);

    // Without the server, the next supervisor is started directly, and the one after that
    // by a new server.
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
    let (third, stepd3) = running_job(&c, "third");
    let (fourth, stepd4) = running_job(&c, "fourth");
    let parents = [stat(stepd3).1, stat(stepd4).1];
    assert!(parents.iter().all(|&p| p != server), "{parents:?}");
    assert!(parents.iter().any(|&p| cmdline(p).contains("stepd-server")), "no new fork server: {parents:?}");

    // Every job still ends as it should, whoever started its supervisor.
    for id in [first, second, third, fourth] {
        let o = c.run("scancel", &[&id.to_string()]);
        assert!(o.status.success());
        assert_eq!(c.wait_state(id, &["CANCELLED"], T).job_state, vec!["CANCELLED"]);
    }
}

#[test]
fn allocations_and_steps_start_directly_when_the_fork_server_is_gone() {
    let c = Cluster::start("0", "");
    let (job, stepd) = running_job(&c, "probe");
    let server = stat(stepd).1;
    // The allocation is forked by the server; its step is asked for once the server is gone.
    let salloc = c
        .cmd("salloc")
        .args([
            "bash",
            "-c",
            "echo x > in-alloc; while [ ! -e go ]; do sleep 0.05; done; srun bash -c 'echo step $SLURM_STEP_ID ok'",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.wait_file("in-alloc", T);
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
    std::fs::write(c.path("go"), "").unwrap();
    let out = salloc.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "step 0 ok\n");
    assert!(c.log().contains("starting this one directly"), "the step was not started directly:\n{}", c.log());
    assert!(c.run("scancel", &[&job.to_string()]).status.success());
}

#[test]
fn a_batch_script_that_cannot_be_executed_says_why_in_strerrors_words() {
    let c = Cluster::start("0", "");
    let not_executable = c.path("not-executable");
    std::fs::write(&not_executable, "echo never\n").unwrap();
    for (name, interpreter, why) in [
        ("missing", "/no/such/interpreter".to_string(), "No such file or directory"),
        ("denied", not_executable.display().to_string(), "Permission denied"),
    ] {
        std::fs::write(c.path(&format!("{name}.sh")), format!("#!{interpreter}\necho never\n")).unwrap();
        let out = format!("{name}.out");
        let id = c.sbatch(&["-o", &out, &format!("{name}.sh")]);
        let j = c.wait_state(id, &["FAILED"], T);
        assert_eq!(j.exit_code.return_code.number, 127, "{name}");
        let text = c.wait_file(&out, T);
        assert!(text.starts_with("slurmstepd-node1: error: execve(): "), "{name}: {text}");
        assert!(text.ends_with(&format!(": {why}\n")), "{name}: {text}");
        assert_eq!(text.lines().count(), 1, "{name}: {text}");
    }
}
