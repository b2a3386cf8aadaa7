//! The files by which the daemon tells a job's supervisor something once for the job's run
//! (a shard job over its share, GPUs left idle): written whole or not at all, and never over
//! one that is there, so that a job is told once, by this daemon or by one before a restart.

use serde::{de::DeserializeOwned, Serialize};
use std::path::Path;

/// Puts `notice` at `path`, whole, unless a file is there: `Ok(false)` when one was.
pub fn write_once<T: Serialize>(path: &Path, notice: &T) -> std::io::Result<bool> {
    let tmp = path.with_extension("tmp");
    let named = |e: std::io::Error, p: &Path| std::io::Error::new(e.kind(), format!("{}: {e}", p.display()));
    std::fs::write(&tmp, serde_json::to_vec(notice).expect("notice serializes")).map_err(|e| named(e, &tmp))?;
    // A link is made whole or not at all, and never over a file that is there.
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(named(e, path)),
    }
}

/// The notice at `path`, if there is one that reads.
pub fn read<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}
