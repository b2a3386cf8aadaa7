//! A system daemon (`mode = "system"`, run by root) in a temporary directory, and real users
//! made with `useradd` to use it: for the tests of what users may and may not do to each
//! other and to the daemon. They need root (as CI has); run as anyone else they say so and
//! check nothing.

use super::{wait_for, T};
use slurmlet::api::client::Client;
use slurmlet::api::types::SignalScope;
use slurmlet::identity::{Identity, RunAs};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Whether the tests run as root; when not, says that `test` checked nothing.
pub fn is_root(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        super::skip(test, "not root: the system-mode tests need to create users");
    }
    root
}

/// A user made for one test, removed with it.
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

impl User {
    pub fn create(name: &str, home: &Path) -> User {
        let _ = Command::new("userdel").arg(name).output();
        // useradd locks the user database; tests running at once may find it taken.
        wait_for(&format!("useradd {name}"), T, || {
            let out = Command::new("useradd")
                .args(["-m", "-d"])
                .arg(home)
                .args(["-s", "/bin/sh", "-U", name])
                .output()
                .expect("run useradd");
            super::until(out.status.success(), || String::from_utf8_lossy(&out.stderr).into_owned())
        });
        let uid = slurmlet::identity::user_uid(name).expect("new user exists");
        let gid = std::fs::metadata(home).expect("home exists").gid();
        User { name: name.into(), uid, gid, home: home.into() }
    }

    /// Runs `f` on a thread with this user's credentials (a connection it opens is theirs).
    pub fn as_me<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        Identity::lookup(RunAs { uid: self.uid, gid: self.gid }).unwrap().on_thread(f).unwrap()
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").args(["-r", &self.name]).output();
    }
}

/// The binary and its command links, copied once for all tests: users run it from there, as
/// the build directory may be closed to them.
pub fn shared_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        // One directory per test process; those of finished processes are removed.
        const PREFIX: &str = "slurmlet-system-tests-";
        for entry in std::fs::read_dir("/tmp").unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix(PREFIX) {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = PathBuf::from(format!("/tmp/{PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_slurmlet"), dir.join("slurmlet")).unwrap();
        for c in slurmlet::cli::COMMANDS {
            std::os::unix::fs::symlink("slurmlet", dir.join(c)).unwrap();
        }
        dir
    })
}

/// Runs `cmd`, trying again while the copied binary is busy: a process forked by another
/// test while the copy was open for writing holds it until that process executes.
pub fn retrying<T>(mut run: impl FnMut() -> std::io::Result<T>) -> T {
    for _ in 0..500 {
        match run() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(10))
            }
            other => return other.expect("run command"),
        }
    }
    panic!("the binary stayed busy")
}

/// A system daemon in a temporary directory, with users to try it.
pub struct Shared {
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    pub config: PathBuf,
    pub socket: PathBuf,
    pub daemon: Option<Child>,
    /// Added to the daemon's environment.
    pub env: Vec<(String, String)>,
}

impl Shared {
    /// A system daemon with 2 fake GPUs (configured, or those of the NVML library `extra` names,
    /// or as many as its `gpus = N` line says) and `extra` configuration.
    pub fn start(extra: &str) -> Shared {
        Shared::start_with(extra, Vec::new())
    }

    /// The same, with `env` added to the daemon's environment.
    pub fn start_with(extra: &str, env: Vec<(String, String)>) -> Shared {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = shared_bin().to_path_buf();
        let socket = dir.path().join("run").join("slurmlet.sock");
        let config = dir.path().join("slurmlet.toml");
        std::fs::write(
            &config,
            format!(
                "mode = \"system\"\n{cluster}node_name = \"node1\"\n{cpus}memory = 16000\n{gpus}kill_wait = 2\nstate_dir = \"{}\"\nsocket = \"{}\"\n{extra}\n",
                dir.path().join("state").display(),
                socket.display(),
                cpus = if extra.lines().any(|l| l.trim_start().starts_with("cpus =")) { "" } else { "cpus = 8\n" },
                cluster = if extra.lines().any(|l| l.trim_start().starts_with("cluster_name =")) {
                    ""
                } else {
                    "cluster_name = \"lab\"\n"
                },
                // A configuration that names an NVML library finds its GPUs through it; one
                // that gives its own count keeps it.
                gpus = if extra.contains("nvml_library") || extra.lines().any(|l| l.trim_start().starts_with("gpus ="))
                {
                    ""
                } else {
                    "gpus = 2\n"
                },
            ),
        )
        .unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut shared = Shared { dir, bin, config, socket, daemon: None, env };
        shared.start_daemon();
        shared
    }

    pub fn start_daemon(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("daemon.log")).unwrap();
        let mut cmd = Command::new(self.bin.join("slurmletd"));
        cmd.arg("--system")
            .arg("--config")
            .arg(&self.config)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let child = retrying(|| cmd.spawn());
        self.daemon = Some(child);
        wait_for("the system daemon", T, || {
            super::until(std::os::unix::net::UnixStream::connect(&self.socket).is_ok(), || self.log())
        });
    }

    pub fn stop_daemon(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("daemon.log")).unwrap_or_default()
    }

    /// A user with a home under the temporary directory.
    pub fn user(&self, tag: &str) -> User {
        // The tests of every file run at once in one process: two taking the same tag would
        // remove each other's user.
        static TAKEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        assert!(!taken.iter().any(|t| t == tag), "user tag {tag:?} is taken by another test");
        taken.push(tag.to_string());
        drop(taken);
        let name = format!("sl{}{tag}", std::process::id() % 100_000);
        User::create(&name, &self.dir.path().join(format!("home-{tag}")))
    }

    /// A command run as `user` in their home, finding the daemon as any user would: through
    /// the system configuration alone.
    pub fn command_as(&self, user: &User, name: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.args(args)
            .current_dir(&user.home)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("HOME", &user.home)
            .env("USER", &user.name)
            .env("SLURMLET_SYSTEM_CONF", &self.config)
            .uid(user.uid)
            .gid(user.gid)
            .stdin(Stdio::null());
        c
    }

    /// Runs [`Shared::command_as`] to its end.
    pub fn run_as(&self, user: &User, name: &str, args: &[&str]) -> Output {
        let mut c = self.command_as(user, name, args);
        retrying(|| c.output())
    }

    /// Starts [`Shared::command_as`], its output piped.
    pub fn start_as(&self, user: &User, name: &str, args: &[&str]) -> Child {
        let mut c = self.command_as(user, name, args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        retrying(|| c.spawn())
    }

    pub fn sbatch_as(&self, user: &User, args: &[&str]) -> u32 {
        let out = self.run_as(user, "sbatch", &[&["--parsable"], args].concat());
        assert!(out.status.success(), "sbatch {args:?} as {}: {}", user.name, String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("job id")
    }

    /// Root's view of a job.
    pub fn state(&self, id: u32) -> String {
        let r = Client::at(&self.socket).unwrap().job(&id.to_string()).unwrap();
        r.jobs.first().map(|j| j.job_state.join("+")).unwrap_or_else(|| format!("unknown: {:?}", r.errors))
    }

    pub fn wait_state(&self, id: u32, want: &str) {
        self.wait_state_within(id, want, T);
    }

    /// Waits up to `limit` for job `id` to be in state `want`.
    pub fn wait_state_within(&self, id: u32, want: &str, limit: Duration) {
        wait_for(&format!("job {id} {want}"), limit, || {
            let s = self.state(id);
            super::until(s == want, || format!("{s}; log:\n{}", self.log()))
        });
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Ok(c) = Client::at(&self.socket) {
            if let Ok(r) = c.jobs() {
                for j in r.jobs {
                    let _ = c.cancel(&j.job_id.to_string(), Some("KILL"), SignalScope::Steps);
                }
            }
        }
        self.stop_daemon();
        super::remove_daemon_cgroups(true, &self.dir.path().join("state"));
    }
}

pub fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}
