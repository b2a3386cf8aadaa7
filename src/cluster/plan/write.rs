//! Writing a plan into its directory, and the secrets it keeps from an earlier plan there:
//! planning again must not change munge's key or the database's password under a running
//! cluster.

use super::model::{Plan, Secrets};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The size of a munge key `mungekey` makes.
pub const MUNGE_KEY_BYTES: usize = 1024;

/// The size of the JWT key: Slurm's guide makes it of 32 random bytes (HS256).
pub const JWT_KEY_BYTES: usize = 32;

/// A plan that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

fn random(n: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The secrets of the plan in `dir` when it has them, else new ones.
pub fn secrets(dir: &Path) -> Result<Secrets, WriteError> {
    let kept_or_new = |name: &str, size: usize| {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(key) if key.len() >= 32 && key.len() <= 1 << 20 => Ok(key),
            _ => random(size).map_err(|source| WriteError { path, source }),
        }
    };
    let munge_key = kept_or_new("munge.key", MUNGE_KEY_BYTES)?;
    let jwt_key = kept_or_new(super::JWT_KEY_FILE, JWT_KEY_BYTES)?;
    let dbd = std::fs::read_to_string(dir.join("slurmdbd.conf")).unwrap_or_default();
    let kept = dbd.lines().find_map(|l| l.strip_prefix("StoragePass=")).filter(|p| !p.is_empty()).map(String::from);
    let db_password = match kept {
        Some(p) => p,
        None => {
            let bytes = random(24).map_err(|source| WriteError { path: "/dev/urandom".into(), source })?;
            bytes
                .iter()
                .map(|b| char::from(b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"[*b as usize % 57]))
                .collect()
        }
    };
    Ok(Secrets { munge_key, db_password, jwt_key })
}

/// Writes `plan`'s files into `dir` (made when missing), each replaced whole.
pub fn write(plan: &Plan, dir: &Path) -> Result<(), WriteError> {
    for file in &plan.files {
        let path = dir.join(file.path);
        let at = |source| WriteError { path: path.clone(), source };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(at)?;
        }
        let temp = path.with_extension("planning");
        let _ = std::fs::remove_file(&temp);
        std::fs::write(&temp, &file.contents).map_err(at)?;
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(file.mode)).map_err(at)?;
        std::fs::rename(&temp, &path).map_err(at)?;
    }
    Ok(())
}
