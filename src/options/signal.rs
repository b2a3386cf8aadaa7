//! Signal names and `--signal=[{R|B}:]SIG[@sig_time]`.

use super::OptionError;

/// A parsed `--signal` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalSpec {
    /// Signal number.
    pub signal: i32,
    /// Seconds before the time limit (default 60).
    pub seconds: u32,
    /// `B:` — only the batch shell gets the signal.
    pub batch_only: bool,
}

const NAMES: &[(&str, i32)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ABRT", libc::SIGABRT),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("PWR", libc::SIGPWR),
    ("SYS", libc::SIGSYS),
];

/// Parses a signal name (`USR1`, `SIGUSR1`) or number (`10`).
pub fn signal_number(text: &str) -> Option<i32> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let upper = t.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The short name of a signal number (`TERM`), or the number as text.
pub fn signal_name(signal: i32) -> String {
    NAMES.iter().find(|(_, v)| *v == signal).map(|(n, _)| n.to_string()).unwrap_or_else(|| signal.to_string())
}

/// Parses `--signal=[{R|B}:]SIG[@sig_time]`.
pub fn parse_signal_spec(text: &str) -> Result<SignalSpec, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "signal", value: text.to_string() };
    let mut rest = text.trim();
    let mut batch_only = false;
    if let Some((flags, r)) = rest.split_once(':') {
        if flags.chars().all(|c| c == 'B' || c == 'R') && !flags.is_empty() {
            batch_only = flags.contains('B');
            rest = r;
        }
    }
    let (sig, secs) = match rest.split_once('@') {
        Some((s, t)) => (s, t.parse::<u32>().map_err(|_| bad())?),
        None => (rest, 60),
    };
    let signal = signal_number(sig).ok_or_else(bad)?;
    Ok(SignalSpec { signal, seconds: secs, batch_only })
}
