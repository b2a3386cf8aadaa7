//! Copies of the store kept beside it: the daemon's regular copy (`slurmlet.db.bak`, made a
//! little after each start, see [`write_backup`]) and the copy of an older store made before
//! it is migrated ([`super::schema::pre_migration_copy`]). Both are written by [`copy_to`]:
//! whole or not at all, never a stray temporary file.

use super::StoreError;
use rusqlite::{params, Connection};
use std::path::{Path, PathBuf};

/// Where a copy of the store at `path` is kept: `slurmlet.db.bak`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".bak");
    name.into()
}

/// Writes a consistent copy of the store at `path` to [`backup_path`]. A store that cannot be
/// copied whole (one damaged since the daemon started on it) leaves the copy before as it was.
pub fn write_backup(path: &Path) -> Result<(), StoreError> {
    let conn = Connection::open(path).map_err(|source| StoreError::Sql { path: path.display().to_string(), source })?;
    copy_to(&conn, path, &backup_path(path))
}

/// Writes a consistent copy of the store at `path`, open on `conn`, to `copy`: into
/// `copy` + `.tmp` (SQLite's `VACUUM INTO`), then renamed over `copy`, so that a crash or a
/// failure midway leaves the earlier `copy` whole. A failure removes the temporary file,
/// which `VACUUM INTO` leaves behind, empty or in part, when it cannot read the store.
pub fn copy_to(conn: &Connection, path: &Path, copy: &Path) -> Result<(), StoreError> {
    let mut tmp = copy.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let written = conn
        .execute("VACUUM INTO ?1", params![tmp.to_string_lossy()])
        .map_err(|source| StoreError::Sql { path: path.display().to_string(), source })
        .and_then(|_| {
            std::fs::rename(&tmp, copy)
                .map_err(|source| StoreError::Backup { path: copy.display().to_string(), source })
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_copy_that_fails_leaves_the_one_before_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
        write_backup(&path).unwrap();
        let before = std::fs::read(backup_path(&path)).unwrap();
        // A copy into a directory that does not exist fails in VACUUM INTO; one over a
        // directory fails in the rename, after the temporary file is written.
        let missing = dir.path().join("gone").join("copy.db");
        assert!(copy_to(&conn, &path, &missing).is_err());
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), "").unwrap();
        assert!(matches!(copy_to(&conn, &path, &blocked), Err(StoreError::Backup { .. })));
        assert_eq!(files(dir.path()), ["blocked", "slurmlet.db", "slurmlet.db.bak"]);
        assert_eq!(std::fs::read(backup_path(&path)).unwrap(), before);
    }
}
