//! Advisory file locks (`flock`), used so that only one daemon runs per state directory and
//! only one command starts it.

use std::fs::File;
use std::os::unix::io::AsRawFd;

/// An exclusive `flock` held until dropped.
pub struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    /// Blocks until the lock is held.
    pub fn acquire(file: &'a File) -> std::io::Result<Self> {
        // SAFETY: the descriptor is valid for the lifetime of `file`.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(FileLock { file })
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Takes an exclusive lock without blocking; `Ok(false)` when another process holds it.
/// The lock lives as long as the file stays open.
pub fn try_lock_forever(file: &File) -> std::io::Result<bool> {
    // SAFETY: the descriptor is valid for the lifetime of `file`.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}
