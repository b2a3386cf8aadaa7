//! The per-job supervisor (`slurmlet stepd JOBDIR`), slurmlet's slurmstepd.
//!
//! The daemon starts one per running job, in its own session, with SIGTERM blocked. The
//! supervisor starts the batch script in a new process group, enforces the time limit
//! (warning signal, SIGTERM, SIGKILL after KillWait), turns its own SIGTERM into a cancel of
//! the job, writes the daemon's notice of a shard job over its share of GPU memory into the
//! job's error output (ending the job under `shard_memory = "enforce"`, see [`gpu_share`]),
//! and records how the job ended in `JOBDIR/status.json` (durably) before it exits.
//! Because it is not tied to the daemon, a job survives a daemon restart; the restarted daemon
//! finds the supervisor again through `JOBDIR/stepd.pid` (see [`claim`]).

mod allocation;
mod batch_files;
mod batch_script;
pub mod claim;
mod client_link;
pub mod containment;
pub mod errno_text;
mod events;
pub mod exec;
pub mod fork_server;
pub mod gpu_share;
pub mod idle_gpu;
mod notes;
mod notice_file;
pub mod opener;
pub mod step;
pub mod stream_files;
pub mod timing;
pub mod user_env;

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `--signal`: a warning signal before the time limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarnSignal {
    /// Signal number.
    pub signal: i32,
    /// Seconds before the limit.
    pub seconds: u32,
    /// Only the batch shell gets it.
    pub batch_only: bool,
}

/// Why a running job ended, as its supervisor recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndCause {
    /// The batch script exited by itself.
    Exited,
    /// The time limit was reached.
    TimeLimit,
    /// A cancel request ended it.
    Cancelled,
    /// The job could not be started (output file, working directory, exec).
    LaunchFailed,
    /// The kernel killed some of its processes for want of memory within its limit.
    OutOfMemory,
}

/// The raw status slurmstepd gives a step some of whose tasks the kernel killed for want of
/// memory (Slurm's `SIG_OOM`): sacct shows it as `0:125` and the step as `OUT_OF_MEMORY`.
pub const SIG_OOM: i32 = 253;

/// slurmstepd's line for a step some of whose processes were killed for want of memory:
/// `Detected N oom_kill event(s) in StepId=J.S. Some of the step tasks have been OOM
/// Killed.`
pub fn oom_line(kills: u64, step: &str) -> String {
    let s = if kills == 1 { "" } else { "s" };
    format!("Detected {kills} oom_kill event{s} in StepId={step}. Some of the step tasks have been OOM Killed.")
}

/// What the daemon tells the supervisor, written to `JOBDIR/spec.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// Job id.
    pub job_id: u32,
    /// The saved batch script.
    pub script: PathBuf,
    /// Script arguments.
    pub argv: Vec<String>,
    /// The complete environment (`NAME=value`).
    pub env: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Standard output file.
    pub stdout: PathBuf,
    /// Standard error file (`None`: same as stdout).
    pub stderr: Option<PathBuf>,
    /// Standard input file (`None`: /dev/null).
    pub stdin: Option<PathBuf>,
    /// Append to output files instead of truncating.
    pub append: bool,
    /// When the job started (UNIX seconds); the time limit counts from here.
    pub start_time: u64,
    /// Time limit in seconds.
    pub time_limit_secs: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_wait: u32,
    /// `--signal`.
    pub warn_signal: Option<WarnSignal>,
    /// Node name, for messages.
    pub node_name: String,
    /// The submitter's umask (`SLURM_UMASK`), if known.
    #[serde(default)]
    pub umask: Option<u32>,
    /// An interactive allocation (srun or salloc outside a job): there is no script; the
    /// supervisor holds the client's connection, sends it the grant (`env` holds the
    /// allocation's variables), and the job ends when the client releases it.
    #[serde(default)]
    pub interactive: bool,
    /// The owner the job runs as, when the supervisor runs as root for another user.
    #[serde(default)]
    pub run_as: Option<crate::identity::RunAs>,
    /// What the job was given: its CPUs, memory and GPUs (its environment already names
    /// the GPUs).
    #[serde(flatten)]
    pub share: containment::Share,
}

impl LaunchSpec {
    /// The umask the job's files and processes get: the submitter's, else 022 for another
    /// user's job (never the root daemon's private one); `None` leaves the supervisor's.
    pub fn owner_umask(&self) -> Option<u32> {
        self.umask.or(self.run_as.map(|_| 0o022))
    }
}

/// How the job ended, written to `JOBDIR/status.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndStatus {
    /// Raw wait status of the batch shell.
    pub wait_status: i32,
    /// Why it ended.
    pub cause: EndCause,
    /// When (UNIX seconds).
    pub end_time: u64,
    /// What the batch script's processes used (none for an allocation, or a job that did
    /// not start).
    #[serde(default)]
    pub usage: Option<crate::api::acct::Usage>,
}

/// File names inside a job directory.
pub mod files {
    /// The launch spec.
    pub const SPEC: &str = "spec.json";
    /// The script.
    pub const SCRIPT: &str = "slurm_script";
    /// `PID STARTTICKS` of the supervisor.
    pub const STEPD_PID: &str = "stepd.pid";
    /// The job's process group id.
    pub const PGID: &str = "pgid";
    /// The end status.
    pub const STATUS: &str = "status.json";
    /// The directory of the job's step directories, one per srun step, named by its id.
    pub const STEPS: &str = "steps";
    /// Present when the job is ended because it is requeued (`scontrol requeue`): its
    /// `*** JOB … CANCELLED AT … ***` line then says `DUE TO JOB REQUEUE`.
    pub const REQUEUED: &str = "requeued";
    /// Made by the daemon when it starts ending a running job on a cancel (or requeue): a
    /// script that then ends by itself (its srun's step ended first) still gets slurmstepd's
    /// `*** JOB … CANCELLED AT … ***` line.
    pub const CANCELLED: &str = "cancelled";
    /// Present when the job is ended because it was preempted: its line then says `DUE TO
    /// PREEMPTION`.
    pub const PREEMPTED: &str = "preempted";
    /// Present when the job is ended because a GPU it holds failed: its line then says
    /// `DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS`, as slurmstepd's does.
    pub const NODE_FAILED: &str = "node_failed";
}

/// Reads a job directory's end status, if the supervisor wrote one.
pub fn read_status(job_dir: &Path) -> Option<EndStatus> {
    let text = std::fs::read(job_dir.join(files::STATUS)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Reads `stepd.pid`: the supervisor's pid and start ticks.
pub fn read_stepd_pid(job_dir: &Path) -> Option<(i32, u64)> {
    let text = std::fs::read_to_string(job_dir.join(files::STEPD_PID)).ok()?;
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Reads the job's process group id.
pub fn read_pgid(job_dir: &Path) -> Option<i32> {
    std::fs::read_to_string(job_dir.join(files::PGID)).ok()?.trim().parse().ok()
}

/// What a supervisor supervises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A job: its batch script, or the allocation of an interactive client.
    Job,
    /// A job step (srun) and its client's stream.
    Step,
}

impl Kind {
    /// The subcommand that starts it (`slurmlet stepd …`, `slurmlet stepd-step …`).
    pub fn subcommand(self) -> &'static str {
        match self {
            Kind::Job => "stepd",
            Kind::Step => "stepd-step",
        }
    }

    /// The byte that names it in a fork server request.
    pub fn tag(self) -> u8 {
        match self {
            Kind::Job => b'j',
            Kind::Step => b's',
        }
    }

    /// The kind a fork server request's first byte names.
    pub fn from_tag(tag: u8) -> Option<Kind> {
        [Kind::Job, Kind::Step].into_iter().find(|k| k.tag() == tag)
    }
}

/// `slurmlet stepd JOBDIR [FD [CONNFD]]` and `slurmlet stepd-step STEPDIR FD CONNFD`. FD, if
/// given, is the write end of the daemon's end pipe: closed once the end is recorded (for a
/// job, once `status.json` is in place, so that the daemon can record the end and reuse the
/// job's resources while the file is made durable). CONNFD is the client's stream
/// connection (an interactive allocation's or a step's).
pub fn run(kind: Kind, args: Vec<OsString>) -> i32 {
    let usage = || {
        eprintln!("usage: slurmlet {} DIR [FD [CONNFD]] (started by the daemon)", kind.subcommand());
        2
    };
    let Some(dir) = args.get(1).map(PathBuf::from) else { return usage() };
    let mut fds = Vec::new();
    for a in args.iter().skip(2) {
        match a.to_str().and_then(|a| a.parse::<i32>().ok()) {
            // SAFETY: the daemon passes these descriptors to this process alone.
            Some(fd) if fd > 2 => fds.push(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }),
            _ => return usage(),
        }
    }
    supervise_with(kind, &dir, fds)
}

/// Supervises what `dir` describes, given the descriptors passed to the supervisor: the end
/// pipe's write end, then the client's connection if any. Returns the exit code.
pub fn supervise_with(kind: Kind, dir: &Path, fds: Vec<std::os::fd::OwnedFd>) -> i32 {
    let mut fds = fds.into_iter();
    let ended = fds.next().map(EndPipe::adopt);
    let conn = fds.next().map(|fd| {
        crate::sys::set_cloexec(&fd);
        std::os::unix::net::UnixStream::from(fd)
    });
    match kind {
        Kind::Job => supervise_dir(dir, ended, conn),
        Kind::Step => match conn {
            Some(conn) => step::supervise(dir, ended.map(|e| e.write_end), conn),
            None => {
                eprintln!("slurmstepd: error: step directory {}: no client connection", dir.display());
                2
            }
        },
    }
}

/// Supervises the job of directory `dir`; returns the supervisor's exit code.
fn supervise_dir(dir: &Path, ended: Option<EndPipe>, conn: Option<std::os::unix::net::UnixStream>) -> i32 {
    match supervise(dir, ended, conn) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("slurmstepd: error: job directory {}: {e}", dir.display());
            1
        }
    }
}

/// The write end of the daemon's end pipe.
struct EndPipe {
    /// Closed when dropped.
    write_end: std::os::fd::OwnedFd,
}

impl EndPipe {
    /// Takes descriptor `fd` and marks it close-on-exec, so that the job does not hold it.
    fn adopt(fd: std::os::fd::OwnedFd) -> EndPipe {
        crate::sys::set_cloexec(&fd);
        EndPipe { write_end: fd }
    }
}

fn supervise(dir: &Path, ended: Option<EndPipe>, conn: Option<std::os::unix::net::UnixStream>) -> std::io::Result<()> {
    use std::os::fd::AsFd;
    // Held until this process exits: the job is this supervisor's (see `claim`).
    let Some(_claim) = claim::take(dir, ended.as_ref().map(|e| e.write_end.as_fd()))? else {
        eprintln!(
            "slurmstepd: error: job directory {}: the daemon that started this supervisor is gone; the job is left to the next one",
            dir.display()
        );
        return Ok(());
    };
    let spec: LaunchSpec = serde_json::from_slice(&std::fs::read(dir.join(files::SPEC))?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let status = match conn {
        Some(conn) if spec.interactive => allocation::hold(&spec, dir, conn)?,
        _ if spec.interactive => {
            EndStatus { wait_status: 1 << 8, cause: EndCause::LaunchFailed, end_time: crate::sys::now(), usage: None }
        }
        _ => run_batch(&spec, dir)?,
    };
    // The job's processes are gone: the daemon may record the end as soon as the file is in
    // place; its own commit of the end, not this file's fsync, is what it waits for.
    crate::sys::write_atomically(
        &dir.join(files::STATUS),
        &serde_json::to_vec(&status).expect("status serializes"),
        || drop(ended),
    )
}

/// Runs the batch script to its end.
fn run_batch(spec: &LaunchSpec, dir: &Path) -> std::io::Result<EndStatus> {
    let failed = |why: String| {
        eprintln!("slurmstepd: error: job {}: {why}", spec.job_id);
        EndStatus { wait_status: 1 << 8, cause: EndCause::LaunchFailed, end_time: crate::sys::now(), usage: None }
    };
    let owner = match spec.run_as.map(crate::identity::Identity::lookup).transpose() {
        Ok(owner) => owner,
        Err(e) => return Ok(failed(e.to_string())),
    };
    let streams = match batch_files::open(spec, dir, owner.clone())? {
        batch_files::Opened::Open(streams) => streams,
        batch_files::Opened::Failed(why) => return Ok(failed(why)),
        batch_files::Opened::Ended(cause) => {
            eprintln!("slurmstepd: job {}: ended ({cause:?}) before its files could be opened", spec.job_id);
            let end_time = crate::sys::now();
            return Ok(EndStatus { wait_status: libc::SIGTERM, cause, end_time, usage: None });
        }
    };
    // `--get-user-env`: the login environment, had before the script's processes start (the
    // spec is copied only for a job that asks for it).
    let with_login_env;
    let (spec, login_env_failed) = match user_env::merged(&spec.env, owner.as_ref()) {
        Some((env, failed)) => {
            with_login_env = LaunchSpec { env, ..spec.clone() };
            (&with_login_env, failed)
        }
        None => (spec, None),
    };
    // The job's processes are the batch script's process group.
    let mut jail = containment::for_supervisor(&spec.share, false);
    Ok(match batch_script::start(spec, owner, streams, jail.as_mut()) {
        Ok(mut child) => {
            if let Some(why) = login_env_failed {
                child.note(&error_line(&spec.node_name, &format!("{why}\n")));
            }
            std::fs::write(dir.join(files::PGID), format!("{}\n", child.pid))?;
            watch(spec, dir, child, jail.as_ref())?
        }
        Err(e) => failed(e.to_string()),
    })
}

/// Waits for the batch shell, enforcing the time limit (as the daemon moves it, see
/// [`timing`]), stopping the job while it is suspended, and honouring cancel requests.
fn watch(
    spec: &LaunchSpec,
    dir: &Path,
    mut child: batch_script::Child,
    jail: &dyn containment::Containment,
) -> std::io::Result<EndStatus> {
    use std::time::{Duration, Instant};

    let mut events = events::Events::new(child.pid)?;
    let at = crate::sys::instant_at;
    // Read once the notices are blocked, so that none is missed.
    let mut timing = timing::Follower::start(dir, spec.start_time, spec.time_limit_secs.map(|l| spec.start_time + l));
    let mut warned = false;
    let warn_of = |timing: &timing::Follower, warned: bool| match (spec.warn_signal, timing.deadline(), warned) {
        (Some(w), Some(end), false) => Some(at(end.saturating_sub(w.seconds as u64))),
        _ => None,
    };
    let mut limit_at = timing.deadline().map(at);
    let mut warn_at = warn_of(&timing, warned);
    if let Some(pause) = timing.pause_due() {
        pause.apply(jail);
    }
    let mut kill_at: Option<Instant> = None;
    let mut sample_at = jail.sample_every().map(|every| Instant::now() + every);
    let mut cause = EndCause::Exited;
    let kill_wait = Duration::from_secs(spec.kill_wait as u64);
    // Told of the job's use of its GPU's memory over its share: once, and ended for it (see
    // `gpu_share`) at the top of the next turn.
    let mut share_told = false;
    let mut end_for_share = gpu_share::follow(spec, dir, &mut share_told, |line| child.note(line));
    // Told its GPUs stayed idle (see `idle_gpu`): once, and before a cancel that follows.
    let mut idle_told = false;
    idle_gpu::follow(spec, dir, &mut idle_told, |line| child.note(line));

    loop {
        if std::mem::take(&mut end_for_share) && cause == EndCause::Exited {
            cause = EndCause::OutOfMemory;
            timing.ending();
            terminate(jail);
            kill_at = Some(Instant::now() + kill_wait);
        }
        let deadline = [warn_at, limit_at, kill_at, sample_at].into_iter().flatten().min();
        match events.next(deadline)? {
            events::Event::Exited => {
                let ws = child.wait().unwrap_or(0);
                if cause == EndCause::Exited && limit_at.is_some_and(|t| t <= Instant::now()) {
                    // The script ended at its time limit, before this supervisor's own turn
                    // (its steps, ended by the same limit, ended it): it timed out.
                    cause = EndCause::TimeLimit;
                    child.note(&error_line(&spec.node_name, &job_end_line(spec, " DUE TO TIME LIMIT")));
                } else if cause == EndCause::Exited && dir.join(files::CANCELLED).exists() {
                    // Likewise for a cancel, whose steps end first: the daemon records it as one.
                    child.note(&error_line(&spec.node_name, &job_end_line(spec, requeue_note(dir))));
                }
                if let (true, Some(kill_at)) = (cause != EndCause::Exited, kill_at) {
                    // Being ended: the job's other processes (an srun relaying its step's
                    // last words) get the rest of KillWait too.
                    events.forget_source();
                    wait_until_empty(&mut events, jail, kill_at)?;
                }
                return Ok(script_ended(spec, &mut child, jail, ws, cause));
            }
            events::Event::Terminate => {
                idle_gpu::follow(spec, dir, &mut idle_told, |line| child.note(line));
                if cause == EndCause::Exited {
                    cause = EndCause::Cancelled;
                    timing.ending();
                    end_job(spec, &mut child, jail, requeue_note(dir));
                    kill_at = Some(Instant::now() + kill_wait);
                }
            }
            events::Event::Notify => {
                end_for_share = gpu_share::follow(spec, dir, &mut share_told, |line| child.note(line));
                idle_gpu::follow(spec, dir, &mut idle_told, |line| child.note(line));
                if cause == EndCause::Exited {
                    if let Some(pause) = timing.reread(dir) {
                        pause.apply(jail);
                    }
                    limit_at = timing.deadline().map(at);
                    warn_at = warn_of(&timing, warned);
                }
            }
            events::Event::Deadline => {
                let now = Instant::now();
                let due = |t: Option<Instant>| t.is_some_and(|t| t <= now);
                if due(warn_at) {
                    warn_at = None;
                    warned = true;
                    if let Some(w) = spec.warn_signal {
                        send_warning(child.pid, dir, w);
                    }
                }
                if due(limit_at) {
                    limit_at = None;
                    if cause == EndCause::Exited {
                        cause = EndCause::TimeLimit;
                        timing.ending();
                        end_job(spec, &mut child, jail, " DUE TO TIME LIMIT");
                        kill_at = Some(now + kill_wait);
                    }
                }
                if due(kill_at) {
                    kill_at = None;
                    let _ = jail.signal_all(libc::SIGKILL);
                }
                if due(sample_at) {
                    jail.sample();
                    sample_at = jail.sample_every().map(|every| now + every);
                }
            }
        }
    }
}

/// The end of a batch script that exited with wait status `ws`, ended for `cause`: whatever
/// it left behind is killed, its usage read, and the kills of the out-of-memory killer told
/// in its error output (and made its cause, when nothing else ended it).
fn script_ended(
    spec: &LaunchSpec,
    child: &mut batch_script::Child,
    jail: &dyn containment::Containment,
    ws: i32,
    mut cause: EndCause,
) -> EndStatus {
    let _ = jail.signal_all(libc::SIGKILL);
    let usage = Some(jail.usage());
    let oom_kills = jail.oom_kills();
    if oom_kills > 0 {
        let step = format!("{}.batch", spec.job_id);
        child.note(&error_line(&spec.node_name, &oom_line(oom_kills, &step)));
        if cause == EndCause::Exited {
            cause = EndCause::OutOfMemory;
        }
    }
    let ws = if cause == EndCause::OutOfMemory { SIG_OOM } else { ws };
    // The last lines get their moment, not more: the job's file is its owner's.
    child.notes.flush();
    EndStatus { wait_status: ws, cause, end_time: crate::sys::now(), usage }
}

/// Waits until the job's processes are gone or `until` passes.
fn wait_until_empty(
    events: &mut events::Events,
    jail: &dyn containment::Containment,
    until: std::time::Instant,
) -> std::io::Result<()> {
    use std::time::{Duration, Instant};
    // A process that exited but is not reaped yet (its parent died; whoever adopts it may
    // be slow to reap, or never do so) is gone already.
    while !jail.members().is_empty() && Instant::now() < until {
        events.next(Some(until.min(Instant::now() + Duration::from_millis(20))))?;
    }
    Ok(())
}

/// Ends the job as slurmstepd does: its `*** JOB … CANCELLED AT …{why} ***` line in the
/// job's stderr, then SIGCONT and SIGTERM to the whole job.
fn end_job(spec: &LaunchSpec, child: &mut batch_script::Child, jail: &dyn containment::Containment, why: &str) {
    child.note(&error_line(&spec.node_name, &job_end_line(spec, why)));
    terminate(jail);
}

/// A line slurmstepd writes into a job's or step's error output: `slurmstepd-NODE: error:
/// TEXT`, the shape tools and users grep for (`DUE TO TIME LIMIT`, `execve()`).
pub fn error_line(node: &str, text: &str) -> String {
    format!("slurmstepd-{node}: error: {text}")
}

/// Why a cancelled job ends, for its line: ` DUE TO PREEMPTION` when it was preempted,
/// ` DUE TO JOB REQUEUE` when it is requeued.
fn requeue_note(dir: &Path) -> &'static str {
    if dir.join(files::PREEMPTED).exists() {
        " DUE TO PREEMPTION"
    } else if dir.join(files::NODE_FAILED).exists() {
        " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"
    } else if dir.join(files::REQUEUED).exists() {
        " DUE TO JOB REQUEUE"
    } else {
        ""
    }
}

/// slurmstepd's `*** JOB … CANCELLED AT …{why} ***` line.
fn job_end_line(spec: &LaunchSpec, why: &str) -> String {
    format!(
        "*** JOB {} ON {} CANCELLED AT {}{why} ***",
        spec.job_id,
        spec.node_name,
        crate::sys::format_local_time(crate::sys::now())
    )
}

/// SIGCONT then SIGTERM to the whole job, as slurmstepd does.
pub fn terminate(jail: &dyn containment::Containment) {
    jail.thaw();
    let _ = jail.signal_all(libc::SIGTERM);
}

/// `--signal`: with `B:` only the batch shell `shell`; otherwise the tasks of the job's srun
/// steps that run (in `job_dir`), and neither the batch shell nor the other processes it
/// started, as Slurm 26.05 does.
fn send_warning(shell: i32, job_dir: &Path, w: WarnSignal) {
    if w.batch_only {
        let _ = crate::sys::kill_pid(shell, w.signal);
    } else {
        for supervisor in step::live_supervisors(job_dir) {
            let _ = containment::of_step(supervisor).signal_all(w.signal);
        }
    }
}

impl batch_script::Child {
    /// Writes a line ([`error_line`]) to the job's stderr file, never waiting long for it
    /// (see [`notes`]).
    fn note(&mut self, line: &str) {
        self.notes.write(line);
    }
}

/// The path of the directory of job `id` under `jobs_dir`, for its run after `restarts`
/// requeues.
pub fn job_dir(jobs_dir: &Path, id: u32, restarts: u32) -> PathBuf {
    match restarts {
        0 => jobs_dir.join(id.to_string()),
        n => jobs_dir.join(format!("{id}.{n}")),
    }
}
