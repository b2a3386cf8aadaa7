//! submitit itself against our commands: a `map_array` of 4 tasks submitted with sbatch,
//! each task run by srun with submitit's `%A_%a_%t` log names, its result read back, its
//! state polled with sacct. submitit is installed into a virtual environment kept under the
//! target directory (made once); without python3's venv, pip, or PyPI, the test says so on
//! stderr and checks nothing (unless `SUBMITIT_REQUIRED` is set: then it fails).

use crate::common;

use common::Cluster;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long submitit may take for the whole array.
const LIMIT: Duration = Duration::from_secs(120);

/// The driver: a map_array of 4 tasks, each returning its square and the array variables it
/// saw; prints one JSON list of `[job_id, square, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID]`.
const DRIVER: &str = r#"
import json, os, sys
import submitit

def square(x):
    return [x * x, os.environ["SLURM_ARRAY_JOB_ID"], os.environ["SLURM_ARRAY_TASK_ID"]]

executor = submitit.AutoExecutor(folder=sys.argv[1] + "/%j")
assert executor.cluster == "slurm", executor.cluster
executor.update_parameters(timeout_min=5, slurm_array_parallelism=4)
jobs = executor.map_array(square, [0, 1, 2, 3])
print(json.dumps([[job.job_id] + job.result() for job in jobs]))
"#;

/// Says that nothing was checked and why (see [`common::skip`]); with `SUBMITIT_REQUIRED`
/// set, fails instead.
fn skip(what: &str) {
    assert!(std::env::var_os("SUBMITIT_REQUIRED").is_none(), "SUBMITIT_REQUIRED is set, but {what}");
    common::skip("submitit_map_array_of_four_tasks", what);
}

/// Runs `cmd` quietly; `Err` says what failed.
fn quiet(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr)))
    }
}

/// A python with submitit importable: the virtual environment under the target directory,
/// made (or remade) when it lacks submitit.
fn python_with_submitit() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("submitit-venv");
    let python = venv.join("bin").join("python");
    let importable = |python: &Path| quiet(Command::new(python).args(["-c", "import submitit"]));
    if importable(&python).is_ok() {
        return Ok(python);
    }
    quiet(Command::new("python3").args(["-m", "venv", "--clear"]).arg(&venv))
        .map_err(|e| format!("python3 -m venv failed: {e}"))?;
    quiet(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--timeout",
        "20",
        "submitit",
    ]))
    .map_err(|e| format!("pip install submitit failed: {e}"))?;
    importable(&python).map_err(|e| format!("submitit installed but not importable: {e}"))?;
    Ok(python)
}

#[test]
fn submitit_map_array_of_four_tasks() {
    let python = match python_with_submitit() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let c = Cluster::start("0", "");
    std::fs::write(c.path("driver.py"), DRIVER).unwrap();
    let mut child = c
        .program(&python)
        .arg("driver.py")
        .arg("logs")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the submitit driver");
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "submitit did not finish in {LIMIT:?}\nstdout: {}\nstderr: {}\nlogs: {:?}\ndaemon log:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_dir(c.path("logs")).map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>()),
                c.log()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "submitit failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let results: Vec<(String, u32, String, String)> =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(results.len(), 4, "{stdout}");
    let array = results[0].0.split('_').next().unwrap().to_string();
    for (i, (job_id, square, array_job_id, task_id)) in results.iter().enumerate() {
        assert_eq!(job_id, &format!("{array}_{i}"), "{stdout}");
        assert_eq!(*square as usize, i * i, "{stdout}");
        assert_eq!((array_job_id.as_str(), task_id.as_str()), (array.as_str(), i.to_string().as_str()));
        // The task's log folder is its own, named by the array and the task's index.
        let log = c.path(&format!("logs/{job_id}/{job_id}_0_log.out"));
        assert!(log.is_file(), "{} missing", log.display());
    }
    // One folder per task, and the array's own (where submitit keeps the submission script).
    let mut folders: Vec<String> = std::fs::read_dir(c.path("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut expected: Vec<String> = results.iter().map(|r| r.0.clone()).collect();
    expected.push(array);
    expected.sort();
    assert_eq!(folders, expected);
}

/// A checkpointable task on a scavenger's GPU, preempted by a high job: submitit's
/// checkpoint runs on the warning signal, the job is requeued, and its next run goes on from
/// the checkpoint to the end.
const PREEMPTED_DRIVER: &str = r#"
import json, os, sys, time
import submitit

class Count(submitit.helpers.Checkpointable):
    def __init__(self):
        self.done = 0
    def __call__(self, marker):
        while self.done < 40:
            time.sleep(0.1)
            self.done += 1
            with open(marker, "a") as f:
                f.write(f"{self.done} {os.environ.get('SLURM_RESTART_COUNT', '0')}\n")
        return [self.done, os.environ.get("SLURM_RESTART_COUNT", "0")]

executor = submitit.AutoExecutor(folder=sys.argv[1] + "/%j")
executor.update_parameters(timeout_min=5, slurm_qos="scavenger", slurm_gres="gpu:1")
job = executor.submit(Count(), sys.argv[2])
print(job.job_id, flush=True)
print(json.dumps(job.result()), flush=True)
"#;

#[test]
fn submitit_goes_on_from_its_checkpoint_after_a_preemption() {
    let python = match python_with_submitit() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let c = Cluster::start(
        "1",
        // A grace time lets submitit's handler save its checkpoint and requeue the job itself.
        "preempt_type = \"preempt/qos\"\nrequeue_delay = 1\n[qos.high]\npreempt = [\"scavenger\"]\n[qos.scavenger]\ngrace_time = 30\n",
    );
    std::fs::write(c.path("driver.py"), PREEMPTED_DRIVER).unwrap();
    let marker = c.path("progress");
    let child = c
        .program(&python)
        .arg("driver.py")
        .arg("logs")
        .arg(&marker)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the submitit driver");
    // Once the task has made some progress, a high job needs the one GPU.
    common::wait_for("the task's progress", LIMIT, || {
        let text = std::fs::read_to_string(&marker).unwrap_or_default();
        common::until(text.lines().count() >= 5, || text.clone())
    });
    let high = c.run("sbatch", &["--parsable", "--qos=high", "--gres=gpu:1", "--wrap", "sleep 1"]);
    assert!(high.status.success(), "{}", String::from_utf8_lossy(&high.stderr));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "submitit failed:\n{stdout}\n{}\ndaemon log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        c.log()
    );
    let result: Vec<serde_json::Value> = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_default();
    assert_eq!(result, [serde_json::json!(40), serde_json::json!("1")], "{stdout}");
    // The second run went on from the checkpoint: its first step is past the first run's.
    let progress = std::fs::read_to_string(&marker).unwrap();
    let first_rerun = progress.lines().find(|l| l.ends_with(" 1")).unwrap_or_default();
    let step: u32 = first_rerun.split(' ').next().unwrap_or("0").parse().unwrap_or(0);
    assert!(step > 5, "the second run started over:\n{progress}");
}
