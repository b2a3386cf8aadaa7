//! Job dependencies through the real binary and daemon, and the pipeline a workflow tool
//! drives: an array with a failing task, jobs `afterok`/`afterany` on it, a requeue of the
//! failed task, and sacct's record of it all.

use crate::common;
use common::T;

use common::{until, wait_for, Cluster};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// squeue's `%i %t %r %E` of job `id` (its dependency last), once the scheduling pass that
/// follows a submit or a change has run and given it `reason`.
fn pending_as(c: &Cluster, id: u32, reason: &str) -> String {
    wait_for(&format!("job {id} to wait for {reason}"), T, || {
        let o = c.run("squeue", &["-h", "-t", "all", "-j", &id.to_string(), "-o", "%i %t %r %E"]);
        let line = stdout(&o).trim().to_string();
        until(line.split(' ').nth(2) == Some(reason), || line.clone()).map(|()| line.clone())
    })
}

#[test]
fn afterok_afternotok_and_afterany_follow_how_the_job_ended() {
    let c = Cluster::start("0", "");
    let gate = c.path("gate");
    let first = c.sbatch(&["--wrap", &format!("while [ ! -e {} ]; do sleep 0.05; done; exit 3", gate.display())]);
    let ok = c.sbatch(&["--dependency", &format!("afterok:{first}"), "--wrap", "true"]);
    let notok = c.sbatch(&["--dependency", &format!("afternotok:{first}"), "--wrap", "true"]);
    let any = c.sbatch(&["-d", &first.to_string(), "--wrap", "true"]);
    let either = c.sbatch(&["--dependency", &format!("afterok:{first}?afterany:{any}"), "--wrap", "true"]);
    assert_eq!(pending_as(&c, ok, "Dependency"), format!("{ok} PD Dependency afterok:{first}(unfulfilled)"));
    assert_eq!(pending_as(&c, any, "Dependency"), format!("{any} PD Dependency afterany:{first}(unfulfilled)"));
    std::fs::write(&gate, "").unwrap();
    c.wait_state(first, &["FAILED"], T);
    assert_eq!(
        pending_as(&c, ok, "DependencyNeverSatisfied"),
        format!("{ok} PD DependencyNeverSatisfied afterok:{first}(failed)")
    );
    for id in [notok, any, either] {
        let j = c.wait_state(id, &["COMPLETED"], T);
        assert_eq!(j.dependency, "", "a satisfied dependency is cleared, as Slurm clears it");
    }
    // scontrol shows the dependency Slurm's way.
    let o = c.run("scontrol", &["show", "job", &ok.to_string()]);
    assert!(stdout(&o).contains(&format!("Dependency=afterok:{first}(failed)")), "{}", stdout(&o));
}

#[test]
fn after_waits_for_the_start_and_singleton_for_the_other_job_of_its_name() {
    let c = Cluster::start("0", "");
    let gate = c.path("gate");
    let wait_gate = format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display());
    let held = c.sbatch(&["--hold", "-J", "solo", "--wrap", &wait_gate]);
    let after = c.sbatch(&["--dependency", &format!("after:{held}"), "--wrap", "true"]);
    let single = c.sbatch(&["-J", "solo", "--dependency=singleton", "--wrap", "true"]);
    pending_as(&c, after, "Dependency");
    pending_as(&c, single, "Dependency");
    assert!(c.run("scontrol", &["release", &held.to_string()]).status.success());
    c.wait_state(held, &["RUNNING"], T);
    c.wait_state(after, &["COMPLETED"], T);
    // The singleton waits while the other "solo" job runs.
    assert_eq!(pending_as(&c, single, "Dependency"), format!("{single} PD Dependency singleton(unfulfilled)"));
    std::fs::write(&gate, "").unwrap();
    c.wait_state(single, &["COMPLETED"], T);
}

#[test]
fn dependencies_and_their_reasons_survive_a_daemon_restart() {
    let mut c = Cluster::start("0", "");
    let held = c.sbatch(&["--hold", "--wrap", "exit 1"]);
    let ok = c.sbatch(&["--dependency", &format!("afterok:{held}"), "--wrap", "true"]);
    pending_as(&c, ok, "Dependency");
    c.kill_daemon();
    c.start_daemon();
    pending_as(&c, ok, "Dependency");
    assert!(c.run("scontrol", &["release", &held.to_string()]).status.success());
    c.wait_state(held, &["FAILED"], T);
    pending_as(&c, ok, "DependencyNeverSatisfied");
}

#[test]
fn a_pipeline_of_an_array_dependents_and_a_requeue_reads_as_slurm_records_it() {
    let c = Cluster::start("0", "");
    // Task 2 fails on its first run and succeeds when requeued.
    let array = c.sbatch(&[
        "--array=1-4",
        "-J",
        "stage1",
        "--wrap",
        "[ \"$SLURM_ARRAY_TASK_ID\" != 2 ] || [ -n \"$SLURM_RESTART_COUNT\" ] || exit 7",
    ]);
    let strict = c.sbatch(&["-J", "strict", "--dependency", &format!("afterok:{array}"), "--wrap", "true"]);
    let killed = c.sbatch(&[
        "-J",
        "killed",
        "--kill-on-invalid-dep=yes",
        "--dependency",
        &format!("afterok:{array}"),
        "--wrap",
        "true",
    ]);
    let any = c.sbatch(&["-J", "any", "--dependency", &format!("afterany:{array}"), "--wrap", "true"]);
    c.wait_state(any, &["COMPLETED"], T);
    c.wait_state(killed, &["CANCELLED"], T);
    assert_eq!(
        pending_as(&c, strict, "DependencyNeverSatisfied"),
        format!("{strict} PD DependencyNeverSatisfied afterok:{array}_*(failed)")
    );

    let o = c.run("scontrol", &["requeue", &format!("{array}_2")]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The requeued task succeeds, and with it the array: the strict job runs after all.
    c.wait_state(strict, &["COMPLETED"], T);

    let o = c.run(
        "sacct",
        &["-X", "-P", "-o", "JobID,JobName,State,ExitCode", "-j", &format!("{array},{strict},{killed},{any}")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = format!(
        "JobID|JobName|State|ExitCode\n\
         {array}_1|stage1|COMPLETED|0:0\n\
         {array}_2|stage1|COMPLETED|0:0\n\
         {array}_3|stage1|COMPLETED|0:0\n\
         {array}_4|stage1|COMPLETED|0:0\n\
         {strict}|strict|COMPLETED|0:0\n\
         {killed}|killed|CANCELLED|0:0\n\
         {any}|any|COMPLETED|0:0\n"
    );
    // sacct orders jobs by submit second, and within one second lists the jobs that are not
    // array tasks first: where the second turned decides the order of the two groups.
    let sorted = |text: &str| {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&stdout(&o)), sorted(&expected));
    let tasks: Vec<String> =
        stdout(&o).lines().filter(|l| l.starts_with(&format!("{array}_"))).map(String::from).collect();
    assert_eq!(tasks, expected.lines().filter(|l| l.starts_with(&format!("{array}_"))).collect::<Vec<_>>());
    // With --duplicates, the failed first run of task 2 is there too, REQUEUED.
    let o = c.run("sacct", &["-X", "-P", "-n", "-D", "-o", "JobID,State,ExitCode", "-j", &format!("{array}_2")]);
    assert_eq!(stdout(&o), format!("{array}_2|REQUEUED|7:0\n{array}_2|COMPLETED|0:0\n"));
}

#[test]
fn scontrol_update_sets_and_clears_a_pending_jobs_dependency() {
    let c = Cluster::start("0", "");
    let held = c.sbatch(&["--hold", "--wrap", "true"]);
    // Waits for its begin time, so that clearing its dependency does not start it.
    let job = c.sbatch(&["--wrap", "true", "--begin", "now+1hour"]);
    let o = c.run("scontrol", &["update", &format!("JobId={job}"), &format!("Dependency=afterok:{held}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = c.run("squeue", &["-h", "-j", &job.to_string(), "-o", "%E"]);
    assert_eq!(stdout(&shown), format!("afterok:{held}(unfulfilled)\n"));
    // Refusals: a job that does not exist, the job itself.
    let o = c.run("scontrol", &["update", &format!("JobId={job}"), "Dependency=afterok:999999"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("Job dependency problem for job {job}\n"));
    let o = c.run("scontrol", &["update", &format!("JobId={job}"), &format!("Dependency=afterany:{job}")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("Circular job dependency for job {job}\n"));
    let shown = c.run("squeue", &["-h", "-j", &job.to_string(), "-o", "%E"]);
    assert_eq!(stdout(&shown), format!("afterok:{held}(unfulfilled)\n"), "a refused update changes nothing");
    // An empty dependency clears it.
    let o = c.run("scontrol", &["update", &format!("JobId={job}"), "Dependency="]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = c.run("squeue", &["-h", "-j", &job.to_string(), "-o", "%E"]);
    assert_eq!(stdout(&shown), "(null)\n");
    // A running job's dependency is past changing.
    let running = c.sbatch(&["--wrap", "sleep 30"]);
    c.wait_state(running, &["RUNNING"], T);
    let o = c.run("scontrol", &["update", &format!("JobId={running}"), &format!("Dependency=afterok:{held}")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("Job is no longer pending execution for job {running}\n"));
}
