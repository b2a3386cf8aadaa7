//! How srun shows a step's I/O, and what happened to the step: what the I/O loop and the
//! reader of the step's stream both speak of.

/// How srun shows a step's I/O.
#[derive(Debug, Clone, Default)]
pub struct IoOptions {
    /// `-l`: prefix each line with `N: ` (the task number, right-aligned to the width of the
    /// largest).
    pub label: bool,
    /// `-u`: write output as it arrives instead of by whole lines.
    pub unbuffered: bool,
    /// `--pty`: the local terminal goes to raw mode, stdin bytes are sent raw, output is
    /// unbuffered.
    pub pty: bool,
    /// `false` with `--input=none` or a file: srun does not read its standard input.
    pub forward_stdin: bool,
    /// The node, for the exit lines.
    pub node_name: String,
    /// `-X`: no status on Ctrl-C; each Ctrl-C is forwarded to the tasks.
    pub disable_status: bool,
    /// `--quit-on-interrupt`: one Ctrl-C ends the step.
    pub quit_on_interrupt: bool,
    /// The step's task count (labels' width; which task ends to expect). 0 counts as 1.
    pub ntasks: u32,
    /// KillWait, in seconds: after asking for the step's end srun waits this + 2 seconds.
    pub kill_wait: u32,
    /// `-v` count.
    pub verbose: u8,
    /// The job the step belongs to, when known before the step starts (inside an
    /// allocation): for `srun: Job J step creation temporarily disabled, …`.
    pub job_id: Option<u32>,
    /// `-K`: a task ending with a non-zero exit code (or a signal) ends the step.
    pub kill_on_bad_exit: bool,
    /// `-W SECONDS`: once the first task has ended, the others get this long, then the step
    /// ends.
    pub wait_after_first: Option<std::time::Duration>,
}

/// What happened to the step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOutcome {
    /// srun's exit code.
    pub exit_code: i32,
    /// `(job, step)`, if the step started.
    pub step: Option<(u32, u32)>,
    /// `(task, raw wait status)` of the tasks whose end came, in that order.
    pub exits: Vec<(u32, i32)>,
    /// The tasks whose end never came (the supervisor went away, or srun gave up waiting).
    pub lost: Vec<u32>,
    /// srun ended the step itself (Ctrl-C twice, `--quit-on-interrupt`, or a cancelled
    /// pending step).
    pub cancelled: bool,
    /// The last `Error` frame's text, if any.
    pub error: Option<String>,
}
