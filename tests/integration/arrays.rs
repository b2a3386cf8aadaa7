//! Job arrays and requeue through the real binary and daemon: task environments and file
//! names, squeue's folded pending tasks, the `%N` limit, scancel/scontrol/sacct of `A_i`,
//! and `scontrol requeue` of finished and running jobs.

use crate::common;
use common::T;

use common::{until, wait_for, Cluster};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `sacct -X -P -n -o FIELDS -j JOBS` as lines.
fn sacct(c: &Cluster, jobs: &str, fields: &str, extra: &[&str]) -> Vec<String> {
    let o = c.run("sacct", &[&["-X", "-P", "-n", "-o", fields, "-j", jobs], extra].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().map(String::from).collect()
}

/// Waits until every row of `sacct -j jobs` is in one of the finished states.
fn wait_all_ended(c: &Cluster, jobs: &str, count: usize) -> Vec<String> {
    wait_for("the tasks to end", T, || {
        let rows = sacct(c, jobs, "JobID,State,ExitCode", &[]);
        let ended = rows.iter().filter(|r| !r.contains("PENDING") && !r.contains("RUNNING")).count();
        until(rows.len() == count && ended == count, || format!("{rows:?}")).map(|()| rows.clone())
    })
}

#[test]
fn each_task_runs_as_its_own_job_with_slurms_array_environment_and_file_names() {
    let c = Cluster::start("0", "");
    let script = "echo id=$SLURM_JOB_ID a=$SLURM_ARRAY_JOB_ID t=$SLURM_ARRAY_TASK_ID n=$SLURM_ARRAY_TASK_COUNT \
                  min=$SLURM_ARRAY_TASK_MIN max=$SLURM_ARRAY_TASK_MAX step=$SLURM_ARRAY_TASK_STEP";
    let a = c.sbatch(&["--array=0-8:4", "--wrap", script]);
    let rows = wait_all_ended(&c, &a.to_string(), 3);
    assert_eq!(
        rows,
        vec![format!("{a}_0|COMPLETED|0:0"), format!("{a}_4|COMPLETED|0:0"), format!("{a}_8|COMPLETED|0:0")]
    );
    // Each task has its own id; output goes to Slurm's default slurm-%A_%a.out.
    let raw = sacct(&c, &a.to_string(), "JobIDRaw", &[]);
    for (i, task) in [0, 4, 8].iter().enumerate() {
        let out = c.wait_file(&format!("slurm-{a}_{task}.out"), T);
        assert_eq!(out.trim(), format!("id={} a={a} t={task} n=3 min=0 max=8 step=4", raw[i]));
    }
    // An uneven list has step 1; %A/%a in a pattern; `sacct -j A_i` picks one task.
    let b = c.sbatch(&["--array=1,2,7", "-o", "arr-%A-%a.log", "--wrap", script]);
    wait_all_ended(&c, &b.to_string(), 3);
    assert!(c.wait_file(&format!("arr-{b}-7.log"), T).contains("n=3 min=1 max=7 step=1"));
    assert_eq!(sacct(&c, &format!("{b}_2"), "JobID,State", &[]), vec![format!("{b}_2|COMPLETED")]);
    // sbatch --wait waits for every task and returns the highest exit code, as Slurm's.
    let o =
        c.run("sbatch", &["--wait", "--array=1-3", "-o", "/dev/null", "--wrap", "exit $((SLURM_ARRAY_TASK_ID % 3))"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn pending_tasks_are_listed_together_and_released_together() {
    let c = Cluster::start("0", "");
    let a = c.sbatch(&["--hold", "--array=0-9%2", "-J", "held", "--wrap", "sleep 30"]);
    let o = c.run("squeue", &["-h", "-o", "%i %t %r"]);
    assert_eq!(stdout(&o), format!("{a}_[0-9%2] PD JobHeldUser\n"));
    let o = c.run("squeue", &["-r", "-h", "-o", "%i", "-j", &a.to_string()]);
    let ids: Vec<String> = (0..10).map(|t| format!("{a}_{t}")).collect();
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), ids);
    // The JSON of the array's id is its one folded record, as slurmrestd answers.
    let j = c.job(a);
    assert_eq!((j.array_job_id.get(), j.array_task_id.get()), (Some(a), None));
    assert_eq!((j.array_task_string.as_str(), j.array_max_tasks.get()), ("0-9%2", Some(2)));

    // One task is named A_T everywhere, even while it is listed with the others.
    let o = c.run("squeue", &["-h", "-o", "%i %r", "-j", &format!("{a}_3")]);
    assert_eq!(stdout(&o), format!("{a}_3 JobHeldUser\n"));
    let o = c.run("scontrol", &["show", "job", &format!("{a}_3")]);
    assert!(stdout(&o).starts_with(&format!("JobId={} ArrayJobId={a} ArrayTaskId=3 ", a + 3)), "{}", stdout(&o));

    // Releasing tasks, then the array (every task left); two run at a time, the rest wait.
    let o = c.run("scontrol", &["release", &format!("{a}_[0-1]")]);
    assert!(o.status.success(), "{}", stderr(&o));
    wait_for("the released tasks to run", T, || {
        let o = c.run("squeue", &["-h", "-t", "PD", "-o", "%i %r"]);
        until(stdout(&o) == format!("{a}_[2-9%2] JobHeldUser\n"), || stdout(&o))
    });
    let o = c.run("scontrol", &["release", &a.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = wait_for("two tasks to run", T, || {
        let o = c.run("squeue", &["-h", "-o", "%i %t %r"]);
        let text = stdout(&o);
        until(text.matches(" R ").count() == 2, || text.clone()).map(|()| text.clone())
    });
    assert!(listing.contains(&format!("{a}_[2-9%2] PD JobArrayTaskLimit")), "{listing}");
    // scancel of one task, of a task list, then of the whole array.
    assert!(c.run("scancel", &[&format!("{a}_9")]).status.success());
    assert!(c.run("scancel", &[&format!("{a}_[7-8]")]).status.success());
    let rows = sacct(&c, &a.to_string(), "JobID,State", &[]);
    for t in 7..10 {
        assert!(
            rows.contains(&format!("{a}_{t}|CANCELLED by 0")) || rows.contains(&format!("{a}_{t}|CANCELLED")),
            "{rows:?}"
        );
    }
    assert!(rows.contains(&format!("{a}_6|PENDING")), "{rows:?}");
    assert!(c.run("scancel", &[&a.to_string()]).status.success());
    let rows = wait_all_ended(&c, &a.to_string(), 10);
    assert!(rows.iter().all(|r| r.contains("CANCELLED")), "{rows:?}");
}

#[test]
fn the_running_limit_is_never_exceeded() {
    let c = Cluster::start("0", "");
    let a = c.sbatch(&["--array=1-6%2", "--wrap", "sleep 0.3"]);
    wait_all_ended(&c, &a.to_string(), 6);
    // From the recorded starts and ends: at no moment did more than two tasks run.
    let rows = sacct(&c, &a.to_string(), "Start,End", &["--noconvert"]);
    let times: Vec<(String, String)> =
        rows.iter().map(|r| r.split_once('|').map(|(s, e)| (s.to_string(), e.to_string())).unwrap()).collect();
    for (start, _) in &times {
        let overlapping = times.iter().filter(|(s, e)| s <= start && start < e).count();
        assert!(overlapping <= 2, "{overlapping} tasks ran at {start}: {times:?}");
    }
}

#[test]
fn array_size_is_bounded_by_max_array_size() {
    let c = Cluster::start("0", "max_array_size = 10");
    let o = c.run("sbatch", &["--array=5-10", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("(MaxArraySize=10)"), "{}", stderr(&o));
    assert!(stderr(&o).contains("Invalid job array specification"), "{}", stderr(&o));
    let o = c.run("scontrol", &["show", "config"]);
    assert!(stdout(&o).lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["MaxArraySize", "=", "10"]));
    c.sbatch(&["--array=0-9", "--hold", "--wrap", "true"]);
}

#[test]
fn a_requeued_job_runs_again_and_sacct_keeps_every_run() {
    let c = Cluster::start("0", "");
    // Fails on its first run, succeeds once requeued.
    let id = c.sbatch(&[
        "-o",
        "rq.out",
        "--open-mode=append",
        "--wrap",
        "echo run ${SLURM_RESTART_COUNT:-0}; [ -n \"$SLURM_RESTART_COUNT\" ]",
    ]);
    c.wait_state(id, &["FAILED"], T);
    let o = c.run("scontrol", &["requeue", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(j.restart_cnt, 1);
    assert_eq!(c.wait_file("rq.out", T), "run 0\nrun 1\n");
    assert_eq!(sacct(&c, &id.to_string(), "JobID,State,ExitCode", &[]), vec![format!("{id}|COMPLETED|0:0")]);
    assert_eq!(
        sacct(&c, &id.to_string(), "JobID,State,ExitCode", &["--duplicates"]),
        vec![format!("{id}|REQUEUED|1:0"), format!("{id}|COMPLETED|0:0")]
    );

    // A running job is ended, then goes back to the queue and runs again.
    let id = c.sbatch(&[
        "-o",
        "rq2.out",
        "--open-mode=append",
        "--wrap",
        "echo start ${SLURM_RESTART_COUNT:-0}; [ -n \"$SLURM_RESTART_COUNT\" ] || sleep 60",
    ]);
    c.wait_file("rq2.out", T);
    let o = c.run("scontrol", &["requeue", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    c.wait_state(id, &["COMPLETED"], T);
    let out = c.wait_file("rq2.out", T);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!((lines[0], lines[2]), ("start 0", "start 1"), "{out}");
    // As slurmstepd says it (tools tell a requeue from a cancel by it).
    assert!(lines[1].starts_with(&format!("slurmstepd-node1: error: *** JOB {id} ON node1 CANCELLED AT ")), "{out}");
    assert!(lines[1].ends_with(" DUE TO JOB REQUEUE ***"), "{out}");

    // Slurm's refusals.
    let held = c.sbatch(&["--hold", "--wrap", "true"]);
    let o = c.run("scontrol", &["requeue", &held.to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("Job is pending execution for job {held}\nslurm_requeue error: Job is pending execution\n")
    );
    let fixed = c.sbatch(&["--no-requeue", "--wrap", "true"]);
    c.wait_state(fixed, &["COMPLETED"], T);
    let o = c.run("scontrol", &["requeue", &fixed.to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("Requested operation is presently disabled"), "{}", stderr(&o));
    let o = c.run("scontrol", &["requeue", "999999"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "Invalid job id specified for job 999999\nslurm_requeue error: Invalid job id specified\n");
}

#[test]
fn arrays_and_requeued_jobs_survive_a_daemon_restart() {
    let mut c = Cluster::start("0", "");
    let a = c.sbatch(&["--hold", "--array=1-3", "-o", "r-%a.out", "--wrap", "echo task $SLURM_ARRAY_TASK_ID"]);
    c.kill_daemon();
    c.start_daemon();
    let o = c.run("squeue", &["-h", "-o", "%i %r"]);
    assert_eq!(stdout(&o), format!("{a}_[1-3] JobHeldUser\n"));
    assert!(c.run("scontrol", &["release", &a.to_string()]).status.success());
    wait_all_ended(&c, &a.to_string(), 3);
    for t in 1..=3 {
        assert_eq!(c.wait_file(&format!("r-{t}.out"), T), format!("task {t}\n"));
    }
}

#[test]
fn an_array_is_named_by_its_id_after_its_first_task_has_left_squeue() {
    let c = Cluster::start("0", "min_job_age = 1");
    let a = c.sbatch(&["--array=0-2", "--wrap", "[ $SLURM_ARRAY_TASK_ID = 0 ] || sleep 60"]);
    // Task 0 (whose id is the array's) ends, and ages out of squeue (MinJobAge 1 s).
    wait_for("the first task to leave squeue", T, || {
        let o = c.run("squeue", &["-h", "-t", "all", "-o", "%i %t"]);
        let text = stdout(&o);
        until(!text.contains(&format!("{a}_0 ")) && text.matches(" R").count() == 2, || text.clone())
    });
    let o = c.run("scancel", &[&a.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = wait_all_ended(&c, &a.to_string(), 3);
    assert_eq!(rows[0], format!("{a}_0|COMPLETED|0:0"));
    assert!(rows[1..].iter().all(|r| r.contains("CANCELLED")), "{rows:?}");
}
