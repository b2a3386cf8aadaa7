//! The layers only look down: `cli` and `daemon` use `api`, `options` and the other shared
//! low modules (`stepd`, `queue`, `format`, `config`, `lock`, …), and nothing below reaches
//! up. Every `.rs` file under `src/` is read, its `#[cfg(test)]` code and doc links included,
//! and each path it names through `crate::`, `super::` or `self::` is resolved to the
//! top-level module it reaches:
//!
//! - a low module (anything but `cli` and `daemon`) names neither `crate::cli` nor
//!   `crate::daemon`;
//! - `daemon` does not name `crate::cli`;
//! - `cli` does not name `crate::daemon`, but for the [`EXCEPTIONS`];
//! - inside `daemon`, each folder names only folders of a lower rank ([`DAEMON_RANKS`], drawn
//!   in `docs/development.md`), never one of its own rank or above;
//! - only `daemon/http/` (and the commands' own web servers under `cli/`) names `axum` or
//!   `hyper`: the rest of the daemon knows nothing of HTTP.

use std::path::{Path, PathBuf};

/// Where a layer may name a sibling it otherwise may not: the file, the path it may name
/// (and anything under it), and why.
const EXCEPTIONS: &[(&str, &[&str], &str)] = &[(
    "src/cli/daemon_cmd.rs",
    &["daemon", "run"],
    // The multicall binary is `slurmletd` too: its entry (`slurmletd`, `slurmlet daemon
    // run`) starts the daemon in its own process, and that one call is all the command
    // knows of it.
    "the `slurmletd` command starts the daemon",
)];

/// The daemon's folders (and top-level files), bottom to top: a folder names only those of a
/// lower rank. `mod.rs` of the daemon, which starts it all, stands above them all.
const DAEMON_RANKS: &[(&str, u32)] = &[
    // What the others talk about: records and values, nothing that acts.
    ("model", 0),
    ("fault", 0),
    // Drivers, knowing nothing of the daemon's state: the store, token signing, MPS, GPU use.
    ("store", 1),
    ("auth", 1),
    ("mps", 2),
    ("gpu_use", 2),
    // The processes the daemon starts.
    ("supervision", 3),
    // The state and its changes.
    ("scheduling", 4),
    // Projections of the state into the API's types.
    ("accounting", 5),
    ("views", 6),
    // The running daemon: effects applied, background tasks, held clients, submits.
    ("runtime", 7),
    // Listeners, authentication, routing and every handler.
    ("http", 8),
];

/// The rank of daemon folder (or file) `name`; `None` for one the table does not know.
fn daemon_rank(name: &str) -> Option<u32> {
    DAEMON_RANKS.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// The crates that speak HTTP, named only by the modules that serve or send it.
const HTTP_CRATES: &[&str] = &["axum", "hyper"];

/// Where a module may name [`HTTP_CRATES`]: the daemon's `http/`, and outside the daemon
/// anything but the daemon (the commands' board and the REST client have servers and
/// clients of their own).
fn may_speak_http(module: &[String]) -> bool {
    match module {
        [top, folder, ..] if top == "daemon" => folder == "http",
        [top] if top == "daemon" => false,
        _ => true,
    }
}

/// The layer a top-level module belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Cli,
    Daemon,
    Low,
}

fn layer(top: &str) -> Layer {
    match top {
        "cli" => Layer::Cli,
        "daemon" => Layer::Daemon,
        _ => Layer::Low,
    }
}

/// Whether a module of layer `from` may name top-level module `to`.
fn may_name(from: Layer, to: &str) -> bool {
    match (from, layer(to)) {
        (_, Layer::Low) => true,
        (Layer::Cli, Layer::Cli) | (Layer::Daemon, Layer::Daemon) => true,
        (Layer::Low, _) | (Layer::Daemon, Layer::Cli) | (Layer::Cli, Layer::Daemon) => false,
    }
}

/// One token of Rust source: an identifier or a punctuation mark, and its line.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

/// The tokens of `source`'s code and, apart, those of its doc comments (where intra-doc
/// links name paths): string, character and byte literals, and plain comments, are left out.
fn tokenize(source: &str) -> (Vec<Token>, Vec<Token>) {
    let chars: Vec<char> = source.chars().collect();
    let (mut code, mut docs) = (Vec::new(), Vec::new());
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            let end = (i..chars.len()).find(|&k| chars[k] == '\n').unwrap_or(chars.len());
            let text: String = chars[i..end].iter().collect();
            if text.starts_with("///") || text.starts_with("//!") {
                docs.extend(tokenize_doc(&text[3..], line));
            }
            i = end;
        } else if c == '/' && at(i + 1) == '*' {
            let doc = matches!(at(i + 2), '*' | '!') && at(i + 3) != '/';
            let (start, mut depth) = (line, 0);
            let mut k = i;
            loop {
                if k >= chars.len() {
                    break;
                } else if chars[k] == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if chars[k] == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[k] == '\n' {
                        line += 1;
                    }
                    k += 1;
                }
            }
            if doc {
                let text: String = chars[i..k].iter().collect();
                docs.extend(tokenize_doc(&text, start));
            }
            i = k;
        } else if let Some(end) = string_end(&chars, i) {
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            i = end;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), else a lifetime or label.
            if at(i + 1) == '\\' {
                i = (i + 2..chars.len()).find(|&k| chars[k] == '\'').map_or(chars.len(), |k| k + 1);
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            code.push(Token { text: chars[start..i].iter().collect(), line });
        } else if c == ':' && at(i + 1) == ':' {
            code.push(Token { text: "::".into(), line });
            i += 2;
        } else {
            code.push(Token { text: c.to_string(), line });
            i += 1;
        }
    }
    (code, docs)
}

/// Where the string literal starting at `i` ends (`"…"`, `b"…"`, `r#"…"#`, `br"…"`, `c"…"`),
/// or `None` when none starts there.
fn string_end(chars: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| chars.get(k).copied().unwrap_or('\0');
    // An identifier's own letters are not a prefix.
    if i > 0 && (at(i - 1).is_alphanumeric() || at(i - 1) == '_') {
        return None;
    }
    let mut k = i;
    if matches!(at(k), 'b' | 'c') {
        k += 1;
    }
    if at(k) == 'r' && matches!(at(k + 1), '"' | '#') {
        k += 1;
        let hashes = (k..).take_while(|&h| at(h) == '#').count();
        if at(k + hashes) != '"' {
            return None;
        }
        let mut e = k + hashes + 1;
        while e < chars.len() {
            if chars[e] == '"' && (1..=hashes).all(|h| at(e + h) == '#') {
                return Some(e + 1 + hashes);
            }
            e += 1;
        }
        return Some(chars.len());
    }
    if at(k) != '"' {
        return None;
    }
    let mut e = k + 1;
    while e < chars.len() {
        match chars[e] {
            '\\' => e += 2,
            '"' => return Some(e + 1),
            _ => e += 1,
        }
    }
    Some(chars.len())
}

/// The path tokens of a doc comment's text: identifiers and `::`, nothing else (prose has
/// apostrophes and unbalanced brackets).
fn tokenize_doc(text: &str, line: usize) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut line = line;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token { text: chars[start..i].iter().collect(), line });
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token { text: "::".into(), line });
            i += 2;
            continue;
        }
        if c == '\n' {
            line += 1;
        }
        out.push(Token { text: " ".into(), line });
        i += 1;
    }
    out
}

/// A path that reaches a top-level module: where it is named, and the path from the crate's
/// root (`["daemon", "run"]`).
#[derive(Debug, Clone, PartialEq)]
struct Reach {
    line: usize,
    path: Vec<String>,
}

/// Whether `t` is a name (an identifier or keyword), not punctuation.
fn is_ident(t: &Token) -> bool {
    t.text.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The top-level modules a group at the crate's root (`crate::{a::x, b}`, `tokens` from its
/// `{`) reaches: the first name of each of its items.
fn root_group_reaches(tokens: &[Token]) -> Vec<Reach> {
    let mut out = Vec::new();
    let mut level = 0;
    let mut first = true;
    for g in tokens {
        match g.text.as_str() {
            "{" => {
                level += 1;
                continue;
            }
            "}" => {
                level -= 1;
                if level == 0 {
                    break;
                }
                continue;
            }
            "," if level == 1 => {
                first = true;
                continue;
            }
            _ => {}
        }
        if level == 1 && first && is_ident(g) {
            out.push(Reach { line: g.line, path: vec![g.text.clone()] });
            first = false;
        } else if level == 1 && !is_ident(g) && g.text != "::" {
            first = false;
        }
    }
    out
}

/// Every path of `tokens` that reaches a top-level module, from module `module` (its path
/// from the crate's root). `tracks_mods`: whether `mod name { … }` blocks are followed (not
/// in doc tokens).
fn reaches(tokens: &[Token], module: &[String], tracks_mods: bool) -> Vec<Reach> {
    let mut out = Vec::new();
    // Inline modules: the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i].text;
        if tracks_mods {
            match t.as_str() {
                "{" => depth += 1,
                "}" => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                }
                "mod"
                    if tokens.get(i + 2).is_some_and(|b| b.text == "{") && tokens.get(i + 1).is_some_and(is_ident) =>
                {
                    inline.push((tokens[i + 1].text.clone(), depth));
                }
                _ => {}
            }
        }
        // A path starts at `crate`, `super` or `self` not itself after `::`.
        let starts = matches!(t.as_str(), "crate" | "super" | "self")
            && tokens.get(i + 1).is_some_and(|n| n.text == "::")
            && !(i > 0 && tokens[i - 1].text == "::");
        if !starts {
            i += 1;
            continue;
        }
        let mut here: Vec<String> = module.to_vec();
        here.extend(inline.iter().map(|(name, _)| name.clone()));
        let line = tokens[i].line;
        let mut k = i;
        // The prefix: `crate::`, `self::`, `super::super::`…
        loop {
            match tokens[k].text.as_str() {
                "crate" => here.clear(),
                "self" => {}
                "super" => {
                    here.pop();
                }
                _ => break,
            }
            if tokens.get(k + 1).is_some_and(|n| n.text == "::") {
                k += 2;
            } else {
                break;
            }
            if !tokens.get(k).is_some_and(|n| matches!(n.text.as_str(), "super" | "self")) {
                break;
            }
        }
        match tokens.get(k) {
            Some(next) if here.is_empty() && next.text == "{" => out.extend(root_group_reaches(&tokens[k..])),
            Some(next) if is_ident(next) => {
                let mut path = here;
                let mut p = k;
                while tokens.get(p).is_some_and(is_ident) {
                    path.push(tokens[p].text.clone());
                    if tokens.get(p + 1).is_some_and(|n| n.text == "::") {
                        p += 2;
                    } else {
                        break;
                    }
                }
                out.push(Reach { line, path });
            }
            _ => {
                if !here.is_empty() {
                    out.push(Reach { line, path: here });
                }
            }
        }
        i = k.max(i + 1);
    }
    out
}

/// The module path of a file under `src/` (`src/cli/squeue/mod.rs`: `cli::squeue`), or
/// `None` for the binaries' own crates.
fn module_of(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.first().map(String::as_str) == Some("bin") {
        return None;
    }
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?;
    if !matches!(stem, "mod" | "lib") {
        parts.push(stem.to_string());
    }
    Some(parts)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What `source`, the file `shown` of module `module`, names that its layer may not (and no
/// exception allows): one line per reach.
fn violations(shown: &str, module: &[String], source: &str, used: &mut Vec<usize>) -> Vec<String> {
    let Some(top) = module.first() else { return Vec::new() };
    let from = layer(top);
    let (code, docs) = tokenize(source);
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let own_rank = match module {
        [top, folder, ..] if top == "daemon" => daemon_rank(folder),
        _ => None,
    };
    if let ([top, folder, ..], None) = (module, own_rank) {
        if top == "daemon" {
            found.push(format!("{shown}:1: daemon/{folder} has no rank in DAEMON_RANKS: give it one"));
        }
    }
    for reach in reaches(&code, module, true).into_iter().chain(reaches(&docs, module, false)) {
        let Some(target) = reach.path.first() else { continue };
        let text = lines.get(reach.line - 1).map_or("", |l| l.trim());
        if let (Some(own), [top, folder, ..]) = (own_rank, reach.path.as_slice()) {
            let same_folder = module.get(1) == Some(folder);
            if top == "daemon" && !same_folder {
                match daemon_rank(folder) {
                    Some(rank) if rank < own => {}
                    Some(rank) => found.push(format!(
                        "{shown}:{}: daemon/{} (rank {own}) names daemon/{folder} (rank {rank}), not below it: {text}",
                        reach.line, module[1]
                    )),
                    None => found.push(format!(
                        "{shown}:{}: names daemon/{folder}, which has no rank in DAEMON_RANKS: {text}",
                        reach.line
                    )),
                }
            }
        }
        if may_name(from, target) {
            continue;
        }
        let allowed = EXCEPTIONS.iter().position(|(file, prefix, _)| {
            *file == shown
                && reach.path.len() >= prefix.len()
                && reach.path.iter().zip(prefix.iter()).all(|(a, b)| a == b)
        });
        if let Some(e) = allowed {
            used.push(e);
            continue;
        }
        found.push(format!("{shown}:{}: names crate::{}: {text}", reach.line, reach.path.join("::")));
    }
    if !may_speak_http(module) {
        for token in &code {
            if HTTP_CRATES.contains(&token.text.as_str()) {
                let text = lines.get(token.line - 1).map_or("", |l| l.trim());
                found.push(format!("{shown}:{}: names {} outside daemon/http/: {text}", token.line, token.text));
            }
        }
    }
    found
}

#[test]
fn no_module_names_a_layer_above_or_beside_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 50, "only {} files found under {}", files.len(), src.display());
    let mut problems = Vec::new();
    let mut used = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("under src");
        let Some(module) = module_of(relative) else { continue };
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let shown = format!("src/{}", relative.display());
        problems.extend(violations(&shown, &module, &source, &mut used));
    }
    assert!(
        problems.is_empty(),
        "modules reach up or across the layers (cli and daemon use the low modules; nothing \
         below names them, and neither names the other):\n  {}",
        problems.join("\n  ")
    );
    for (e, (file, prefix, why)) in EXCEPTIONS.iter().enumerate() {
        assert!(used.contains(&e), "{file} no longer names crate::{} ({why}): drop the exception", prefix.join("::"));
    }
}

/// The check itself: each way of naming a module is seen, and what is no path is not.
#[test]
fn every_form_of_naming_a_module_is_seen() {
    let api = |source: &str| {
        violations("src/api/x.rs", &["api".into(), "x".into()], source, &mut Vec::new())
            .into_iter()
            .map(|v| v.split(": ").next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(api("use crate::daemon::job::Job;"), ["src/api/x.rs:1"]);
    assert_eq!(api("fn f() {\n    let _ = crate::cli::squeue::run(vec![]);\n}"), ["src/api/x.rs:2"]);
    assert_eq!(api("use crate::{api::types, cli, options};"), ["src/api/x.rs:1"]);
    assert_eq!(api("use crate::{\n    daemon::{self, job},\n    options,\n};"), ["src/api/x.rs:2"]);
    assert_eq!(api("use super::super::daemon::job;"), ["src/api/x.rs:1"]);
    assert_eq!(api("mod tests {\n    use super::super::super::cli;\n}"), ["src/api/x.rs:2"]);
    assert_eq!(api("#[cfg(test)]\nmod tests {\n    fn t() { crate::daemon::run(); }\n}"), ["src/api/x.rs:3"]);
    assert_eq!(api("/// See [`crate::daemon::job::Job`].\nfn f() {}"), ["src/api/x.rs:1"]);
    // Not paths: strings, comments, other crates, the api's own modules, a sibling's `daemon`.
    assert!(api("const S: &str = \"crate::daemon\";").is_empty());
    assert!(api("const R: &str = r#\"crate::cli \"quoted\"\"#;\nconst C: char = '\"';").is_empty());
    assert!(api("// crate::daemon is above\nuse crate::options::daemon;").is_empty());
    assert!(api("use super::daemon;\nuse slurmlet::daemon;\nlet x: &'a str = daemon::x;").is_empty());
    assert!(api("/* crate::cli /* nested */ crate::daemon */ fn f() {}").is_empty());
    let daemon = |source: &str| {
        violations("src/daemon/http/x.rs", &["daemon".into(), "http".into(), "x".into()], source, &mut Vec::new())
    };
    assert_eq!(daemon("use crate::cli::squeue::QueueJob;").len(), 1);
    assert!(daemon("use crate::daemon::model::job::Job;\nuse crate::queue::QueueJob;").is_empty());
    // Inside the daemon: lower folders only, wherever the path starts.
    let at = |folder: &str, source: &str| {
        let module = ["daemon".to_string(), folder.to_string(), "x".to_string()];
        violations(&format!("src/daemon/{folder}/x.rs"), &module, source, &mut Vec::new())
    };
    assert!(at("scheduling", "use crate::daemon::model::job::Job;\nuse super::core::Core;").is_empty());
    assert!(at("http", "use crate::daemon::runtime::Daemon;\nuse axum::Router;").is_empty());
    assert_eq!(at("scheduling", "use crate::daemon::http::caller::Caller;").len(), 1);
    assert_eq!(at("scheduling", "use super::super::runtime::Daemon;").len(), 1);
    assert_eq!(at("views", "use crate::daemon::accounting::history;\nuse super::super::views::info;").len(), 0);
    assert_eq!(at("accounting", "use crate::daemon::views::info;").len(), 1);
    assert_eq!(at("store", "/// See [`crate::daemon::scheduling::core::Core`].\nfn f() {}").len(), 1);
    assert_eq!(at("mps", "use crate::daemon::gpu_use::share;").len(), 1, "a folder of its own rank");
    assert_eq!(at("attic", "fn f() {}").len(), 1, "a folder without a rank");
    assert_eq!(at("scheduling", "use crate::daemon::attic::x;").len(), 1, "a folder without a rank");
    // HTTP is http/'s alone.
    assert_eq!(at("views", "use axum::Json;").len(), 1);
    assert_eq!(at("runtime", "fn f(u: hyper::upgrade::OnUpgrade) {}").len(), 1);
    assert!(at("views", "const S: &str = \"axum\"; // hyper").is_empty());
    let cli = |file: &str, source: &str| violations(file, &["cli".into(), "x".into()], source, &mut Vec::new());
    assert_eq!(cli("src/cli/sbatch.rs", "use crate::daemon::job::JobState;").len(), 1);
    assert!(cli("src/cli/daemon_cmd.rs", "fn f() { crate::daemon::run(c, p); }").is_empty());
    assert_eq!(cli("src/cli/daemon_cmd.rs", "use crate::daemon::job::Job;").len(), 1);
}
