//! No Rust source file under `src/` or `bench/` passes [`LIMIT`] lines: one that grows past it
//! is split into modules with one job each. The only files that may stay longer are the data
//! tables of [`DATA_TABLES`], each with the reason.
//!
//! The lists cannot rot: a listed file that no longer passes the limit, or no longer exists,
//! fails the test too, naming the entry to take out.

use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const LIMIT: usize = 600;

/// The folders whose `.rs` files are measured, from the package's root.
const MEASURED: &[&str] = &["src", "bench"];

/// Files that may pass the limit because they are data tables, and why: one table read
/// whole is clearer than the same rows spread over several files.
const DATA_TABLES: &[(&str, &str)] = &[(
    "src/options/table.rs",
    "the option table: one row per option of sbatch, srun and salloc, from which the command \
     lines, #SBATCH, the input variables, --help, the man pages and the completions are built",
)];

/// The package's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, as a path from the package's root with `/` between its parts.
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let relative = path.strip_prefix(root()).expect("under the package's root");
            let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into()).collect();
            out.push(parts.join("/"));
        }
    }
}

/// The number of lines of the file at `path` (from the package's root), as `wc -l` counts
/// them; `None` when it does not exist.
fn line_count(path: &str) -> Option<usize> {
    match std::fs::read(root().join(path)) {
        Ok(bytes) => Some(bytes.iter().filter(|&&b| b == b'\n').count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("cannot read {path}: {e}"),
    }
}

/// Whether `path` is in either list.
fn listed(path: &str) -> bool {
    DATA_TABLES.iter().any(|(table, _)| *table == path)
}

#[test]
fn no_source_file_passes_the_limit_unless_listed() {
    let mut files = Vec::new();
    for dir in MEASURED {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 100, "the walk found only {} files: {files:?}", files.len());
    let too_long: Vec<String> = files
        .iter()
        .filter(|path| !listed(path))
        .filter_map(|path| {
            let lines = line_count(path).expect("a file just listed");
            (lines > LIMIT).then(|| format!("{path}: {lines} lines"))
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "source files over {LIMIT} lines; split each into modules with one job each:\n  {}",
        too_long.join("\n  ")
    );
}

#[test]
fn every_listed_file_still_passes_the_limit() {
    let entries: Vec<(&str, &str)> = DATA_TABLES.iter().map(|(path, _)| (*path, "DATA_TABLES")).collect();
    let mut stale = Vec::new();
    for (i, &(path, list)) in entries.iter().enumerate() {
        match line_count(path) {
            None => stale.push(format!("{path} does not exist: take it out of {list}")),
            Some(lines) if lines <= LIMIT => {
                stale.push(format!("{path} has {lines} lines, within the limit: take it out of {list}"))
            }
            Some(_) => {}
        }
        if !MEASURED.iter().any(|dir| path.starts_with(&format!("{dir}/"))) {
            stale.push(format!("{path} is in {list} but outside {MEASURED:?}, which are measured"));
        }
        if entries[..i].iter().any(|(earlier, _)| *earlier == path) {
            stale.push(format!("{path} is listed twice"));
        }
    }
    assert!(stale.is_empty(), "the lists of files allowed past {LIMIT} lines are stale:\n  {}", stale.join("\n  "));
}
