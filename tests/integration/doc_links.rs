//! Every relative link in README.md and docs/*.md leads somewhere: the file exists, and a
//! `#anchor` names a heading of the target file, slugged as GitHub slugs headings. Absolute
//! `http(s)` links are not checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The Markdown files whose links are checked: README.md and every `docs/*.md`.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The lines of `text` that are prose, with their line numbers: those inside fenced code blocks
/// are dropped, and inline code spans are blanked out, so that no link is read from code.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_code = false;
        lines.push((
            index + 1,
            line.chars()
                .map(|c| {
                    if c == '`' {
                        in_code = !in_code;
                    }
                    if in_code || c == '`' {
                        ' '
                    } else {
                        c
                    }
                })
                .collect(),
        ));
    }
    lines
}

/// The targets of the inline links (`[text](target)`) on one line.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        // A title (`[x](path "title")`) follows the target after a space.
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.to_string());
        rest = &after[end..];
    }
    targets
}

/// A heading's anchor as GitHub makes it: the heading's text (a link reduced to its text),
/// lowercased, every character but letters, digits, spaces, `-` and `_` removed, and spaces
/// turned into `-`.
fn github_slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` reads as `text`.
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else { break };
        let Some(close) = rest[open + mid..].find(')') else { break };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings; a repeated one gets GitHub's `-1`, `-2`, ….
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if in_fence || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug = github_slug(line[hashes..].trim_end_matches('#'));
        let n = seen.entry(slug.clone()).or_insert(0);
        anchors.push(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    anchors
}

/// What is wrong with one link from `from`, if anything.
fn check_link(from: &Path, target: &str) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() { from.to_path_buf() } else { from.parent().unwrap().join(path) };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => return Some(format!("#{anchor} points into {}, which cannot be read: {e}", file.display())),
    };
    let known = anchors(&text);
    if known.iter().any(|a| a == anchor) {
        None
    } else {
        Some(format!("{} has no heading #{anchor} (its anchors: {})", file.display(), known.join(", ")))
    }
}

#[test]
fn every_relative_link_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        for (number, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                if let Some(problem) = check_link(&file, &target) {
                    let name = file.strip_prefix(root).unwrap_or(&file).display();
                    problems.push(format!("{name}: link ({target}) on line {number}: {problem}"));
                }
            }
        }
    }
    assert!(checked > 0, "no relative link found in README.md and docs/*.md: the link reader is broken");
    assert!(problems.is_empty(), "broken links:\n  {}", problems.join("\n  "));
}

#[test]
fn every_docs_page_is_linked_from_the_readme_or_another_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    let mut linked = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in prose_lines(&text).iter().flat_map(|(_, l)| link_targets(l)) {
            let path = target.split('#').next().unwrap_or("");
            if !path.is_empty() && !path.contains("://") {
                if let Ok(p) = file.parent().unwrap().join(path).canonicalize() {
                    if p != file.canonicalize().unwrap() {
                        linked.push(p);
                    }
                }
            }
        }
    }
    let orphans: Vec<String> = files[1..]
        .iter()
        .filter(|f| !linked.contains(&f.canonicalize().unwrap()))
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(orphans.is_empty(), "docs pages no other page links to: {}", orphans.join(", "));
}

#[test]
fn slugs_follow_githubs_rules() {
    assert_eq!(github_slug("REST over TCP"), "rest-over-tcp");
    assert_eq!(github_slug("The real-Slurm differential suite"), "the-real-slurm-differential-suite");
    assert_eq!(github_slug("Differences from Slurm: `--time`, too!"), "differences-from-slurm---time-too");
    assert_eq!(github_slug("snake_case & [a link](x.md)"), "snake_case--a-link");
    assert_eq!(anchors("# A\n```\n# not a heading\n```\n## A\n#nope\n"), vec!["a", "a-1"]);
}

#[test]
fn links_are_read_from_prose_only() {
    let lines = prose_lines("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](d.md#x \"title\")");
    let targets: Vec<String> = lines.iter().flat_map(|(_, l)| link_targets(l)).collect();
    assert_eq!(targets, vec!["a.md", "d.md#x"]);
}
