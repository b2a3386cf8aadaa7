//! sbatch's option table through the real binary and daemon: --help and --usage, a warning for
//! options with no effect, an error for refused ones, input variables named in errors, and the
//! per-GPU and per-task requests the scheduler honours.

use crate::common;
use common::*;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn help_usage_warnings_and_refusals() {
    let c = Cluster::start("4", "");
    let o = c.run("sbatch", &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    assert!(help.starts_with("Usage: sbatch [OPTIONS...] script [args...]\n"), "{help}");
    for line in [
        "Parallel run options:",
        "GPU scheduling options:",
        "  -J, --job-name=jobname      name of job",
        "  -A, --account=name          charge job to specified account",
    ] {
        assert!(help.lines().any(|l| l == line), "missing {line:?} in\n{help}");
    }
    let o = c.run("sbatch", &["--usage"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("Usage: sbatch [-A name]"), "{}", stdout(&o));

    // No effect here: one warning line each, and the job is queued. The account is recorded
    // (tests/integration/parity.rs), without a warning.
    let o = c.run("sbatch", &["--parsable", "--hold", "-A", "proj", "--mail-type=END", "--wrap", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "sbatch: warning: --mail-type has no effect here: no mail is sent from this cluster\n");
    let id: u32 = stdout(&o).trim().parse().unwrap();
    assert_eq!(c.job(id).account, "proj", "the account is kept with the job");

    // Refused: an error that says why, exit 1, nothing queued.
    let o = c.run("sbatch", &["--reservation=maint", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).lines().any(|l| l == "sbatch: error: Batch job submission failed: Requested reservation is invalid"),
        "{}",
        stderr(&o)
    );
    std::fs::write(c.path("refused.sh"), "#!/bin/sh\n#SBATCH -J ok\n#SBATCH --licenses=matlab:1\ntrue\n").unwrap();
    let o = c.run("sbatch", &["refused.sh"]);
    assert_eq!(o.status.code(), Some(1), "refused the same way as on the command line");
    assert_eq!(
        stderr(&o),
        "sbatch: error: refused.sh:3: --licenses is not supported: no licenses are configured\n",
        "a refused directive names its line"
    );

    // A bad input variable is named.
    let o = c.cmd("sbatch").args(["--wrap", "true"]).env("SBATCH_TIMELIMIT", "soon").output().unwrap();
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(
        stderr(&o),
        "sbatch: error: Invalid --time specification\n\
         sbatch: error: (from input environment variable SBATCH_TIMELIMIT=soon)\n"
    );
    let o = c.run("sbatch", &["-n", "four", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert_eq!(stderr(&o), "sbatch: error: Invalid numeric value \"four\" for --ntasks.\n");
    let o = c.run("sbatch", &["--mem=1G", "--mem-per-cpu=1G", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "sbatch: error: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n");

    // Arrays and dependencies: a bad spec is refused in Slurm's words, then why.
    let o = c.run("sbatch", &["--array=5-1", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.starts_with("sbatch: error: Invalid job array specification\nsbatch: error: "), "{e}");
    assert_eq!(e.lines().count(), 2, "{e}");
    let o = c.run("sbatch", &["--dependency=afterok:1?afterany:2,after:3", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("sbatch: error: Job dependency problem\n"), "{}", stderr(&o));
    // A dependency on a job that never existed could never be satisfied: refused at
    // submit, naming the job, with 26.05's error.
    let o = c.run("sbatch", &["--dependency=afterok:999999", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "sbatch: error: --dependency=afterok:999999: job 999999 does not exist, so the job could never start\n\
         sbatch: error: Batch job submission failed: Job dependency problem\n"
    );

    assert_eq!(c.client().jobs().unwrap().jobs.len(), 1, "only the accepted job is queued");
}

#[test]
fn per_gpu_and_per_task_requests_are_scheduled() {
    let c = Cluster::start("4", "");
    let id = c.sbatch(&["--hold", "--gpus=2", "--cpus-per-gpu=3", "--mem-per-gpu=2G", "--wrap", "true"]);
    let j = c.job(id);
    assert_eq!(j.cpus.number, 6, "3 CPUs for each of 2 GPUs");
    assert!(j.tres_req_str.contains("mem=4096M"), "{}", j.tres_req_str);
    assert!(j.tres_req_str.contains("gres/gpu=2"), "{}", j.tres_req_str);

    let id =
        c.sbatch(&["-n", "3", "--gpus-per-task=1", "-o", "pertask.out", "--wrap", "echo CVD=$CUDA_VISIBLE_DEVICES"]);
    c.wait_state(id, &["COMPLETED"], std::time::Duration::from_secs(30));
    let out = c.wait_file("pertask.out", std::time::Duration::from_secs(10));
    let devices = out.trim().trim_start_matches("CVD=");
    assert_eq!(devices.split(',').count(), 3, "3 tasks × 1 GPU: {out}");

    let o = c.run("sbatch", &["-n", "5", "--gpus-per-task=1", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the job asks for 5 GPUs"), "{}", stderr(&o));

    let id = c.sbatch(&["--hold", "--tres-per-task=cpu=2,gres/gpu=1", "-n", "2", "--wrap", "true"]);
    let j = c.job(id);
    assert_eq!(j.cpus.number, 4);
    assert!(j.tres_req_str.contains("gres/gpu=2"), "{}", j.tres_req_str);
}

#[test]
fn bad_input_from_the_slurm_transcript_gets_slurms_text_and_exit_code() {
    let c = Cluster::start("2", "");
    let o = c.run("sbatch", &["-t", "1:2:3:4", "--wrap", "true"]);
    assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(255), "sbatch: error: Invalid --time specification\n"));
    let o = c.run("sbatch", &["-p", "gpu,nope", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n"
    );
    for gres in ["--gres=gpx:1", "--gres=gpu:abc"] {
        let o = c.run("sbatch", &[gres, "--wrap", "true"]);
        assert_eq!(o.status.code(), Some(1), "{gres}");
        assert!(stderr(&o).starts_with("sbatch: error: Invalid generic resource (gres) specification"), "{gres}");
    }
    // Slurm accepts a request for zero GPUs; the job sees none.
    let id = c.sbatch(&["--gres=gpu:0", "-o", "gres0.out", "--wrap", "echo CVD=$CUDA_VISIBLE_DEVICES"]);
    c.wait_state(id, &["COMPLETED"], std::time::Duration::from_secs(30));
    assert_eq!(c.wait_file("gres0.out", std::time::Duration::from_secs(10)), "CVD=\n");
    // Slurm takes --time=-5 and gives the job a limit of 2982611 days; here it is an error.
    let o = c.run("sbatch", &["--time=-5", "--wrap", "true"]);
    assert_eq!(o.status.code(), Some(255));
    assert!(
        stderr(&o).starts_with("sbatch: error: invalid --time value '-5': a time cannot be negative"),
        "{}",
        stderr(&o)
    );
}
