//! Shell words: a command line a person writes (`--via 'ssh -p 2222 {node}'`) split into
//! words, and words quoted for a shell on the other side of ssh, which joins its arguments
//! and lets the remote shell split them again.

/// A command line that cannot be split.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unmatched {0} in {1:?}")]
pub struct SplitError(pub char, pub String);

/// Splits `text` into words as a POSIX shell does for plain words and `'…'`/`"…"` quotes
/// (with `\` escaping in and out of double quotes); no expansions.
pub fn split(text: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(SplitError('\'', text.into())),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(SplitError('"', text.into())),
                        },
                        Some(c) => w.push(c),
                        None => return Err(SplitError('"', text.into())),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                if let Some(c) = chars.next() {
                    w.push(c);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `word` as one word to a POSIX shell: as it is when it holds nothing the shell treats
/// specially, else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%^".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `words` as one command line for a shell.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_a_shell_does() {
        assert_eq!(split("ssh -p 2222 {node}").unwrap(), ["ssh", "-p", "2222", "{node}"]);
        assert_eq!(split(r#"sh -c 'a b' "c \"d\"" e\ f"#).unwrap(), ["sh", "-c", "a b", "c \"d\"", "e f"]);
        assert_eq!(split("  ''  ").unwrap(), [""]);
        assert_eq!(split("a 'b"), Err(SplitError('\'', "a 'b".into())));
    }

    #[test]
    fn quoted_words_split_back_into_themselves() {
        let words: Vec<String> = ["plain", "two words", "it's", "", "$HOME", "a\"b", "x=1,y"].map(String::from).into();
        assert_eq!(split(&join(&words)).unwrap(), words);
        assert_eq!(quote("gres/gpu=2"), "gres/gpu=2");
        assert_eq!(quote("a b"), "'a b'");
    }
}
