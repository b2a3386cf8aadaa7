//! The steps of running jobs as `squeue -s` and `scontrol show step` show them, compared
//! with what Slurm 26.05 prints for the same kind of job: a batch job's `batch` step and
//! its srun steps, a step of an array task named `A_T.S`, Slurm's formats, filters and
//! error texts.

use crate::common;
use common::T;

use common::{stderr, stdout, until, wait_for, Cluster};

/// `CMD ARGS`, asserting that it succeeds; its output's lines.
fn lines(c: &Cluster, cmd: &str, args: &[&str]) -> Vec<String> {
    let o = c.run(cmd, args);
    assert!(o.status.success(), "{cmd} {args:?}: {}", stderr(&o));
    stdout(&o).lines().map(String::from).collect()
}

/// Waits until `squeue -s -h -o %i` lists exactly `ids` (in that order).
fn wait_steps(c: &Cluster, ids: &[String]) {
    wait_for("the steps to run", T, || {
        let seen = lines(c, "squeue", &["-s", "-h", "-o", "%i"]);
        until(seen == ids, || format!("{seen:?}; log:\n{}", c.log()))
    });
}

fn user() -> String {
    slurmlet::identity::user_name(slurmlet::identity::uid())
}

/// A running array task with an srun step: squeue names its steps `A_T.0` and `A_T.batch`
/// (srun steps before the batch step, tasks by job id), scontrol `StepId=A_T.0`, and both
/// find them by the task's name.
#[test]
fn the_steps_of_a_running_array_task_are_named_by_the_array() {
    let c = Cluster::start("0", "");
    let a = c.sbatch(&["--array=1-2", "-J", "arr", "-o", "/dev/null", "--wrap", "srun sleep 60"]);
    wait_steps(&c, &[format!("{a}_1.0"), format!("{a}_1.batch"), format!("{a}_2.0"), format!("{a}_2.batch")]);
    let part = c.job(a).partition;
    let me = user();
    let out = lines(&c, "squeue", &["-s"]);
    assert_eq!(out[0], "         STEPID     NAME PARTITION     USER      TIME NODELIST");
    let row =
        |id: String, name: &str| format!("{id:>15} {name:>8} {part:>9} {:>8}", me.chars().take(8).collect::<String>());
    for (line, (id, name)) in out[1..].iter().zip([
        (format!("{a}_1.0"), "sleep"),
        (format!("{a}_1.batch"), "batch"),
        (format!("{a}_2.0"), "sleep"),
        (format!("{a}_2.batch"), "batch"),
    ]) {
        assert!(line.starts_with(&row(id, name)), "{line:?} in {out:#?}");
        assert!(line.ends_with(" node1"), "{line:?}");
    }
    assert_eq!(out.len(), 5, "{out:#?}");

    // One task's steps, by step list or by job.
    assert_eq!(lines(&c, "squeue", &["-s", &format!("{a}_2.0"), "-h", "-o", "%i %j"]), [format!("{a}_2.0 sleep")]);
    let task2 = lines(&c, "squeue", &["-s", "-j", &format!("{a}_2"), "-h", "-o", "%i"]);
    assert_eq!(task2, [format!("{a}_2.0"), format!("{a}_2.batch")]);

    // scontrol: the task's batch step, then its srun step, in Slurm's layout.
    let o = c.run("scontrol", &["show", "step", &format!("{a}_1")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let records: Vec<&str> = text.split("\n\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(records.len(), 2, "{text}");
    let uid = slurmlet::identity::uid();
    assert!(records[0].starts_with(&format!("StepId={a}_1.batch UserId={uid} StartTime=")), "{text}");
    assert!(records[1].starts_with(&format!("StepId={a}_1.0 UserId={uid} StartTime=")), "{text}");
    let srun: Vec<&str> = records[1].lines().collect();
    assert!(srun[0].ends_with(" TimeLimit=UNLIMITED"), "{text}");
    assert_eq!(srun[1], format!("   State=RUNNING Partition={part} NodeList=node1"));
    assert_eq!(srun[2], "   Nodes=1 CPUs=1 Tasks=1 Name=sleep Network=(null)");
    assert!(srun[3].starts_with("   TRES=cpu=1,"), "{text}");
    assert_eq!(srun[4..6], ["   ResvPorts=(null)", "   CPUFreqReq=Default Dist=Cyclic"]);
    assert!(srun[6].starts_with(&format!("   SrunHost:Pid={}:", slurmlet::paths::hostname())), "{text}");
    assert_eq!(srun.len(), 7, "{text}");
    let batch: Vec<&str> = records[0].lines().collect();
    assert_eq!(
        batch[2..],
        [
            "   Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)",
            "   TRES=(null)",
            "   ResvPorts=(null)",
            "   CPUFreqReq=Default",
            "   SrunHost:Pid=(null):0"
        ]
    );

    // One step by its A_T.S name, on one line with -o: as Slurm 26.05, step S of job A
    // itself, which must be task T. Job A is the array's first task here.
    let one = lines(&c, "scontrol", &["-o", "show", "step", &format!("{a}_1.0")]);
    assert_eq!(one.len(), 1, "{one:#?}");
    assert!(one[0].starts_with(&format!("StepId={a}_1.0 UserId={uid} ")), "{one:#?}");
    let o = c.run("scontrol", &["show", "step", &format!("{a}_2.0")]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), format!("Job step {a}_2.0 not found\n")));
    let task2 = (a + 1).to_string();
    let one = lines(&c, "scontrol", &["-o", "show", "step", &format!("{task2}.0")]);
    assert!(one[0].starts_with(&format!("StepId={a}_2.0 UserId={uid} ")), "{one:#?}");
    assert!(one[0].contains(" State=RUNNING Partition=") && one[0].contains(" Name=sleep "), "{one:#?}");
    // The array's id names every task's steps.
    let all = lines(&c, "scontrol", &["-o", "show", "steps", &a.to_string()]);
    let ids: Vec<&str> = all.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        ids,
        [
            format!("StepId={a}_1.batch"),
            format!("StepId={a}_1.0"),
            format!("StepId={a}_2.batch"),
            format!("StepId={a}_2.0")
        ]
    );
}

/// A plain job's steps: only those that run are listed (an ended step is not), with their
/// own names and time limits; the formats, filters and errors of squeue -s.
#[test]
fn squeue_lists_the_running_steps_of_a_job_in_slurms_formats() {
    let c = Cluster::start("0", "");
    let script = "srun -J quick true; srun -J named -t 5 sleep 60 & sleep 1; srun --overlap sleep 60 & wait";
    let j = c.sbatch(&["-J", "plain", "-o", "/dev/null", "--wrap", script]);
    wait_steps(&c, &[format!("{j}.1"), format!("{j}.2"), format!("{j}.batch")]);
    let me = user();
    let uid = slurmlet::identity::uid();
    assert_eq!(
        lines(&c, "squeue", &["-s", "-h", "-o", "%i|%j|%l|%A|%U|%u|%N|%b"]),
        [
            format!("{j}.1|named|5:00|1|{uid}|{me}|node1|(null)"),
            format!("{j}.2|sleep|UNLIMITED|1|{uid}|{me}|node1|(null)"),
            format!("{j}.batch|batch|UNLIMITED|1|{uid}|{me}|node1|(null)"),
        ]
    );
    // -O names (Slurm's, for steps), 20 wide by default.
    let long = lines(&c, "squeue", &["-s", "-O", "StepId:12,StepName:8,NumCPUs:.4,JobId:6,ArrayTaskId"]);
    assert_eq!(long[0], format!("{:<12}{:<8}{:>4}{:<6}{:<20}", "STEPID", "NAME", "NUM_", "JOB_ID", "ARRAY_TASK_ID"));
    assert_eq!(long[3], format!("{:<12}{:<8}{:>4}{:<6}{:<20}", format!("{j}.batch"), "batch", "0", j, "N/A"));
    // Sorted by another key, reversed.
    let by_id = lines(&c, "squeue", &["-s", "-h", "-o", "%i", "-S", "-i"]);
    assert_eq!(by_id, [format!("{j}.batch"), format!("{j}.2"), format!("{j}.1")]);
    // A field Slurm does not know for steps: its error, and the text as written.
    let o = c.run("squeue", &["-s", "-h", "-o", "%i %t", &format!("{j}.1")]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "squeue: error: Invalid job step format specification: t\n");
    assert_eq!(stdout(&o), format!("{j}.1 %t\n"));
    // Filters: the user, --me, a partition, an unknown step, a step list.
    assert_eq!(lines(&c, "squeue", &["-s", "-h", "--me", "-o", "%i"]).len(), 3);
    assert_eq!(lines(&c, "squeue", &["-s", "-h", "-u", &me, "-o", "%i"]).len(), 3);
    assert!(lines(&c, "squeue", &["-s", "-h", "-p", "nosuchpart"]).is_empty());
    assert_eq!(
        lines(&c, "squeue", &["-s", "99999.0"]),
        ["         STEPID     NAME PARTITION     USER      TIME NODELIST"]
    );
    let listed = lines(&c, "squeue", &[&format!("--steps={j}.2,{j}.batch"), "-h", "-o", "%i"]);
    assert_eq!(listed, [format!("{j}.2"), format!("{j}.batch")]);
    let o = c.run("squeue", &["-s", "-u", "nosuchuser"]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "squeue: error: Invalid user: nosuchuser\n\n");
    assert_eq!(stdout(&o), "         STEPID     NAME PARTITION     USER      TIME NODELIST\n");
    // A step list entry without a step.
    let o = c.run("squeue", &["-s", &j.to_string()]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(1), format!("squeue: error: Invalid job_step id: {j}.??\n")));
    // Without -s, squeue still lists jobs, not steps.
    let jobs = lines(&c, "squeue", &["-h", "-o", "%i %j"]);
    assert_eq!(jobs, [format!("{j} plain")]);
}

/// `scontrol show step` for steps that are not there, as Slurm words it.
#[test]
fn scontrol_show_step_says_what_slurm_says_of_missing_steps() {
    let c = Cluster::start("0", "");
    let o = c.run("scontrol", &["show", "step"]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "No job steps in the system\n".into()));
    let o = c.run("scontrol", &["show", "step", "99999.0"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "scontrol: error: scontrol_print_step: slurm_get_job_steps(99999.0) failed: Invalid job id specified\n"
    );
    let o = c.run("scontrol", &["show", "step", "abc"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "scontrol: error: scontrol_print_step: slurm_get_job_steps(abc) failed: JobID can not be zero\n"
    );
    let j = c.sbatch(&["-o", "/dev/null", "--wrap", "srun sleep 60; sleep 60"]);
    wait_steps(&c, &[format!("{j}.0"), format!("{j}.batch")]);
    let o = c.run("scontrol", &["show", "step", &format!("{j}.7")]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), format!("Job step {j}.7 not found\n")));
    let o = c.run("scontrol", &["-Q", "show", "step", &format!("{j}.7")]);
    assert_eq!((o.status.code(), stdout(&o), stderr(&o)), (Some(1), String::new(), String::new()));
    let held = c.sbatch(&["-H", "-o", "/dev/null", "--wrap", "true"]);
    let o = c.run("scontrol", &["show", "step", &held.to_string()]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), format!("Job step {held}. not found\n")));
    // Once the step ends it is gone from both views.
    assert!(c.run("scancel", &[&format!("{j}.0")]).status.success());
    wait_steps(&c, &[format!("{j}.batch")]);
    let o = c.run("scontrol", &["show", "step", &format!("{j}.0")]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), format!("Job step {j}.0 not found\n")));
}

/// A daemon restarted while steps run lists them again: it takes them back from their
/// directories, records and all (only their srun is not known any more).
#[test]
fn steps_running_across_a_daemon_restart_are_still_listed() {
    let mut c = Cluster::start("0", "");
    let a = c.sbatch(&["--array=4", "-o", "/dev/null", "--wrap", "srun -J kept -t 7 sleep 60"]);
    let ids = [format!("{a}_4.0"), format!("{a}_4.batch")];
    wait_steps(&c, &ids);
    c.kill_daemon();
    c.start_daemon();
    wait_steps(&c, &ids);
    assert_eq!(
        lines(&c, "squeue", &["-s", "-h", "-o", "%i|%j|%l|%A"]),
        [format!("{a}_4.0|kept|7:00|1"), format!("{a}_4.batch|batch|UNLIMITED|1")]
    );
    let step = lines(&c, "scontrol", &["-o", "show", "step", &format!("{a}_4.0")]);
    assert_eq!(step.len(), 1, "{step:#?}");
    assert!(step[0].contains(" Name=kept ") && step[0].ends_with(" SrunHost:Pid=(null):0"), "{step:#?}");
}
