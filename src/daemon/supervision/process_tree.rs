//! The machine's processes as `/proc` shows them at one moment: who is whose child, and what
//! each has used, to add up what a job's or a step's processes use now (`sstat`).

use std::collections::HashMap;

/// One process: its parent and what it has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessUse {
    /// Its parent's pid.
    pub parent: i32,
    /// User and system CPU time, microseconds.
    pub cpu_usec: u64,
    /// Resident set, KiB.
    pub rss_kb: u64,
    /// Virtual memory, KiB.
    pub vsize_kb: u64,
}

/// Every process in this pid namespace, by pid.
#[derive(Debug, Clone, Default)]
pub struct ProcessTree {
    processes: HashMap<i32, ProcessUse>,
}

impl ProcessTree {
    /// Reads `/proc` once; processes that end during the reading are left out.
    pub fn read() -> ProcessTree {
        let ticks = clock_ticks();
        let page_kb = page_size() / 1024;
        let mut processes = HashMap::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            // As bytes: a process's name may be anything (see `sys::read_stat_fields`).
            if let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) {
                if let Some(u) = parse_stat(&stat, ticks, page_kb) {
                    processes.insert(pid, u);
                }
            }
        }
        ProcessTree { processes }
    }

    /// A tree of the given processes (for tests).
    pub fn of(processes: HashMap<i32, ProcessUse>) -> ProcessTree {
        ProcessTree { processes }
    }

    /// The processes below `root` (not `root` itself), leaving out those at or below any of
    /// `except`; in pid order.
    pub fn descendants(&self, root: i32, except: &[i32]) -> Vec<(i32, ProcessUse)> {
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (&pid, u) in &self.processes {
            children.entry(u.parent).or_default().push(pid);
        }
        let mut found = Vec::new();
        let mut next = vec![root];
        while let Some(pid) = next.pop() {
            for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
                if !except.contains(&child) && found.len() < 100_000 {
                    found.push((child, self.processes[&child]));
                    next.push(child);
                }
            }
        }
        found.sort_by_key(|(pid, _)| *pid);
        found
    }
}

/// Parent, CPU time and memory from the text of `/proc/PID/stat`: the parent is field 4,
/// utime and stime 14 and 15, vsize (bytes) 23 and rss (pages) 24.
fn parse_stat(stat: &[u8], ticks: u64, page_kb: u64) -> Option<ProcessUse> {
    let fields = crate::sys::stat_fields(stat)?;
    let number = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some(ProcessUse {
        parent: fields.get(1)?.parse().ok()?,
        cpu_usec: (number(14)? + number(15)?) * 1_000_000 / ticks.max(1),
        vsize_kb: number(23)? / 1024,
        rss_kb: number(24)? * page_kb,
    })
}

/// Clock ticks per second (`_SC_CLK_TCK`).
fn clock_ticks() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as u64
    } else {
        100
    }
}

/// The size of a memory page in bytes.
fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command() {
        let stat = b"4242 (a b) c) S 17 4242 4000 0 -1 4194560 0 0 0 0 250 50 0 0 20 0 1 0 100 104857600 512 x";
        let u = parse_stat(stat, 100, 4).unwrap();
        assert_eq!(u, ProcessUse { parent: 17, cpu_usec: 3_000_000, rss_kb: 2048, vsize_kb: 102_400 });
        assert_eq!(parse_stat(b"garbage", 100, 4), None);
    }

    #[test]
    fn descendants_leave_out_the_excepted_branches() {
        let p = |parent| ProcessUse { parent, ..Default::default() };
        let tree = ProcessTree::of(HashMap::from([(10, p(1)), (11, p(10)), (12, p(11)), (20, p(10)), (21, p(20))]));
        let pids = |list: Vec<(i32, ProcessUse)>| list.into_iter().map(|(pid, _)| pid).collect::<Vec<_>>();
        assert_eq!(pids(tree.descendants(10, &[])), [11, 12, 20, 21]);
        assert_eq!(pids(tree.descendants(10, &[20])), [11, 12]);
        assert!(tree.descendants(99, &[]).is_empty());
    }

    #[test]
    fn this_process_is_below_its_parent() {
        let me = std::process::id() as i32;
        let tree = ProcessTree::read();
        let parent = tree.processes[&me].parent;
        assert!(tree.descendants(parent, &[]).iter().any(|(pid, u)| *pid == me && u.rss_kb > 0));
    }
}
