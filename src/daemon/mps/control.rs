//! Running `nvidia-cuda-mps-control`: found on the daemon's `PATH` at its start; `-d` starts
//! a GPU's control daemon, `quit` on its input stops it. Both run as the server's owner,
//! with `CUDA_VISIBLE_DEVICES` naming the GPU and the server's pipe and log directories.
//!
//! The owner can stop either call (it runs as them), and can put a socket that never
//! answers where the control pipe should be: so each call has a deadline, after which it is
//! killed with its process group, and a control daemon that does not end when told to is
//! killed too (it serves nobody by then). What cannot be ended is reported as an error: the
//! caller keeps the GPU away from new jobs until it is.

use super::place::{ControlProcess, Server};
use crate::identity::Identity;
use crate::program::{self, Limits};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The control program's name.
pub const CONTROL_PROGRAM: &str = "nvidia-cuda-mps-control";

/// How long a new control daemon has, from the start of `-d`, to make its control pipe.
pub const START_WAIT: Duration = Duration::from_secs(15);

/// How long `quit` has to be said (the client run to its end).
pub const QUIT_WAIT: Duration = Duration::from_secs(5);

/// How long a control daemon told to quit has to end before it is killed, and a killed one
/// to be gone.
pub const END_WAIT: Duration = Duration::from_secs(5);

/// How much of what the control program prints is kept for a message.
const OUTPUT_KEPT: usize = 4096;

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
    /// made directories and waits, at most [`START_WAIT`] in all, until its control pipe is
    /// there; then notes its pid, if it wrote one.
    pub fn start(&self, server: &mut Server) -> std::io::Result<()> {
        let begun = Instant::now();
        let mut cmd = self.command(server)?;
        program::prepare(&mut cmd, false).arg("-d");
        // The control daemon it leaves behind is not to hold pipes of ours.
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let done = self.run(cmd, None, START_WAIT).map_err(|e| self.failed("start", server, e))?;
        if !done.status.success() {
            let why = std::io::Error::other(format!("{CONTROL_PROGRAM} exited: {}", done.status));
            return Err(self.failed("start", server, why));
        }
        while !server.place.control_exists() {
            if begun.elapsed() >= START_WAIT {
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
        server.control = server.place.control_process(server.owner.uid);
        Ok(())
    }

    /// Tells the control daemon of `server` to quit (`echo quit | nvidia-cuda-mps-control`,
    /// within [`QUIT_WAIT`]) and waits for it to end: for its process to be gone, where it
    /// is known (NVIDIA's writes its pid, and leaves its control socket behind), else for its
    /// control pipe to go. A known control daemon still there after [`END_WAIT`] is killed
    /// with its process group. `Err`: it may still run.
    pub fn quit(&self, server: &Server) -> std::io::Result<()> {
        let control = server.control.or_else(|| server.place.control_process(server.owner.uid));
        if control.is_none() && !server.place.control_exists() {
            // Nothing came up (a start that failed early), or it is gone already.
            return Ok(());
        }
        let mut cmd = self.command(server)?;
        program::prepare(&mut cmd, true);
        let told = match self.run(cmd, Some(b"quit\n"), QUIT_WAIT) {
            Ok(done) if done.status.success() => Ok(()),
            Ok(done) => Err(format!("{CONTROL_PROGRAM} exited: {}: {}", done.status, done.stderr_text())),
            Err(e) => Err(e.to_string()),
        };
        let Some(control) = control else {
            // Nothing to watch but the pipe: a control daemon told to quit removes it.
            if let Err(why) = told {
                return Err(self.failed("quit", server, std::io::Error::other(why)));
            }
            wait_until(END_WAIT, || !server.place.control_exists());
            return Ok(());
        };
        // Told, it has a while to end; not told, a moment (it may have heard before the
        // client was stopped).
        let grace = match &told {
            Ok(()) => END_WAIT,
            Err(why) => {
                tracing::warn!(
                    gpu = server.gpu,
                    uid = server.owner.uid,
                    "telling the MPS control daemon to quit: {why}"
                );
                Duration::from_secs(1)
            }
        };
        if wait_until(grace, || !control.running()) {
            return Ok(());
        }
        tracing::warn!(gpu = server.gpu, pid = control.pid, "the MPS control daemon did not quit; killing it");
        kill(control);
        if wait_until(END_WAIT, || !control.running()) {
            return Ok(());
        }
        let why = std::io::Error::other(format!("its control daemon (pid {}) did not end when killed", control.pid));
        Err(self.failed("quit", server, why))
    }

    /// Runs the control program `cmd` (made ready by [`program::prepare`]) to `deadline`.
    fn run(&self, mut cmd: Command, input: Option<&[u8]>, deadline: Duration) -> std::io::Result<program::Finished> {
        program::run_prepared(&mut cmd, input, Limits { deadline, max_output: OUTPUT_KEPT })
            .map_err(std::io::Error::other)
    }

    /// The control program for `server`: its environment, and its owner's credentials when
    /// the daemon acts for another user.
    fn command(&self, server: &Server) -> std::io::Result<Command> {
        let mut cmd = Command::new(&self.program);
        cmd.env("CUDA_VISIBLE_DEVICES", &server.visible)
            .env("CUDA_MPS_PIPE_DIRECTORY", &server.place.pipe_dir)
            .env("CUDA_MPS_LOG_DIRECTORY", &server.place.log_dir)
            .current_dir("/");
        Identity::run_command_as(&mut cmd, server.owner).map_err(std::io::Error::other)?;
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

/// Kills a control daemon, and its process group where it leads one (the server it started
/// is in it); the process was checked to be the owner's when its pid was read.
fn kill(control: ControlProcess) {
    if !control.running() {
        return;
    }
    if crate::sys::process_group(control.pid) == Some(control.pid) {
        let _ = crate::sys::kill_group(control.pid, libc::SIGKILL);
    } else {
        let _ = crate::sys::kill_pid(control.pid, libc::SIGKILL);
    }
}

/// Looks every 10 ms, for at most `limit`, until `done` holds; returns whether it did.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
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
