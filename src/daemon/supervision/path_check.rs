//! Looking at the paths a user names, as that user, in a process killed at a deadline.
//!
//! Any path a user names can hang whoever looks at it: a FUSE file system whose server never
//! answers, a hard NFS mount whose server is gone. A thread stuck there cannot be stopped,
//! and one stuck under the daemon's lock stops every user's request. So the looks are made
//! by a process of their own (see [`crate::path_looks`]), which first becomes the paths'
//! owner (a user learns only what they could see themselves, never what root sees) and
//! reports each look through a pipe; at the deadline it is killed with SIGKILL, which ends a
//! FUSE or NFS wait. One stuck past even that (a FUSE server that took the request and never
//! answers holds it uninterruptibly) keeps one of its owner's turns until it ends: a user has
//! at most [`TURNS_PER_USER`] checks under way and waits for those, never for anyone else's.
//!
//! Where the daemon need not become anyone (a per-user daemon's own user, or root for root),
//! the looks are made on a thread instead, given up at the deadline.
//!
//! The process is forked by the supervisors' fork server (see [`super::fork_client`]), not
//! by the daemon: a `fork` of the daemon, with its threads and mappings, costs it a hundred
//! copy-on-write faults afterwards, and an `execve` of its binary more still (that way is
//! taken only when no fork server can be had). Measured on two CPUs, release build: the
//! daemon's part of a submit took 0.3 ms; a fork of the daemon added 0.5 ms, the fork
//! server adds 0.35 ms.

use super::launch;
use crate::identity::{IdentityError, RunAs};
use crate::path_looks::{self, Look, Request};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long the looks of one check may take in all, waiting for a turn included.
pub const DEADLINE: Duration = Duration::from_secs(5);

/// How many checks of one user may be under way at once (their processes alive).
pub const TURNS_PER_USER: usize = 4;

/// What a check found.
#[derive(Debug)]
pub enum Verdict {
    /// Every look passed.
    Passed,
    /// Look `look` failed with `error`, as its owner's call did; the later ones were not made.
    Failed {
        /// Its index.
        look: usize,
        /// What the call said.
        error: io::Error,
    },
    /// Look `look` had not answered at the deadline; the process was killed.
    NoAnswer {
        /// Its index.
        look: usize,
    },
}

/// A check that gave no verdict.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The owner could not be taken on.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The owner's earlier checks held every turn until the deadline.
    #[error("{TURNS_PER_USER} earlier checks of this user's paths are still waiting for an answer")]
    Busy,
    /// The process could not be started or heard.
    #[error("cannot check the paths: {0}")]
    Io(#[from] io::Error),
    /// The process ended without reporting every look (killed by someone else).
    #[error("the check of the paths ended without an answer")]
    Silent,
}

/// Each user's turns at checks, for the users with checks under way.
type Turns = Arc<Mutex<HashMap<u32, Arc<Semaphore>>>>;

/// The checks under way, by user.
pub struct PathChecks {
    exe: PathBuf,
    turns: Turns,
    deadline: Duration,
}

impl PathChecks {
    /// No check under way yet; the checking processes are started from `exe` (the daemon's
    /// binary), and each check takes at most `deadline`.
    pub fn new(exe: PathBuf, deadline: Duration) -> PathChecks {
        PathChecks { exe, turns: Default::default(), deadline }
    }

    /// The deadline of each check.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Makes `looks`, in order, as the user `uid` (primary group `gid`; the daemon's own
    /// credentials when it runs as that user, or as root for root) with the submitter's
    /// `umask` (022 for another user's that gave none, never the root daemon's own),
    /// stopping at the first that fails; the whole takes at most the deadline, waiting for a
    /// turn included.
    pub async fn check(&self, uid: u32, gid: u32, umask: Option<u32>, looks: &[Look]) -> Result<Verdict, CheckError> {
        if looks.is_empty() {
            return Ok(Verdict::Passed);
        }
        let deadline = tokio::time::Instant::now() + self.deadline;
        let Some(turn) = self.turn_of(uid, deadline).await else {
            forget_if_idle(&self.turns, uid);
            return Err(CheckError::Busy);
        };
        // From here on the check is a task of its own: when the request that asked for it
        // goes away midway, its process is still killed at the deadline and waited for, and
        // the turn held until then.
        let owner = RunAs::when_needed(uid, gid);
        let request = Request { owner, umask: umask.or(owner.map(|_| 0o022)), looks: looks.to_vec() };
        let checking = Checking { uid, deadline, turn, turns: self.turns.clone() };
        tokio::spawn(checking.run(self.exe.clone(), request))
            .await
            .unwrap_or_else(|e| Err(CheckError::Io(io::Error::other(e.to_string()))))
    }

    /// One of `uid`'s turns, once one is free, unless `deadline` passes first.
    async fn turn_of(&self, uid: u32, deadline: tokio::time::Instant) -> Option<OwnedSemaphorePermit> {
        let turns = {
            let mut all = self.turns.lock().unwrap_or_else(|e| e.into_inner());
            all.entry(uid).or_insert_with(|| Arc::new(Semaphore::new(TURNS_PER_USER))).clone()
        };
        tokio::time::timeout_at(deadline, turns.acquire_owned()).await.ok()?.ok()
    }
}

/// Drops `uid`'s turns when nobody holds or waits for one, so that the map holds only the
/// users with checks under way.
fn forget_if_idle(turns: &Mutex<HashMap<u32, Arc<Semaphore>>>, uid: u32) {
    let mut all = turns.lock().unwrap_or_else(|e| e.into_inner());
    if all.get(&uid).is_some_and(|t| Arc::strong_count(t) == 1) {
        all.remove(&uid);
    }
}

/// A check that holds one of its user's turns.
struct Checking {
    uid: u32,
    deadline: tokio::time::Instant,
    turn: OwnedSemaphorePermit,
    turns: Turns,
}

impl Checking {
    /// Starts the process that makes `request`'s looks, reads its reports until the
    /// deadline, kills it then if it has not finished, and gives the turn back once it is
    /// gone.
    async fn run(self, exe: PathBuf, request: Request) -> Result<Verdict, CheckError> {
        if request.owner.is_none() {
            return self.run_here(request).await;
        }
        let (uid, count) = (self.uid, request.looks.len());
        let started = tokio::task::spawn_blocking(move || start(&exe, &request))
            .await
            .unwrap_or_else(|e| Err(io::Error::other(e.to_string())));
        let (process, report) = match started {
            Ok(started) => started,
            Err(e) => {
                self.give_back();
                return Err(e.into());
            }
        };
        let mut passed = 0;
        let heard = tokio::time::timeout_at(self.deadline, read_reports(report, count, &mut passed)).await;
        if !matches!(heard, Ok(Ok(_))) {
            // Past its deadline, or not heard: it is not left to go on.
            process.kill();
        }
        tokio::spawn(async move {
            process.ended().await;
            self.give_back();
        });
        match heard {
            Err(_elapsed) => Ok(Verdict::NoAnswer { look: passed }),
            Ok(Err(e)) => Err(e.into()),
            Ok(Ok(Report::Passed)) => Ok(Verdict::Passed),
            Ok(Ok(Report::Silent)) => Err(CheckError::Silent),
            Ok(Ok(Report::Failed { look, errno })) => {
                Ok(Verdict::Failed { look, error: io::Error::from_raw_os_error(errno) })
            }
            Ok(Ok(Report::Identity { errno })) => Err(owner_refused(uid, errno).into()),
        }
    }

    /// Makes `request`'s looks on a thread of this process, for a caller the daemon need not
    /// become (its own user, or root for root): no process to start, and nothing to learn
    /// that the caller could not see. A thread stuck in a look cannot be killed: it is given
    /// up at the deadline and keeps its turn until it ends, so that one user has at most
    /// [`TURNS_PER_USER`] of them.
    async fn run_here(self, request: Request) -> Result<Verdict, CheckError> {
        let passed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (tell, told) = tokio::sync::oneshot::channel();
        let (deadline, counted) = (self.deadline, passed.clone());
        let spawned = std::thread::Builder::new().name("path-check".into()).spawn(move || {
            let made = (|| {
                if let Some(umask) = request.umask {
                    crate::sys::set_thread_umask(umask).map_err(|e| (0, e.raw_os_error().unwrap_or(libc::EIO)))?;
                }
                for (i, look) in request.looks.iter().enumerate() {
                    look.make().map_err(|errno| (i, errno))?;
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                Ok(())
            })();
            let _ = tell.send(made);
            self.give_back();
        });
        if let Err(e) = spawned {
            return Err(CheckError::Io(e));
        }
        match tokio::time::timeout_at(deadline, told).await {
            Err(_elapsed) => Ok(Verdict::NoAnswer { look: passed.load(std::sync::atomic::Ordering::SeqCst) }),
            Ok(Err(_)) => Err(CheckError::Silent),
            Ok(Ok(Ok(()))) => Ok(Verdict::Passed),
            Ok(Ok(Err((look, errno)))) => Ok(Verdict::Failed { look, error: io::Error::from_raw_os_error(errno) }),
        }
    }

    fn give_back(self) {
        let Checking { uid, turn, turns, .. } = self;
        drop(turn);
        forget_if_idle(&turns, uid);
    }
}

/// Why the process could not become user `uid`, from its report's `errno`.
fn owner_refused(uid: u32, errno: i32) -> IdentityError {
    match errno {
        path_looks::NO_SUCH_USER => IdentityError::NoSuchUser(uid),
        errno => IdentityError::Switch {
            name: crate::identity::user_name(uid),
            uid,
            source: io::Error::from_raw_os_error(errno),
        },
    }
}

/// A checking process: its pid and, when the fork server started it, a pidfd for it (else
/// it is the daemon's child).
struct Process {
    pid: i32,
    pidfd: Option<OwnedFd>,
}

impl Process {
    /// SIGKILL, through the pidfd when there is one (the pid alone could name another process
    /// once the fork server has reaped it).
    fn kill(&self) {
        let _ = match &self.pidfd {
            Some(fd) => crate::sys::pidfd_send_signal(fd.as_fd(), libc::SIGKILL),
            None => crate::sys::kill_pid(self.pid, libc::SIGKILL),
        };
    }

    /// Waits until it has ended (at once, unless it is stuck in the kernel); the daemon's own
    /// child is reaped (the fork server reaps its own).
    async fn ended(self) {
        let own_child = self.pidfd.is_none();
        let waited = match self.pidfd {
            Some(fd) => crate::sys::wait_pidfd(fd).await,
            None => crate::sys::wait_exit(self.pid).await,
        };
        if let Err(e) = waited {
            tracing::error!(pid = self.pid, "cannot wait for the end of a path check: {e}");
        }
        if own_child {
            crate::sys::reap(self.pid);
        }
    }
}

/// Starts the process that makes `request`'s looks (see [`launch::start_path_check`]):
/// the request in a memfd, the reports in a pipe whose read end is returned.
fn start(exe: &std::path::Path, request: &Request) -> io::Result<(Process, OwnedFd)> {
    use std::io::Write;
    // SAFETY: memfd_create takes a NUL-terminated name and flags.
    let fd = unsafe { libc::memfd_create(c"path-check".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    let mut written = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    written.write_all(&request.encode())?;
    let (read_end, write_end) = crate::sys::pipe()?;
    // The reports are never dropped for a full pipe: the process waits for room.
    crate::sys::set_nonblocking(write_end.as_fd(), false)?;
    let (pid, pidfd) = launch::start_path_check(exe, &[written.as_fd(), write_end.as_fd()])?;
    Ok((Process { pid, pidfd }, read_end))
}

/// How the process's reports ended.
enum Report {
    /// Every look passed (the child is ending: it is not waited for).
    Passed,
    /// The pipe closed before every look was reported.
    Silent,
    /// Look `look` failed with `errno`.
    Failed { look: usize, errno: i32 },
    /// The child could not become the owner.
    Identity { errno: i32 },
}

/// Reads the process's reports from `pipe` until all `count` looks passed, one failed, or the
/// pipe closed; `passed` counts the looks reported passed so far (the one under way at a
/// deadline is the next).
async fn read_reports(pipe: OwnedFd, count: usize, passed: &mut usize) -> io::Result<Report> {
    // SAFETY: the AsyncFd owns the descriptor, open while it is registered.
    let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(pipe, tokio::io::Interest::READABLE) }?;
    let mut record = [0u8; 8];
    let mut got = 0;
    loop {
        let mut ready = afd.readable().await?;
        // SAFETY: reads into the rest of a local buffer.
        let n = unsafe { libc::read(afd.get_ref().as_raw_fd(), record[got..].as_mut_ptr().cast(), record.len() - got) };
        match n {
            0 => return Ok(Report::Silent),
            n if n > 0 => {
                got += n as usize;
                if got < record.len() {
                    continue;
                }
                got = 0;
                match path_looks::read_report(&record) {
                    (path_looks::IDENTITY, errno) => return Ok(Report::Identity { errno }),
                    (look, 0) if look as usize + 1 == count => {
                        *passed = count;
                        return Ok(Report::Passed);
                    }
                    (look, 0) => *passed = look as usize + 1,
                    (look, errno) => return Ok(Report::Failed { look: look as usize, errno }),
                }
            }
            _ => {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => ready.clear_ready(),
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(e),
                }
            }
        }
    }
}
