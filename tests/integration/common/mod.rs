//! A real daemon in a temporary directory, and the real binary run through its symlinks.

pub mod connections;
pub mod device_nodes;
pub mod fake_nvml;
pub mod gpus;
pub mod http;
pub mod system;
pub mod tmux;

use slurmlet::api::client::Client;
use slurmlet::api::types::{JobInfo, SignalScope};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for what should come soon (a job's state, a file, a line in a log)
/// before it fails: one bound for the whole suite, generous for a busy machine, as it is
/// reached only when the awaited thing never comes.
pub const T: Duration = Duration::from_secs(60);

/// A test cluster: config, state, socket and work directory under one temp dir.
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub work: PathBuf,
    pub socket: PathBuf,
    pub config: PathBuf,
    pub daemon: Option<Child>,
}

/// The command links a cluster's `bin` holds: every command of the binary, and `slurmlet`.
pub fn commands() -> impl Iterator<Item = &'static str> {
    slurmlet::cli::COMMANDS.iter().copied().chain(std::iter::once("slurmlet"))
}

impl Cluster {
    /// A cluster whose config has `gpus`, 8 CPUs, KillWait 2 s and `extra` TOML lines, with its
    /// daemon started.
    pub fn start(gpus: &str, extra: &str) -> Cluster {
        let mut c = Cluster::configure(gpus, extra);
        c.start_daemon();
        c
    }

    /// The same, without starting a daemon (the first command will).
    pub fn configure(gpus: &str, extra: &str) -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_slurmlet"));
        for c in commands() {
            std::os::unix::fs::symlink(&exe, bin.join(c)).unwrap();
        }
        let socket = dir.path().join("run").join("slurmlet.sock");
        let config = dir.path().join("slurmlet.toml");
        std::fs::write(
            &config,
            format!(
                "cluster_name = \"testcluster\"\nnode_name = \"node1\"\n{cpus}memory = 16000\ngpus = {gpus}\nkill_wait = 2\nstate_dir = \"{}\"\nsocket = \"{}\"\n{extra}\n",
                dir.path().join("state").display(),
                socket.display(),
                // `extra` may set its own CPU count.
                cpus = if extra.contains("cpus =") { "" } else { "cpus = 8\n" }
            ),
        )
        .unwrap();
        Cluster { dir, bin, work, socket, config, daemon: None }
    }

    /// Starts `slurmletd` in the foreground as a child, and waits until it answers.
    pub fn start_daemon(&mut self) {
        self.start_daemon_with(&[]);
    }

    /// The same, with `env` added to the daemon's environment.
    pub fn start_daemon_with(&mut self, env: &[(&str, &str)]) {
        if let Err(log) = self.try_start_daemon_with(env) {
            panic!("daemon did not come up; log:\n{log}");
        }
    }

    /// Starts `slurmletd` as [`Cluster::start_daemon_with`] does; `Err` holds its log when it
    /// does not come up (it has then exited, or is killed).
    pub fn try_start_daemon_with(&mut self, env: &[(&str, &str)]) -> Result<(), String> {
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(self.dir.path().join("daemon.log")).unwrap();
        let child = Command::new(self.bin.join("slurmletd"))
            .envs(env.iter().copied())
            .arg("--config")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start slurmletd");
        self.daemon = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&self.socket).is_err() {
            let exited = self.daemon.as_mut().is_some_and(|d| d.try_wait().ok().flatten().is_some());
            if exited || Instant::now() >= deadline {
                self.kill_daemon();
                return Err(self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Starts `slurmletd` on this cluster's configuration, expecting it to refuse to start,
    /// and returns how it ended and what it said; fails if it comes up (answers on its
    /// socket) instead, or is still running after 30 s.
    pub fn start_refused(&self) -> Output {
        let mut daemon = self
            .cmd("slurmletd")
            .arg("--config")
            .arg(&self.config)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start slurmletd");
        let deadline = Instant::now() + Duration::from_secs(30);
        while daemon.try_wait().unwrap().is_none() {
            if std::os::unix::net::UnixStream::connect(&self.socket).is_ok() || Instant::now() > deadline {
                let _ = daemon.kill();
                let o = daemon.wait_with_output().unwrap();
                panic!("slurmletd came up on {}:\n{}", read(&self.config), stderr(&o));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        daemon.wait_with_output().unwrap()
    }

    /// A cluster whose daemon also listens on a free TCP port of 127.0.0.1 (the `listen`
    /// key, before `extra`), and that address. The port is found free and then taken by the
    /// daemon; another process may take it in between (as the local port of a connection it
    /// makes), so a daemon that finds its port in use is started again on another.
    pub fn start_on_tcp(gpus: &str, extra: &str) -> (Cluster, String) {
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let addr = format!("127.0.0.1:{port}");
            let mut c = Cluster::configure(gpus, &format!("listen = \"{addr}\"\n{extra}"));
            match c.try_start_daemon_with(&[]) {
                Ok(()) => return (c, addr),
                Err(log) if log.contains("Address already in use") => last_log = log,
                Err(log) => panic!("daemon did not come up; log:\n{log}"),
            }
        }
        panic!("five free ports were taken before the daemon could listen; last log:\n{last_log}");
    }

    /// Waits for the daemon started as a child to end by itself, and returns how it ended.
    pub fn wait_daemon(&mut self) -> std::process::ExitStatus {
        self.daemon.take().expect("a daemon started as a child").wait().unwrap()
    }

    /// `kill -9` the daemon (jobs keep running).
    pub fn kill_daemon(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            d.kill().unwrap();
            d.wait().unwrap();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("daemon.log")).unwrap_or_default()
    }

    /// Runs a command through its symlink in the work directory.
    pub fn cmd(&self, name: &str) -> Command {
        self.program(&self.bin.join(name))
    }

    /// Runs `program` in the work directory as the commands are run: this cluster's
    /// commands first on its `PATH`, none of the caller's `SLURM_*`/`SBATCH_*` variables.
    pub fn program(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.work)
            .env("SLURMLET_CONF", &self.config)
            .env("SLURMLET_SOCKET", &self.socket)
            .env("XDG_RUNTIME_DIR", self.dir.path().join("xdg"))
            .env("PATH", format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default()))
            .stdin(Stdio::null());
        for (k, _) in std::env::vars() {
            if k.starts_with("SBATCH_") || k.starts_with("SLURM_") {
                c.env_remove(k);
            }
        }
        c
    }

    pub fn run(&self, name: &str, args: &[&str]) -> Output {
        self.cmd(name).args(args).output().expect("run command")
    }

    /// `sbatch --parsable ARGS`, asserting success, returning the id.
    pub fn sbatch(&self, args: &[&str]) -> u32 {
        let out = self.run("sbatch", &[&["--parsable"], args].concat());
        assert!(out.status.success(), "sbatch {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("job id")
    }

    pub fn client(&self) -> Client {
        Client::at(&self.socket).expect("client")
    }

    pub fn job(&self, id: u32) -> JobInfo {
        let r = self.client().job(&id.to_string()).expect("job query");
        r.jobs.into_iter().next().unwrap_or_else(|| panic!("job {id} unknown: {:?}", r.errors))
    }

    pub fn state(&self, id: u32) -> String {
        self.job(id).job_state.join("+")
    }

    /// Waits until job `id` is in one of `states`.
    pub fn wait_state(&self, id: u32, states: &[&str], timeout: Duration) -> JobInfo {
        let deadline = Instant::now() + timeout;
        loop {
            let j = self.job(id);
            if states.iter().any(|s| j.job_state.first().map(String::as_str) == Some(s)) {
                return j;
            }
            assert!(
                Instant::now() < deadline,
                "job {id} still {:?} (reason {}), wanted {states:?}; log:\n{}",
                j.job_state,
                j.state_reason,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until `path` (relative to the work dir) exists and returns its contents.
    pub fn wait_file(&self, rel: &str, timeout: Duration) -> String {
        let p = self.work.join(rel);
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(t) = std::fs::read_to_string(&p) {
                if !t.is_empty() {
                    return t;
                }
            }
            assert!(Instant::now() < deadline, "{} did not appear; log:\n{}", p.display(), self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.work.join(rel)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Leave no job behind: kill every job process group the daemon still knows.
        if let Ok(c) = Client::at(&self.socket) {
            if let Ok(r) = c.jobs() {
                for j in r.jobs {
                    let _ = c.cancel(&j.job_id.to_string(), Some("KILL"), SignalScope::Steps);
                }
            }
        }
        match self.daemon.take() {
            Some(mut d) => {
                let _ = d.kill();
                let _ = d.wait();
            }
            // An auto-started daemon: ask it to stop.
            None => {
                let _ = self.run("slurmlet", &["daemon", "stop", "--socket", self.socket.to_str().unwrap_or_default()]);
            }
        }
        remove_daemon_cgroups(false, &self.dir.path().join("state"));
    }
}

/// Removes the cgroups that the daemon of state directory `state` (in system mode or not)
/// made, in every hierarchy: a daemon killed leaves them, with the groups of the jobs whose
/// end it did not store.
pub fn remove_daemon_cgroups(system: bool, state: &Path) {
    use slurmlet::stepd::containment::cgroup::hierarchy::Hierarchies;
    // SAFETY: getuid has no preconditions.
    let base = slurmlet::stepd::containment::cgroup::setup::base_for(system, unsafe { libc::getuid() }, state);
    let machine = Hierarchies::of_this_machine();
    for mount in machine.legacy.values().chain(machine.unified.iter().map(|(m, _)| m)) {
        remove_cgroup_tree(&mount.join(&base));
    }
}

/// Removes cgroup `dir` and the groups below it, if it is there, waiting up to 5 s for the
/// processes still ending in it (a killed daemon's supervisors and stepd server) to be gone.
pub fn remove_cgroup_tree(dir: &Path) {
    use slurmlet::stepd::containment::cgroup::{group::Group, hierarchy::Version};
    let deadline = Instant::now() + Duration::from_secs(5);
    while dir.exists() && Group::of_dir(Version::V1, dir.to_path_buf()).remove().is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Looks with `look` every 20 ms until it finds what it waits for (`Ok`), for at most
/// `timeout`; then fails, saying what was waited for and what the last look saw (`Err`).
pub fn wait_for<T>(what: &str, timeout: Duration, mut look: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match look() {
            Ok(found) => return found,
            Err(seen) => assert!(Instant::now() < deadline, "waited for {what}: {seen}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a process whose whole command line matches the regular expression `pattern`
/// runs (`pgrep -f`).
pub fn process_running(pattern: &str) -> bool {
    Command::new("pgrep").args(["-f", pattern]).status().expect("run pgrep").success()
}

/// `Ok` when `cond` holds, else `Err(seen)`: for [`wait_for`].
pub fn until(cond: bool, seen: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(seen())
    }
}

/// A command's standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command's standard output, standard error and exit code.
pub fn outcome(o: &Output) -> (String, String, Option<i32>) {
    (stdout(o), stderr(o), o.status.code())
}

/// Replaces `path` by what `make` makes at a name beside it, in one rename, as whoever may
/// write to its directory can.
pub fn replace_by(path: &Path, make: impl FnOnce(&Path)) {
    let beside = path.with_extension("new");
    let _ = std::fs::remove_file(&beside);
    make(&beside);
    std::fs::rename(&beside, path).unwrap_or_else(|e| panic!("rename over {}: {e}", path.display()));
}

/// Makes a FIFO at `path` that anyone may open (as the umask lets them).
pub fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: name is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o666) }, 0, "mkfifo {}", path.display());
}

/// Reads a file's text.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The file every skipped test adds its line to, under the build's target directory;
/// `.ci/run` empties it before the tests and lists it at the end (the test harness keeps
/// a passing test's output to itself, so a line on stderr alone is never seen).
pub fn skipped_tests_file() -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target dir>/tmp`, wherever the target directory is.
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target directory").join("skipped-tests.txt")
}

/// Says loudly that test `test` checked nothing, and `why`: on stderr (past the harness's
/// capture) and as one line of [`skipped_tests_file`], which CI lists at the end of its run.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let line = format!("*** {test} SKIPPED, nothing checked: {why} ***");
    let _ = std::io::stderr().write_all(format!("\n{line}\n\n").as_bytes());
    let path = skipped_tests_file();
    // One write of one line, in append mode: lines of tests running at once do not mix.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = written {
        let _ = writeln!(std::io::stderr(), "cannot record the skip in {}: {e}", path.display());
    }
}
