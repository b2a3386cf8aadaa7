//! A terminal driven through tmux, as a person at it would: keys in, the screen read back.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A tmux server of its own, killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A server of this test's own (not started until [`Tmux::start`]); tmux is required.
    pub fn new() -> Tmux {
        let ok = Command::new("tmux").arg("-V").output().map(|o| o.status.success()).unwrap_or(false);
        assert!(ok, "these tests drive a terminal through tmux: install tmux (.ci/run does)");
        Tmux {
            socket: format!("slurmlet-test-{}-{:?}", std::process::id(), std::thread::current().id())
                .replace(['(', ')'], ""),
        }
    }

    /// Runs tmux with `args` against this server.
    pub fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux").args(["-L", &self.socket, "-f", "/dev/null"]).args(args).output().expect("run tmux")
    }

    /// Starts `script` (run by bash) in a new 120x40 session.
    pub fn start(&self, script: &Path) {
        self.start_command(&format!("exec bash {}", script.display()));
    }

    /// Starts `command` (a shell command line) in a new 120x40 session.
    pub fn start_command(&self, command: &str) {
        let out = self.tmux(&["new-session", "-d", "-s", "t", "-x", "120", "-y", "40", command]);
        assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Types `keys` (tmux key names, or text).
    pub fn keys(&self, keys: &[&str]) {
        let out = self.tmux(&[&["send-keys", "-t", "t"], keys].concat());
        assert!(out.status.success(), "tmux send-keys: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The screen, with 100 lines of history.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t", "-S", "-100"]).stdout).into_owned()
    }

    /// Waits until the screen satisfies `done`; returns it.
    pub fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        crate::common::wait_for(what, Duration::from_secs(20), || {
            let s = self.screen();
            if done(&s) {
                Ok(s)
            } else {
                Err(format!("the screen is:\n{s}"))
            }
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
