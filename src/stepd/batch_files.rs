//! The batch script's standard input, output and error files, opened as the job's owner
//! before the script starts.
//!
//! They are opened on a thread of their own ([`super::opener`]), never waiting in `open`
//! ([`super::stream_files`]). An output FIFO that no process reads yet, or an input FIFO that
//! no process has written to yet, is waited for, as slurmstepd waits for it; meanwhile the
//! job is running as far as the daemon knows, and a cancel (SIGTERM) or its time limit ends
//! it as it would end a script.

use super::events::{Event, Events};
use super::opener::{Attempt, Opener};
use super::stream_files::{self, Ready};
use super::{EndCause, LaunchSpec};
use crate::identity::Identity;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The script's standard streams.
pub struct Streams {
    /// Its standard input.
    pub stdin: File,
    /// Its standard output.
    pub stdout: File,
    /// Its standard error.
    pub stderr: File,
}

/// What the wait for the files came to.
pub enum Opened {
    /// Every file is open.
    Open(Streams),
    /// A file cannot be opened: why (`cannot open PATH: ERROR`).
    Failed(String),
    /// The job was cancelled, or reached its time limit, first.
    Ended(EndCause),
}

/// The files a job names.
#[derive(Clone)]
struct Names {
    job_id: u32,
    stdout: PathBuf,
    stderr: Option<PathBuf>,
    stdin: Option<PathBuf>,
    append: bool,
}

/// What is open so far: each file is opened once, and an input FIFO stays open while it
/// waits for its writer.
#[derive(Default)]
struct Progress {
    stdout: Option<File>,
    stderr: Option<File>,
    stdin: Option<File>,
    stdin_held: Option<File>,
}

/// Opens the files of the job `spec` (its directory `dir`) as `owner` when given, waiting
/// for FIFOs while watching for a cancel and the time limit.
pub fn open(spec: &LaunchSpec, dir: &Path, owner: Option<Identity>) -> std::io::Result<Opened> {
    let names = Names {
        job_id: spec.job_id,
        stdout: spec.stdout.clone(),
        stderr: spec.stderr.clone().filter(|p| p != &spec.stdout),
        stdin: spec.stdin.clone(),
        append: spec.append,
    };
    let mut progress = Progress::default();
    let opener = Opener::start(owner, spec.owner_umask(), move || attempt(&names, &mut progress))?;
    let mut events = Events::on_readable(opener.ready().try_clone_to_owned()?)?;
    let mut timing =
        super::timing::Follower::start(dir, spec.start_time, spec.time_limit_secs.map(|l| spec.start_time + l));
    let cause = loop {
        match events.next(timing.deadline().map(crate::sys::instant_at))? {
            Event::Exited => return Ok(result(&opener)),
            Event::Terminate => break EndCause::Cancelled,
            Event::Deadline => break EndCause::TimeLimit,
            // Nothing runs yet to stop; the time limit may have moved.
            Event::Notify => drop(timing.reread(dir)),
        }
    };
    if !opener.settle() {
        return Ok(Opened::Ended(cause));
    }
    // Open after all: the script starts, and its supervisor ends it as any other, once it
    // hears the cancel again (the time limit it finds passed by itself).
    if cause == EndCause::Cancelled {
        // SAFETY: tgkill to this very thread, whose SIGTERM is blocked: it waits for the
        // next look at the signals.
        unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), libc::SIGTERM) };
    }
    Ok(result(&opener))
}

/// What the finished opener came to.
fn result(opener: &Opener<Result<Streams, String>>) -> Opened {
    match opener.take() {
        Some(Ok(Ok(streams))) => Opened::Open(streams),
        Some(Ok(Err(why))) => Opened::Failed(why),
        Some(Err(e)) => Opened::Failed(format!("cannot run as the job's owner: {e}")),
        // Finished without a result: only a stopped opener does.
        None => Opened::Failed("the job's files could not be opened".into()),
    }
}

/// One try at opening what is not open yet.
fn attempt(names: &Names, progress: &mut Progress) -> Attempt<Result<Streams, String>> {
    let failed = |path: &Path, e: std::io::Error| Attempt::Done(Err(format!("cannot open {}: {e}", path.display())));
    let waiting = |path: &Path, what: &str| {
        Attempt::Waiting(format!(
            "job {}: waiting for a process to open FIFO {} for {what}",
            names.job_id,
            path.display()
        ))
    };
    let mut outputs = vec![(&names.stdout, &mut progress.stdout)];
    if let Some(path) = &names.stderr {
        outputs.push((path, &mut progress.stderr));
    }
    for (path, slot) in outputs {
        if slot.is_some() {
            continue;
        }
        match stream_files::open_output(path, names.append) {
            Ok(Ready::Open(f)) => *slot = Some(f),
            Ok(Ready::Waiting) => return waiting(path, "reading"),
            Err(e) => return failed(path, e),
        }
    }
    if progress.stdin.is_none() {
        let opened = match &names.stdin {
            Some(path) => match stream_files::open_input(path, &mut progress.stdin_held) {
                Ok(Ready::Open(f)) => f,
                Ok(Ready::Waiting) => return waiting(path, "writing"),
                Err(e) => return failed(path, e),
            },
            None => match File::open("/dev/null") {
                Ok(f) => f,
                Err(e) => return failed(Path::new("/dev/null"), e),
            },
        };
        progress.stdin = Some(opened);
    }
    let stdout = progress.stdout.take().expect("opened above");
    let stderr = match progress.stderr.take() {
        Some(f) => f,
        None => match stdout.try_clone() {
            Ok(f) => f,
            Err(e) => return failed(&names.stdout, e),
        },
    };
    let stdin = progress.stdin.take().expect("opened above");
    Attempt::Done(Ok(Streams { stdin, stdout, stderr }))
}
