//! Opening a job's or a step's standard input and output files (`--input`, `--output`,
//! `--error`) without ever waiting in `open(2)`.
//!
//! A FIFO makes `open` wait for its other end: for writing, until some process opens it for
//! reading; for reading, until one opens it for writing. The owner of the job names and
//! makes these files, so a supervisor that waited there would wait as long as the owner
//! likes: past `scancel` and the time limit, holding the job's resources. Here every file is
//! opened with `O_NONBLOCK`, which never waits (a FIFO without a reader answers `ENXIO` at
//! once), and the flag is then cleared, so that the job reads and writes as it would any
//! file. A FIFO whose other end is missing is reported as not ready ([`Ready::Waiting`]):
//! the caller tries again while it stays free to end the job (see [`super::opener`]), so a
//! reader or writer that comes later is still served, as slurmstepd serves it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The mode new output files are made with, less the job's umask (slurmstepd's).
const FILE_MODE: u32 = 0o666;

/// The mode missing directories of an output file are made with, less the job's umask
/// (slurmstepd's `mkdirpath`).
pub const DIR_MODE: u32 = 0o755;

/// A file opened, or a FIFO that waits for its other end.
#[derive(Debug)]
pub enum Ready {
    /// Opened, blocking, as the job uses it.
    Open(File),
    /// A FIFO without its other end; try again later.
    Waiting,
}

/// Makes the missing directories above `path`, as the caller (the job's owner) with its
/// umask.
pub fn make_parent_dirs(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(parent)
        }
        _ => Ok(()),
    }
}

/// Opens output file `path` (made if missing, its directories too; appended to or
/// truncated), or finds it a FIFO that no process has open for reading yet.
pub fn open_output(path: &Path, append: bool) -> io::Result<Ready> {
    make_parent_dirs(path)?;
    let opened = OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    match opened {
        Ok(file) => blocking(file),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) && is_fifo(path) => Ok(Ready::Waiting),
        Err(e) => Err(e),
    }
}

/// Opens input file `path`. A FIFO is ready once a writer has written to it or has come and
/// gone (before that, a read would see the end of input at once); until then it is kept in
/// `held`, open, so that a writer that opens it meanwhile finds a reader. Call again with
/// the same `held` until it is ready.
pub fn open_input(path: &Path, held: &mut Option<File>) -> io::Result<Ready> {
    let file = match held.take() {
        Some(file) => file,
        None => OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?,
    };
    if file.metadata()?.file_type().is_fifo() && !has_input(&file)? {
        *held = Some(file);
        return Ok(Ready::Waiting);
    }
    blocking(file)
}

/// Clears `O_NONBLOCK`: the job's reads and writes wait as they do on any file.
fn blocking(file: File) -> io::Result<Ready> {
    crate::sys::set_nonblocking(file.as_fd(), false)?;
    Ok(Ready::Open(file))
}

/// Whether `path` is a FIFO (following links, as `open` does).
fn is_fifo(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Whether a FIFO open for reading has data, or a writer that has closed it.
fn has_input(file: &File) -> io::Result<bool> {
    let mut fd = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: one valid pollfd; a zero timeout never waits.
        let n = unsafe { libc::poll(&mut fd, 1, 0) };
        if n >= 0 {
            return Ok(fd.revents != 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;

    fn mkfifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: name is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    }

    fn opened(r: io::Result<Ready>) -> File {
        match r.unwrap() {
            Ready::Open(f) => f,
            Ready::Waiting => panic!("not ready"),
        }
    }

    #[test]
    fn an_output_fifo_waits_for_a_reader_and_is_then_written_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out");
        mkfifo(&fifo);
        assert!(matches!(open_output(&fifo, false).unwrap(), Ready::Waiting));
        let mut reader = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        let mut out = opened(open_output(&fifo, false));
        out.write_all(b"hello").unwrap();
        // SAFETY: F_GETFL on an open descriptor.
        let flags = unsafe { libc::fcntl(out.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0, "the job's writes must wait, not fail");
        let mut got = [0u8; 5];
        reader.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
    }

    #[test]
    fn an_input_fifo_is_held_until_a_writer_writes_or_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("in");
        mkfifo(&fifo);
        let mut held = None;
        assert!(matches!(open_input(&fifo, &mut held).unwrap(), Ready::Waiting));
        assert!(held.is_some());
        // The held reader lets a writer open at once.
        let mut writer = OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        assert!(matches!(open_input(&fifo, &mut held).unwrap(), Ready::Waiting), "open but silent");
        writer.write_all(b"data").unwrap();
        let mut input = opened(open_input(&fifo, &mut held));
        assert!(held.is_none());
        let mut got = [0u8; 4];
        input.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"data");
    }

    #[test]
    fn files_and_their_directories_are_made_with_the_callers_umask() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b/out");
        let modes = std::thread::scope(|s| {
            s.spawn(|| {
                crate::sys::set_thread_umask(0o027).unwrap();
                opened(open_output(&out, false));
                let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
                (mode(&out), mode(out.parent().unwrap()))
            })
            .join()
            .unwrap()
        });
        assert_eq!(modes, (0o640, 0o750));
        assert!(matches!(open_input(&out, &mut None).unwrap(), Ready::Open(_)), "a regular file is ready");
    }
}
