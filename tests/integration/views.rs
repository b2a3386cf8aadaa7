//! squeue and sinfo against a live daemon, through their symlinks.

use crate::common;
use common::*;
use std::time::Duration;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn squeue_and_sinfo_show_the_queue_as_slurm_does() {
    let c = Cluster::start("4", "");
    let run = c.sbatch(&["-J", "sleeper", "--gres=gpu:4", "-o", "s.out", "--wrap", "echo up; sleep 300"]);
    let pend = c.sbatch(&["-J", "waiting", "--gres=gpu:1", "-t", "5", "--wrap", "true"]);
    let held = c.sbatch(&["-J", "held", "--hold", "--wrap", "true"]);
    c.wait_file("s.out", Duration::from_secs(20));

    let o = c.run("squeue", &[]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)");
    assert_eq!(lines.len(), 4, "{text}");
    let row = |id: u32| lines.iter().find(|l| l.split_whitespace().next() == Some(&id.to_string())).copied().unwrap();
    assert!(row(pend).ends_with("PD       0:00      1 (Resources)"), "{text}");
    assert!(row(held).ends_with("(JobHeldUser)"), "{text}");
    assert!(row(run).contains(" R ") && row(run).ends_with(" node1"), "{text}");

    let o = c.run("squeue", &["-h", "-o", "%i %t", "-t", "PD"]);
    let mut got: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    got.sort();
    let mut want = vec![format!("{pend} PD"), format!("{held} PD")];
    want.sort();
    assert_eq!(got, want);

    let o = c.run("squeue", &["-j", "999999"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "slurm_load_jobs error: Invalid job id specified\n");

    // Wider than the daemon lays a listing out: squeue asks for the values and lays them out
    // itself, the same way.
    let o = c.run("squeue", &["-h", "-o", "%.5000i|%t", "-j", &held.to_string()]);
    assert_eq!(stdout(&o), format!("{held:>5000}|PD\n"));
    let o = c.run("squeue", &["-h", "-o", "%.5000i", "-j", "999999"]);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "slurm_load_jobs error: Invalid job id specified\n");

    let o = c.run("squeue", &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("squeue --json is JSON");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3);

    let o = c.run("sinfo", &[]);
    // One CPU of eight in use: the node is mixed, as Slurm reports it.
    assert_eq!(
        stdout(&o),
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ngpu*         up   infinite      1    mix node1\n"
    );
    let o = c.run("sinfo", &["-h", "-N", "-o", "%N %G %C"]);
    assert_eq!(stdout(&o), "node1 gpu:4 1/7/0/8\n");
    let o = c.run("sinfo", &["-O", "Gres,GresUsed", "-h"]);
    let cols: Vec<String> = stdout(&o).split_whitespace().map(str::to_string).collect();
    assert_eq!(cols, vec!["gpu:4", "gpu:4(IDX:0-3)"]);
    let o = c.run("squeue", &["--bogus"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n"
    );
}

#[test]
fn finished_jobs_stay_visible_for_min_job_age_then_leave_the_queue() {
    const MIN_JOB_AGE: u64 = 2;
    let c = Cluster::start("0", &format!("min_job_age = {MIN_JOB_AGE}"));
    let mut cmd = c.cmd("sbatch");
    let mut child =
        cmd.arg("--parsable").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"#!/bin/sh\necho from-stdin $SLURM_JOB_NAME\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let id: u32 = stdout(&o).trim().parse().unwrap();
    let end = c.wait_state(id, &["COMPLETED"], Duration::from_secs(20)).end_time.number;
    assert_eq!(read(&c.path(&format!("slurm-{id}.out"))), "from-stdin sbatch\n");
    // The daemon keeps a finished job while its clock (whole seconds) is at most its end
    // time + MinJobAge; this machine's clock, read after an answer, is at least as late.
    let all = || {
        let listed = stdout(&c.run("squeue", &["-h", "-t", "all", "-o", "%i %T"]));
        (listed, unix_now())
    };
    // Hidden from the default view, shown with -t all while younger than MinJobAge.
    assert_eq!(stdout(&c.run("squeue", &["-h", "-o", "%i %T"])), "");
    let (listed, answered) = all();
    if answered <= end + MIN_JOB_AGE {
        assert_eq!(listed, format!("{id} COMPLETED\n"), "ended at {end}, listed by {answered}");
    } else {
        skip(
            "finished_jobs_stay_visible_for_min_job_age_then_leave_the_queue (its listing while younger than MinJobAge)",
            &format!("the listing came {} s after the job's end, past MinJobAge", answered - end),
        );
    }
    // Then it leaves the queue, and not before MinJobAge has passed.
    let left = wait_for("the finished job to leave the queue", Duration::from_secs(30), || {
        let (listed, answered) = all();
        until(listed.is_empty(), || listed.clone()).map(|()| answered)
    });
    assert!(left > end + MIN_JOB_AGE, "ended at {end}, gone by {left}");
    let o = c.run("squeue", &["-j", &id.to_string()]);
    assert_eq!(o.status.code(), Some(1));
}

/// This machine's clock, in whole seconds since the epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[test]
fn squeue_sorts_by_the_fields_asked_for() {
    let c = Cluster::start("0", "");
    // Names and time limits whose text orders differ from their ids' and values' orders.
    let run = c.sbatch(&["-J", "mid", "-t", "30", "--wrap", "sleep 300"]);
    c.wait_state(run, &["RUNNING"], Duration::from_secs(20));
    let held = c.sbatch(&["-J", "zeta", "-t", "5", "--hold", "--wrap", "true"]);
    // One begin time for both (their expected start, as squeue shows and sorts it).
    let begin = std::process::Command::new("date").args(["-d", "+1 hour", "+%Y-%m-%dT%H:%M:%S"]).output().unwrap();
    let begin = String::from_utf8_lossy(&begin.stdout).trim().to_string();
    let later = c.sbatch(&["-J", "Alpha", "-t", "2:00:00", "--begin", &begin, "--wrap", "true"]);
    let unlimited = c.sbatch(&["-J", "beta", "--begin", &begin, "--wrap", "true"]);
    let squeue = |env: Option<&str>, args: &[&str]| {
        let mut cmd = c.cmd("squeue");
        cmd.env_remove("SQUEUE_SORT").env_remove("SQUEUE_FORMAT").args(["-h", "-o", "%i"]).args(args);
        if let Some(sort) = env {
            cmd.env("SQUEUE_SORT", sort);
        }
        cmd.output().unwrap()
    };
    let order = |env: Option<&str>, args: &[&str]| {
        let o = squeue(env, args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{args:?}");
        stdout(&o).lines().map(|l| l.trim().parse::<u32>().unwrap()).collect::<Vec<_>>()
    };
    // The default: partition, state (PD before R), priority highest first (the held job's is 0).
    assert_eq!(order(None, &[]), vec![later, unlimited, held, run]);
    // Names as bytes: "Alpha" < "beta" < "mid" < "zeta".
    assert_eq!(order(None, &["-S", "j"]), vec![later, unlimited, run, held]);
    assert_eq!(order(None, &["-S", "-j"]), vec![held, run, unlimited, later]);
    assert_eq!(order(None, &["--sort=+j"]), vec![later, unlimited, run, held]);
    // State, then job id descending within a state.
    assert_eq!(order(None, &["-S", "t,-i"]), vec![unlimited, later, held, run]);
    assert_eq!(order(None, &["-S", "-t,i"]), vec![run, held, later, unlimited]);
    // Time limits by value (5:00 < 30:00 < 2:00:00 < UNLIMITED), not by their text.
    assert_eq!(order(None, &["-S", "l"]), vec![held, run, later, unlimited]);
    assert_eq!(order(None, &["--sort", "-l"]), vec![unlimited, later, run, held]);
    // SQUEUE_SORT stands in for -S, which wins over it.
    assert_eq!(order(Some("-i"), &[]), vec![unlimited, later, held, run]);
    assert_eq!(order(Some("-i"), &["-S", "i"]), vec![run, held, later, unlimited]);
    // -S applies to any format, and the long one.
    let o = squeue(None, &["-S", "-l", "-O", "Name:6,TimeLimit"]);
    assert_eq!(stdout(&o), "beta  UNLIMITED           \nAlpha 2:00:00             \nmid   30:00               \nzeta  5:00                \n");

    // A letter squeue does not sort by: its error, and nothing listed.
    // squeue reads the letters from the end: JobID is D, I, then b (remarked upon), then o.
    for (spec, err) in [
        ("i,x", "squeue: error: Invalid sort specification: x\n"),
        ("-a", "squeue: error: Invalid sort specification: a\n"),
        ("JobID", "squeue: Invalid sort specification: b\nsqueue: error: Invalid sort specification: o\n"),
    ] {
        let o = squeue(None, &["-S", spec]);
        assert_eq!(o.status.code(), Some(1), "{spec}");
        assert_eq!(stdout(&o), "", "{spec}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), err);
    }
    let o = squeue(Some("q"), &[]);
    assert_eq!(
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned()),
        (Some(1), "squeue: error: Invalid sort specification: q\n".to_string())
    );
    // `b`, the sort by generic resources Slurm dropped, is remarked upon and skipped; with no
    // key left, jobs keep squeue's first order: the latest (expected) start first, then by
    // id; the held job, with none, last.
    let o = squeue(None, &["-S", "b"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr), "squeue: Invalid sort specification: b\n");
    assert_eq!(stdout(&o), format!("{later}\n{unlimited}\n{run}\n{held}\n"));
    // An option given twice takes its last value, as with getopt.
    let o = squeue(None, &["-j", &later.to_string(), "-o", "%S"]);
    assert_eq!(stdout(&o).trim(), begin, "a job held back by --begin shows it as its start");
}

/// squeue's own order when the keys tie, as Slurm 26.05 lists it: started jobs the latest
/// first; unstarted ones (held here) the latest submitted first, an array's tasks together
/// in task order (`32, 31_0, 31_1, 31_2, 30, 29` on the real cluster).
#[test]
fn squeue_lists_ties_in_slurms_order() {
    let c = Cluster::start("0", "");
    let first = c.sbatch(&["--wrap", "true"]);
    let started = c.wait_state(first, &["COMPLETED"], Duration::from_secs(20)).start_time.number;
    // Started in a later second.
    wait_for("the clock to pass the first job's start second", Duration::from_secs(20), || {
        let now = unix_now();
        until(now > started, || format!("{now}"))
    });
    let second = c.sbatch(&["--wrap", "true"]);
    c.wait_state(second, &["COMPLETED"], Duration::from_secs(20));
    let h1 = c.sbatch(&["--hold", "--wrap", "true"]);
    let h2 = c.sbatch(&["--hold", "--wrap", "true"]);
    let arr = c.sbatch(&["--hold", "--array=0-2", "--wrap", "true"]);
    let h3 = c.sbatch(&["--hold", "--wrap", "true"]);
    let ids = |args: &[&str]| -> Vec<String> {
        stdout(&c.run("squeue", &[&["--me", "-h", "-o", "%i"], args].concat())).lines().map(String::from).collect()
    };
    let tasks: Vec<String> = (0..3).map(|t| format!("{arr}_{t}")).collect();
    let mut want = vec![second.to_string(), first.to_string(), h3.to_string()];
    want.extend(tasks.iter().cloned());
    want.extend([h2.to_string(), h1.to_string()]);
    assert_eq!(ids(&["-r", "-t", "all"]), want);
    assert_eq!(ids(&[]), [h3.to_string(), format!("{arr}_[0-2]"), h2.to_string(), h1.to_string()]);
}
