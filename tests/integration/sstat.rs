//! sstat: what a running step's processes use now, with Slurm's fields, layouts and errors.

use crate::common;
use common::T;
use common::*;

#[test]
fn a_running_steps_processes_and_their_use() {
    let c = Cluster::start("0", "");
    let job = c.sbatch(&[
        "-n",
        "2",
        "-o",
        "s.out",
        "--wrap",
        "srun -n 2 sh -c 'echo $$ >> step.pids; exec sleep 30' & while [ $(wc -l < step.pids 2>/dev/null || echo 0) -lt 2 ]; do sleep 0.1; done; touch ready; wait",
    ]);
    wait_for("the job's two tasks", T, || {
        until(c.path("ready").exists(), || format!("{}: {:?}", c.state(job), std::fs::read_to_string(c.path("s.out"))))
    });
    let pids: Vec<String> = read(&c.path("step.pids")).lines().map(String::from).collect();

    // The default fields: Slurm's header, then the lowest numbered step.
    let out = c.run("sstat", &["-j", &job.to_string(), "-P"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    assert_eq!(header[..4], ["JobID", "AllocTRES", "MaxVMSize", "MaxVMSizeNode"], "{text}");
    assert_eq!(header.len(), 48, "{text}");
    let row: Vec<&str> = lines.next().unwrap().split('|').collect();
    assert_eq!(row[0], format!("{job}.0"), "{text}");
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(at("NTasks"), "2", "{text}");
    assert!(at("MaxRSS").ends_with('K') && at("MaxRSS") != "0", "{text}");
    assert!(at("TRESUsageInMax").starts_with("cpu="), "{text}");
    assert_eq!(lines.next(), None, "{text}");

    // -i: the pids of each step, both tasks among them; -a adds the batch step.
    let out = c.run("sstat", &["-a", "-i", "-n", "-p", &job.to_string()]);
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].starts_with(&format!("{job}.batch|")), "{text}");
    let step_pids: Vec<&str> = rows[1].split('|').nth(2).unwrap().split(',').collect();
    for pid in &pids {
        assert!(step_pids.contains(&pid.as_str()), "{pid} in {text}");
    }
    assert!(rows[1].ends_with('|'), "-p ends each line with the delimiter: {text}");

    // Fixed columns: a header, dashes, then the row.
    let out = c.run("sstat", &["-j", &format!("{job}.0"), "-o", "JobID,NTasks"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "JobID          NTasks ");
    assert_eq!(lines[1], "------------ -------- ");
    assert_eq!(lines[2], format!("{:<12} {:>8} ", format!("{job}.0"), 2));

    let _ = c.run("scancel", &[&job.to_string()]);
    c.wait_state(job, &["CANCELLED"], T);
}

#[test]
fn jobs_and_steps_not_running_are_told_as_slurm_tells_them() {
    let c = Cluster::start("0", "");
    let out = c.run("sstat", &[]);
    assert_eq!(outcome(&out).1, "sstat: error: You didn't give me any jobs to stat.\n");
    assert_eq!(out.status.code(), Some(1));
    let out = c.run("sstat", &["-j", "1", "-o", "JobID,Bogus"]);
    assert_eq!(
        (stderr(&out).as_str(), out.status.code()),
        ("sstat: error: Invalid field requested: \"Bogus\"\n", Some(1))
    );
    let out = c.run("sstat", &["-j", "abc"]);
    assert_eq!((stderr(&out).as_str(), out.status.code()), ("sstat: fatal: Bad job/step specified: abc\n", Some(1)));

    // Unknown, finished, or running only its script: an error each, and the exit stays 0,
    // as Slurm's.
    let out = c.run("sstat", &["-n", "-j", "999"]);
    assert_eq!(
        (stderr(&out).as_str(), out.status.code()),
        ("sstat: error: couldn't get steps for JobId=999\n", Some(0))
    );
    let done = c.sbatch(&["-o", "d.out", "--wrap", "true"]);
    c.wait_state(done, &["COMPLETED"], T);
    let out = c.run("sstat", &["-n", "-j", &done.to_string()]);
    assert_eq!(stderr(&out), format!("sstat: error: No steps running for JobId={done}\n"));
    let script = c.sbatch(&["-o", "b.out", "--wrap", "sleep 30"]);
    c.wait_state(script, &["RUNNING"], T);
    let out = c.run("sstat", &["-n", "-j", &script.to_string()]);
    assert_eq!(
        stderr(&out),
        format!(
            "sstat: error: No steps running for JobId={script} but its batch script: sstat -j {script}.batch (or -a) shows it\n"
        )
    );
    let out = c.run("sstat", &["-n", "-j", &format!("{script}.4")]);
    assert_eq!(stderr(&out), format!("sstat: error: StepId={script}.4 not found running.\n"));
    let out = c.run("sstat", &["-n", "-P", "-o", "JobID", "-j", &format!("{script}.batch")]);
    assert_eq!(stdout(&out), format!("{script}.batch\n"));

    // --helpformat: Slurm's fields, four to a line.
    let out = c.run("sstat", &["-e"]);
    let first = stdout(&out).lines().next().unwrap_or_default().to_string();
    assert_eq!(first, format!("{:<19} {:<19} {:<19} {:<19}", "AllocTRES", "AveCPU", "AveCPUFreq", "AveDiskRead"));
    let _ = c.run("scancel", &[&script.to_string()]);
}
