//! Steps (`srun`) inside the tasks of a job array: file name patterns expanded with the
//! array's identity (`%A` the array's job id, `%a` the task's index, `%j` the task's own job
//! id, `%J` job.step), the array variables of the step's environment, and how `sacct` names
//! such steps (`A_T.0`).

use crate::common;
use common::T;

use common::{stderr, stdout, until, wait_for, Cluster};

/// `sacct -P -n -o FIELDS -j JOBS EXTRA` as lines.
fn sacct(c: &Cluster, jobs: &str, fields: &str, extra: &[&str]) -> Vec<String> {
    let o = c.run("sacct", &[&["-P", "-n", "-o", fields, "-j", jobs], extra].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().map(String::from).collect()
}

/// Waits until every task of array `a` (`count` of them) has ended, and returns each task's
/// own job id (`JobIDRaw`), by task index: `(index, raw id)`.
fn wait_tasks(c: &Cluster, a: u32, count: usize) -> Vec<(u32, u32)> {
    let rows = wait_for("the array's tasks to end", T, || {
        let rows = sacct(c, &a.to_string(), "JobID,JobIDRaw,State", &["-X"]);
        let ended = rows.iter().filter(|r| !r.ends_with("|PENDING") && !r.ends_with("|RUNNING")).count();
        until(rows.len() == count && ended == count, || format!("{rows:?}")).map(|()| rows.clone())
    });
    assert!(rows.iter().all(|r| r.ends_with("|COMPLETED")), "{rows:?}");
    rows.iter()
        .map(|r| {
            let f: Vec<&str> = r.split('|').collect();
            let index = f[0].strip_prefix(&format!("{a}_")).unwrap_or_else(|| panic!("{r}")).parse().unwrap();
            (index, f[1].parse().unwrap())
        })
        .collect()
}

/// Every entry under `dir`, relative to it, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())).flatten() {
            let p = e.path();
            names.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    names.sort();
    names
}

/// What submitit's `map_array` submits: the batch step and `srun` both log under a folder
/// per task (`%j` of the user's folder becomes `%A_%a` for arrays), one file per srun task.
#[test]
fn submitits_array_logs_land_in_each_tasks_own_folder() {
    let c = Cluster::start("0", "");
    let srun = "srun --unbuffered --output logs/%A_%a/%A_%a_%t_log.out --error logs/%A_%a/%A_%a_%t_log.err \
                sh -c 'echo out $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_PROCID $SLURM_JOB_ID; \
                echo err $SLURM_ARRAY_TASK_ID $SLURM_PROCID >&2'";
    let a = c.sbatch(&[
        "--array=0-2%3",
        "--ntasks-per-node=2",
        "--open-mode=append",
        "--output=logs/%A_%a/%A_%a_0_log.out",
        "--error=logs/%A_%a/%A_%a_0_log.err",
        "--wrap",
        srun,
    ]);
    let tasks = wait_tasks(&c, a, 3);
    assert_eq!(tasks.iter().map(|t| t.0).collect::<Vec<_>>(), [0, 1, 2]);
    let mut expected = Vec::new();
    for &(t, raw) in &tasks {
        expected.push(format!("{a}_{t}"));
        for p in 0..2 {
            for ext in ["out", "err"] {
                expected.push(format!("{a}_{t}/{a}_{t}_{p}_log.{ext}"));
            }
            let out = common::read(&c.path(&format!("logs/{a}_{t}/{a}_{t}_{p}_log.out")));
            assert_eq!(out, format!("out {a} {t} {p} {raw}\n"), "task {t}, rank {p}");
            let err = common::read(&c.path(&format!("logs/{a}_{t}/{a}_{t}_{p}_log.err")));
            assert_eq!(err, format!("err {t} {p}\n"), "task {t}, rank {p}");
        }
    }
    expected.sort();
    // Nothing else: in particular no `A_4294967294` folder (the task id left unset).
    assert_eq!(listing(&c.path("logs")), expected);
}

/// Every file name code, in `--output`, `--error` and `--input` of a step of an array task,
/// as Slurm's `fname_create` expands them for a step; and the array variables the step's
/// tasks see.
#[test]
fn every_pattern_code_and_the_array_variables_in_a_step_of_an_array_task() {
    let c = Cluster::start("0", "");
    let user = slurmlet::identity::user_name(slurmlet::identity::uid());
    std::fs::create_dir(c.path("codes")).unwrap();
    for t in [1, 2] {
        std::fs::write(c.path(&format!("in-{t}.txt")), format!("input of task {t}\n")).unwrap();
    }
    let script = "#!/bin/sh\n\
        srun -n2 -o 'codes/%A-%a-%j-%J-%s-%t-%n-%N-%u-%x-%3a-%5A-%%.out' -e 'codes/%x_%a_%t.err' \
          sh -c 'echo rank $SLURM_PROCID; echo oops $SLURM_PROCID >&2'\n\
        srun -n1 -i 'in-%a.txt' -o 'codes/cat_%A_%a_%J' cat\n\
        srun -n1 sh -c 'echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT \
          $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $SLURM_JOB_ID $SLURM_STEP_ID'\n";
    std::fs::write(c.path("codes.sh"), script).unwrap();
    let a = c.sbatch(&["--array=1-2", "-n", "2", "-J", "codes", "-o", "batch-%A_%a.out", "codes.sh"]);
    let tasks = wait_tasks(&c, a, 2);
    let mut expected = Vec::new();
    for &(t, raw) in &tasks {
        for p in 0..2 {
            let name = format!("{a}-{t}-{raw}-{raw}.0-0-{p}-0-node1-{user}-codes-00{t}-{a:05}-%.out");
            assert_eq!(common::read(&c.path(&format!("codes/{name}"))), format!("rank {p}\n"), "{name}");
            expected.push(name);
            let name = format!("codes_{t}_{p}.err");
            assert_eq!(common::read(&c.path(&format!("codes/{name}"))), format!("oops {p}\n"), "{name}");
            expected.push(name);
        }
        let name = format!("cat_{a}_{t}_{raw}.1");
        assert_eq!(common::read(&c.path(&format!("codes/{name}"))), format!("input of task {t}\n"), "{name}");
        expected.push(name);
        // The step has the array's variables, as the batch step has them.
        let out = common::read(&c.path(&format!("batch-{a}_{t}.out")));
        assert_eq!(out, format!("{a} {t} 2 1 2 1 {raw} 2\n"), "task {t}");
    }
    expected.sort();
    assert_eq!(listing(&c.path("codes")), expected);
}

/// `sacct` names a step of an array task `A_T.S` (`JobIDRaw` is the task's own id), as
/// Slurm's sacct does, while it runs and once it ended.
#[test]
fn sacct_names_the_steps_of_an_array_task_by_the_array() {
    let c = Cluster::start("0", "");
    let running = c.sbatch(&["--array=3", "-o", "/dev/null", "--wrap", "srun sleep 60"]);
    wait_for("the step to run", T, || {
        let rows = sacct(&c, &running.to_string(), "JobID,State", &[]);
        until(rows.contains(&format!("{running}_3.0|RUNNING")), || format!("{rows:?}"))
    });
    assert!(c.run("scancel", &[&running.to_string()]).status.success());
    let a = c.sbatch(&["--array=0-1", "-J", "arr", "-o", "/dev/null", "--wrap", "srun true; srun -J second true"]);
    let tasks = wait_tasks(&c, a, 2);
    let rows = sacct(&c, &a.to_string(), "JobID,JobIDRaw,JobName,State", &[]);
    let mut expected = Vec::new();
    for &(t, raw) in &tasks {
        expected.extend([
            format!("{a}_{t}|{raw}|arr|COMPLETED"),
            format!("{a}_{t}.batch|{raw}.batch|batch|COMPLETED"),
            format!("{a}_{t}.0|{raw}.0|true|COMPLETED"),
            format!("{a}_{t}.1|{raw}.1|second|COMPLETED"),
        ]);
    }
    assert_eq!(rows, expected);
    // One task's steps, by its A_T name.
    let (t, raw) = tasks[1];
    let rows = sacct(&c, &format!("{a}_{t}"), "JobID,JobIDRaw", &[]);
    assert_eq!(
        rows,
        [
            format!("{a}_{t}|{raw}"),
            format!("{a}_{t}.batch|{raw}.batch"),
            format!("{a}_{t}.0|{raw}.0"),
            format!("{a}_{t}.1|{raw}.1")
        ]
    );
}
