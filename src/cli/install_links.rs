//! `slurmlet install-links [DIR]`: creates the `sbatch`, `squeue`, … symlinks, and `slurmlet`
//! itself (which the shell completions call), so that every command is on `PATH`.
//!
//! Each link points at this executable (canonicalized); the multicall binary then picks the
//! command from `argv[0]`. Where the executable already is `DIR/slurmlet` it is left as it is,
//! and the links name it by its file name alone (`sbatch -> slurmlet`), so that the directory
//! can be moved or packaged as it is (the release tarball and the Debian package are laid out
//! so).

use clap::Parser;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// `slurmlet install-links`'s options.
#[derive(Debug, Parser)]
#[command(
    about = "Create sbatch, srun, salloc, squeue, scancel, scontrol, sinfo, sacct, sstat, slurmletd and slurmlet symlinks to this binary",
    disable_version_flag = true
)]
pub struct InstallLinksArgs {
    /// Directory for the links (default: ~/.local/bin)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Also replace regular files of the same names
    #[arg(short = 'f', long)]
    pub force: bool,
}

/// Why a link could not be made.
#[derive(Debug, Error)]
pub enum LinkError {
    /// Something that is not a symlink is in the way.
    #[error("{} exists and is not a symlink; remove it or use --force", path.display())]
    Exists {
        /// The path in the way.
        path: PathBuf,
    },
    /// A directory is in the way; `--force` does not remove directories.
    #[error("{} is a directory", path.display())]
    IsDir {
        /// The directory.
        path: PathBuf,
    },
    /// The path is this executable itself.
    #[error("{} is this executable itself", path.display())]
    IsSelf {
        /// The path.
        path: PathBuf,
    },
    /// A file-system call failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

/// What [`link`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A new link was made.
    Created,
    /// A link (or, with `--force`, a file) pointing elsewhere was replaced.
    Replaced,
    /// The link already pointed at the target.
    Unchanged,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LinkError + '_ {
    move |source| LinkError::Io { path: path.to_path_buf(), source }
}

/// Makes `link` a symlink to `target`, replacing a symlink pointing elsewhere, and a regular
/// file only when `force` is set.
pub fn link(target: &Path, link: &Path, force: bool) -> Result<Outcome, LinkError> {
    let outcome = match std::fs::symlink_metadata(link) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Created,
        Err(e) => return Err(io(link)(e)),
        Ok(meta) if meta.file_type().is_symlink() => {
            if std::fs::read_link(link).map_err(io(link))? == target {
                return Ok(Outcome::Unchanged);
            }
            Outcome::Replaced
        }
        Ok(meta) if meta.is_dir() => return Err(LinkError::IsDir { path: link.to_path_buf() }),
        Ok(_) if !force => return Err(LinkError::Exists { path: link.to_path_buf() }),
        Ok(_) => {
            let pointed = link.parent().map_or_else(|| target.to_path_buf(), |dir| dir.join(target));
            if std::fs::canonicalize(link).ok() == std::fs::canonicalize(pointed).ok() {
                return Err(LinkError::IsSelf { path: link.to_path_buf() });
            }
            Outcome::Replaced
        }
    };
    if outcome == Outcome::Created {
        std::os::unix::fs::symlink(target, link).map_err(io(link))?;
        return Ok(outcome);
    }
    // Replace atomically: make the new link beside the old one, then rename it over.
    let name = link.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = link.with_file_name(format!(".{name}.slurmlet-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).map_err(io(&tmp))?;
    if let Err(e) = std::fs::rename(&tmp, link) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(link)(e));
    }
    Ok(outcome)
}

/// What the links in `dir` point at: the executable's file name where it lies in `dir`
/// itself, its absolute path otherwise.
pub fn link_target(exe: &Path, dir: &Path) -> PathBuf {
    let here = std::fs::canonicalize(dir).ok();
    match (exe.parent(), exe.file_name()) {
        (Some(parent), Some(name)) if here.as_deref() == Some(parent) => PathBuf::from(name),
        _ => exe.to_path_buf(),
    }
}

/// Runs install-links.
pub fn run(args: Vec<OsString>) -> i32 {
    const CMD: &str = "slurmlet install-links";
    let args = match super::parse_args::<InstallLinksArgs>(CMD, args, 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let dir = match args.dir.or_else(|| dirs::home_dir().map(|h| h.join(".local").join("bin"))) {
        Some(d) => d,
        None => {
            super::error(CMD, "cannot find the home directory; give DIR");
            return 1;
        }
    };
    let target = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(t) => t,
        Err(e) => {
            super::error(CMD, &format!("cannot find own executable: {e}"));
            return 1;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        super::error(CMD, &format!("cannot create {}: {e}", dir.display()));
        return 1;
    }
    let pointed = link_target(&target, &dir);
    let mut failed = false;
    for name in super::COMMANDS.iter().chain(std::iter::once(&"slurmlet")) {
        let path = dir.join(name);
        let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link && std::fs::canonicalize(&path).ok().as_deref() == Some(target.as_path()) {
            println!("{} is this executable", path.display());
            continue;
        }
        match link(&pointed, &path, args.force) {
            Ok(outcome) => {
                let note = match outcome {
                    Outcome::Created => "",
                    Outcome::Replaced => " (replaced)",
                    Outcome::Unchanged => " (already there)",
                };
                println!("{} -> {}{note}", path.display(), pointed.display());
            }
            Err(e) => {
                super::error(CMD, &e.to_string());
                failed = true;
            }
        }
    }
    if failed {
        1
    } else {
        0
    }
}
