//! Running `nvidia-cuda-mps-control`: found on the daemon's `PATH` at its start; `-d` starts
//! a GPU's control daemon, `quit` on its input stops it. Both run as the server's owner,
//! with `CUDA_VISIBLE_DEVICES` naming the GPU and the server's pipe and log directories.

use super::place::Server;
use crate::identity::{Identity, RunAs};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The control program's name.
pub const CONTROL_PROGRAM: &str = "nvidia-cuda-mps-control";

/// How long a new control daemon has to make its control pipe.
const START_WAIT: Duration = Duration::from_secs(15);

/// How long a control daemon told to quit has to end.
const QUIT_WAIT: Duration = Duration::from_secs(5);

/// The control program on `path` (a `PATH` value), if one is there and executable.
pub fn find_control(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(CONTROL_PROGRAM))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// The control program, by its path.
#[derive(Debug, Clone)]
pub struct Control {
    program: PathBuf,
}

impl Control {
    /// The program at `program`.
    pub fn new(program: PathBuf) -> Control {
        Control { program }
    }

    /// Its path.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Starts the control daemon of `server` (`nvidia-cuda-mps-control -d`) in its freshly
    /// made directories and waits until its control pipe is there.
    pub fn start(&self, server: &Server) -> std::io::Result<()> {
        let status = {
            let mut cmd = self.command(server)?;
            cmd.arg("-d").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            // The control daemon leaves at once, its server detached; no job script may be
            // open for writing while it is forked (see `launch::one_spawn_at_a_time`).
            let mut child = {
                let _one = crate::daemon::supervision::launch::one_spawn_at_a_time();
                cmd.spawn().map_err(|e| self.failed("start", server, e))?
            };
            child.wait().map_err(|e| self.failed("start", server, e))?
        };
        if !status.success() {
            return Err(self.failed(
                "start",
                server,
                std::io::Error::other(format!("{} exited: {status}", CONTROL_PROGRAM)),
            ));
        }
        let deadline = Instant::now() + START_WAIT;
        while !server.place.control_exists() {
            if Instant::now() >= deadline {
                let why = format!(
                    "no control pipe in {} after {} s; its log is in {}",
                    server.place.pipe_dir.display(),
                    START_WAIT.as_secs(),
                    server.place.log_dir.display()
                );
                return Err(self.failed("start", server, std::io::Error::other(why)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Tells the control daemon of `server` to quit (`echo quit | nvidia-cuda-mps-control`)
    /// and waits a little for it to end: for its process to be gone, where it wrote its pid
    /// (NVIDIA's does, and leaves its control socket behind), else for its control pipe to
    /// go.
    pub fn quit(&self, server: &Server) -> std::io::Result<()> {
        let pid = server.place.control_pid();
        let mut cmd = self.command(server)?;
        cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = {
            let _one = crate::daemon::supervision::launch::one_spawn_at_a_time();
            cmd.spawn().map_err(|e| self.failed("quit", server, e))?
        };
        if let Some(mut input) = child.stdin.take() {
            // A control program that has left already does not read it.
            let _ = input.write_all(b"quit\n");
        }
        let out = child.wait_with_output().map_err(|e| self.failed("quit", server, e))?;
        if !out.status.success() {
            let why =
                format!("{CONTROL_PROGRAM} exited: {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
            return Err(self.failed("quit", server, std::io::Error::other(why)));
        }
        let running = || match pid {
            // Its parent may be slow to reap it: a zombie has ended.
            Some(pid) => crate::sys::kill_pid(pid, 0).is_ok() && !crate::sys::is_zombie(pid),
            None => server.place.control_exists(),
        };
        let deadline = Instant::now() + QUIT_WAIT;
        while running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// The control program for `server`: its environment, and its owner's credentials when
    /// the daemon acts for another user.
    fn command(&self, server: &Server) -> std::io::Result<Command> {
        let mut cmd = Command::new(&self.program);
        cmd.env("CUDA_VISIBLE_DEVICES", &server.visible)
            .env("CUDA_MPS_PIPE_DIRECTORY", &server.place.pipe_dir)
            .env("CUDA_MPS_LOG_DIRECTORY", &server.place.log_dir)
            .current_dir("/");
        if let Some(owner) = RunAs::when_needed(server.owner.uid, server.owner.gid) {
            let user = Identity::lookup(owner).map_err(std::io::Error::other)?;
            // SAFETY: the closure runs in the child right after fork; `become_for_good` makes
            // only async-signal-safe calls on memory prepared before the fork.
            unsafe {
                cmd.pre_exec(move || user.become_for_good().map_err(std::io::Error::from_raw_os_error));
            }
        }
        Ok(cmd)
    }

    /// What to say when a start or a quit of `server` failed.
    fn failed(&self, what: &str, server: &Server, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot {what} the MPS server of GPU {} for uid {} ({}): {e}",
                server.gpu,
                server.owner.uid,
                self.program.display()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_program_is_found_only_where_it_is_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let plain = dirs[0].path().join(CONTROL_PROGRAM);
        std::fs::write(&plain, "").unwrap();
        let path = std::env::join_paths(dirs.iter().map(|d| d.path())).unwrap();
        assert_eq!(find_control(Some(&path)), None, "not executable");
        let program = dirs[1].path().join(CONTROL_PROGRAM);
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_control(Some(&path)), Some(program));
        assert_eq!(find_control(None), None);
    }
}
