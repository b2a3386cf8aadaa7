//! A fresh slurmlet daemon in a temporary directory: its configuration (8 GPUs, CPUs and
//! memory to spare, finished jobs kept in the store), the command symlinks, and helpers to
//! drive it over REST from several keep-alive connections at once.

use crate::error::{failed, io, Result};
use slurmlet::api::client::Client;
use slurmlet::api::types::{JobDescMsg, JobSubmitReq, DATA_PARSER};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// The command names linked to the `slurmlet` binary.
const COMMANDS: &[&str] = &["sbatch", "srun", "salloc", "squeue", "scancel", "sinfo", "slurmletd"];

/// How long a finished job stays in the daemon's memory (MinJobAge): a week, so that every
/// job a figure created is still listed by `squeue` and counted in the daemon's memory.
const MIN_JOB_AGE: u32 = 7 * 24 * 3600;

/// Pending and running jobs the daemon takes from one user: the figures queue up to
/// 100,000 held jobs, past the daemon's default of 10,000.
const QUEUE_LIMIT: u32 = 10_000_000;

/// A daemon under test and its directory.
pub struct Cluster {
    root: PathBuf,
    /// Symlinks `sbatch`, `squeue`, … → `slurmlet`.
    pub bin: PathBuf,
    /// The working directory of commands and jobs.
    pub work: PathBuf,
    /// The daemon's socket.
    pub socket: PathBuf,
    /// The configuration file.
    pub config: PathBuf,
    slurmlet: PathBuf,
    gpus: usize,
    daemon: Option<Child>,
    /// Jobs that run until cancelled; cancelled when the cluster is dropped.
    long_jobs: Mutex<Vec<u32>>,
}

/// What [`Cluster::rest_many`] measured.
pub struct RestRun<T> {
    /// Each operation's result, in operation order.
    pub results: Vec<T>,
    /// Each request's latency in ms, in operation order.
    pub latencies_ms: Vec<f64>,
    /// From the first request to the last reply.
    pub elapsed: Duration,
}

impl<T> RestRun<T> {
    /// Operations per second.
    pub fn rate(&self) -> f64 {
        self.results.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

static NEXT_CLUSTER: AtomicUsize = AtomicUsize::new(0);

/// Whether cluster directories are left behind (`--keep`), for looking at daemon logs.
pub static KEEP: AtomicBool = AtomicBool::new(false);

/// Lines added to every daemon's configuration (`--daemon-config`).
pub static EXTRA_CONFIG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The generic resource figure 4's jobs ask for (`--job-gres`), as `tres_per_node`
/// carries it (`gres/shard:1`); unset: none.
pub static JOB_GRES: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The configuration's `gpus` line: none when the added lines name an NVML library (the
/// daemon then finds its GPUs through it) or their own `gpus`.
fn gpus_line(gpus: usize, extra: &str) -> String {
    let named = extra.lines().any(|l| {
        let key = l.split('=').next().unwrap_or("").trim();
        key == "gpus" || key == "nvml_library"
    });
    if named {
        String::new()
    } else {
        format!("gpus = {gpus}\n")
    }
}

impl Cluster {
    /// Creates a directory under `parent` with the symlinks and a configuration of `gpus`
    /// GPUs, and starts the daemon.
    pub fn start(slurmlet: &Path, parent: &Path, label: &str, gpus: usize) -> Result<Cluster> {
        Cluster::start_with(slurmlet, parent, label, gpus, MIN_JOB_AGE)
    }

    /// The same, with finished jobs kept in the daemon's memory for `min_job_age` seconds.
    pub fn start_with(slurmlet: &Path, parent: &Path, label: &str, gpus: usize, min_job_age: u32) -> Result<Cluster> {
        let n = NEXT_CLUSTER.fetch_add(1, Ordering::Relaxed);
        let root = parent.join(format!("slurmlet-bench-{}-{n}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let bin = root.join("bin");
        let work = root.join("work");
        for d in [&bin, &work] {
            std::fs::create_dir_all(d).map_err(io(format!("cannot create {}", d.display())))?;
        }
        for c in COMMANDS {
            std::os::unix::fs::symlink(slurmlet, bin.join(c)).map_err(io(format!("cannot link {c}")))?;
        }
        let socket = root.join("run").join("slurmlet.sock");
        if socket.as_os_str().len() > 100 {
            return Err(failed(format!("socket path {} is too long for a Unix socket; use --dir", socket.display())));
        }
        let config = root.join("slurmlet.toml");
        let extra = EXTRA_CONFIG.get().map_or("", String::as_str);
        let text = format!(
            "cluster_name = \"bench\"\nnode_name = \"bench\"\ncpus = 64\nmemory = 1048576\n{gpus_line}\
             kill_wait = 1\nmin_job_age = {min_job_age}\nstate_dir = \"{}\"\nsocket = \"{}\"\n{extra}\n\n\
             [[partitions]]\nname = \"gpu\"\ndefault = true\n\n\
             [limits]\nmax_submitted_jobs_per_user = {QUEUE_LIMIT}\n",
            root.join("state").display(),
            socket.display(),
            gpus_line = gpus_line(gpus, extra),
        );
        std::fs::write(&config, text).map_err(io(format!("cannot write {}", config.display())))?;
        let mut cluster = Cluster {
            root,
            bin,
            work,
            socket,
            config,
            slurmlet: slurmlet.to_path_buf(),
            gpus,
            daemon: None,
            long_jobs: Mutex::new(Vec::new()),
        };
        cluster.start_daemon()?;
        Ok(cluster)
    }

    /// The number of GPUs configured.
    pub fn gpus(&self) -> usize {
        self.gpus
    }

    /// Starts `slurmlet daemon run` as a child and waits until it answers a ping; returns
    /// how long that took from the spawn.
    pub fn start_daemon(&mut self) -> Result<Duration> {
        let log_path = self.root.join("daemon.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(io(format!("cannot open {}", log_path.display())))?;
        let t0 = Instant::now();
        let child = Command::new(&self.slurmlet)
            .args(["daemon", "run", "--config"])
            .arg(&self.config)
            .env("SLURMLET_CONF", &self.config)
            .env("SLURMLET_SOCKET", &self.socket)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(io("cannot share the log file"))?)
            .stderr(log)
            .spawn()
            .map_err(io(format!("cannot start {}", self.slurmlet.display())))?;
        self.daemon = Some(child);
        self.wait_ready(Duration::from_secs(600))?;
        Ok(t0.elapsed())
    }

    /// Waits until the daemon answers a ping, polling every half millisecond.
    fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        while !raw_ping(&self.socket) {
            if let Some(child) = self.daemon.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(failed(format!("the daemon exited ({status}); log:\n{}", self.log_tail())));
                }
            }
            if Instant::now() > deadline {
                return Err(failed(format!("the daemon did not answer within {timeout:?}")));
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        Ok(())
    }

    /// `kill -9` of the daemon, then a new one: the time from the kill to the new daemon's
    /// first answer to a ping.
    pub fn restart_after_kill9(&mut self) -> Result<Duration> {
        let mut old = self.daemon.take().ok_or_else(|| failed("no daemon to kill"))?;
        let t0 = Instant::now();
        old.kill().map_err(io("cannot kill the daemon"))?;
        old.wait().map_err(io("cannot reap the daemon"))?;
        self.start_daemon()?;
        Ok(t0.elapsed())
    }

    /// Stops the daemon (SIGTERM; SIGKILL if it has not exited within 10 s).
    pub fn stop_daemon(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
            unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(d.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = d.kill();
            let _ = d.wait();
        }
    }

    /// The daemon's process id.
    pub fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(Child::id)
    }

    /// The last lines of the daemon's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.root.join("daemon.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// A command run through its symlink in the work directory, with this cluster's
    /// environment and no `SBATCH_*`/`SLURM_*` variables of the caller.
    pub fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.current_dir(&self.work)
            .env("SLURMLET_CONF", &self.config)
            .env("SLURMLET_SOCKET", &self.socket)
            .env("XDG_RUNTIME_DIR", self.root.join("xdg"))
            .env("PATH", format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default()))
            .stdin(Stdio::null());
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("SBATCH_") || k.starts_with("SLURM_") {
                c.env_remove(&*k);
            }
        }
        c
    }

    /// A REST client with its own keep-alive connection.
    pub fn client(&self) -> Result<Client> {
        Ok(Client::at(&self.socket)?)
    }

    /// A job description for `script`, as a REST client would send it: the work directory,
    /// a small environment, output to `/dev/null`.
    pub fn desc(&self, script: &str) -> JobDescMsg {
        let env = ["PATH", "HOME", "USER", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
            .chain(std::iter::once("SLURMLET_BENCH=1".to_string()))
            .collect();
        JobDescMsg {
            script: Some(script.to_string()),
            environment: Some(env),
            current_working_directory: Some(self.work.display().to_string()),
            name: Some("bench".into()),
            standard_output: Some("/dev/null".into()),
            ..Default::default()
        }
    }

    /// A held `true` job.
    pub fn held_desc(&self) -> JobDescMsg {
        JobDescMsg { hold: Some(true), ..self.desc("#!/bin/sh\ntrue\n") }
    }

    /// Submits one job and returns its id.
    pub fn submit(client: &Client, desc: &JobDescMsg) -> Result<u32> {
        let r = client.submit(&JobSubmitReq { script: None, job: Some(desc.clone()) })?;
        match r.errors.first() {
            Some(e) => Err(failed(format!("submit refused: {} ({})", e.description, e.error))),
            None if r.job_id == 0 => Err(failed("submit answered no job id")),
            None => Ok(r.job_id),
        }
    }

    /// Runs `n` operations over `conns` concurrent keep-alive connections (one thread and
    /// one client each, connected before the clock starts), timing each request and the whole.
    pub fn rest_many<T: Send>(
        &self,
        n: usize,
        conns: usize,
        op: impl Fn(&Client, usize) -> Result<T> + Sync,
    ) -> Result<RestRun<T>> {
        let conns = conns.clamp(1, n.max(1));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let barrier = Barrier::new(conns + 1);
        let mut slots: Vec<Option<(T, f64)>> = (0..n).map(|_| None).collect();
        let (elapsed, outcome) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..conns)
                .map(|_| {
                    scope.spawn(|| -> Result<Vec<(usize, T, f64)>> {
                        let client = self.client();
                        // Open the keep-alive connection before the clock starts.
                        let client = client.and_then(|c| c.ping().map(|_| c).map_err(Into::into));
                        barrier.wait();
                        let client = client?;
                        let mut done = Vec::new();
                        while !stop.load(Ordering::Relaxed) {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n {
                                break;
                            }
                            let t = Instant::now();
                            match op(&client, i) {
                                Ok(v) => done.push((i, v, t.elapsed().as_secs_f64() * 1e3)),
                                Err(e) => {
                                    stop.store(true, Ordering::Relaxed);
                                    return Err(e);
                                }
                            }
                        }
                        Ok(done)
                    })
                })
                .collect();
            barrier.wait();
            let t0 = Instant::now();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("REST thread panicked")).collect();
            (t0.elapsed(), results)
        });
        for part in outcome {
            for (i, v, ms) in part? {
                slots[i] = Some((v, ms));
            }
        }
        let (results, latencies_ms) = slots.into_iter().map(|s| s.expect("every operation ran")).unzip();
        Ok(RestRun { results, latencies_ms, elapsed })
    }

    /// Submits `n` jobs described by `desc(i)` over `conns` connections; returns their ids.
    pub fn submit_many(
        &self,
        n: usize,
        conns: usize,
        desc: impl Fn(usize) -> JobDescMsg + Sync,
    ) -> Result<RestRun<u32>> {
        self.rest_many(n, conns, |c, i| Self::submit(c, &desc(i)))
    }

    /// Cancels `ids` over `conns` connections.
    pub fn cancel_many(&self, ids: &[u32], conns: usize) -> Result<RestRun<()>> {
        self.rest_many(ids.len(), conns, |c, i| {
            let r = c.cancel(&ids[i].to_string(), None, slurmlet::api::types::SignalScope::Steps)?;
            match r.status.first().filter(|s| s.error.code != 0) {
                Some(s) => Err(failed(format!("cancel of job {} refused: {}", ids[i], s.error.message))),
                None => Ok(()),
            }
        })
    }

    /// Waits until every job of `ids` has finished (polling one job at a time every 10 ms,
    /// in order); returns a description of each job that did not end COMPLETED.
    pub fn wait_finished(&self, ids: &[u32], timeout: Duration) -> Result<Vec<String>> {
        let client = self.client()?;
        let deadline = Instant::now() + timeout;
        let mut not_completed = Vec::new();
        for &id in ids {
            loop {
                let r = client.job(&id.to_string())?;
                let job = r.jobs.first();
                let state = job.and_then(|j| j.job_state.first().cloned()).unwrap_or_default();
                if is_finished(&state) {
                    if let (Some(j), false) = (job, state == "COMPLETED") {
                        not_completed.push(format!(
                            "job {id} {state} (exit {}, signal {}, reason {})",
                            j.exit_code.return_code.number, j.exit_code.signal.id.number, j.state_reason
                        ));
                    }
                    break;
                }
                if Instant::now() > deadline {
                    return Err(failed(format!("job {id} still {state} after {timeout:?}")));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Ok(not_completed)
    }

    /// An error saying which jobs did not complete (the first few) and the daemon's log tail.
    pub fn not_completed(&self, what: &str, jobs: &[String]) -> crate::error::BenchError {
        let shown: Vec<&str> = jobs.iter().take(5).map(String::as_str).collect();
        failed(format!(
            "{} {what} jobs did not complete: {}{}; daemon log:\n{}",
            jobs.len(),
            shown.join("; "),
            if jobs.len() > shown.len() { "; …" } else { "" },
            self.log_tail()
        ))
    }

    /// Records a job that runs until cancelled, so that dropping the cluster cancels it.
    pub fn track_long_job(&self, id: u32) {
        self.long_jobs.lock().expect("long job list").push(id);
    }

    /// Cancels the jobs recorded by [`Cluster::track_long_job`] and waits (a few seconds at
    /// most) until they have ended.
    pub fn cancel_long_jobs(&self) {
        let ids: Vec<u32> = std::mem::take(&mut *self.long_jobs.lock().expect("long job list"));
        let Ok(client) = self.client() else { return };
        for id in &ids {
            let _ = client.cancel(&id.to_string(), None, slurmlet::api::types::SignalScope::Steps);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for id in ids {
            while Instant::now() < deadline {
                let state = client
                    .job(&id.to_string())
                    .ok()
                    .and_then(|r| r.jobs.first().and_then(|j| j.job_state.first().cloned()))
                    .unwrap_or_default();
                if state.is_empty() || is_finished(&state) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.cancel_long_jobs();
        self.stop_daemon();
        // Whatever the daemon complained about is worth seeing next to the figures.
        let log = std::fs::read_to_string(self.root.join("daemon.log")).unwrap_or_default();
        let complaints: Vec<&str> =
            log.lines().filter(|l| l.contains("ERROR") || l.contains("WARN") || l.contains("panicked")).collect();
        if !complaints.is_empty() {
            eprintln!("daemon log of {} ({} warnings or errors), last ones:", self.root.display(), complaints.len());
            for l in &complaints[complaints.len().saturating_sub(10)..] {
                eprintln!("  {l}");
            }
        }
        if KEEP.load(Ordering::Relaxed) {
            eprintln!("kept {}", self.root.display());
        } else {
            remove_tree(&self.root);
        }
    }
}

/// Removes the cluster's directory. The supervisors of jobs that were ending when the daemon
/// stopped (jobs outlive their daemon) may still write their status files into it for a
/// moment on a loaded machine, so that a first removal meets a directory that is not empty:
/// it is tried again for up to 5 s.
fn remove_tree(root: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::remove_dir_all(root).is_err() && root.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a job state name is a final one.
pub fn is_finished(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "FAILED"
            | "CANCELLED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "OUT_OF_MEMORY"
            | "PREEMPTED"
            | "BOOT_FAIL"
            | "DEADLINE"
    )
}

/// One `GET …/ping` on a new connection; true when the daemon answers 200.
pub fn raw_ping(socket: &Path) -> bool {
    let Ok(mut s) = std::os::unix::net::UnixStream::connect(socket) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let req = format!("GET /slurm/{DATA_PARSER}/ping HTTP/1.1\r\nHost: slurmlet\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}
