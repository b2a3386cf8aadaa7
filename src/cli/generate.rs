//! `slurmlet generate [DIR]`: writes shell completions and man pages from the clap definitions,
//! and `docs/options.md` from the option table.
//!
//! The completions offer, besides, what the daemon knows (job ids, partitions, GRES, users,
//! node names) where a command takes them: see [`super::dynamic_completions`].
//!
//! The output depends only on the clap definitions in [`super::all_commands`], so the same
//! binary always produces the same bytes; `tests/integration/generated_files.rs` checks that the copies
//! committed under `completions/` and `man/` are current.

use clap::Parser;
use clap_complete::Shell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `slurmlet generate`'s options.
#[derive(Debug, Parser)]
#[command(
    about = "Write shell completions (completions/) and man pages (man/) for every command",
    disable_version_flag = true
)]
pub struct GenerateArgs {
    /// Directory to write completions/ and man/ into (default: the current directory)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The shells completions are written for, with the file name each one expects.
const SHELLS: &[(Shell, &str)] = &[(Shell::Bash, "bash"), (Shell::Zsh, "zsh"), (Shell::Fish, "fish")];

fn completion_file(shell: Shell, name: &str) -> String {
    match shell {
        Shell::Zsh => format!("_{name}"),
        Shell::Fish => format!("{name}.fish"),
        _ => name.to_string(),
    }
}

/// Every generated file as (path relative to the output directory, contents), in a fixed
/// order: completions for bash, zsh and fish, then the man pages.
pub fn render_all() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for &(shell, dir) in SHELLS {
        for cmd in super::all_commands() {
            let name = cmd.get_name().to_string();
            let mut cmd = cmd.bin_name(name.clone());
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, name.clone(), &mut buf);
            let buf = super::dynamic_completions::extend(shell, &cmd, buf);
            files.push((Path::new("completions").join(dir).join(completion_file(shell, &name)), buf));
        }
    }
    for cmd in super::all_commands() {
        let name = cmd.get_name().to_string();
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd.bin_name(name.clone()))
            .source(format!("slurmlet {}", env!("CARGO_PKG_VERSION")))
            .manual("slurmlet manual")
            .render(&mut buf)
            .expect("rendering into memory cannot fail");
        files.push((Path::new("man").join(format!("{name}.1")), buf));
    }
    files.push((PathBuf::from("docs/options.md"), crate::options::help::markdown().into_bytes()));
    files
}

/// Writes every file of [`render_all`] under `dir`, returning how many were written.
pub fn write_all(dir: &Path) -> std::io::Result<usize> {
    let files = render_all();
    for (rel, contents) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, contents)?;
    }
    Ok(files.len())
}

/// Runs the generator.
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match super::parse_args::<GenerateArgs>("slurmlet generate", args, 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    match write_all(&dir) {
        Ok(n) => {
            println!("wrote {n} files to {} and {}", dir.join("completions").display(), dir.join("man").display());
            0
        }
        Err(e) => {
            super::error("slurmlet generate", &format!("cannot write into {}: {e}", dir.display()));
            1
        }
    }
}
