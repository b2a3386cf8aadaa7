//! The `%`-format engine of squeue and sinfo (`-o/--format` and `-O/--Format`): the commands
//! parse their formats with it, and the daemon lays squeue's listing out with it.
//!
//! A format string is literal text with fields `%[.][-][width]code`: a leading `.` right-justifies,
//! otherwise fields are left-justified; a width pads the value to that many characters and
//! truncates longer values to their first `width` characters (as Slurm's `_print_str` does); a
//! field without a width prints the value as is. Text between fields is copied into the header
//! and every row.

/// One piece of a parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// Literal text, copied as is.
    Literal(String),
    /// A field to fill in.
    Field(Field),
}

/// A field of a format: what to print and how wide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The `%` code (one character) or the `-O` field name (lowercase).
    pub key: String,
    /// Width; 0 means "as wide as the value".
    pub width: usize,
    /// Right-justify (`%.N`).
    pub right: bool,
}

impl Field {
    /// A field with `key`, `width` and justification.
    pub fn new(key: &str, width: usize, right: bool) -> Self {
        Field { key: key.to_string(), width, right }
    }
}

/// Parses a `-o` format string: `%[.][-][width]code` fields and literal text (`%%` is a `%`).
pub fn parse(format: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut literal = String::new();
    let chars: Vec<char> = format.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            literal.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'%') {
            literal.push('%');
            i += 2;
            continue;
        }
        let mut j = i + 1;
        let mut right = false;
        while let Some(&f) = chars.get(j) {
            match f {
                '.' => right = true,
                '-' => right = false,
                _ => break,
            }
            j += 1;
        }
        let mut width = 0usize;
        while let Some(d) = chars.get(j).and_then(|c| c.to_digit(10)) {
            width = width.saturating_mul(10).saturating_add(d as usize);
            j += 1;
        }
        match chars.get(j) {
            Some(&code) => {
                if !literal.is_empty() {
                    tokens.push(Token::Literal(std::mem::take(&mut literal)));
                }
                tokens.push(Token::Field(Field { key: code.to_string(), width, right }));
                i = j + 1;
            }
            None => {
                literal.extend(&chars[i..]);
                break;
            }
        }
    }
    if !literal.is_empty() {
        tokens.push(Token::Literal(literal));
    }
    tokens
}

/// Parses a `-O` format: comma-separated `name[:[.]width]`, each `default_width` wide and
/// left-justified unless given otherwise. Names are lowercased; no separators are added.
pub fn parse_long(format: &str, default_width: usize) -> Vec<Token> {
    format
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (name, spec) = match item.split_once(':') {
                Some((n, s)) => (n, Some(s)),
                None => (item, None),
            };
            let mut right = false;
            let mut width = default_width;
            if let Some(spec) = spec {
                let spec = match spec.strip_prefix('.') {
                    Some(s) => {
                        right = true;
                        s
                    }
                    None => spec,
                };
                if let Ok(w) = spec.parse::<usize>() {
                    width = w;
                }
            }
            Token::Field(Field { key: name.to_ascii_lowercase(), width, right })
        })
        .collect()
}

/// Appends `value` to `out`, padded or truncated to `width` characters (`width` 0: as is).
pub fn push_justified(out: &mut String, value: &str, width: usize, right: bool) {
    if width == 0 {
        out.push_str(value);
        return;
    }
    let (cut, len) = if value.is_ascii() {
        let len = value.len().min(width);
        (&value[..len], len)
    } else {
        match value.char_indices().nth(width) {
            Some((end, _)) => (&value[..end], width),
            None => (value, value.chars().count()),
        }
    };
    if right {
        push_spaces(out, width - len);
        out.push_str(cut);
    } else {
        out.push_str(cut);
        push_spaces(out, width - len);
    }
}

fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Renders one line: literals as is, each field through `value` and [`push_justified`].
pub fn render<S: AsRef<str>, F: FnMut(&Field) -> S>(tokens: &[Token], mut value: F) -> String {
    let mut out = String::with_capacity(128);
    for t in tokens {
        match t {
            Token::Literal(s) => out.push_str(s),
            Token::Field(f) => push_justified(&mut out, value(f).as_ref(), f.width, f.right),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_and_literals() {
        let t = parse("\"%i\",%.18j|%-10u %5t");
        assert_eq!(
            t,
            vec![
                Token::Literal("\"".into()),
                Token::Field(Field::new("i", 0, false)),
                Token::Literal("\",".into()),
                Token::Field(Field::new("j", 18, true)),
                Token::Literal("|".into()),
                Token::Field(Field::new("u", 10, false)),
                Token::Literal(" ".into()),
                Token::Field(Field::new("t", 5, false)),
            ]
        );
        assert_eq!(parse("100%%"), vec![Token::Literal("100%".into())]);
        assert_eq!(parse("a%"), vec![Token::Literal("a%".into())]);
    }

    #[test]
    fn justifies_and_truncates() {
        let justify = |value: &str, width: usize, right: bool| {
            let mut out = String::new();
            push_justified(&mut out, value, width, right);
            out
        };
        assert_eq!(justify("abc", 0, true), "abc");
        assert_eq!(justify("d\u{e9}j\u{e0}", 3, false), "d\u{e9}j");
        assert_eq!(justify("\u{e9}", 3, true), "  \u{e9}");
        assert_eq!(justify("abc", 6, true), "   abc");
        assert_eq!(justify("abc", 6, false), "abc   ");
        assert_eq!(justify("UNLIMITED", 8, true), "UNLIMITE");
        assert_eq!(justify("gpujob.sh", 8, false), "gpujob.s");
    }

    #[test]
    fn long_format() {
        let t = parse_long("JobID,Name:10,State:.5", 20);
        assert_eq!(
            t,
            vec![
                Token::Field(Field::new("jobid", 20, false)),
                Token::Field(Field::new("name", 10, false)),
                Token::Field(Field::new("state", 5, true)),
            ]
        );
    }

    #[test]
    fn renders() {
        let t = parse("%.6i %-4j|");
        assert_eq!(render(&t, |f| if f.key == "i" { "42" } else { "name" }), "    42 name|");
    }
}
