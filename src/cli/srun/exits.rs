//! What srun says about the ends of its tasks, and the exit code it returns, as Slurm's srun
//! does: `srun: error: vm: tasks 0,2-3: Exited with exit code 1`, `srun: error: vm: task 0:
//! Killed`; the exit code is the largest task exit code, or 128 + the largest signal when a
//! task was killed by one, or 1 when the kernel killed anything of the step for want of memory
//! (`srun: error: vm: task 0: Out Of Memory`).

/// How one task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled {
        /// The signal.
        signal: i32,
        /// It dumped core.
        core: bool,
    },
    /// The kernel killed something of its step for want of memory: its supervisor then
    /// reports slurmstepd's `SIG_OOM` for every task that ends.
    OutOfMemory,
}

impl Ending {
    /// Reads a raw wait status.
    pub fn of(wait_status: i32) -> Ending {
        // Read first: as a wait status it would say "killed by signal 125".
        if wait_status & 0xff == crate::stepd::SIG_OOM {
            Ending::OutOfMemory
        } else if libc::WIFSIGNALED(wait_status) {
            Ending::Signaled { signal: libc::WTERMSIG(wait_status), core: libc::WCOREDUMP(wait_status) }
        } else {
            Ending::Exited(libc::WEXITSTATUS(wait_status))
        }
    }

    /// Whether the task ended well (exit code 0).
    pub fn is_success(self) -> bool {
        self == Ending::Exited(0)
    }

    /// Slurm's words for it: `Exited with exit code 3`, `Killed`, `Segmentation fault (core
    /// dumped)`, `Out Of Memory`, `Completed`.
    pub fn describe(self) -> String {
        match self {
            Ending::OutOfMemory => "Out Of Memory".to_string(),
            Ending::Exited(0) => "Completed".to_string(),
            Ending::Exited(code) => format!("Exited with exit code {code}"),
            Ending::Signaled { signal, core } => {
                format!("{}{}", signal_text(signal), if core { " (core dumped)" } else { "" })
            }
        }
    }
}

/// A signal's description, in glibc's `strsignal` words (`Killed`, `Terminated`, …).
pub fn signal_text(signal: i32) -> String {
    let text = match signal {
        libc::SIGHUP => "Hangup",
        libc::SIGINT => "Interrupt",
        libc::SIGQUIT => "Quit",
        libc::SIGILL => "Illegal instruction",
        libc::SIGTRAP => "Trace/breakpoint trap",
        libc::SIGABRT => "Aborted",
        libc::SIGBUS => "Bus error",
        libc::SIGFPE => "Floating point exception",
        libc::SIGKILL => "Killed",
        libc::SIGUSR1 => "User defined signal 1",
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGUSR2 => "User defined signal 2",
        libc::SIGPIPE => "Broken pipe",
        libc::SIGALRM => "Alarm clock",
        libc::SIGTERM => "Terminated",
        libc::SIGSTKFLT => "Stack fault",
        libc::SIGCHLD => "Child exited",
        libc::SIGCONT => "Continued",
        libc::SIGSTOP => "Stopped (signal)",
        libc::SIGTSTP => "Stopped",
        libc::SIGTTIN => "Stopped (tty input)",
        libc::SIGTTOU => "Stopped (tty output)",
        libc::SIGURG => "Urgent I/O condition",
        libc::SIGXCPU => "CPU time limit exceeded",
        libc::SIGXFSZ => "File size limit exceeded",
        libc::SIGVTALRM => "Virtual timer expired",
        libc::SIGPROF => "Profiling timer expired",
        libc::SIGWINCH => "Window changed",
        libc::SIGIO => "I/O possible",
        libc::SIGPWR => "Power failure",
        libc::SIGSYS => "Bad system call",
        s if (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&s) => {
            return format!("Real-time signal {}", s - libc::SIGRTMIN());
        }
        s => return format!("Unknown signal {s}"),
    };
    text.to_string()
}

/// Task numbers as Slurm prints a set of them: sorted, runs collapsed (`0-1`, `0,2-3`).
pub fn ranges(tasks: &[u32]) -> String {
    let mut sorted = tasks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    crate::id_set::ranges(&sorted)
}

/// `task 3` or `tasks 0-1`: Slurm's words for a set of tasks.
pub fn tasks_phrase(tasks: &[u32]) -> String {
    let n = {
        let mut t = tasks.to_vec();
        t.sort_unstable();
        t.dedup();
        t.len()
    };
    format!("{} {}", if n == 1 { "task" } else { "tasks" }, ranges(tasks))
}

/// How exit lines are worded.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportStyle {
    /// The step was cancelled by srun itself (Ctrl-C twice, `--quit-on-interrupt`): a task
    /// killed by a signal is then expected, and said only with `-v`.
    pub cancelled: bool,
    /// `-v`: also say which tasks completed.
    pub verbose: bool,
}

/// The lines srun prints (without newlines) for the tasks that ended: `exits` holds
/// `(task, raw wait status)` in the order the ends were learnt. Tasks that ended the same
/// way share one line, as Slurm groups the tasks of one exit message; lines come in the
/// order in which each way of ending was first seen.
pub fn report_exits(node: &str, exits: &[(u32, i32)], style: ReportStyle) -> Vec<String> {
    let mut groups: Vec<(i32, Vec<u32>)> = Vec::new();
    for &(task, status) in exits {
        match groups.iter_mut().find(|(s, _)| *s == status) {
            // Slurm's srun names the tasks of the first report of a step out of memory only.
            Some(_) if Ending::of(status) == Ending::OutOfMemory => {}
            Some((_, tasks)) => tasks.push(task),
            None => groups.push((status, vec![task])),
        }
    }
    let mut lines = Vec::new();
    for (status, tasks) in groups {
        let ending = Ending::of(status);
        let quiet = ending.is_success() || (style.cancelled && matches!(ending, Ending::Signaled { .. }));
        let what = format!("{node}: {}: {}", tasks_phrase(&tasks), ending.describe());
        if !quiet {
            lines.push(format!("srun: error: {what}"));
        } else if style.verbose {
            lines.push(format!("srun: {what}"));
        }
    }
    lines
}

/// The line for tasks whose end never came because the step's supervisor went away.
pub fn report_lost(node: &str, tasks: &[u32]) -> String {
    format!("srun: error: {node}: {}: lost (the step's supervisor went away)", tasks_phrase(tasks))
}

/// srun's exit code from its tasks' raw wait statuses: 1 when the step ran out of memory
/// (that outranks all), else 128 + the largest signal if a signal killed any task (signals
/// outrank exit codes), else the largest exit code; 0 when there are none.
pub fn exit_code(statuses: impl IntoIterator<Item = i32>) -> i32 {
    match Ending::of(step_status(statuses)) {
        Ending::OutOfMemory => 1,
        Ending::Exited(code) => code,
        Ending::Signaled { signal, .. } => 128 + signal,
    }
}

/// The raw status srun ends an allocation of its own with, as Slurm's srun keeps it from its
/// tasks' (`launch.c`): `SIG_OOM` once any task ran out of memory, else the status of the
/// largest signal that killed a task, else that of the largest exit code.
pub fn step_status(statuses: impl IntoIterator<Item = i32>) -> i32 {
    let mut worst = 0;
    for status in statuses {
        let keep = match (Ending::of(worst), Ending::of(status)) {
            (Ending::OutOfMemory, _) => false,
            (_, Ending::OutOfMemory) => true,
            (Ending::Signaled { signal: was, .. }, Ending::Signaled { signal, .. }) => signal > was,
            (Ending::Signaled { .. }, Ending::Exited(_)) => false,
            (Ending::Exited(_), Ending::Signaled { .. }) => true,
            (Ending::Exited(was), Ending::Exited(code)) => code > was,
        };
        if keep {
            worst = status;
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32) -> i32 {
        code << 8
    }

    #[test]
    fn task_sets_read_as_slurm_writes_them() {
        assert_eq!(ranges(&[1, 0]), "0-1");
        assert_eq!(ranges(&[3, 0, 2]), "0,2-3");
        assert_eq!(ranges(&[5]), "5");
        assert_eq!(ranges(&[0, 1, 2, 4, 6, 7, 7]), "0-2,4,6-7");
        assert_eq!(tasks_phrase(&[1]), "task 1");
        assert_eq!(tasks_phrase(&[0, 1]), "tasks 0-1");
    }

    #[test]
    fn equal_ends_share_a_line() {
        let exits = [(1, exited(1)), (0, exited(1)), (2, exited(0)), (3, libc::SIGKILL)];
        assert_eq!(
            report_exits("vm", &exits, ReportStyle::default()),
            ["srun: error: vm: tasks 0-1: Exited with exit code 1", "srun: error: vm: task 3: Killed"]
        );
        let exits = [(0, exited(1)), (2, exited(1)), (3, exited(1)), (1, exited(0))];
        assert_eq!(
            report_exits("vm", &exits, ReportStyle::default()),
            ["srun: error: vm: tasks 0,2-3: Exited with exit code 1"]
        );
    }

    #[test]
    fn a_step_out_of_memory_is_said_so_and_exits_1() {
        let oom = crate::stepd::SIG_OOM;
        assert_eq!(Ending::of(oom), Ending::OutOfMemory);
        assert_eq!(
            report_exits("vm", &[(1, oom), (0, oom), (2, exited(0))], ReportStyle::default()),
            ["srun: error: vm: task 1: Out Of Memory"],
            "the first task reported only, as on a cluster"
        );
        let cancelled = ReportStyle { cancelled: true, verbose: false };
        assert_eq!(report_exits("vm", &[(0, oom)], cancelled), ["srun: error: vm: task 0: Out Of Memory"]);
        assert_eq!(exit_code([exited(7), libc::SIGKILL, oom]), 1, "out of memory outranks signals and codes");
        assert_eq!(exit_code([exited(7), libc::SIGKILL]), 128 + libc::SIGKILL);
    }

    #[test]
    fn a_single_task_is_named_alone() {
        assert_eq!(
            report_exits("vm", &[(0, exited(0)), (1, exited(1))], ReportStyle::default()),
            ["srun: error: vm: task 1: Exited with exit code 1"]
        );
        assert!(report_exits("vm", &[(0, exited(0))], ReportStyle::default()).is_empty());
    }

    #[test]
    fn signals_are_named_as_strsignal_does() {
        let core = libc::SIGSEGV | 0x80;
        assert_eq!(
            report_exits("vm", &[(0, libc::SIGTERM), (1, core)], ReportStyle::default()),
            ["srun: error: vm: task 0: Terminated", "srun: error: vm: task 1: Segmentation fault (core dumped)"]
        );
        assert_eq!(signal_text(libc::SIGINT), "Interrupt");
        assert_eq!(signal_text(libc::SIGRTMIN() + 2), "Real-time signal 2");
    }

    #[test]
    fn after_srun_cancels_signal_deaths_are_said_only_verbosely() {
        let exits = [(0, libc::SIGKILL), (1, exited(2))];
        let quiet = ReportStyle { cancelled: true, verbose: false };
        assert_eq!(report_exits("vm", &exits, quiet), ["srun: error: vm: task 1: Exited with exit code 2"]);
        let verbose = ReportStyle { cancelled: true, verbose: true };
        assert_eq!(
            report_exits("vm", &[(0, libc::SIGKILL), (1, exited(0))], verbose),
            ["srun: vm: task 0: Killed", "srun: vm: task 1: Completed"]
        );
    }

    #[test]
    fn the_exit_code_follows_srun() {
        assert_eq!(exit_code([]), 0);
        assert_eq!(exit_code([exited(0), exited(0)]), 0);
        assert_eq!(exit_code([exited(7)]), 7);
        assert_eq!(exit_code([exited(1), exited(3), exited(2)]), 3);
        // A signal outranks any exit code; the largest signal wins.
        assert_eq!(exit_code([exited(200), libc::SIGINT]), 130);
        assert_eq!(exit_code([libc::SIGKILL, libc::SIGTERM]), 128 + 15);
        assert_eq!(exit_code([libc::SIGSEGV | 0x80]), 139);
    }

    #[test]
    fn the_lost_line_names_the_tasks() {
        assert_eq!(report_lost("vm", &[0, 1]), "srun: error: vm: tasks 0-1: lost (the step's supervisor went away)");
    }
}
