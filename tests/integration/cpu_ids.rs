//! The node's CPUs by id: the ids each job is given, as `scontrol show job -d` prints them,
//! kept by a job across a daemon restart, and the CPU binding its srun tasks are told of.

use crate::common;
use common::T;

use common::{read, stdout, until, wait_for, Cluster};

/// The `CPU_IDs=` of `scontrol -d show job ID`.
fn cpu_ids(c: &Cluster, id: u32) -> String {
    let o = c.run("scontrol", &["-d", "show", "job", &id.to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let field = text.split_whitespace().find_map(|w| w.strip_prefix("CPU_IDs="));
    field.unwrap_or_else(|| panic!("no CPU_IDs in:\n{text}")).to_string()
}

/// A job of `cpus` CPUs that runs until it is cancelled, once it runs.
fn sleeper(c: &Cluster, cpus: &str) -> u32 {
    let id = c.sbatch(&["-c", cpus, "-o", "/dev/null", "--wrap", "sleep 300"]);
    c.wait_state(id, &["RUNNING"], T);
    id
}

#[test]
fn running_jobs_hold_different_cpus_and_keep_them_across_a_restart() {
    let mut c = Cluster::start("0", "cpus = 4\n");
    let (a, b) = (sleeper(&c, "1"), sleeper(&c, "1"));
    assert_eq!((cpu_ids(&c, a), cpu_ids(&c, b)), ("0".to_string(), "1".to_string()));
    let pair = sleeper(&c, "2");
    assert_eq!(cpu_ids(&c, pair), "2-3");
    // Job a's CPU is given again once it has ended, not before.
    let waiting = c.sbatch(&["-c", "1", "-o", "/dev/null", "--wrap", "sleep 300"]);
    // Its reason comes with the scheduling pass that follows the submit.
    wait_for("the job to wait for a CPU", T, || {
        let j = c.job(waiting);
        until(j.job_state == ["PENDING"] && j.state_reason == "Resources", || {
            format!("{:?} {}", j.job_state, j.state_reason)
        })
    });
    assert!(c.run("scancel", &[&a.to_string()]).status.success());
    c.wait_state(waiting, &["RUNNING"], T);
    assert_eq!(cpu_ids(&c, waiting), "0");

    // A new daemon re-adopts the running jobs with the CPUs they hold, and gives a new job
    // only a CPU none of them holds.
    assert!(c.run("scancel", &[&pair.to_string()]).status.success());
    c.wait_state(pair, &["CANCELLED"], T);
    c.kill_daemon();
    c.start_daemon();
    assert_eq!((cpu_ids(&c, waiting), cpu_ids(&c, b)), ("0".to_string(), "1".to_string()));
    let after = sleeper(&c, "2");
    assert_eq!(cpu_ids(&c, after), "2-3");
}

#[test]
fn srun_tasks_are_told_their_cpu_binding() {
    let c = Cluster::start("0", "cpus = 8\n");
    let first = sleeper(&c, "3");
    assert_eq!(cpu_ids(&c, first), "0-2");
    std::fs::write(
        c.path("bind.sh"),
        "#!/bin/bash\n#SBATCH -c 2 -o bind.out\nenv > batch.env\nsrun -c 2 env > step.env\n\
         srun -n 2 -c 1 bash -c 'echo $SLURM_PROCID $SLURM_CPU_BIND_LIST' > tasks.out\n\
         srun -c 1 bash -c 'srun --overlap -c 1 true' 2> nested.err\n",
    )
    .unwrap();
    let id = c.sbatch(&["bind.sh"]);
    let j = c.wait_state(id, &["COMPLETED", "FAILED"], T);
    assert_eq!(j.job_state, vec!["COMPLETED"], "{}", read(&c.path("bind.out")));
    assert_eq!(cpu_ids(&c, id), "3-4", "an ended job shows the CPUs it held");

    // CPUs 3 and 4: mask 0x18.
    let step = read(&c.path("step.env"));
    for line in [
        "SLURM_CPU_BIND_VERBOSE=quiet",
        "SLURM_CPU_BIND_TYPE=mask_cpu:",
        "SLURM_CPU_BIND_LIST=0x18",
        "SLURM_CPU_BIND=quiet,mask_cpu:0x18",
    ] {
        assert!(step.lines().any(|l| l == line), "{line} in a task's environment:\n{step}");
    }
    // A batch step is not bound (as Slurm's reference, task/none, shows).
    let batch = read(&c.path("batch.env"));
    assert!(!batch.contains("SLURM_CPU_BIND"), "{batch}");
    // Each of a step's two tasks is told one mask per task, of the step's two CPUs.
    let mut tasks: Vec<String> = read(&c.path("tasks.out")).lines().map(String::from).collect();
    tasks.sort();
    assert_eq!(tasks, vec!["0 0x18,0x18", "1 0x18,0x18"]);
    // An srun run by a task reads the binding as its --cpu-bind, and asks nothing of it.
    let nested = read(&c.path("nested.err"));
    assert!(!nested.contains("--cpu-bind"), "{nested}");
}
