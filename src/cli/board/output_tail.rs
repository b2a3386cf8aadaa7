//! The end of a job's output file, as its page shows it to the job's owner. The file is where
//! the job put it, often in a directory others can write to, so it is read with care: a
//! symbolic link put in its place is not followed (it could name any file the caller may
//! read), a pipe or a device is not read (a FIFO with no writer would hold the board's thread
//! for as long as the page is open, and each view would take one more), and a regular file
//! owned by someone else is not shown as the job's output. The open itself cannot wait:
//! `O_NONBLOCK` makes opening a FIFO return at once, and the checks are made on what was
//! opened (`fstat`), not on the name, which could change in between.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// How much of the end of an output file the page shows, bytes.
pub const OUTPUT_TAIL: u64 = 16 << 10;

/// Why the output is not shown; the page says it as written here.
#[derive(Debug, Error)]
pub enum TailError {
    /// The name is a symbolic link (`O_NOFOLLOW` refused it).
    #[error("{0}: a symbolic link, which the board does not follow")]
    SymbolicLink(PathBuf),
    /// It is a FIFO, a socket, a device or a directory.
    #[error("{0}: not a regular file")]
    NotRegular(PathBuf),
    /// It is a regular file of another user's.
    #[error("{path}: owned by {owner}, not by you")]
    NotYours {
        /// The file.
        path: PathBuf,
        /// Its owner's name.
        owner: String,
    },
    /// It could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// The last [`OUTPUT_TAIL`] bytes of `path`, from a line's start, as text; only when `path`
/// is a regular file owned by `owner`, the caller.
pub fn read(path: &Path, owner: u32) -> Result<String, TailError> {
    use crate::fs_at::OpenError;
    let io = |source: std::io::Error| TailError::Io { path: path.to_path_buf(), source };
    let (mut file, len) = crate::fs_at::open_regular(path, Some(owner)).map_err(|e| match e {
        OpenError::SymbolicLink => TailError::SymbolicLink(path.to_path_buf()),
        OpenError::NotRegular => TailError::NotRegular(path.to_path_buf()),
        OpenError::WrongOwner { found, .. } => {
            TailError::NotYours { path: path.to_path_buf(), owner: crate::identity::user_name(found) }
        }
        OpenError::Io(e) => io(e),
    })?;
    let from = len.saturating_sub(OUTPUT_TAIL);
    file.seek(SeekFrom::Start(from)).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(OUTPUT_TAIL).read_to_end(&mut bytes).map_err(io)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(match (from, text.find('\n')) {
        (1.., Some(cut)) => text[cut + 1..].to_string(),
        _ => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn me() -> u32 {
        crate::identity::uid()
    }

    #[test]
    fn the_tail_starts_at_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "short\n").unwrap();
        assert_eq!(read(&path, me()).unwrap(), "short\n");
        let long: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &long).unwrap();
        let t = read(&path, me()).unwrap();
        assert!(t.starts_with("line ") && t.ends_with("line 4999\n"), "{}", &t[..20]);
        assert!(t.len() as u64 <= OUTPUT_TAIL);
    }

    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other");
        std::fs::write(&other, "not the output\n").unwrap();
        let path = dir.path().join("out");
        std::os::unix::fs::symlink(&other, &path).unwrap();
        assert!(matches!(read(&path, me()), Err(TailError::SymbolicLink(_))));
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: name is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        assert!(matches!(read(&fifo, me()), Err(TailError::NotRegular(_))));
        assert!(started.elapsed() < Duration::from_secs(1), "opening a FIFO waited");
        assert!(matches!(read(Path::new("/dev/null"), 0), Err(TailError::NotRegular(_))));
    }

    #[test]
    fn another_users_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, "text\n").unwrap();
        let err = read(&path, me().wrapping_add(1)).unwrap_err();
        assert!(
            err.to_string().ends_with(&format!("owned by {}, not by you", crate::identity::user_name(me()))),
            "{err}"
        );
    }
}
