//! Bad input gets Slurm's error text and exit code; nothing is queued by a refused submit.

use crate::common;
use common::*;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_options_and_scripts_are_refused_as_slurm_refuses_them() {
    let c = Cluster::start("2", "");
    let o = c.run("sbatch", &["-t", "abc", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(stderr(&o), "sbatch: error: Invalid --time specification\n");
    let o = c.run("sbatch", &["--bogus-option", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(
        stderr(&o),
        "sbatch: unrecognized option '--bogus-option'\nTry \"sbatch --help\" for more information\n"
    );
    let o = c.run("sbatch", &["--wrap"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(
        stderr(&o),
        "sbatch: option '--wrap' requires an argument\nTry \"sbatch --help\" for more information\n"
    );
    let o = c.run("sbatch", &["-Z", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(stderr(&o), "sbatch: invalid option -- 'Z'\nTry \"sbatch --help\" for more information\n");
    let o = c.run("sbatch", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "sbatch: error: Batch script is empty!\n");
    let o = c.run("sbatch", &["--mem=10Q", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(stderr(&o), "sbatch: error: Invalid --mem specification\n");
    let o = c.run("sbatch", &["no-such-file.sh"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "sbatch: error: Unable to open file no-such-file.sh\n");

    for (name, body, first_line) in [
        ("noshebang.sh", "echo no shebang here\n", "sbatch: error: This does not look like a batch script.  The first"),
        ("empty.sh", "", "sbatch: error: Batch script is empty!"),
        ("crlf.sh", "#!/bin/sh\r\necho hi\r\n", "sbatch: error: Batch script contains DOS line breaks (\\r\\n)"),
        ("nul.sh", "#!/bin/sh\necho \0\n", "sbatch: error: The Slurm controller does not allow scripts that"),
    ] {
        std::fs::write(c.path(name), body).unwrap();
        let o = c.run("sbatch", &[name]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert_eq!(stderr(&o).lines().next(), Some(first_line), "{name}");
    }
    // A bad directive names the file and line.
    std::fs::write(c.path("bad_time.sh"), "#!/bin/bash\n#SBATCH -t notatime\necho hi\n").unwrap();
    let o = c.run("sbatch", &["bad_time.sh"]);
    assert_eq!(o.status.code(), Some(255));
    let e = stderr(&o);
    assert!(e.contains("bad_time.sh:2:") && e.contains("Invalid --time specification"), "{e}");
    std::fs::write(c.path("bad_dir.sh"), "#!/bin/bash\n#SBATCH --bogus-directive\necho hi\n").unwrap();
    let o = c.run("sbatch", &["bad_dir.sh"]);
    assert_eq!(o.status.code(), Some(255));
    let e = stderr(&o);
    assert!(e.contains("sbatch: unrecognized option '--bogus-directive'"), "{e}");
    assert!(e.contains("bad_dir.sh:2:"), "{e}");
    // SBATCH_* input variables sit between directives and the command line.
    std::fs::write(c.path("named.sh"), "#!/bin/sh\n#SBATCH -J directive\necho $SLURM_JOB_NAME\n").unwrap();
    let o = c
        .cmd("sbatch")
        .args(["--parsable", "-o", "named.out", "named.sh"])
        .env("SBATCH_JOB_NAME", "fromenv")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let id: u32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert_eq!(c.job(id).name, "fromenv");
    // Nothing else was queued.
    assert_eq!(c.client().jobs().unwrap().jobs.len(), 1);
}

#[test]
fn unknown_rest_fields_are_errors_not_silently_dropped() {
    let c = Cluster::start("0", "");
    let body = serde_json::json!({
        "job": {
            "name": "x", "bogus_field": 1, "gres": "gpu:1",
            "current_working_directory": c.work.display().to_string(),
            "environment": ["PATH=/usr/bin:/bin"],
            "script": "#!/bin/sh\ntrue\n"
        }
    });
    let r: slurmlet::api::types::JobSubmitResponse = c.client().post("/slurm/v0.0.43/job/submit", &body).unwrap();
    assert_eq!(r.job_id, 0);
    let sources: Vec<&str> = r.errors.iter().map(|e| e.source.as_str()).collect();
    assert_eq!(sources, vec!["#/job/bogus_field/", "#/job/gres/"]);
    assert!(r.errors[0].description.contains("bogus_field"));
    assert!(c.client().jobs().unwrap().jobs.is_empty());
    // The same body without them is accepted.
    let body = serde_json::json!({
        "job": {
            "name": "x", "tres_per_node": "",
            "current_working_directory": c.work.display().to_string(),
            "environment": ["PATH=/usr/bin:/bin"],
            "script": "#!/bin/sh\ntrue\n"
        }
    });
    let r: slurmlet::api::types::JobSubmitResponse = c.client().post("/slurm/v0.0.43/job/submit", &body).unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(r.job_id > 0);
}

#[test]
fn control_characters_in_job_fields_are_refused_before_anyone_lists_them() {
    let c = common::Cluster::start("0", "");
    let out = c.run("sbatch", &["-J", "a\u{1b}[2Jb", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--job-name contains a control character (U+001B)"), "{err}");
    let out = c.run("sbatch", &["--comment", "bell\u{7}", "--wrap", "true"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--comment contains a control character (U+0007)"));
    assert!(c.client().jobs().unwrap().jobs.is_empty(), "nothing was queued");
}
