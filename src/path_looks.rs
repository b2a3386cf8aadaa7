//! Looks at paths a user named, made by a process that has become that user: the request
//! the daemon sends and the process that answers it (`slurmlet path-check`, or a child of
//! the supervisors' fork server, see [`crate::stepd::fork_server`]).
//!
//! The process reads the request from a descriptor (a memfd: a job array's paths can be
//! many), becomes the owner, makes each look in order and writes one report per look to a
//! pipe, stopping at the first that fails. It may wait forever in a look (a FUSE or NFS
//! mount that never answers); the daemon kills it at its deadline. It is single-threaded,
//! so it may do all this with the standard library.

use crate::identity::{Identity, IdentityError, RunAs};
use std::io::{self, Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The byte that names a path check in a fork server request.
pub const TAG: u8 = b'c';

/// The subcommand that answers a request when no fork server can (`slurmlet path-check
/// REQUESTFD REPORTFD`).
pub const SUBCOMMAND: &str = "path-check";

/// The name `ps` shows for the process.
const PROCESS_NAME: &std::ffi::CStr = c"slurmlet-check";

/// One look at a path, as its owner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Look {
    /// The path is a directory (links followed).
    Directory(PathBuf),
    /// The path is a directory, or is made one with its missing parents (mode 0755 less the
    /// umask, as slurmstepd makes an output file's directories).
    MadeDirectory(PathBuf),
    /// The path exists (links followed).
    Exists(PathBuf),
}

impl Look {
    /// The path looked at.
    pub fn path(&self) -> &Path {
        match self {
            Look::Directory(p) | Look::MadeDirectory(p) | Look::Exists(p) => p,
        }
    }

    fn kind(&self) -> u8 {
        match self {
            Look::Directory(_) => b'd',
            Look::MadeDirectory(_) => b'm',
            Look::Exists(_) => b'e',
        }
    }

    /// Makes the look; the errno of what failed.
    pub fn make(&self) -> Result<(), i32> {
        let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        match self {
            Look::Directory(p) => match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => Ok(()),
                Ok(_) => Err(libc::ENOTDIR),
                Err(e) => Err(errno(e)),
            },
            Look::MadeDirectory(p) if p.is_dir() => Ok(()),
            Look::MadeDirectory(p) => {
                use std::os::unix::fs::DirBuilderExt;
                let mode = crate::stepd::stream_files::DIR_MODE;
                std::fs::DirBuilder::new().recursive(true).mode(mode).create(p).map_err(errno)
            }
            Look::Exists(p) => std::fs::metadata(p).map(drop).map_err(errno),
        }
    }
}

/// Looks to make as a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Who to become first; `None`: the process's own user.
    pub owner: Option<RunAs>,
    /// The umask to make directories with (the submitter's); `None`: the process's own.
    pub umask: Option<u32>,
    /// The looks, in order.
    pub looks: Vec<Look>,
}

impl Request {
    /// The request's bytes: `UID GID` (or `- -`), a space, the umask in octal (or `-`) and
    /// a NUL, then each look's kind byte, path and a NUL (paths hold no NUL: they come from
    /// C strings or are refused before).
    pub fn encode(&self) -> Vec<u8> {
        let owner = self.owner.map_or_else(|| "- -".to_string(), |o| format!("{} {}", o.uid, o.gid));
        let umask = self.umask.map_or_else(|| "-".to_string(), |m| format!("{m:o}"));
        let mut out = format!("{owner} {umask}").into_bytes();
        out.push(0);
        for look in &self.looks {
            out.push(look.kind());
            out.extend_from_slice(look.path().as_os_str().as_bytes());
            out.push(0);
        }
        out
    }

    /// The request of `bytes`, if they are one.
    pub fn decode(bytes: &[u8]) -> Option<Request> {
        let mut parts = bytes.split(|&b| b == 0);
        let head: Vec<&str> = std::str::from_utf8(parts.next()?).ok()?.split(' ').collect();
        let [uid, gid, umask] = head[..] else { return None };
        let owner = match (uid, gid) {
            ("-", "-") => None,
            (uid, gid) => Some(RunAs { uid: uid.parse().ok()?, gid: gid.parse().ok()? }),
        };
        let umask = match umask {
            "-" => None,
            m => Some(u32::from_str_radix(m, 8).ok()?),
        };
        let mut looks = Vec::new();
        for part in parts.filter(|p| !p.is_empty()) {
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(&part[1..]));
            looks.push(match part[0] {
                b'd' => Look::Directory(path),
                b'm' => Look::MadeDirectory(path),
                b'e' => Look::Exists(path),
                _ => return None,
            });
        }
        Some(Request { owner, umask, looks })
    }
}

/// The index a report gives to a failed switch to the owner.
pub const IDENTITY: u32 = u32::MAX;

/// The errno an [`IDENTITY`] report gives when the owner has no passwd entry.
pub const NO_SUCH_USER: i32 = 0;

/// The bytes of a report: look `look` ([`IDENTITY`]: the switch to the owner) ended with
/// `errno` (0: it passed).
pub fn report(look: u32, errno: i32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&look.to_ne_bytes());
    out[4..].copy_from_slice(&errno.to_ne_bytes());
    out
}

/// The look and errno of a report's bytes.
pub fn read_report(bytes: &[u8; 8]) -> (u32, i32) {
    let look = u32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes"));
    let errno = i32::from_ne_bytes(bytes[4..].try_into().expect("4 bytes"));
    (look, errno)
}

/// `slurmlet path-check REQUESTFD REPORTFD`.
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    let mut fds = Vec::new();
    for a in args.iter().skip(1) {
        match a.to_str().and_then(|a| a.parse::<i32>().ok()) {
            // SAFETY: the daemon passes these descriptors to this process alone.
            Some(fd) if fd > 2 => fds.push(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }),
            _ => fds.clear(),
        }
    }
    if fds.len() != 2 {
        eprintln!("usage: slurmlet {SUBCOMMAND} REQUESTFD REPORTFD (started by the daemon)");
        return 2;
    }
    answer(fds)
}

/// Answers the request read from the first of `fds`, reporting to the second; the exit code.
pub fn answer(fds: Vec<OwnedFd>) -> i32 {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, PROCESS_NAME.as_ptr()) };
    let mut fds = fds.into_iter();
    let (Some(request), Some(report_to)) = (fds.next(), fds.next()) else { return 2 };
    let mut report_to = std::fs::File::from(report_to);
    let mut request = std::fs::File::from(request);
    let mut bytes = Vec::new();
    let read = request.rewind().and_then(|()| request.read_to_end(&mut bytes));
    let Some(request) = read.ok().and_then(|_| Request::decode(&bytes)) else { return 2 };
    if let Some(owner) = request.owner {
        let found = Identity::lookup(owner).map_err(|e| match e {
            IdentityError::NoSuchUser(_) => NO_SUCH_USER,
            _ => libc::EINVAL,
        });
        let became = found.and_then(|user| {
            // SAFETY: this process has one thread (a fork server's child, or a program just
            // started), so it may take on the user for good.
            unsafe { user.become_for_good() }
        });
        if let Err(errno) = became {
            let _ = report_to.write_all(&report(IDENTITY, errno));
            return 1;
        }
    }
    if let Some(umask) = request.umask {
        // SAFETY: umask has no memory preconditions; this process has one thread.
        unsafe { libc::umask(umask as libc::mode_t) };
    }
    for (i, look) in request.looks.iter().enumerate() {
        let errno = look.make().err().unwrap_or(0);
        if report_to.write_all(&report(i as u32, errno)).is_err() || errno != 0 {
            break;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_it_was_written() {
        let looks = vec![
            Look::Directory("/home/a b".into()),
            Look::MadeDirectory("/home/a/logs/ü".into()),
            Look::Exists("/in".into()),
        ];
        for (owner, umask) in [(None, None), (Some(RunAs { uid: 1000, gid: 100 }), Some(0o027))] {
            let request = Request { owner, umask, looks: looks.clone() };
            assert_eq!(Request::decode(&request.encode()), Some(request));
        }
        assert_eq!(Request::decode(b"x\0"), None);
        assert_eq!(Request::decode(b"-\0zpath\0"), None);
        assert_eq!(read_report(&report(IDENTITY, libc::EPERM)), (IDENTITY, libc::EPERM));
    }

    /// What [`answer`] reports for `looks`, made by this process's own user.
    fn answered(looks: Vec<Look>) -> Vec<(u32, i32)> {
        let request = Request { owner: None, umask: None, looks }.encode();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&request).unwrap();
        let (read_end, write_end) = crate::sys::pipe().unwrap();
        crate::sys::set_nonblocking(std::os::fd::AsFd::as_fd(&read_end), false).unwrap();
        assert_eq!(answer(vec![file.into(), write_end]), 0);
        let mut bytes = Vec::new();
        std::fs::File::from(read_end).read_to_end(&mut bytes).unwrap();
        bytes.chunks(8).map(|c| read_report(c.try_into().unwrap())).collect()
    }

    #[test]
    fn looks_are_made_in_order_until_one_fails_as_create_dir_all_makes_them() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let deep = tmp.path().join("a/b/c");
        let looks = vec![
            Look::Directory(tmp.path().into()),
            Look::MadeDirectory(deep.clone()),
            Look::MadeDirectory(deep.clone()),
            Look::Exists(file.clone()),
        ];
        assert_eq!(answered(looks), vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
        assert!(deep.is_dir());
        let never = tmp.path().join("never");
        let looks = vec![Look::Directory(file.clone()), Look::MadeDirectory(never.clone())];
        assert_eq!(answered(looks), vec![(0, libc::ENOTDIR)]);
        assert!(!never.exists(), "a look after the failed one was made");
        assert_eq!(answered(vec![Look::Exists(tmp.path().join("missing"))]), vec![(0, libc::ENOENT)]);
        assert_eq!(answered(vec![Look::MadeDirectory(file.join("x"))]), vec![(0, libc::ENOTDIR)]);
        assert_eq!(answered(vec![Look::MadeDirectory(file)]), vec![(0, libc::EEXIST)]);
    }
}
