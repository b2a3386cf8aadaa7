//! MPS for shard jobs: with `mps = true` and `nvidia-cuda-mps-control` on the daemon's
//! `PATH`, the daemon starts one control daemon per GPU and owner before the first shard job
//! there starts, tells the jobs where it is and their share of the GPU, quits it once the
//! last of them has ended (before a whole-GPU job starts there), and takes it up again
//! across its own restart. The control program here is a stand-in script that logs what it
//! is told and makes and removes the control pipe as the real one does; the GPUs are the
//! fake NVML machine's (40 GiB each), so that their memory is known.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, UUID0};
use common::T;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A stand-in `nvidia-cuda-mps-control` in its own directory, logging each call to `log`.
struct FakeControl {
    dir: PathBuf,
    log: PathBuf,
}

impl FakeControl {
    /// Written under the cluster's directory.
    fn new(c: &Cluster) -> FakeControl {
        use std::os::unix::fs::PermissionsExt;
        let dir = c.dir.path().join("mps-bin");
        std::fs::create_dir_all(&dir).unwrap();
        let log = c.dir.path().join("mps-calls.log");
        let script = format!(
            r#"#!/bin/sh
log={log}
echo "call $* visible=$CUDA_VISIBLE_DEVICES pipe=$CUDA_MPS_PIPE_DIRECTORY logdir=$CUDA_MPS_LOG_DIRECTORY uid=$(id -u)" >> "$log"
if [ "$1" = "-d" ]; then
  [ -d "$CUDA_MPS_PIPE_DIRECTORY" ] && [ -d "$CUDA_MPS_LOG_DIRECTORY" ] || {{ echo "no directories" >> "$log"; exit 1; }}
  : > "$CUDA_MPS_PIPE_DIRECTORY/control"
  # As NVIDIA's: a control daemon that outlives this call, its pid in the pipe directory.
  sleep 120 < /dev/null > /dev/null 2>&1 &
  echo $! > "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid"
  exit 0
fi
while read -r line; do
  echo "stdin $line" >> "$log"
  # As NVIDIA's, it ends and leaves its control socket behind.
  [ "$line" = quit ] && kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")"
done
exit 0
"#,
            log = log.display()
        );
        let program = dir.join("nvidia-cuda-mps-control");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeControl { dir, log }
    }

    /// The daemon's `PATH`: the stand-in first.
    fn path(&self) -> String {
        format!("{}:{}", self.dir.display(), std::env::var("PATH").unwrap_or_default())
    }

    /// What it was told so far.
    fn calls(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How many lines of its log start with `prefix`.
    fn count(&self, prefix: &str) -> usize {
        self.calls().lines().filter(|l| l.starts_with(prefix)).count()
    }

    /// Waits until `count(prefix)` is `n`.
    fn wait_count(&self, c: &Cluster, prefix: &str, n: usize) {
        wait_for(&format!("{n} calls {prefix:?}"), T, || {
            until(self.count(prefix) == n, || format!("calls:\n{}\ndaemon log:\n{}", self.calls(), c.log()))
        });
    }
}

/// A cluster on one fake A100 (40 GiB = 40960 MiB) in 4 shards with `mps = true`, the
/// stand-in control program on its daemon's `PATH`; the daemon started.
fn start() -> (Cluster, FakeControl, [(&'static str, String); 2]) {
    let (mut c, machine) =
        fake_nvml::configure("shards_per_gpu = 4\nmps = true", vec![fake_nvml::gpu(0, A100_MODEL, UUID0)]);
    let control = FakeControl::new(&c);
    let env = [("PATH", control.path()), (fake_nvml::MACHINE_VARIABLE, machine.display().to_string())];
    start_with(&mut c, &env);
    (c, control, env)
}

fn start_with(c: &mut Cluster, env: &[(&'static str, String); 2]) {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    c.start_daemon_with(&env);
}

/// The server directory of GPU 0 for the user running the tests.
fn server_dir(c: &Cluster) -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    c.dir.path().join("state").join("mps").join(format!("gpu0-uid{}", unsafe { libc::getuid() }))
}

/// The `CUDA_MPS_*` lines a job wrote, sorted.
fn mps_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with("CUDA_MPS_")).map(String::from).collect();
    lines.sort();
    lines
}

/// What a job of `shards` shards on GPU 0 is told, under the server of `dir`.
fn expected(dir: &Path, percent: u32, mib: u32) -> Vec<String> {
    vec![
        format!("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={percent}"),
        format!("CUDA_MPS_LOG_DIRECTORY={}", dir.join("log").display()),
        format!("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0={mib}M"),
        format!("CUDA_MPS_PIPE_DIRECTORY={}", dir.join("pipe").display()),
    ]
}

/// A script that writes its `CUDA_MPS_*` variables, then waits for the file `release`.
const HOLD: &str = "env | grep ^CUDA_MPS_; while [ ! -e release ]; do sleep 0.1; done";

#[test]
fn two_shard_jobs_of_one_user_share_one_server_that_is_quit_after_both_and_before_a_whole_gpu_job() {
    let (c, control, _) = start();
    let dir = server_dir(&c);
    let a = c.sbatch(&["--gres=shard:1", "-o", "a.out", "--wrap", HOLD]);
    let b = c.sbatch(&[
        "--gres=shard:2",
        "-o",
        "b.out",
        "--wrap",
        &format!("srun sh -c 'env | grep ^CUDA_MPS_' > b.step; {HOLD}"),
    ]);
    c.wait_state(a, &["RUNNING"], T);
    c.wait_state(b, &["RUNNING"], T);
    let a_env = wait_for("a's variables", T, || {
        let lines = mps_lines(&read_or_empty(&c.path("a.out")));
        until(lines.len() == 4, || format!("{lines:?}")).map(|()| lines)
    });
    assert_eq!(a_env, expected(&dir, 25, 10240), "a shard of 4 of 40960 MiB");
    let b_env = wait_for("b's variables", T, || {
        let lines = mps_lines(&read_or_empty(&c.path("b.out")));
        until(lines.len() == 4, || format!("{lines:?}")).map(|()| lines)
    });
    assert_eq!(b_env, expected(&dir, 50, 20480), "two shards of 4");
    let step = wait_for("b's step's variables", T, || {
        let lines = mps_lines(&read_or_empty(&c.path("b.step")));
        until(lines.len() == 4, || format!("{lines:?}")).map(|()| lines)
    });
    assert_eq!(step, b_env, "a step is told what its job is");
    // One server for both, started with the GPU and the job's directories, as the job's owner.
    let calls = control.calls();
    let starts: Vec<&str> = calls.lines().filter(|l| l.starts_with("call -d")).collect();
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    assert_eq!(
        starts,
        vec![format!(
            "call -d visible=0 pipe={} logdir={} uid={}",
            dir.join("pipe").display(),
            dir.join("log").display(),
            uid
        )],
        "{calls}"
    );
    assert!(dir.join("pipe").join("control").exists(), "the server's control pipe");
    let config = stdout(&c.run("scontrol", &["show", "config"]));
    let program = control.dir.join("nvidia-cuda-mps-control");
    assert!(config.contains(&format!("SLURMLET_MPS            = {}\n", program.display())), "{config}");
    assert_eq!(control.count("stdin quit"), 0, "no quit while its jobs run:\n{calls}");
    // A whole-GPU job waits for the shards.
    let whole = c.sbatch(&["--gres=gpu:1", "-o", "whole.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"]);
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(a, &["COMPLETED"], T);
    c.wait_state(b, &["COMPLETED"], T);
    c.wait_state(whole, &["COMPLETED"], T);
    let calls = control.calls();
    assert_eq!((control.count("call -d"), control.count("stdin quit")), (1, 1), "{calls}");
    let quit = calls.lines().position(|l| l == "stdin quit").unwrap();
    assert!(
        calls
            .lines()
            .nth(quit - 1)
            .unwrap()
            .starts_with(&format!("call  visible=0 pipe={}", dir.join("pipe").display())),
        "quit told to the server's control pipe:\n{calls}"
    );
    assert_eq!(read(&c.path("whole.out")), "0\n");
    assert!(!dir.exists(), "the server's directories are removed");
    assert!(!c.dir.path().join("state/mps/gpu0.json").exists(), "its record too");
}

/// A `shard:1` job running `script` (output `a.out`) once its server runs and its script has
/// started: its supervisor has taken the job up, so a daemon killed now does not give it out
/// again.
fn running_under_its_server(c: &Cluster, control: &FakeControl, script: &str) -> u32 {
    let id = c.sbatch(&["--gres=shard:1", "-o", "a.out", "--wrap", &format!("touch started; {script}")]);
    c.wait_state(id, &["RUNNING"], T);
    control.wait_count(c, "call -d", 1);
    wait_for("the script to start", T, || until(c.path("started").exists(), String::new));
    id
}

#[test]
fn a_restarted_daemon_takes_up_the_running_server_and_quits_it_after_the_job() {
    let (mut c, control, env) = start();
    let id = running_under_its_server(&c, &control, HOLD);
    c.kill_daemon();
    start_with(&mut c, &env);
    c.wait_state(id, &["RUNNING"], T);
    wait_for("the server taken up", T, || until(c.log().contains("re-adopted MPS server"), || c.log()));
    // Another job of the same user on the same server.
    let next = c.sbatch(&["--gres=shard:1", "-o", "b.out", "--wrap", "env | grep ^CUDA_MPS_PIPE"]);
    c.wait_state(next, &["COMPLETED"], T);
    assert_eq!(read(&c.path("b.out")), format!("CUDA_MPS_PIPE_DIRECTORY={}\n", server_dir(&c).join("pipe").display()));
    assert_eq!((control.count("call -d"), control.count("stdin quit")), (1, 0), "{}", control.calls());
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(id, &["COMPLETED"], T);
    control.wait_count(&c, "stdin quit", 1);
    assert_eq!(control.count("call -d"), 1, "{}", control.calls());
    wait_for("the directories removed", T, || until(!server_dir(&c).exists(), || control.calls()));
}

#[test]
fn a_server_whose_jobs_ended_while_the_daemon_was_down_is_quit_when_it_starts() {
    let (mut c, control, env) = start();
    let id = running_under_its_server(&c, &control, &format!("{HOLD}; touch done"));
    c.kill_daemon();
    std::fs::write(c.path("release"), "").unwrap();
    wait_for("the job's end", T, || until(c.path("done").exists(), String::new));
    // The supervisor records the end once the script has left.
    std::thread::sleep(Duration::from_millis(500));
    start_with(&mut c, &env);
    c.wait_state(id, &["COMPLETED"], T);
    control.wait_count(&c, "stdin quit", 1);
    assert_eq!(control.count("call -d"), 1, "{}", control.calls());
    assert!(!server_dir(&c).exists());
}

#[test]
fn without_the_control_program_shard_jobs_run_without_mps_and_the_log_says_so() {
    let test = "without_the_control_program_shard_jobs_run_without_mps_and_the_log_says_so";
    let mut c = Cluster::configure("1", "shards_per_gpu = 4\nmps = true");
    let empty = c.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    if ["/usr/bin", "/bin", "/usr/local/bin"].iter().any(|d| Path::new(d).join("nvidia-cuda-mps-control").exists()) {
        skip(test, "this machine has nvidia-cuda-mps-control in a system directory");
        return;
    }
    c.start_daemon_with(&[("PATH", &format!("{}:/usr/bin:/bin", empty.display()))]);
    let id = c.sbatch(&[
        "--gres=shard:1",
        "-o",
        "a.out",
        "--wrap",
        "echo gpu=$CUDA_VISIBLE_DEVICES; env | grep ^CUDA_MPS_; true",
    ]);
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path("a.out")), "gpu=0\n", "no CUDA_MPS_ variable");
    let log = c.log();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("shard jobs run without MPS")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("WARN") && lines[0].contains("nvidia-cuda-mps-control is not on the daemon's PATH"),
        "{log}"
    );
    assert!(!c.dir.path().join("state/mps").exists());
    let config = stdout(&c.run("scontrol", &["show", "config"]));
    assert!(
        config.contains(
            "SLURMLET_MPS            = none: nvidia-cuda-mps-control is not on the daemon's PATH; shard jobs run without MPS\n"
        ),
        "{config}"
    );
}

#[test]
fn a_gpu_of_unknown_memory_gives_its_shard_jobs_no_memory_limit_and_the_log_says_so() {
    let mut c = Cluster::configure("1", "shards_per_gpu = 8\nmps = true");
    let control = FakeControl::new(&c);
    c.start_daemon_with(&[("PATH", &control.path())]);
    let id = c.sbatch(&["--gres=shard:3", "-o", "a.out", "--wrap", "env | grep ^CUDA_MPS_"]);
    c.wait_state(id, &["COMPLETED"], T);
    let lines = mps_lines(&read(&c.path("a.out")));
    let dir = server_dir(&c);
    assert_eq!(
        lines,
        vec![
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=37".to_string(),
            format!("CUDA_MPS_LOG_DIRECTORY={}", dir.join("log").display()),
            format!("CUDA_MPS_PIPE_DIRECTORY={}", dir.join("pipe").display()),
        ]
    );
    let log = c.log();
    assert_eq!(log.matches("the memory of GPU 0 is unknown").count(), 1, "{log}");
    control.wait_count(&c, "stdin quit", 1);
}

/// A file's text, or nothing while it is not there.
fn read_or_empty(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}
