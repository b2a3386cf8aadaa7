//! `sbatch --get-user-env[=[timeout][mode]]` (and `--export=NONE`, which implies it): the
//! batch script starts from the user's login environment, as Slurm's slurmd makes it. The
//! user's login shell runs as the user (never as root), from a clean environment in their
//! home directory (entered as the user), under a deadline and with its output bounded; the variables it exports
//! that the job's environment lacks are added, so that what was submitted wins.

use crate::identity::{Identity, RunAs};
use crate::program::{self, Limits};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// Set in a job's environment by sbatch when the login environment is wanted: `1`, or the
/// option's `[timeout][mode]`. Taken out of the environment the script gets.
pub const VARIABLE: &str = "SLURM_GET_USER_ENV";

/// How long the login shell may take when the option gives no timeout (Slurm's 8 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(8);

/// The longest timeout believed: a job's start is held for as long.
const MAX_TIMEOUT: Duration = Duration::from_secs(120);

/// How much of the login shell's output is read.
const MAX_OUTPUT: usize = 1 << 20;

/// The most variables taken from it.
const MAX_VARIABLES: usize = 4096;

/// Printed by the login shell before its environment, so that what its startup files print
/// is told apart from it.
const MARK: &str = "SLURMLET_LOGIN_ENVIRONMENT_FOLLOWS";

/// The variables a shell sets for itself, which are not the user's environment; and Slurm's,
/// which the login shell must not forge.
fn kept_out(name: &str) -> bool {
    matches!(name, "_" | "SHLVL" | "PWD" | "OLDPWD") || name.starts_with("SLURM_")
}

/// What `--get-user-env` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// How long the login shell may take.
    pub timeout: Duration,
    /// `L` (the default): a login shell, which reads the user's profile; `S`: a plain one.
    pub login: bool,
}

impl Asked {
    /// Reads [`VARIABLE`]'s value: `1` (or empty) for the defaults, else `[timeout][L|S]`; a
    /// value that is neither asks for the defaults too.
    pub fn parse(value: &str) -> Asked {
        let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
        let mode = &value[digits.len()..];
        let timeout = match digits.parse::<u64>() {
            Ok(secs) if value != "1" && secs > 0 => Duration::from_secs(secs).min(MAX_TIMEOUT),
            _ => DEFAULT_TIMEOUT,
        };
        Asked { timeout, login: !mode.eq_ignore_ascii_case("S") }
    }

    /// Whether `env` (a job's `NAME=value` list) asks for it.
    pub fn of(env: &[String]) -> Option<Asked> {
        env.iter().find_map(|e| e.strip_prefix(VARIABLE)?.strip_prefix('=')).map(Asked::parse)
    }
}

/// When `env` asks for it ([`VARIABLE`]): `env` with that variable taken out and the login
/// environment of `owner` (the job's owner when the supervisor acts for one, else the user it
/// runs as) merged in, and a line for the job's error output when the login environment
/// could not be had (the job then runs with what was submitted). `None` when not asked: the
/// environment stays as it is.
pub fn merged(env: &[String], owner: Option<&Identity>) -> Option<(Vec<String>, Option<String>)> {
    let asked = Asked::of(env)?;
    Some(merged_as(env, owner, asked))
}

/// [`merged`] once it is known to be asked for, as `asked`.
fn merged_as(env: &[String], owner: Option<&Identity>, asked: Asked) -> (Vec<String>, Option<String>) {
    let mut env: Vec<String> = env.iter().filter(|e| e.split('=').next() != Some(VARIABLE)).cloned().collect();
    let user = match owner {
        Some(user) => user.clone(),
        None => match Identity::lookup(RunAs { uid: crate::identity::uid(), gid: crate::identity::gid() }) {
            Ok(user) => user,
            Err(e) => return (env, Some(format!("--get-user-env: {e}; the job runs with the submitted environment"))),
        },
    };
    match login_environment(&user, asked) {
        Ok(login) => {
            for (name, value) in login {
                if !env.iter().any(|e| e.split('=').next() == Some(name.as_str())) {
                    env.push(format!("{name}={value}"));
                }
            }
            (env, None)
        }
        Err(why) => (env, Some(format!("--get-user-env: {why}; the job runs with the submitted environment"))),
    }
}

/// What `user`'s shell exports when started as `asked` says: run as the user from a clean
/// environment in their home directory, at most `asked.timeout`.
fn login_environment(user: &Identity, asked: Asked) -> Result<Vec<(String, String)>, String> {
    let shell = if user.shell.is_empty() { "/bin/sh" } else { user.shell.as_str() };
    let env_program =
        ["/usr/bin/env", "/bin/env"].into_iter().find(|p| std::path::Path::new(p).exists()).unwrap_or("env");
    let script = format!("printf '\\n%s\\n' {MARK}; exec {env_program} -0");
    let mut cmd = Command::new(shell);
    if asked.login {
        cmd.arg("-l");
    }
    cmd.args(["-c", &script]).env_clear();
    cmd.env("HOME", &user.home)
        .env("USER", &user.name)
        .env("LOGNAME", &user.name)
        .env("SHELL", shell)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    Identity::run_command_as(&mut cmd, RunAs { uid: user.uid, gid: user.gid }).map_err(|e| e.to_string())?;
    // The home directory is entered as the user, after the switch (the closures run in the
    // order given), never by root: a home that is a link cannot take the shell anywhere the
    // user could not go.
    let home = std::ffi::CString::new(user.home.as_bytes()).unwrap_or_default();
    // SAFETY: the closure runs in the child right after fork; chdir is async-signal-safe and
    // reads strings made before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::chdir(home.as_ptr()) != 0 {
                libc::chdir(c"/".as_ptr());
            }
            Ok(())
        });
    }
    let limits = Limits { deadline: asked.timeout, max_output: MAX_OUTPUT };
    let done = program::run(&mut cmd, None, limits).map_err(|e| e.to_string())?;
    if !done.status.success() {
        return Err(format!("{shell} ended with {}", done.status));
    }
    parse(&done.stdout).ok_or_else(|| format!("{shell} printed no environment"))
}

/// The variables after the last [`MARK`] line of `output` (`NAME=value`, NUL-separated);
/// `None` when there is no mark.
fn parse(output: &[u8]) -> Option<Vec<(String, String)>> {
    let text = String::from_utf8_lossy(output);
    let mark = format!("\n{MARK}\n");
    let after = &text[text.rfind(&mark)? + mark.len()..];
    Some(
        after
            .split('\0')
            .filter_map(|entry| entry.split_once('='))
            .filter(|(name, _)| crate::options::is_variable_name(name) && !kept_out(name))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .take(MAX_VARIABLES)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_says_timeout_and_mode() {
        let long = |secs| Asked { timeout: Duration::from_secs(secs), login: true };
        assert_eq!(Asked::parse("1"), long(8));
        assert_eq!(Asked::parse(""), long(8));
        assert_eq!(Asked::parse("10L"), long(10));
        assert_eq!(Asked::parse("20"), long(20));
        assert_eq!(Asked::parse("S"), Asked { timeout: DEFAULT_TIMEOUT, login: false });
        assert_eq!(Asked::parse("5s"), Asked { timeout: Duration::from_secs(5), login: false });
        assert_eq!(Asked::parse("99999L"), long(120), "bounded");
        assert_eq!(Asked::of(&["A=1".into(), "SLURM_GET_USER_ENV=3L".into()]), Some(long(3)));
        assert_eq!(Asked::of(&["A=1".into()]), None);
    }

    #[test]
    fn the_environment_follows_the_last_mark() {
        let out = format!("motd\n{MARK}\nnoise\n{MARK}\nA=1\0B=x=y\0SLURM_JOB_ID=9\0SHLVL=2\0bad name=1\0\0");
        let vars = parse(out.as_bytes()).unwrap();
        assert_eq!(vars, [("A".to_string(), "1".to_string()), ("B".to_string(), "x=y".to_string())]);
        assert_eq!(parse(b"A=1\0"), None);
    }

    #[test]
    fn what_was_submitted_wins_and_the_marker_goes() {
        let me = Identity::lookup(RunAs { uid: crate::identity::uid(), gid: crate::identity::gid() }).unwrap();
        let me = Identity { shell: "/bin/sh".into(), ..me };
        let env = vec!["HOME=/submitted".to_string(), "SLURM_GET_USER_ENV=1".to_string()];
        let (merged, warning) = merged(&env, Some(&me)).unwrap();
        assert_eq!(warning, None);
        assert!(merged.contains(&"HOME=/submitted".to_string()), "{merged:?}");
        assert!(merged.iter().any(|e| e.starts_with("LOGNAME=")), "{merged:?}");
        assert!(!merged.iter().any(|e| e.starts_with("SLURM_GET_USER_ENV=")), "{merged:?}");
        assert_eq!(super::merged(&["A=1".to_string()], Some(&me)), None, "not asked: left as it is");
    }

    #[test]
    fn a_shell_that_hangs_is_stopped_at_the_timeout() {
        let me = Identity::lookup(RunAs { uid: crate::identity::uid(), gid: crate::identity::gid() }).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("hang.sh");
        std::fs::write(&shell, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let me = Identity { shell: shell.display().to_string(), ..me };
        let started = std::time::Instant::now();
        let (env, warning) = merged(&["SLURM_GET_USER_ENV=1S".to_string()], Some(&me)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(env.is_empty(), "{env:?}");
        assert!(warning.is_some_and(|w| w.contains("--get-user-env")));
    }
}
