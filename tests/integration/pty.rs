//! Interactive use driven through tmux, as a person at a terminal would: `srun --pty` gives a
//! shell on a real pseudo-terminal with the job's GPU variables, `exit 4` ends srun with 4,
//! and Ctrl-C twice cancels a running step.

use crate::common;
use crate::common::tmux;
use common::Cluster;
use std::time::Duration;
use tmux::Tmux;

/// A script that runs `command` in the cluster's environment, then prints its exit code and
/// stays, so that the screen can be read.
fn script(c: &Cluster, name: &str, command: &str) -> std::path::PathBuf {
    let home = c.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = c.path(name);
    std::fs::write(
        &path,
        format!(
            "cd {work}\nexport HOME={home} SLURMLET_CONF={conf} SLURMLET_SOCKET={sock} PATH={bin}:$PATH\nunset $(env | grep -o '^SLURM_[A-Z_]*')\n{command}\necho srun-exit=$?\nsleep 60\n",
            work = c.work.display(),
            home = home.display(),
            conf = c.config.display(),
            sock = c.socket.display(),
            bin = c.bin.display(),
        ),
    )
    .unwrap();
    path
}

/// The job id on the screen's line that starts with `prefix` (`Submitted batch job `).
fn id_after(screen: &str, prefix: &str) -> u32 {
    screen
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("no job id after {prefix:?}: {screen}"))
}

#[test]
fn an_interactive_shell_gets_a_terminal_and_the_jobs_gpus() {
    let c = Cluster::start("4", "");
    let t = Tmux::new();
    t.start(&script(&c, "pty.sh", "srun --gres=gpu:1 --pty /bin/bash -l"));
    t.wait_for("a prompt", |s| s.lines().any(|l| l.trim_end().ends_with('$') || l.trim_end().ends_with('#')));
    t.keys(&["echo CVD=$CUDA_VISIBLE_DEVICES STEP=$SLURM_STEP_ID; tty", "Enter"]);
    let screen = t.wait_for("the variables and the tty", |s| {
        s.contains("/dev/pts/") && s.contains("CVD=") && s.contains("STEP=0")
    });
    let cvd = screen.lines().find_map(|l| l.strip_prefix("CVD=")).unwrap().split(' ').next().unwrap();
    assert!(cvd.parse::<u32>().is_ok(), "one GPU: {screen}");
    // The terminal's size, and a resize of it, reach the shell.
    t.keys(&["clear; stty size", "Enter"]);
    let before = t.wait_for("the size", |s| {
        s.lines().any(|l| l.trim().split(' ').count() == 2 && l.trim().split(' ').all(|w| w.parse::<u32>().is_ok()))
    });
    let size = |screen: &str| {
        screen
            .lines()
            .rev()
            .find(|l| l.trim().split(' ').count() == 2 && l.trim().split(' ').all(|w| w.parse::<u32>().is_ok()))
            .unwrap()
            .trim()
            .to_string()
    };
    assert!(size(&before).ends_with(" 120"), "{before}");
    let out = t.tmux(&["resize-window", "-t", "t", "-x", "90", "-y", "30"]);
    assert!(out.status.success(), "tmux resize-window: {}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["clear; stty size", "Enter"]);
    let after = t
        .wait_for("the new size", |s| s.lines().any(|l| l.trim().ends_with(" 90") && l.trim().split(' ').count() == 2));
    assert!(size(&after).ends_with(" 90"), "{after}");
    t.keys(&["exit 4", "Enter"]);
    let screen = t.wait_for("srun's exit", |s| s.contains("srun-exit="));
    assert!(screen.contains("srun-exit=4"), "{screen}");
    assert!(screen.contains("task 0: Exited with exit code 4"), "{screen}");
}

#[test]
fn ctrl_c_twice_cancels_a_running_step() {
    let c = Cluster::start("4", "");
    let t = Tmux::new();
    t.start(&script(&c, "int.sh", "srun bash -c 'echo started; exec sleep 103'"));
    t.wait_for("the step", |s| s.contains("started"));
    t.keys(&["C-c"]);
    t.wait_for("the first interrupt's notice", |s| s.contains("srun: interrupt (one more within 1 sec to abort)"));
    t.keys(&["C-c"]);
    let screen = t.wait_for("srun's exit", |s| s.contains("srun-exit="));
    assert!(screen.contains("srun: sending Ctrl-C to StepId="), "{screen}");
    assert!(!screen.contains("srun-exit=0"), "{screen}");
    common::wait_for("the step's task to end with the cancel", Duration::from_secs(10), || {
        common::until(!common::process_running("^sleep 103$"), String::new)
    });
}

#[test]
fn scancel_signals_reach_a_task_on_a_terminal() {
    let c = Cluster::start("4", "");
    let t = Tmux::new();
    t.start(&script(
        &c,
        "sig.sh",
        "srun --pty bash -c 'trap \"echo got USR1\" USR1; echo ready; while :; do sleep 0.1; done'",
    ));
    t.wait_for("the step", |s| s.contains("ready"));
    let id = String::from_utf8_lossy(&c.run("squeue", &["-h", "-o", "%i"]).stdout).trim().to_string();
    let out = c.run("scancel", &["-s", "USR1", &format!("{id}.0")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    t.wait_for("the signal's trap", |s| s.contains("got USR1"));
    assert!(c.run("scancel", &[&id]).status.success());
    t.wait_for("srun's exit", |s| s.contains("srun-exit="));
}

#[test]
fn sbatch_wait_shows_its_jobs_state_on_a_terminal_and_nothing_when_piped() {
    let c = Cluster::start("4", "");
    let blocker = c.sbatch(&["--gres=gpu:4", "--wrap", "sleep 300"]);
    c.wait_state(blocker, &["RUNNING"], Duration::from_secs(20));
    let t = Tmux::new();
    t.start(&script(&c, "wait.sh", "sbatch --wait -J waiting --gres=gpu:1 --wrap 'sleep 2'"));
    let screen = t.wait_for("the pending job's status line", |s| s.contains("PENDING") && s.contains("(Resources)"));
    let id = id_after(&screen, "Submitted batch job ");
    assert!(screen.contains(&format!("job {id} PENDING 0:0")), "{screen}");
    assert!(c.run("scancel", &[&blocker.to_string()]).status.success());
    t.wait_for("the running job's status line", |s| s.contains(&format!("job {id} RUNNING 0:0")));
    let screen = t.wait_for("sbatch's exit", |s| s.contains("srun-exit="));
    assert!(screen.contains("srun-exit=0"), "{screen}");
    assert!(!screen.contains(&format!("job {id} RUNNING")), "the status line is cleared at the end:\n{screen}");

    // Not on a terminal: the same wait prints only what it did before.
    let blocker = c.sbatch(&["--gres=gpu:4", "--wrap", "sleep 300"]);
    c.wait_state(blocker, &["RUNNING"], Duration::from_secs(20));
    let waiting = c
        .cmd("sbatch")
        .args(["--wait", "--gres=gpu:1", "--wrap", "true"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert!(c.run("scancel", &[&blocker.to_string()]).status.success());
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(common::stderr(&out), "", "nothing on standard error when it is not a terminal");
    assert!(common::stdout(&out).starts_with("Submitted batch job "), "{out:?}");
}

/// `sbatch --wait --array`: the line follows the array, not its first task: running while a
/// task runs, with how many tasks are in each state, and sbatch exits with the tasks'
/// highest exit code, as Slurm's does.
#[test]
fn sbatch_wait_of_an_array_shows_the_arrays_state() {
    let c = Cluster::start("4", "");
    let blocker = c.sbatch(&["--gres=gpu:3", "--wrap", "sleep 300"]);
    c.wait_state(blocker, &["RUNNING"], Duration::from_secs(20));
    let t = Tmux::new();
    let tasks = "while [ ! -e done ]; do sleep 0.1; done; exit $SLURM_ARRAY_TASK_ID";
    t.start(&script(&c, "array.sh", &format!("sbatch --wait --array=0-2 --gres=gpu:1 --wrap '{tasks}'")));
    let screen = t.wait_for("one task running, two pending", |s| s.contains("(tasks: 1 RUNNING, 2 PENDING)"));
    let id = id_after(&screen, "Submitted batch job ");
    assert!(screen.contains(&format!("job {id} RUNNING 0:0")), "{screen}");
    assert!(c.run("scancel", &[&blocker.to_string()]).status.success());
    t.wait_for("every task running", |s| s.contains(&format!("job {id} RUNNING")) && s.contains("(tasks: 3 RUNNING)"));
    std::fs::write(c.work.join("done"), "").unwrap();
    let screen = t.wait_for("sbatch's exit", |s| s.contains("srun-exit="));
    assert!(screen.contains("srun-exit=2"), "the highest task's code: {screen}");
}

#[test]
fn salloc_shows_its_pending_jobs_state_on_a_terminal() {
    let c = Cluster::start("4", "");
    let blocker = c.sbatch(&["--gres=gpu:4", "--wrap", "sleep 300"]);
    c.wait_state(blocker, &["RUNNING"], Duration::from_secs(20));
    let t = Tmux::new();
    t.start(&script(&c, "salloc.sh", "salloc --gres=gpu:1 true"));
    let screen = t.wait_for("the pending allocation's status line", |s| s.contains("(Resources)"));
    let id = id_after(&screen, "salloc: Pending job allocation ");
    assert!(screen.contains(&format!("job {id} PENDING 0:0")), "{screen}");
    assert!(c.run("scancel", &[&blocker.to_string()]).status.success());
    let screen = t.wait_for("salloc's exit", |s| s.contains("srun-exit="));
    assert!(screen.contains("srun-exit=0"), "{screen}");
    assert!(screen.contains(&format!("salloc: job {id} has been allocated resources")), "{screen}");
    assert!(!screen.contains(&format!("job {id} PENDING")), "the status line is cleared:\n{screen}");
}
