//! What `/proc` tells of a process on a GPU: its parent, process group and session (to find
//! the job it belongs to), its owner and its command line (to tell who uses the GPU).

use std::os::unix::fs::MetadataExt;

/// The kinship of a process as `/proc/PID/stat` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kin {
    /// Its parent's pid.
    pub parent: i32,
    /// Its process group.
    pub group: i32,
    /// Its session.
    pub session: i32,
}

/// The kinship of `pid`; `None` when it is not in this pid namespace (or has ended).
pub fn kin(pid: i32) -> Option<Kin> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Parent, group and session (fields 4 to 6) from the text of `/proc/PID/stat`.
pub fn parse_stat(stat: &str) -> Option<Kin> {
    let fields = crate::sys::stat_fields(stat)?;
    let field = |n: usize| fields.get(n - 3)?.parse().ok();
    Some(Kin { parent: field(4)?, group: field(5)?, session: field(6)? })
}

/// The pids above `pid` up to the first process (excluded), nearest first; empty when
/// `pid` is not found. Bounded, so that a table changing under the walk cannot loop it.
pub fn ancestors(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut at = pid;
    while let Some(k) = kin(at) {
        if k.parent <= 1 || found.len() >= 64 {
            break;
        }
        found.push(k.parent);
        at = k.parent;
    }
    found
}

/// The name of the user who owns process `pid`, if it is in this pid namespace.
pub fn owner(pid: i32) -> Option<String> {
    let uid = std::fs::metadata(format!("/proc/{pid}")).ok()?.uid();
    Some(crate::paths::user_name(uid))
}

/// The command line of process `pid`, its arguments joined by spaces and control
/// characters escaped; `None` when it is not in this pid namespace or has none (a kernel
/// thread).
pub fn command_line(pid: i32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let text = shown_command(&raw);
    (!text.is_empty()).then_some(text)
}

/// `/proc/PID/cmdline`'s NUL-separated arguments as one line: joined by spaces, each
/// control character escaped (`\n`, `\x1b`) so that a name cannot forge lines or colours.
pub fn shown_command(raw: &[u8]) -> String {
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).chars().flat_map(escaped).collect())
        .collect();
    args.join(" ")
}

/// `c`, or its escape when it is a control character.
fn escaped(c: char) -> Vec<char> {
    match c {
        '\n' => vec!['\\', 'n'],
        '\t' => vec!['\\', 't'],
        '\r' => vec!['\\', 'r'],
        c if c.is_control() => format!("\\x{:02x}", c as u32).chars().collect(),
        c => vec![c],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command() {
        let stat = "4242 (python x) y) S 17 4242 4000 0 -1 4194560 0";
        assert_eq!(parse_stat(stat), Some(Kin { parent: 17, group: 4242, session: 4000 }));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(shown_command(b"python\0train.py\0--name\0a\nb\x1b[31m\0"), "python train.py --name a\\nb\\x1b[31m");
        assert_eq!(shown_command(b""), "");
    }

    #[test]
    fn this_process_is_found() {
        let me = std::process::id() as i32;
        assert!(kin(me).is_some());
        assert!(command_line(me).is_some());
        assert_eq!(owner(me), Some(crate::paths::user_name(crate::paths::uid())));
        assert!(ancestors(me).iter().all(|&p| p > 1));
    }
}
