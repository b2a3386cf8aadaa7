//! `scontrol write batch_script` through the real binary and daemon: a job's script to
//! `slurm-JOBID.sh`, a named file or stdout, with Slurm's messages and exit codes (checked
//! against Slurm 26.05's scontrol).

use crate::common;
use common::*;

/// What sbatch stores for `--wrap hostname`, as Slurm's sbatch wraps it.
const WRAPPED: &str = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname\n";

#[test]
fn write_batch_script_as_slurm_writes_it() {
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["--hold", "--wrap", "hostname"]);

    // The transcript's `scontrol write batch_script 73 -`.
    let out = c.run("scontrol", &["write", "batch_script", &id.to_string(), "-"]);
    assert_eq!(outcome(&out), (WRAPPED.to_string(), String::new(), Some(0)));

    // No file named: slurm-JOBID.sh in the current directory, and a line saying so.
    let out = c.run("scontrol", &["write", "batch_script", &id.to_string()]);
    assert_eq!(
        outcome(&out),
        (format!("batch script for job {id} written to slurm-{id}.sh\n"), String::new(), Some(0))
    );
    assert_eq!(std::fs::read_to_string(c.path(&format!("slurm-{id}.sh"))).unwrap(), WRAPPED);

    // A file that exists already is overwritten; -Q says nothing; `batch` abbreviates it.
    std::fs::write(c.path("mine.sh"), "old text that is longer than the script itself, to be truncated\n".repeat(3))
        .unwrap();
    let out = c.run("scontrol", &["-Q", "write", "batch", &id.to_string(), "mine.sh"]);
    assert_eq!(outcome(&out), (String::new(), String::new(), Some(0)));
    assert_eq!(std::fs::read_to_string(c.path("mine.sh")).unwrap(), WRAPPED);

    // A script file's text is kept byte for byte, and an array task's script is its array's.
    let script = "#!/bin/bash\n#SBATCH -J kept\n# tabs\tand trailing spaces   \necho \"$1\"\n";
    std::fs::write(c.path("job.sh"), script).unwrap();
    let array = c.sbatch(&["--hold", "-a", "1-2", "job.sh", "arg"]);
    let out = c.run("scontrol", &["write", "batch_script", &format!("{array}_2"), "-"]);
    assert_eq!(outcome(&out), (script.to_string(), String::new(), Some(0)));

    // Refusals: stderr, exit 0 as in Slurm, and no file left behind.
    let out = c.run("scontrol", &["write", "batch_script", "999999"]);
    assert_eq!(
        outcome(&out),
        (String::new(), "job script retrieval failed: Invalid job id specified\n".into(), Some(0))
    );
    assert!(!c.path("slurm-999999.sh").exists(), "the file of a failed retrieval is removed");
    let out = c.run("scontrol", &["write", "batch_script", &id.to_string(), "/nonexistent/dir/x.sh"]);
    assert_eq!(
        outcome(&out),
        (String::new(), "failed to open file `/nonexistent/dir/x.sh`: No such file or directory\n".into(), Some(0))
    );
    // An interactive allocation has no script.
    let out = c.run("srun", &["true"]);
    assert_eq!(out.status.code(), Some(0), "{}", outcome(&out).1);
    let alloc = c.client().jobs().unwrap().jobs.iter().map(|j| j.job_id).max().unwrap();
    let out = c.run("scontrol", &["write", "batch_script", &alloc.to_string(), "-"]);
    assert_eq!(
        outcome(&out),
        (String::new(), "job script retrieval failed: Job script not specified\n".into(), Some(0))
    );

    // Malformed command lines: exit 1.
    for (args, err) in [
        (&["write"][..], "too few arguments for keyword:write\n".to_string()),
        (&["write", "bogus"], "invalid write argument:bogus\n".into()),
        (&["write", "batch_script", "1", "a", "b"], "too many arguments for keyword:write\n".into()),
        (
            &["write", "batch_script", "abc"],
            "scontrol: fatal: Bad job/step specified: abc: JobID can not be zero\n".into(),
        ),
        (
            &["write", "batch_script", "11x"],
            "scontrol: fatal: Bad job/step specified: 11x: JobID includes unexpected non-numeric characters\n".into(),
        ),
    ] {
        assert_eq!(outcome(&c.run("scontrol", args)), (String::new(), err, Some(1)), "{args:?}");
    }
    // No job id: nothing at all, as in Slurm.
    assert_eq!(outcome(&c.run("scontrol", &["write", "batch_script"])), (String::new(), String::new(), Some(0)));
}
