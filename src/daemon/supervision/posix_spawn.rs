//! Starting a supervisor process with `posix_spawn`.
//!
//! glibc's `posix_spawn` starts the child with `clone(CLONE_VM | CLONE_VFORK)`: the child
//! borrows the daemon's memory until it execs, so the cost of a start does not grow with the
//! daemon's size or its thread count, as a `fork` would. Everything the supervisor needs
//! set up before it runs (a new session, SIGTERM blocked, stdin from /dev/null) is expressed
//! as spawn attributes and file actions, so no code runs in the child between clone and exec.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The descriptor number under which the supervisor gets the descriptor passed to it.
pub const PASSED_FD: libc::c_int = 3;

extern "C" {
    static environ: *const *mut libc::c_char;
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in argument"))
}

/// Attributes and file actions, destroyed on drop.
struct Setup {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl Drop for Setup {
    fn drop(&mut self) {
        // SAFETY: both were initialised by `Setup::new` and are destroyed once.
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.attr);
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
        }
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

impl Setup {
    /// A new session, SIGTERM blocked (a cancel arriving before the supervisor is ready
    /// stays pending), SIGPIPE back to its default (the daemon ignores it), stdin from
    /// /dev/null.
    fn new() -> io::Result<Box<Setup>> {
        // SAFETY: zeroed storage is only handed to the init functions, which fill it in.
        let mut s: Box<Setup> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: plain C calls on storage owned by `s`; the sets are initialised before use.
        unsafe {
            check(libc::posix_spawnattr_init(&mut s.attr))?;
            if let Err(e) = check(libc::posix_spawn_file_actions_init(&mut s.actions)) {
                libc::posix_spawnattr_destroy(&mut s.attr);
                // Nothing else to undo: do not run Drop on the half-made value.
                std::mem::forget(s);
                return Err(e);
            }
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            libc::sigaddset(&mut mask, libc::SIGTERM);
            check(libc::posix_spawnattr_setsigmask(&mut s.attr, &mask))?;
            let mut default: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut default);
            libc::sigaddset(&mut default, libc::SIGPIPE);
            check(libc::posix_spawnattr_setsigdefault(&mut s.attr, &default))?;
            let flags =
                libc::POSIX_SPAWN_SETSID as libc::c_int | libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
            check(libc::posix_spawnattr_setflags(&mut s.attr, flags as libc::c_short))?;
            check(libc::posix_spawn_file_actions_addopen(&mut s.actions, 0, c"/dev/null".as_ptr(), libc::O_RDONLY, 0))?;
        }
        Ok(s)
    }
}

/// Starts `exe` with `argv` (`argv[0]` first) in a new session, with SIGTERM blocked and
/// stdin from /dev/null; stdout and stderr are the daemon's, and `pass` become the child's
/// descriptors [`PASSED_FD`], [`PASSED_FD`]` + 1`, … (glibc clears their close-on-exec
/// flags). Returns the child's pid.
pub fn supervisor(exe: &Path, argv: &[&OsStr], pass: &[BorrowedFd]) -> io::Result<i32> {
    let path = cstring(exe.as_os_str().as_bytes())?;
    let args: Vec<CString> = argv.iter().map(|a| cstring(a.as_bytes())).collect::<io::Result<_>>()?;
    let mut ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr() as *mut libc::c_char).collect();
    ptrs.push(std::ptr::null_mut());
    let mut setup = Setup::new()?;
    for (i, fd) in pass.iter().enumerate() {
        // The daemon's own descriptors are far above these numbers, so no dup2 below
        // overwrites a descriptor a later one copies.
        debug_assert!(fd.as_raw_fd() >= PASSED_FD + pass.len() as libc::c_int);
        // SAFETY: the file actions were initialised by `Setup::new`.
        check(unsafe {
            libc::posix_spawn_file_actions_adddup2(&mut setup.actions, fd.as_raw_fd(), PASSED_FD + i as libc::c_int)
        })?;
    }
    let mut pid: libc::pid_t = 0;
    // SAFETY: the path, argv and environment are NUL-terminated and outlive the call;
    // posix_spawn does not keep them. `environ` is read while no thread changes it (the
    // daemon never sets variables after start).
    let rc = unsafe { libc::posix_spawn(&mut pid, path.as_ptr(), &setup.actions, &setup.attr, ptrs.as_ptr(), environ) };
    check(rc)?;
    Ok(pid)
}
