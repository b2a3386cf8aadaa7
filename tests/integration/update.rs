//! `scontrol update JobId=N Key=Value…`: a running job's lowered time limit ends it by the new
//! limit; a pending job's partition, name, CPUs and GPUs change as squeue and `scontrol show
//! job` show them; bad values and changes Slurm refuses give Slurm's words and exit code 1.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

/// Runs `scontrol ARGS`: (exit code, stdout, stderr).
fn scontrol(c: &Cluster, args: &[&str]) -> (i32, String, String) {
    let out = c.run("scontrol", args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `squeue -h -j ID -o FORMAT`, trimmed.
fn squeue(c: &Cluster, id: u32, format: &str) -> String {
    let out = c.run("squeue", &["-h", "-j", &id.to_string(), "-o", format]);
    assert!(out.status.success(), "squeue failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const OK: (i32, String, String) = (0, String::new(), String::new());

#[test]
fn a_lowered_time_limit_ends_a_running_job_by_the_new_limit() {
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["-t", "30", "-o", "out", "--wrap", "exec sleep 600"]);
    let start = c.wait_state(id, &["RUNNING"], T).start_time.number;
    let sid = format!("JobId={id}");
    assert_eq!(scontrol(&c, &["update", &sid, "TimeLimit=00:01:00"]), OK);
    assert_eq!(squeue(&c, id, "%i %t %l"), format!("{id} R 1:00"));
    let end = c.wait_state(id, &["TIMEOUT"], Duration::from_secs(100)).end_time.number;
    assert!(end < start + 30 * 60 && end >= start + 60, "started {start}, ended {end}");
    assert!(read(&c.path("out")).contains("DUE TO TIME LIMIT"));
}

#[test]
fn a_held_jobs_partition_name_cpus_and_gpus_change() {
    let c = Cluster::start(
        "2",
        "[[partitions]]\nname = \"gpu\"\ndefault = true\nmax_time = \"1:00:00\"\n[[partitions]]\nname = \"long\"\n",
    );
    let id = c.sbatch(&["--hold", "-J", "before", "-t", "10", "--wrap", "true"]);
    let sid = format!("JobId={id}");
    assert_eq!(
        scontrol(&c, &["update", &sid, "Partition=long", "Name=after", "NumCPUs=3", "Gres=gpu:2", "Comment=note"]),
        OK
    );
    assert_eq!(squeue(&c, id, "%i %P %j %C %b %t %r"), format!("{id} long after 3 gres/gpu:2 PD JobHeldUser"));
    let (code, show, _) = scontrol(&c, &["show", "job", &id.to_string()]);
    assert_eq!(code, 0);
    for want in ["JobName=after", "Partition=long", "NumCPUs=3", "Comment=note", "TimeLimit=00:10:00"] {
        assert!(show.contains(want), "{want} missing:\n{show}");
    }
    // The key `update` sends the name with, when no JobId is given: every job of that name.
    assert_eq!(scontrol(&c, &["update", "JobName=after", "TimeLimit=20"]), OK);
    assert_eq!(squeue(&c, id, "%l"), "20:00");
    // Slurm's example: a pending job's limit within its partition's MaxTime.
    assert_eq!(scontrol(&c, &["update", &sid, "TimeLimit=+5"]), OK);
    assert_eq!(squeue(&c, id, "%l"), "25:00");

    // The job runs as it now is.
    assert_eq!(scontrol(&c, &["release", &id.to_string()]), OK);
    let done = c.wait_state(id, &["COMPLETED"], T);
    assert_eq!((done.name.as_str(), done.partition.as_str(), done.cpus.number), ("after", "long", 3));
}

#[test]
fn bad_values_and_refused_changes_give_slurms_words() {
    let c = Cluster::start("1", "");
    let running = c.sbatch(&["-o", "running.out", "--wrap", "echo up; exec sleep 600"]);
    c.wait_file("running.out", T);
    let held = c.sbatch(&["--hold", "--wrap", "true"]);
    let (r, h) = (format!("JobId={running}"), format!("JobId={held}"));

    let refused = |args: &[&str], text: String| {
        let mut all = vec!["update"];
        all.extend(args);
        assert_eq!(scontrol(&c, &all), (1, String::new(), text), "{args:?}");
    };
    let no_longer_pending = format!("Job is no longer pending execution for job {running}\n");
    refused(&[&r, "Partition=nope"], no_longer_pending.clone());
    refused(&[&r, "Gres=gpu:1"], no_longer_pending.clone());
    refused(&[&r, "NumCPUs=2"], no_longer_pending);
    refused(&[&h, "Partition=nope"], format!("Invalid partition name specified for job {held}\n"));
    refused(&[&h, "Gres=gpu:2"], format!("Requested node configuration is not available for job {held}\n"));
    refused(&[&h, "Gres=fpga:1"], format!("Invalid generic resource (gres) specification for job {held}\n"));
    refused(&[&h, "NumCPUs=99"], format!("Requested node configuration is not available for job {held}\n"));
    refused(&["JobId=999999", "TimeLimit=5"], "Invalid job id specified for job 999999\n".into());
    refused(&[&h, "TimeLimit=soon"], "scontrol: error: Invalid TimeLimit value\n".into());
    refused(&[&h, "NumCPUs=0"], "scontrol: error: Invalid NumCPUs value: 0\n".into());
    refused(&[&h, "Bogus=1"], "Update of this parameter is not supported: Bogus=1\nRequest aborted\n".into());
    refused(&[&h], "No changes specified\n".into());
    refused(&[&h, "TimeLimit"], "Invalid input: TimeLimit\nRequest aborted\n".into());
    refused(
        &["Colour=blue"],
        "No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n"
            .into(),
    );
    // Nothing of a refused update was applied.
    assert_eq!(squeue(&c, held, "%P %C %b %l"), "gpu 1 N/A UNLIMITED");
    assert_eq!(c.state(running), "RUNNING");
}
