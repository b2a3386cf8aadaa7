//! The committed completions/ and man/ must match what `slurmlet generate` produces.

use std::path::Path;

#[test]
fn committed_completions_and_man_pages_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = slurmlet::cli::generate::render_all();
    assert!(!files.is_empty(), "render_all() produced nothing");
    let mut problems = Vec::new();
    for (rel, expected) in &files {
        match std::fs::read(root.join(rel)) {
            Ok(actual) if actual == *expected => {}
            Ok(_) => problems.push(format!("{} is stale", rel.display())),
            Err(e) => problems.push(format!("{} is missing ({e})", rel.display())),
        }
    }
    assert!(
        problems.is_empty(),
        "generated files are out of date:\n  {}\nrun `cargo run -- generate` in {} and commit the result",
        problems.join("\n  "),
        root.display()
    );
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(slurmlet::cli::generate::render_all(), slurmlet::cli::generate::render_all());
}

#[test]
fn every_command_has_completions_and_a_man_page() {
    let files = slurmlet::cli::generate::render_all();
    let paths: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    for name in slurmlet::cli::COMMANDS {
        for want in [
            format!("completions/bash/{name}"),
            format!("completions/zsh/_{name}"),
            format!("completions/fish/{name}.fish"),
            format!("man/{name}.1"),
        ] {
            assert!(paths.contains(&want), "{want} missing from {paths:?}");
        }
    }
}
