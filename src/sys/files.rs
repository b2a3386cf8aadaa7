//! Files and directories: atomic writes, the umask (the process's and a thread's own), and
//! private directories.

use std::io;

/// Writes `data` to `path` atomically (a temporary file renamed over it), calls `published`
/// once the file is in place, and only then makes it durable (fsync of the file, then of its
/// directory). Whoever `published` tells may read the file at once; after a crash of the
/// machine before the fsyncs, the file may be missing or empty, as if the write had not
/// happened.
pub fn write_atomically(path: &std::path::Path, data: &[u8], published: impl FnOnce()) -> io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(data)?;
    std::fs::rename(&tmp, path)?;
    published();
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        match std::fs::File::open(dir) {
            Ok(d) => d.sync_all()?,
            // Whoever was told may have removed the directory already, which it does only
            // once it holds the data durably itself.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The process umask (read by setting and restoring it).
pub fn current_umask() -> u32 {
    // SAFETY: umask has no memory preconditions; the old mask is restored at once.
    unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask as u32
    }
}

/// Gives the calling thread a umask of its own, `mask`, and leaves every other thread's as
/// it was. Threads share one umask (with their directory) unless one unshares it
/// (`CLONE_FS`): a root daemon's private umask must not be what another user's files are
/// made with, nor may that user's umask reach the daemon's own files.
pub fn set_thread_umask(mask: u32) -> io::Result<()> {
    // SAFETY: unshare and umask have no memory preconditions; CLONE_FS affects this thread
    // alone.
    unsafe {
        if libc::unshare(libc::CLONE_FS) != 0 {
            return Err(io::Error::last_os_error());
        }
        libc::umask((mask & 0o777) as libc::mode_t);
    }
    Ok(())
}

/// Creates `dir` (and parents) with mode 0700 if it does not exist, and makes sure it is a
/// directory of this user's that nobody else may write: in a directory others may write
/// (`/tmp`), another user could have made it first, or put a link there, and would then see
/// or replace what goes in it (the daemon's socket, its start lock).
pub fn create_private_dir(dir: &std::path::Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let refused = |why: String| Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    if meta.file_type().is_symlink() {
        return refused(format!("{} is a symbolic link; remove it", dir.display()));
    }
    if !meta.is_dir() {
        return refused(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != me {
        return refused(format!(
            "{} belongs to {} (uid {}), not to this user; remove it",
            dir.display(),
            crate::identity::user_name(meta.uid()),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return refused(format!("{} may be written by others (mode {:04o})", dir.display(), meta.mode() & 0o7777));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_reader_removed_its_directory_once_published_was_still_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("job");
        std::fs::create_dir(&dir).unwrap();
        let mut seen = String::new();
        write_atomically(&dir.join("status"), b"done", || {
            seen = std::fs::read_to_string(dir.join("status")).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
        })
        .expect("the file was published, so the write succeeded");
        assert_eq!(seen, "done");
    }

    #[test]
    fn a_threads_own_umask_leaves_the_processs_alone() {
        let before = current_umask();
        let theirs = std::thread::spawn(|| {
            set_thread_umask(0o027).unwrap();
            current_umask()
        })
        .join()
        .unwrap();
        assert_eq!((theirs, current_umask()), (0o027, before));
    }
}
