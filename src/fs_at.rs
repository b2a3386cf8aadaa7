//! Files reached through an open directory, never through a path a user could change under
//! the caller. The system daemon is root; where a directory belongs to a user (an MPS
//! server's pipe directory, say), a path into it may name a symbolic link, a FIFO or a huge
//! file by the time root uses it. Opening the directory once (`O_NOFOLLOW`) and acting
//! relative to that descriptor (`openat`, `mkdirat`, `fchown`, `fstatat` without following
//! links) leaves the user nothing to swap.

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// An open directory.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

/// Why a file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// It could not be opened (missing, …).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Its name is a symbolic link, which is not followed.
    #[error("a symbolic link, which is not followed")]
    SymbolicLink,
    /// It is not a regular file (a FIFO, a socket, a device, a directory).
    #[error("not a regular file")]
    NotRegular,
    /// It belongs to someone else than it should.
    #[error("owned by uid {found}, not uid {expected}")]
    WrongOwner {
        /// Its owner.
        found: u32,
        /// Whom it should belong to.
        expected: u32,
    },
}

/// Why a small file was not read.
#[derive(Debug, thiserror::Error)]
pub enum SmallFileError {
    /// It was not opened.
    #[error("{0}")]
    Open(#[from] OpenError),
    /// It could not be read.
    #[error("{0}")]
    Read(#[from] io::Error),
    /// It holds more than is read.
    #[error("larger than {0} bytes")]
    TooLarge(u64),
}

impl Dir {
    /// Opens directory `path`; its last component may not be a symbolic link.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = c_path(path.as_os_str().as_bytes())?;
        // SAFETY: `c` is a valid C string; open returns a new descriptor or -1.
        let fd = unsafe { libc::open(c.as_ptr(), DIR_FLAGS) };
        Dir::from_result(fd)
    }

    /// Opens directory `name` inside this one; it may not be a symbolic link.
    pub fn open_child(&self, name: &str) -> io::Result<Dir> {
        let c = c_name(name)?;
        // SAFETY: `c` is a valid C string and the descriptor is open; openat returns a new
        // descriptor or -1.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), DIR_FLAGS) };
        Dir::from_result(fd)
    }

    /// Makes directory `name` inside this one, with `mode` (less the umask).
    pub fn make_child(&self, name: &str, mode: u32) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: `c` is a valid C string and the descriptor is open.
        if unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Gives this directory to `uid`:`gid`.
    pub fn chown(&self, uid: u32, gid: u32) -> io::Result<()> {
        // SAFETY: fchown on an open descriptor has no memory preconditions.
        if unsafe { libc::fchown(self.fd.as_raw_fd(), uid, gid) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Sets this directory's permission bits to `mode`.
    pub fn chmod(&self, mode: u32) -> io::Result<()> {
        // SAFETY: fchmod on an open descriptor has no memory preconditions.
        if unsafe { libc::fchmod(self.fd.as_raw_fd(), mode as libc::mode_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// This directory's owner and permission bits.
    pub fn owner_and_mode(&self) -> io::Result<(u32, u32)> {
        let st = fstat(self.fd.as_raw_fd())?;
        Ok((st.st_uid, st.st_mode & 0o7777))
    }

    /// Whether this directory holds an entry `name`, of any kind; a symbolic link is not
    /// followed.
    pub fn has_entry(&self, name: &str) -> bool {
        let Ok(c) = c_name(name) else { return false };
        // SAFETY: an all-zero stat is a valid value for fstatat to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a valid C string, the descriptor is open and `st` is writable.
        unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 }
    }

    /// The contents of file `name` in this directory, read only if it is a regular file (not
    /// a symbolic link, FIFO or device: opening never blocks, nothing is followed), owned by
    /// `owner` when one is given, and of at most `max` bytes.
    pub fn read_small_file(&self, name: &str, owner: Option<u32>, max: u64) -> Result<Vec<u8>, SmallFileError> {
        let name = c_name(name).map_err(OpenError::Io)?;
        let (file, size) = open_regular_at(self.fd.as_raw_fd(), &name, owner)?;
        let mut text = Vec::new();
        // One byte past the bound tells a file that grew since the fstat.
        file.take(max + 1).read_to_end(&mut text)?;
        if size > max || text.len() as u64 > max {
            return Err(SmallFileError::TooLarge(max));
        }
        Ok(text)
    }

    fn from_result(fd: libc::c_int) -> io::Result<Dir> {
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just returned to us and is owned by nobody else.
        Ok(Dir { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }
}

/// Opens `path` for reading when it is a regular file, owned by `owner` when one is given,
/// and returns it with its size. Nothing is followed or waited on: a symbolic link in its
/// place is refused, opening a FIFO returns at once (and is then refused), and the checks
/// are made on what was opened, not on the name, which could change in between.
pub fn open_regular(path: &Path, owner: Option<u32>) -> Result<(std::fs::File, u64), OpenError> {
    open_regular_at(libc::AT_FDCWD, &c_path(path.as_os_str().as_bytes())?, owner)
}

/// [`open_regular`] of `name` relative to directory descriptor `dir`.
fn open_regular_at(
    dir: libc::c_int,
    name: &std::ffi::CStr,
    owner: Option<u32>,
) -> Result<(std::fs::File, u64), OpenError> {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: `name` is a valid C string and `dir` an open descriptor or AT_FDCWD.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::ELOOP) { OpenError::SymbolicLink } else { e.into() });
    }
    // SAFETY: the descriptor was just returned to us and is owned by nobody else.
    let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let st = fstat(file.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(OpenError::NotRegular);
    }
    if let Some(expected) = owner.filter(|&o| o != st.st_uid) {
        return Err(OpenError::WrongOwner { found: st.st_uid, expected });
    }
    Ok((file, st.st_size as u64))
}

/// How directories are opened: read-only, not through a final symbolic link, and closed in
/// the programs the daemon starts.
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

fn fstat(fd: libc::c_int) -> io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid value for fstat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `st` is writable.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn c_path(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// A single entry name: no `/`, not `.` or `..`, so that it stays inside its directory.
fn c_name(name: &str) -> io::Result<CString> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{name:?} is not a name inside a directory")));
    }
    c_path(name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_read_only_when_regular_small_and_not_links() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("pid"), "4242\n").unwrap();
        assert_eq!(dir.read_small_file("pid", None, 32).unwrap(), b"4242\n");
        let me = crate::identity::uid();
        assert!(matches!(
            dir.read_small_file("pid", Some(me + 1), 32),
            Err(SmallFileError::Open(OpenError::WrongOwner { .. }))
        ));
        std::fs::write(tmp.path().join("big"), vec![b'1'; 100]).unwrap();
        assert!(matches!(dir.read_small_file("big", None, 32), Err(SmallFileError::TooLarge(32))));
        std::os::unix::fs::symlink(tmp.path().join("pid"), tmp.path().join("link")).unwrap();
        assert!(
            matches!(dir.read_small_file("link", None, 32), Err(SmallFileError::Open(OpenError::SymbolicLink))),
            "a link is not followed"
        );
        let fifo = CString::new(tmp.path().join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let begun = std::time::Instant::now();
        assert!(matches!(dir.read_small_file("fifo", None, 32), Err(SmallFileError::Open(OpenError::NotRegular))));
        assert!(begun.elapsed() < std::time::Duration::from_secs(1), "opening a FIFO blocked");
        assert!(matches!(dir.read_small_file("../pid", None, 32), Err(SmallFileError::Open(OpenError::Io(_)))));
        assert!(dir.has_entry("link") && dir.has_entry("fifo") && !dir.has_entry("none"));
    }

    #[test]
    fn children_are_made_and_opened_but_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.make_child("sub", 0o700).unwrap();
        let sub = dir.open_child("sub").unwrap();
        sub.chmod(0o711).unwrap();
        assert_eq!(sub.owner_and_mode().unwrap(), (crate::identity::uid(), 0o711));
        std::os::unix::fs::symlink(tmp.path().join("sub"), tmp.path().join("link")).unwrap();
        assert!(dir.open_child("link").is_err());
        assert!(Dir::open(&tmp.path().join("link")).is_err());
    }
}
