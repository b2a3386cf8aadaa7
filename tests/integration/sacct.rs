//! sacct over the daemon's job history: Slurm's rows for jobs, their batch scripts and srun
//! steps, its states, exit codes and errors, its time windows, the history kept across
//! restarts and after jobs leave the queue, and slurmrestd's accounting replies.

use crate::common;
use common::http::http;
use common::T;
use common::*;
use std::time::Duration;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `sacct ARGS`: (stdout, stderr, exit code).
fn sacct(c: &Cluster, args: &[&str]) -> (String, String, i32) {
    let out = c.run("sacct", args);
    (text(&out.stdout), text(&out.stderr), out.status.code().unwrap_or(-1))
}

/// `sacct ARGS`, asserting success: its lines.
fn rows(c: &Cluster, args: &[&str]) -> Vec<String> {
    let (out, err, code) = sacct(c, args);
    assert_eq!(code, 0, "sacct {args:?}: {err}");
    assert!(err.is_empty(), "sacct {args:?}: {err}");
    out.lines().map(String::from).collect()
}

fn uid() -> u32 {
    slurmlet::identity::uid()
}

#[test]
fn finished_jobs_have_slurms_rows_states_and_exit_codes() {
    let c = Cluster::start("0", "");
    let ok = c.sbatch(&["-J", "ok", "--wrap", "true"]);
    let fail = c.sbatch(&["-J", "fail3", "--wrap", "exit 3"]);
    let kill = c.sbatch(&["-J", "killself", "--wrap", "kill -9 $$"]);
    c.wait_state(ok, &["COMPLETED"], T);
    c.wait_state(fail, &["FAILED"], T);
    c.wait_state(kill, &["FAILED"], T);
    let ids = format!("{ok},{fail},{kill}");
    assert_eq!(
        rows(&c, &["-j", &ids, "-o", "JobID,JobName,State,ExitCode,DerivedExitCode", "-P"]),
        [
            "JobID|JobName|State|ExitCode|DerivedExitCode".to_string(),
            format!("{ok}|ok|COMPLETED|0:0|0:0"),
            format!("{ok}.batch|batch|COMPLETED|0:0|"),
            format!("{fail}|fail3|FAILED|3:0|0:0"),
            format!("{fail}.batch|batch|FAILED|3:0|"),
            format!("{kill}|killself|FAILED|0:9|0:0"),
            format!("{kill}.batch|batch|CANCELLED|0:9|"),
        ]
    );
    // The default columns, header and widths.
    assert_eq!(
        rows(&c, &["-j", &ok.to_string()]),
        [
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ".to_string(),
            "------------ ---------- ---------- ---------- ---------- ---------- -------- ".to_string(),
            format!("{ok:<12}         ok        gpu    default          1  COMPLETED      0:0 "),
            format!("{:<12}      batch               default          1  COMPLETED      0:0 ", format!("{ok}.batch")),
        ]
    );
    // -X: allocations only; -n: no header; -p: a trailing '|'.
    assert_eq!(
        rows(&c, &["-j", &ids, "-X", "-n", "-p", "-o", "JobIDRaw,State"]),
        [format!("{ok}|COMPLETED|"), format!("{fail}|FAILED|"), format!("{kill}|FAILED|")]
    );
    // A step alone, and widths of one's own.
    assert_eq!(
        rows(&c, &["-j", &format!("{fail}.batch"), "-n", "-P", "-o", "JobID,State"]),
        [format!("{fail}.batch|FAILED")]
    );
    assert_eq!(
        rows(&c, &["-j", &kill.to_string(), "-X", "-o", "JobID%6,JobName%4,State%-8", "-n"]),
        [format!("{kill:>6} kil+ FAILED   ")]
    );
}

#[test]
fn cancelled_jobs_say_who_cancelled_them() {
    let c = Cluster::start("0", "");
    let running = c.sbatch(&["-J", "sleeper", "--wrap", "sleep 300"]);
    let held = c.sbatch(&["-J", "held", "--hold", "--wrap", "true"]);
    c.wait_state(running, &["RUNNING"], T);
    for id in [running, held] {
        assert!(c.run("scancel", &[&id.to_string()]).status.success());
        c.wait_state(id, &["CANCELLED"], T);
    }
    let me = uid();
    let ids = format!("{running},{held}");
    assert_eq!(
        rows(&c, &["-j", &ids, "-n", "-P", "-o", "JobID,State,ExitCode,AllocCPUS,NodeList"]),
        [
            format!("{running}|CANCELLED by {me}|0:0|1|node1"),
            format!("{running}.batch|CANCELLED|0:15|1|node1"),
            format!("{held}|CANCELLED by {me}|0:0|0|None assigned"),
        ]
    );
    let fixed = rows(&c, &["-j", &ids, "-X", "-n", "-o", "JobID,State"]);
    assert_eq!(fixed, [format!("{running:<12} CANCELLED+ "), format!("{held:<12} CANCELLED+ ")]);
    // A held job that never started has no start; one still pending shows Unknown.
    let pending = c.sbatch(&["--hold", "--wrap", "true"]);
    assert_eq!(
        rows(&c, &["-j", &format!("{held},{pending}"), "-n", "-P", "-o", "JobID,State,Start,End,Elapsed"]),
        [
            format!("{held}|CANCELLED by {me}|None|{}|00:00:00", end_of(&c, held)),
            format!("{pending}|PENDING|Unknown|Unknown|00:00:00")
        ]
    );
}

/// The End that `sacct` prints for job `id`.
fn end_of(c: &Cluster, id: u32) -> String {
    rows(c, &["-j", &id.to_string(), "-X", "-n", "-P", "-o", "End"]).remove(0)
}

#[test]
fn srun_steps_have_rows_of_their_own() {
    let c = Cluster::start("0", "");
    std::fs::write(
        c.path("steps.sh"),
        "#!/bin/bash\n#SBATCH -n 2\nsrun true\nsrun -n2 sh -c 'exit 7'\nsrun -J named -n1 sh -c 'exit 0'\n",
    )
    .unwrap();
    let id = c.sbatch(&["-J", "steps", "steps.sh"]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(
        rows(
            &c,
            &["-j", &id.to_string(), "-n", "-P", "-o", "JobID,JobName,State,ExitCode,DerivedExitCode,AllocCPUS,NTasks"]
        ),
        [
            format!("{id}|steps|COMPLETED|0:0|7:0|2|"),
            format!("{id}.batch|batch|COMPLETED|0:0||2|1"),
            format!("{id}.0|true|COMPLETED|0:0||2|2"),
            format!("{id}.1|sh|FAILED|7:0||2|2"),
            format!("{id}.2|named|COMPLETED|0:0||1|1"),
        ]
    );
    // What the steps' processes used: measured for steps, none for the allocation's row.
    let usage = rows(&c, &["-j", &id.to_string(), "-n", "-P", "-o", "JobID,MaxRSS,TotalCPU"]);
    let (job_row, steps) = usage.split_first().unwrap();
    assert!(job_row.starts_with(&format!("{id}||")), "{job_row}");
    for row in steps {
        let rss = row.split('|').nth(1).unwrap();
        assert!(rss.ends_with('K') || rss.ends_with('M'), "a step's largest resident set: {row}");
    }
    // srun outside a job: an allocation and its step, no batch script.
    let out = c.run("srun", &["-J", "alloc", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let alloc = rows(&c, &["--name", "ALLOC", "-X", "-n", "-P", "-o", "JobID"]).remove(0);
    c.wait_state(alloc.parse().unwrap(), &["COMPLETED"], T);
    assert_eq!(
        rows(&c, &["-j", &alloc, "-n", "-P", "-o", "JobID,JobName,State"]),
        [format!("{alloc}|alloc|COMPLETED"), format!("{alloc}.0|alloc|COMPLETED")]
    );
}

#[test]
fn a_job_that_reaches_its_time_limit_and_its_step() {
    let c = Cluster::start("0", "");
    std::fs::write(c.path("long.sh"), "#!/bin/bash\n#SBATCH -t 1\nsrun sleep 300\n").unwrap();
    let id = c.sbatch(&["-J", "tlimit", "-o", "long.out", "long.sh"]);
    c.wait_state(id, &["TIMEOUT"], Duration::from_secs(100));
    // As Slurm 26.05 records it: the job's row 0:0 (written when the limit ended it), its
    // derived code and its steps' rows the SIGTERM that ended them.
    let got = rows(
        &c,
        &["-j", &id.to_string(), "-n", "-P", "-o", "JobID,JobName,State,ExitCode,Timelimit,Elapsed,DerivedExitCode"],
    );
    let fields: Vec<Vec<&str>> = got.iter().map(|l| l.split('|').collect()).collect();
    assert_eq!(fields.len(), 3, "{got:?}");
    assert_eq!(fields[0][..5], [&id.to_string(), "tlimit", "TIMEOUT", "0:0", "00:01:00"]);
    assert_eq!(fields[0][6], "0:15", "{got:?}");
    assert_eq!(fields[1][..5], [&format!("{id}.batch"), "batch", "CANCELLED", "0:15", ""]);
    assert_eq!(fields[2][..5], [&format!("{id}.0"), "sleep", "CANCELLED", "0:15", ""]);
    assert!(fields[0][5] >= "00:01:00", "{got:?}");
    // The controller's view: the batch script's status.
    let show = text(&c.run("scontrol", &["show", "job", &id.to_string()]).stdout);
    assert!(show.contains(" ExitCode=0:15\n"), "{show}");
    // slurmstepd's lines, with the node in their prefix.
    let out = read(&c.path("long.out"));
    for what in [format!("STEP {id}.0"), format!("JOB {id}")] {
        let prefix = format!("slurmstepd-node1: error: *** {what} ON node1 CANCELLED AT ");
        let line = out.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {prefix:?} in {out}"));
        assert!(line.ends_with(" DUE TO TIME LIMIT ***"), "{line}");
    }
}

#[test]
fn history_survives_restarts_and_outlives_the_queue() {
    let mut c = Cluster::start("0", "min_job_age = 1\n");
    let done = c.sbatch(&["-J", "early", "--wrap", "true"]);
    c.wait_state(done, &["COMPLETED"], T);
    // Gone from squeue after MinJobAge, still in the history.
    wait_for("the job to leave the queue", T, || {
        let listed = text(&c.run("squeue", &["-h", "-t", "all", "-o", "%i"]).stdout);
        until(!listed.contains(&done.to_string()), || listed)
    });
    let expect = [format!("{done}|early|COMPLETED"), format!("{done}.batch|batch|COMPLETED")];
    assert_eq!(rows(&c, &["-j", &done.to_string(), "-n", "-P", "-o", "JobID,JobName,State"]), expect);
    // A job whose step, then itself, end while no daemon runs.
    std::fs::write(
        c.path("wait.sh"),
        "#!/bin/bash\nsrun sh -c 'echo x > started; while [ ! -e go ]; do sleep 0.05; done; exit 4'\ntouch finished\n",
    )
    .unwrap();
    let later = c.sbatch(&["-J", "across", "wait.sh"]);
    c.wait_file("started", T);
    c.kill_daemon();
    std::fs::write(c.path("go"), "").unwrap();
    wait_for("the job to end without a daemon", T, || until(c.path("finished").exists(), String::new));
    c.start_daemon();
    c.wait_state(later, &["COMPLETED"], T);
    assert_eq!(rows(&c, &["-j", &done.to_string(), "-n", "-P", "-o", "JobID,JobName,State"]), expect);
    assert_eq!(
        rows(&c, &["-j", &later.to_string(), "-n", "-P", "-o", "JobID,JobName,State,ExitCode,DerivedExitCode"]),
        [
            format!("{later}|across|COMPLETED|0:0|4:0"),
            format!("{later}.batch|batch|COMPLETED|0:0|"),
            format!("{later}.0|sh|FAILED|4:0|"),
        ]
    );
    // Both are in the listing of the day, in submit order.
    let ids = rows(&c, &["-X", "-n", "-P", "-o", "JobID"]);
    assert_eq!(ids, [done.to_string(), later.to_string()]);
}

#[test]
fn time_windows_states_and_names_select_as_slurm_does() {
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["-J", "Windowed", "--wrap", "true"]);
    c.wait_state(id, &["COMPLETED"], T);
    let listed = |args: &[&str]| rows(&c, &[&["-X", "-n", "-P", "-o", "JobID"], args].concat());
    let me = [id.to_string()];
    assert_eq!(listed(&[]), me, "today's jobs by default");
    assert_eq!(listed(&["-S", "now-1hour"]), me);
    // The window has a start of its own: sacct's default start, midnight, is after
    // an hour ago in the first hour of the day, and Slurm refuses that window.
    assert!(listed(&["-S", "now-3hours", "-E", "now-1hour"]).is_empty(), "not eligible before the end");
    assert!(listed(&["-S", "2000-01-01", "-E", "2000-01-02T12:00"]).is_empty());
    assert_eq!(listed(&["-s", "CD", "-S", "now-1hour", "-E", "now"]), me);
    assert_eq!(listed(&["-s", "completed,F", "-S", "now-1hour", "-E", "now"]), me);
    assert!(listed(&["-s", "F,CA,TO", "-S", "now-1hour", "-E", "now"]).is_empty());
    // A state without an end is the instant of the start, as in Slurm: nothing ended then.
    assert!(listed(&["-s", "CD", "-S", "now-1hour"]).is_empty());
    assert_eq!(listed(&["--name", "windowed,other"]), me, "names match without case");
    assert!(listed(&["--name", "other"]).is_empty());
    assert_eq!(listed(&["-u", &uid().to_string()]), me);
    assert_eq!(listed(&["-r", "gpu"]), me);
    assert!(listed(&["-r", "debug"]).is_empty());
    let (out, err, code) = sacct(&c, &["-u", "no_such_user_x"]);
    // ours: no capture of sacct's refusals of a user or of a start after the end.
    assert_eq!((out.as_str(), err.as_str(), code), ("", "sacct: error: Invalid user id: no_such_user_x\n", 1));
    let (_, err, code) = sacct(&c, &["-S", "tomorrow"]);
    assert!(err.starts_with("sacct: error: Start time (") && err.contains("requested is after end time"), "{err}");
    assert_eq!(code, 1);
}

#[test]
fn errors_and_exit_codes_are_slurms() {
    let c = Cluster::start("0", "");
    for (args, stderr) in [
        (&["--bogus"][..], "sacct: unrecognized option '--bogus'\n"),
        (&["-Z"][..], "sacct: invalid option -- 'Z'\n"),
        (&["-j", "abc"][..], "sacct: fatal: Bad job/step specified: abc\n"),
        (&["-j"][..], "sacct: option requires an argument -- 'j'\n"),
        (&["--jobs"][..], "sacct: option '--jobs' requires an argument\n"),
        (&["-o", "Bogus"][..], "sacct: error: Invalid field requested: \"Bogus\"\n"),
        (&["-s", "CG"][..], "sacct: fatal: job state CG is not supported / accounted\n"),
        (&["-s", "nope"][..], "sacct: fatal: unrecognized job state value 'nope'\n"),
        (&["-S", "garbage"][..], "Invalid time specification (pos=0): garbage\n"),
        (
            &["-l", "-o", "JobID"][..],
            // ours: no capture.
            "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n",
        ),
        (&["-c"][..], "Slurm job completion is disabled\n"),
    ] {
        let (out, err, code) = sacct(&c, args);
        assert_eq!((out.as_str(), err.as_str(), code), ("", stderr, 1), "sacct {args:?}");
    }
    // An unknown job: the header alone, and success.
    assert_eq!(
        rows(&c, &["-j", "999999"]),
        [
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
            "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
        ]
    );
    let fields = rows(&c, &["--helpformat"]);
    assert_eq!(fields[0], "Account             AdminComment        AllocCPUS           AllocNodes         ");
    assert!(fields.iter().any(|l| l.contains("DerivedExitCode")));
}

#[test]
fn json_and_slurmrestds_accounting_replies() {
    let (c, addr) = Cluster::start_on_tcp("0", "");
    let id = c.sbatch(&["-J", "jsonjob", "--wrap", "exit 2"]);
    c.wait_state(id, &["FAILED"], T);
    let (out, err, code) = sacct(&c, &["--json", "-j", &id.to_string()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("sacct --json prints JSON");
    let job = &v["jobs"][0];
    assert_eq!(job["job_id"], id);
    assert_eq!(job["name"], "jsonjob");
    assert_eq!(job["state"]["current"], serde_json::json!(["FAILED"]));
    assert_eq!(job["exit_code"]["return_code"]["number"], 2);
    assert_eq!(job["steps"][0]["step"]["id"], format!("{id}.batch"));
    assert_eq!(job["steps"][0]["exit_code"]["status"], serde_json::json!(["ERROR"]));
    assert_eq!(v["meta"]["command"][0], "sacct");
    assert_eq!(v["meta"]["slurm"]["cluster"], "testcluster");

    // The same record from slurmrestd's accounting paths, on TCP with a token.
    let out = c.run("scontrol", &["token"]);
    let token = text(&out.stdout).trim().trim_start_matches("SLURM_JWT=").to_string();
    let auth = [("X-SLURM-USER-TOKEN", token.as_str())];
    let one = http(&addr, "GET", &format!("/slurmdb/v0.0.43/job/{id}"), &auth, None);
    assert_eq!(one.status, 200, "{}", one.body);
    let one = one.json();
    assert_eq!(one["jobs"][0]["job_id"], id);
    assert_eq!(one["jobs"][0]["steps"], job["steps"]);
    assert_eq!(one["meta"]["plugin"]["type"], "openapi/slurmdbd");
    let me = slurmlet::identity::user_name(uid());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let window = format!("start_time={}&end_time={}", now - 3600, now + 60);
    let listed = http(&addr, "GET", &format!("/slurmdb/v0.0.43/jobs?users={me}&state=FAILED&{window}"), &auth, None);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.json()["jobs"][0]["job_id"], id);
    // A state without an end: the instant of the start, as slurmrestd reads it.
    let instant =
        http(&addr, "GET", &format!("/slurmdb/v0.0.43/jobs?state=FAILED&start_time={}", now - 3600), &auth, None);
    assert_eq!(instant.json()["jobs"], serde_json::json!([]));
    let none = http(&addr, "GET", "/slurmdb/v0.0.43/jobs?job_name=nothing_like_it", &auth, None).json();
    assert_eq!(none["jobs"], serde_json::json!([]));
    assert_eq!(none["warnings"][0]["description"], "slurmdb_jobs_get() found nothing");
    let abbreviated = http(&addr, "GET", "/slurmdb/v0.0.43/jobs?state=TO", &auth, None);
    assert_eq!(abbreviated.status, 400, "a bad state is the client's error, not the server's");
    assert_eq!(abbreviated.json()["errors"][0]["error_number"], 9207);
    let unknown = http(&addr, "GET", "/slurmdb/v0.0.43/jobs?users=no_such_user_x", &auth, None);
    assert_eq!(unknown.status, 422);
    // slurm-26.05/responses/db_jobs_users_unknown.json: `Unable to resolve user: nosuchuser`.
    assert_eq!(unknown.json()["errors"][0]["description"], "Unable to resolve user: no_such_user_x");
    assert_eq!(http(&addr, "GET", "/slurmdb/v0.0.43/jobs", &[], None).status, 401, "a token is needed");
}
