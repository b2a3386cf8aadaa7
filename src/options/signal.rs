//! Signal names and `--signal=[{R|B}:]SIG[@sig_time]`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, opt};
use nom::sequence::{preceded, terminated};
use nom::{IResult, Parser};

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

/// Parses a signal name (`USR1`, `SIGUSR1`, any case) or number (`10`, 1 to 64).
pub fn signal_number(text: &str) -> Option<i32> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i32>().ok().filter(|n| (1..=64).contains(n));
    }
    let upper = t.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The short name of a signal number (`TERM`), or the number as text.
pub fn signal_name(signal: i32) -> String {
    NAMES.iter().find(|(_, v)| *v == signal).map(|(n, _)| n.to_string()).unwrap_or_else(|| signal.to_string())
}

/// The largest `@time` Slurm accepts (it is a 16-bit field).
pub const MAX_SIGNAL_TIME: u32 = 0xffff;

/// `R:`, `B:`, `RB:`, `BR:` (flags before the signal).
fn flags(i: &str) -> IResult<&str, &str> {
    terminated(alt((tag("RB"), tag("BR"), tag("R"), tag("B"))), char(':')).parse(i)
}

/// `[flags:]SIG[@digits]`, with the signal and time as written.
fn spec(i: &str) -> IResult<&str, (Option<&str>, &str, Option<&str>)> {
    (opt(flags), take_while1(|c: char| c.is_ascii_alphanumeric()), opt(preceded(char('@'), digit1))).parse(i)
}

/// Parses `--signal=[{R|B}:]SIG[@sig_time]`: the signal by name or number, sent `sig_time`
/// seconds (default 60, at most 65535) before the time limit; `B:` sends it to the batch
/// shell only, `R:` (reservation end) is accepted and has no further effect here.
pub fn parse_signal_spec(text: &str) -> Result<SignalSpec, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "signal", value: text.to_string() };
    let (_, (flags, sig, secs)) = all_consuming(spec).parse(text.trim()).map_err(|_| bad())?;
    let signal = signal_number(sig).ok_or_else(bad)?;
    let seconds = match secs {
        None => 60,
        Some(d) => match d.parse::<u32>() {
            Ok(n) if n <= MAX_SIGNAL_TIME => n,
            _ => {
                return Err(OptionError::Invalid {
                    option: "signal",
                    value: text.to_string(),
                    why: format!("the time after '@' must be at most {MAX_SIGNAL_TIME} seconds"),
                })
            }
        },
    };
    Ok(SignalSpec { signal, seconds, batch_only: flags.is_some_and(|f| f.contains('B')) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        assert_eq!(signal_number("USR1"), Some(libc::SIGUSR1));
        assert_eq!(signal_number("SIGUSR1"), Some(libc::SIGUSR1));
        assert_eq!(signal_number("sigusr1"), Some(libc::SIGUSR1));
        assert_eq!(signal_number("usr2"), Some(libc::SIGUSR2));
        assert_eq!(signal_number("TERM"), Some(libc::SIGTERM));
        assert_eq!(signal_number("KILL"), Some(9));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("10"), Some(10));
        assert_eq!(signal_number("64"), Some(64));
        for t in ["0", "65", "-1", "+9", "", "SIG", "FOO", "SIGFOO", "USR3", "1.5"] {
            assert_eq!(signal_number(t), None, "{t}");
        }
        assert_eq!(signal_name(libc::SIGTERM), "TERM");
        assert_eq!(signal_name(libc::SIGUSR1), "USR1");
        assert_eq!(signal_name(40), "40");
        for (name, num) in NAMES {
            assert_eq!(signal_number(name), Some(*num));
            assert_eq!(signal_number(&signal_name(*num)), Some(*num));
        }
    }

    fn spec(s: i32, secs: u32, b: bool) -> SignalSpec {
        SignalSpec { signal: s, seconds: secs, batch_only: b }
    }

    #[test]
    fn signal_specs() {
        assert_eq!(parse_signal_spec("USR1").unwrap(), spec(libc::SIGUSR1, 60, false));
        assert_eq!(parse_signal_spec("USR1@90").unwrap(), spec(libc::SIGUSR1, 90, false));
        assert_eq!(parse_signal_spec("SIGUSR2@0").unwrap(), spec(libc::SIGUSR2, 0, false));
        assert_eq!(parse_signal_spec("10@120").unwrap(), spec(10, 120, false));
        assert_eq!(parse_signal_spec("B:USR1@90").unwrap(), spec(libc::SIGUSR1, 90, true));
        assert_eq!(parse_signal_spec("R:TERM").unwrap(), spec(libc::SIGTERM, 60, false));
        assert_eq!(parse_signal_spec("RB:TERM@5").unwrap(), spec(libc::SIGTERM, 5, true));
        assert_eq!(parse_signal_spec("BR:TERM@5").unwrap(), spec(libc::SIGTERM, 5, true));
        assert_eq!(parse_signal_spec("USR1@65535").unwrap(), spec(libc::SIGUSR1, 65535, false));
    }

    #[test]
    fn bad_signal_specs() {
        for t in
            ["", "FOO", "USR1@", "USR1@x", "USR1@-5", "X:USR1", "B:", ":USR1", "B:R:USR1", "USR1@90@1", "0", "USR1 @90"]
        {
            assert_eq!(
                parse_signal_spec(t),
                Err(OptionError::InvalidSpec { option: "signal", value: t.into() }),
                "{t:?}"
            );
        }
        assert_eq!(parse_signal_spec("FOO").unwrap_err().to_string(), "Invalid --signal specification");
        for t in ["USR1@65536", "USR1@99999999999999"] {
            let e = parse_signal_spec(t).unwrap_err();
            assert!(matches!(e, OptionError::Invalid { option: "signal", .. }), "{t}");
            assert!(e.to_string().contains("65535"), "{e}");
        }
    }
}
