//! `slurmlet cluster pending`: the jobs waiting here, each with the command that asks a
//! cluster for it again. Against this machine's own queue (`-M local`), the printed command
//! is run as a user would paste it, and the job it makes must ask for what the first did.

use crate::common::{stdout, Cluster};
use std::path::Path;

/// `slurmlet cluster pending ARGS` in `c`'s environment.
fn pending(c: &Cluster, args: &[&str]) -> std::process::Output {
    c.program(Path::new(env!("CARGO_BIN_EXE_slurmlet"))).args(["cluster", "pending"]).args(args).output().unwrap()
}

/// What squeue says of job `id`: name, time limit, nodes, CPUs, GRES, state and reason.
fn request(c: &Cluster, id: u32) -> String {
    stdout(&c.run("squeue", &["-h", "-j", &id.to_string(), "-o", "%j|%l|%D|%C|%b|%T|%r|%P"]))
}

#[test]
fn the_printed_command_asks_for_the_same_job_again_and_a_dependency_stays() {
    let c = Cluster::start("2", "");
    let first = c.sbatch(&[
        "--hold",
        "-J",
        "train run",
        "-t",
        "30",
        "-N1",
        "-n2",
        "--mem=100M",
        "--gres=gpu:1",
        "-o",
        "out-%j.txt",
        "--wrap",
        "echo moved",
    ]);
    let after = c.sbatch(&["-d", &format!("afterok:{first}"), "--wrap", "true"]);
    let out = pending(&c, &["-M", "local"]);
    let listing = stdout(&out);
    assert!(out.status.success(), "{listing}{}", String::from_utf8_lossy(&out.stderr));
    let user = slurmlet::identity::user_name(slurmlet::identity::uid());
    assert!(listing.contains(&format!("# job {first} of {user} (train run):\n")), "{listing}");
    assert!(
        listing.contains(&format!("# job {after} of {user} (wrap):\n#   not moved: it depends on afterok:{first}")),
        "{listing}"
    );
    let line = listing
        .lines()
        .find(|l| l.starts_with(&format!("scontrol -M local write batch_script {first} - | sbatch -M local ")))
        .unwrap_or_else(|| panic!("no command for job {first} in:\n{listing}"));
    assert!(line.ends_with(&format!(" && scancel -M local {first}")), "{line}");
    assert!(line.contains(" '--job-name=train run' ") && line.contains(" --hold "), "{line}");
    // Pasted into a shell: a new job asking for the same, held as the first was; the first
    // is cancelled.
    let before = request(&c, first);
    let ran = c.program(Path::new("/bin/sh")).args(["-c", line]).output().unwrap();
    assert!(ran.status.success(), "{line}: {}", String::from_utf8_lossy(&ran.stderr));
    let new: u32 = stdout(&ran).trim().trim_start_matches("Submitted batch job ").parse().expect("a job id");
    assert_eq!(request(&c, new), before, "job {new} from: {line}");
    assert!(before.starts_with("train run|30:00|1|2|gres/gpu:1|PENDING|JobHeldUser|"), "{before}");
    let old = stdout(&c.run("sacct", &["-M", "local", "-X", "-n", "-P", "-j", &first.to_string(), "-o", "state"]));
    assert!(old.starts_with("CANCELLED"), "{old}");
    c.run("scontrol", &["release", &new.to_string()]);
    c.wait_state(new, &["COMPLETED"], std::time::Duration::from_secs(30));
    let written = std::fs::read_to_string(c.work.join(format!("out-{new}.txt")));
    assert_eq!(
        written.ok().as_deref(),
        Some("moved\n"),
        "{line}; {:?}",
        std::fs::read_dir(&c.work).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>()
    );
    // Moving needs a cluster: this machine's own queue is refused by name.
    let refused = pending(&c, &["-M", "local", "--move-pending"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("local is this machine's own queue"));
}
