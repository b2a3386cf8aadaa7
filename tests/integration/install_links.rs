//! `slurmlet install-links DIR` makes working argv[0] links to the binary.

use std::path::{Path, PathBuf};
use std::process::Command;

fn exe() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_slurmlet")).unwrap()
}

fn install(dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_slurmlet")).arg("install-links").args(extra).arg(dir).output().unwrap()
}

#[test]
fn links_point_at_the_binary_and_dispatch_on_argv0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = install(tmp.path(), &[]);
    assert!(out.status.success(), "install-links failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), crate::common::commands().count(), "one line per link expected:\n{stdout}");
    for name in crate::common::commands() {
        let link = tmp.path().join(name);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "{name} is not a symlink");
        assert_eq!(std::fs::read_link(&link).unwrap(), exe(), "{name} points elsewhere");
    }
    let help = Command::new(tmp.path().join("sbatch")).arg("--help").output().unwrap();
    assert!(help.status.success(), "sbatch --help via the link failed: {help:?}");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("sbatch"), "unexpected help text:\n{text}");
    // slurmlet itself, which the shell completions call, answers through its link.
    let version = Command::new(tmp.path().join("slurmlet")).arg("--version").output().unwrap();
    assert!(version.status.success(), "slurmlet --version via the link failed: {version:?}");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("slurmlet "), "{version:?}");

    // Running it again changes nothing and still succeeds.
    let again = install(tmp.path(), &[]);
    assert!(again.status.success());
}

#[test]
fn replaces_stale_links_but_not_files_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/nonexistent/elsewhere", tmp.path().join("squeue")).unwrap();
    std::fs::write(tmp.path().join("sinfo"), "#!/bin/sh\necho mine\n").unwrap();

    let out = install(tmp.path(), &[]);
    assert!(!out.status.success(), "a regular file must not be overwritten");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sinfo"), "the error must name the file: {stderr}");
    assert_eq!(std::fs::read_to_string(tmp.path().join("sinfo")).unwrap(), "#!/bin/sh\necho mine\n");
    assert_eq!(std::fs::read_link(tmp.path().join("squeue")).unwrap(), exe(), "stale link not replaced");
    assert_eq!(std::fs::read_link(tmp.path().join("sbatch")).unwrap(), exe());

    let forced = install(tmp.path(), &["--force"]);
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert_eq!(std::fs::read_link(tmp.path().join("sinfo")).unwrap(), exe());
}

#[test]
fn the_binary_already_in_the_directory_is_left_as_it_is() {
    // A hard link is the binary installed there, without copying it (beside it, so on its
    // file system).
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let copy = tmp.path().join("slurmlet");
    std::fs::hard_link(exe(), &copy).unwrap();
    let out = Command::new(&copy).arg("install-links").arg(tmp.path()).output().unwrap();
    assert!(out.status.success(), "install-links failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("{} is this executable", copy.display())), "{stdout}");
    assert!(!std::fs::symlink_metadata(&copy).unwrap().file_type().is_symlink(), "the binary was replaced");
    // Named by its file name alone, so that the directory can move (a tarball, a package).
    assert_eq!(std::fs::read_link(tmp.path().join("squeue")).unwrap(), std::path::PathBuf::from("slurmlet"));
    let moved = tmp.path().with_extension("moved");
    std::fs::rename(tmp.path(), &moved).unwrap();
    let out = Command::new(moved.join("sinfo")).arg("--version").output().unwrap();
    std::fs::rename(&moved, tmp.path()).unwrap();
    assert!(out.status.success(), "sinfo in the moved directory: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("slurm "), "{}", String::from_utf8_lossy(&out.stdout));
}
