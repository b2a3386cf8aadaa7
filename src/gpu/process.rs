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
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Parent, group and session (fields 4 to 6) from the text of `/proc/PID/stat`.
pub fn parse_stat(stat: &[u8]) -> Option<Kin> {
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

/// The uid and the name of the user who owns process `pid`, if it is in this pid namespace.
pub fn owner(pid: i32) -> Option<(u32, String)> {
    let uid = std::fs::metadata(format!("/proc/{pid}")).ok()?.uid();
    Some((uid, crate::identity::user_name(uid)))
}

/// How much of a command line is read: the kernel lets a program's arguments run to
/// megabytes, and the line is only shown to tell a process.
const COMMAND_READ: u64 = 4096;

/// How many characters of a command line are shown; the rest is cut, with `…`.
pub const COMMAND_SHOWN: usize = 200;

/// The command line of process `pid`, its arguments joined by spaces and control
/// characters escaped, at most [`COMMAND_SHOWN`] characters of it; `None` when it is not in
/// this pid namespace or has none (a kernel thread).
pub fn command_line(pid: i32) -> Option<String> {
    use std::io::Read;
    let mut raw = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/cmdline")).ok()?.take(COMMAND_READ).read_to_end(&mut raw).ok()?;
    let text = shown_command(&raw);
    let cut = text.char_indices().nth(COMMAND_SHOWN).map(|(at, _)| at);
    let text = match cut {
        Some(at) => format!("{}…", &text[..at]),
        None => text,
    };
    (!text.is_empty()).then_some(text)
}

/// Whether `/proc` hides other users' processes from them (mounted with `hidepid=` 1 or
/// 2, `invisible` or `noaccess`): the daemon then does not show them other users' command
/// lines either. Read once.
pub fn proc_hides_processes() -> bool {
    static HIDDEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HIDDEN.get_or_init(|| std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|text| hides_processes(&text)))
}

/// Whether the `/proc` mount of `mountinfo` (the text of `/proc/self/mountinfo`) hides
/// processes.
fn hides_processes(mountinfo: &str) -> bool {
    mountinfo.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let is_proc = fields.get(4) == Some(&"/proc") && line.contains(" - proc ");
        is_proc
            && line.split(" - ").nth(1).is_some_and(|tail| {
                tail.split_whitespace()
                    .nth(2)
                    .unwrap_or_default()
                    .split(',')
                    .any(|o| matches!(o, "hidepid=1" | "hidepid=2" | "hidepid=invisible" | "hidepid=noaccess"))
            })
    })
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
        let stat = b"4242 (python x) y) S 17 4242 4000 0 -1 4194560 0";
        assert_eq!(parse_stat(stat), Some(Kin { parent: 17, group: 4242, session: 4000 }));
        assert_eq!(parse_stat(b"garbage"), None);
        let not_utf8 = b"4242 (\xff\xfe) S 17 4242 4000 0 -1 4194560 0";
        assert_eq!(parse_stat(not_utf8), Some(Kin { parent: 17, group: 4242, session: 4000 }));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(shown_command(b"python\0train.py\0--name\0a\nb\x1b[31m\0"), "python train.py --name a\\nb\\x1b[31m");
        assert_eq!(shown_command(b""), "");
    }

    #[test]
    fn a_long_command_line_is_read_and_shown_in_part() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30", "sh"])
            .args(vec!["x".repeat(1000); 100])
            .spawn()
            .unwrap();
        // Until it has executed, the child's command line is this test's.
        let mut shown = String::new();
        for _ in 0..200 {
            shown = command_line(child.id() as i32).unwrap_or_default();
            if shown.starts_with("sh -c") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(shown.starts_with("sh -c sleep 30 sh xxx") && shown.ends_with('…'), "{shown}");
        assert_eq!(shown.chars().count(), COMMAND_SHOWN + 1);
    }

    #[test]
    fn proc_mounted_with_hidepid_hides_processes() {
        let plain = "22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n";
        let hidden = "22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw,hidepid=invisible\n";
        let zero = "22 28 0:21 / /proc rw,relatime - proc proc rw,hidepid=0\n";
        let elsewhere = "40 28 0:50 / /mnt/other rw - proc proc rw,hidepid=2\n";
        assert!(
            !hides_processes(plain) && hides_processes(hidden) && !hides_processes(zero) && !hides_processes(elsewhere)
        );
    }

    #[test]
    fn this_process_is_found() {
        let me = std::process::id() as i32;
        assert!(kin(me).is_some());
        assert!(command_line(me).is_some());
        assert_eq!(owner(me), Some((crate::identity::uid(), crate::identity::user_name(crate::identity::uid()))));
        assert!(ancestors(me).iter().all(|&p| p > 1));
    }
}
