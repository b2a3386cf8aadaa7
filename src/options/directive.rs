//! `#SBATCH` directive lines at the top of a batch script.

use super::OptionError;

/// The options of one directive line.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    /// 1-based line number in the script.
    pub line: usize,
    /// The line as written.
    pub text: String,
    /// The option tokens, shell-split, trailing comment removed.
    pub args: Vec<String>,
}

/// Reads the directives with `prefix` (`#SBATCH`) from the top of `script`, up to the first
/// line that is neither blank nor a comment, as Slurm does.
pub fn extract(script: &str, prefix: &str, file: &str) -> Result<Vec<Directive>, OptionError> {
    let mut out = Vec::new();
    for (i, line) in script.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        if !trimmed.starts_with('#') {
            break;
        }
        let Some(rest) = trimmed.strip_prefix(prefix) else {
            continue;
        };
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let args = split_words(rest).map_err(|message| OptionError::Directive {
            file: file.to_string(),
            line: i + 1,
            message,
        })?;
        out.push(Directive { line: i + 1, text: line.to_string(), args });
    }
    Ok(out)
}

/// Splits a directive's text into words: shell-like quoting, `#` starts a comment.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '"' | '\'' => {
                    quote = Some(c);
                    in_word = true;
                }
                '#' if !in_word => break,
                c if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut cur));
                        in_word = false;
                    }
                }
                c => {
                    cur.push(c);
                    in_word = true;
                }
            },
        }
    }
    if quote.is_some() {
        return Err("unterminated quote".into());
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Checks that `script` is a batch script Slurm would accept: not empty, no NUL byte,
/// no DOS line breaks, a `#!` first line. The messages are Slurm's.
pub fn check_script(script: &[u8]) -> Result<(), OptionError> {
    if script.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(OptionError::Script("Batch script is empty!".into()));
    }
    if script.contains(&0) {
        return Err(OptionError::Script(
            "The Slurm controller does not allow scripts that\ncontain a NULL character '\\0'.".into(),
        ));
    }
    if script.windows(2).any(|w| w == b"\r\n") {
        return Err(OptionError::Script(
            "Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n).".into(),
        ));
    }
    if !script.starts_with(b"#!") {
        return Err(OptionError::Script(
            "This does not look like a batch script.  The first\nline must start with #! followed by the path to an interpreter.\nFor instance: #!/bin/sh".into(),
        ));
    }
    Ok(())
}
