//! `#SBATCH` directive lines at the top of a batch script.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::take_while1;
use nom::character::complete::{anychar, char, satisfy};
use nom::combinator::{map, opt};
use nom::multi::{fold_many0, fold_many1};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

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

/// The UTF-8 byte order mark some editors put at the start of a file.
pub const BOM: &str = "\u{feff}";

/// `script` without a leading UTF-8 byte order mark.
pub fn strip_bom(script: &str) -> &str {
    script.strip_prefix(BOM).unwrap_or(script)
}

/// Reads the directives with `prefix` (`#SBATCH`) from the top of `script`, as Slurm's sbatch
/// does:
///
/// * a directive is a line that starts, in column 0, with `prefix`; what follows it is read
///   as words whether or not a blank comes first (`#SBATCH-J name` names the job, and
///   `#SBATCHX -J x` holds the word `X`, which is no option: the caller refuses it, as Slurm
///   does); `# SBATCH`, `###SBATCH`, `#sbatch` and an indented `#SBATCH` are comments;
/// * reading stops at the first line whose first non-blank character is not `#`, so a
///   directive after a command is ignored; blank lines and comments do not stop it;
/// * words are split at white space; `'…'` and `"…"` group (the quotes are removed, also in
///   the middle of a word: `--comment="a b c"` is `--comment=a b c`), `\` escapes the next
///   character, and an unquoted `#` ends the line (a trailing comment);
/// * a UTF-8 byte order mark at the start is ignored.
///
/// A word that starts with a Unicode dash (`–comment`), or holds typographic quotes or a
/// no-break space, is an [`OptionError::Directive`] naming the character, since the shell
/// or an editor made it from what was meant as ASCII. An unmatched quote or a word starting
/// with `:` is an error too, as in Slurm.
pub fn extract(script: &str, prefix: &str, file: &str) -> Result<Vec<Directive>, OptionError> {
    let mut out = Vec::new();
    for (i, line) in strip_bom(script).lines().enumerate() {
        let err = |message: String| OptionError::Directive { file: file.to_string(), line: i + 1, message };
        let Some(rest) = line.strip_prefix(prefix) else {
            if line.trim_start_matches(|c: char| c.is_ascii_whitespace()).is_empty()
                || line.trim_start_matches(|c: char| c.is_ascii_whitespace()).starts_with('#')
            {
                continue;
            }
            break;
        };
        let args = split_words(rest, line).map_err(err)?;
        for word in &args {
            check_look_alikes(word).map_err(err)?;
        }
        out.push(Directive { line: i + 1, text: line.to_string(), args });
    }
    Ok(out)
}

/// A backslash and the character it escapes (nothing, at the end of the line).
fn escaped(i: &str) -> IResult<&str, Option<char>> {
    preceded(char('\\'), opt(anychar)).parse(i)
}

/// `'…'` or `"…"`: the characters between the quotes, escapes resolved.
fn quoted<'a>(quote: char) -> impl Parser<&'a str, Output = String, Error = nom::error::Error<&'a str>> {
    delimited(
        char(quote),
        fold_many0(alt((escaped, map(satisfy(move |c| c != quote && c != '\\'), Some))), String::new, |mut s, c| {
            s.extend(c);
            s
        }),
        char(quote),
    )
}

/// A character that stands for itself outside quotes.
fn plain(c: char) -> bool {
    !c.is_ascii_whitespace() && !matches!(c, '"' | '\'' | '#' | '\\')
}

/// One word: plain characters, escapes and quoted parts, side by side (`--comment="a b"`).
fn word(i: &str) -> IResult<&str, String> {
    fold_many1(
        alt((
            map(escaped, |c| c.map(String::from).unwrap_or_default()),
            quoted('"'),
            quoted('\''),
            map(take_while1(plain), str::to_string),
        )),
        String::new,
        |mut s, part| {
            s.push_str(&part);
            s
        },
    )
    .parse(i)
}

/// Splits a directive's text into words the way sbatch's `_get_argument` does: white space
/// separates, quotes group, `\` escapes, an unquoted `#` ends the line.
fn split_words(text: &str, line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        match rest.chars().next() {
            None | Some('#') => break,
            Some(':') => return Err(format!("Unexpected `:` in [{line}]")),
            _ => {}
        }
        // A word cannot start here only at an unmatched quote, reported just below.
        if let Ok((after, w)) = word(rest) {
            if !w.is_empty() {
                words.push(w);
            }
            rest = after;
        }
        match rest.chars().next() {
            Some(q @ ('"' | '\'')) => return Err(format!("Unmatched `{q}` in [{line}]")),
            Some('#') | None => break,
            _ => {}
        }
    }
    Ok(words)
}

/// Characters that look like ASCII ones but are not: (character, name, what was meant).
const LOOK_ALIKES: &[(char, &str, &str)] = &[
    ('\u{2010}', "HYPHEN", "-"),
    ('\u{2011}', "NON-BREAKING HYPHEN", "-"),
    ('\u{2012}', "FIGURE DASH", "-"),
    ('\u{2013}', "EN DASH", "-"),
    ('\u{2014}', "EM DASH", "-"),
    ('\u{2015}', "HORIZONTAL BAR", "-"),
    ('\u{2212}', "MINUS SIGN", "-"),
    ('\u{fe58}', "SMALL EM DASH", "-"),
    ('\u{fe63}', "SMALL HYPHEN-MINUS", "-"),
    ('\u{ff0d}', "FULLWIDTH HYPHEN-MINUS", "-"),
    ('\u{2018}', "LEFT SINGLE QUOTATION MARK", "'"),
    ('\u{2019}', "RIGHT SINGLE QUOTATION MARK", "'"),
    ('\u{201a}', "SINGLE LOW-9 QUOTATION MARK", "'"),
    ('\u{201b}', "SINGLE HIGH-REVERSED-9 QUOTATION MARK", "'"),
    ('\u{2032}', "PRIME", "'"),
    ('\u{201c}', "LEFT DOUBLE QUOTATION MARK", "\""),
    ('\u{201d}', "RIGHT DOUBLE QUOTATION MARK", "\""),
    ('\u{201e}', "DOUBLE LOW-9 QUOTATION MARK", "\""),
    ('\u{201f}', "DOUBLE HIGH-REVERSED-9 QUOTATION MARK", "\""),
    ('\u{2033}', "DOUBLE PRIME", "\""),
    ('\u{00ab}', "LEFT-POINTING DOUBLE ANGLE QUOTATION MARK", "\""),
    ('\u{00bb}', "RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK", "\""),
    ('\u{ff02}', "FULLWIDTH QUOTATION MARK", "\""),
    ('\u{00a0}', "NO-BREAK SPACE", " "),
    ('\u{202f}', "NARROW NO-BREAK SPACE", " "),
    ('\u{3000}', "IDEOGRAPHIC SPACE", " "),
];

fn look_alike(c: char) -> Option<(&'static str, &'static str)> {
    LOOK_ALIKES.iter().find(|(l, _, _)| *l == c).map(|(_, name, meant)| (*name, *meant))
}

/// Refuses a directive word that starts with a Unicode dash or holds a typographic quote or
/// space, naming the character and its code point.
pub fn check_look_alikes(word: &str) -> Result<(), String> {
    let is_dash = |c: char| c == '-' || look_alike(c).is_some_and(|(_, m)| m == "-");
    let lead: Vec<char> = word.chars().take_while(|&c| is_dash(c)).collect();
    if let Some((pos, bad, name)) =
        lead.iter().enumerate().find_map(|(i, &c)| look_alike(c).map(|(name, _)| (i, c, name)))
    {
        let rest = word.trim_start_matches(is_dash);
        let name_len = rest.split('=').next().unwrap_or("").chars().count();
        let meant = if name_len > 1 { format!("--{rest}") } else { format!("-{rest}") };
        let verb = if pos == 0 { "starts with" } else { "has" };
        return Err(format!(
            "\"{word}\" {verb} '{bad}' (U+{:04X} {name}), not '-'; retype it as \"{meant}\"",
            bad as u32
        ));
    }
    for c in word.chars() {
        if let Some((name, meant)) = look_alike(c) {
            if meant == "-" {
                continue;
            }
            let what = if meant == " " { "a space" } else { "a straight quote" };
            return Err(format!(
                "\"{word}\" contains '{c}' (U+{:04X} {name}), not {what} ('{meant}'); retype it",
                c as u32
            ));
        }
    }
    Ok(())
}

/// Checks that `script` is a batch script Slurm would accept: not empty, no NUL byte,
/// no DOS line breaks, a `#!` first line. The messages are Slurm's.
///
/// A leading UTF-8 byte order mark is skipped (Slurm would report a missing `#!`); the
/// caller should submit the script without it (see [`strip_bom`]).
pub fn check_script(script: &[u8]) -> Result<(), OptionError> {
    let script = script.strip_prefix(BOM.as_bytes()).unwrap_or(script);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(script: &str) -> Vec<Vec<String>> {
        extract(script, "#SBATCH", "job.sh").unwrap().into_iter().map(|d| d.args).collect()
    }

    fn one(line: &str) -> Vec<String> {
        let mut all = args(&format!("#!/bin/bash\n{line}\necho hi\n"));
        assert_eq!(all.len(), 1, "{line}");
        all.remove(0)
    }

    fn err(script: &str) -> (usize, String) {
        match extract(script, "#SBATCH", "job.sh") {
            Err(OptionError::Directive { file, line, message }) => {
                assert_eq!(file, "job.sh");
                (line, message)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stops_at_first_command() {
        let s = "#!/bin/bash\n#SBATCH -J early\necho x\n#SBATCH -J late_ignored\n";
        assert_eq!(args(s), vec![vec!["-J", "early"]]);
        let d = extract(s, "#SBATCH", "f").unwrap();
        assert_eq!((d[0].line, d[0].text.as_str()), (2, "#SBATCH -J early"));
        // blank lines and comments (also indented ones) do not stop it
        let s = "#!/bin/bash\n\n#SBATCH -J a\n   \n  # note\n### This script…\n#SBATCH -t 5\n  echo\n#SBATCH -p x\n";
        assert_eq!(args(s), vec![vec!["-J", "a"], vec!["-t", "5"]]);
    }

    #[test]
    fn what_is_not_a_directive() {
        let s = "#!/bin/bash\n# SBATCH -J with_space_ignored\n###SBATCH --gres=gpu:4\n  #SBATCH -J indented\n#sbatch -J lower\n#SBATCH  --job-name=two_spaces\n";
        assert_eq!(args(s), vec![vec!["--job-name=two_spaces"]]);
        assert_eq!(args("#!/bin/sh\n#SBATCH\n#SBATCH\t-N1\n"), vec![vec![], vec!["-N1"]]);
    }

    #[test]
    fn no_blank_is_needed_after_the_prefix() {
        assert_eq!(one("#SBATCH-J name"), vec!["-J", "name"]);
        assert_eq!(one("#SBATCH--comment=c1"), vec!["--comment=c1"]);
        assert_eq!(one("#SBATCH-t5 -J b"), vec!["-t5", "-J", "b"]);
        // Not an option: read as a word, for the caller to refuse as Slurm does.
        assert_eq!(one("#SBATCHX -J x"), vec!["X", "-J", "x"]);
    }

    #[test]
    fn value_forms() {
        assert_eq!(one("#SBATCH --time=10:00:00 # walltime"), vec!["--time=10:00:00"]);
        assert_eq!(one("#SBATCH --time 1:00:00"), vec!["--time", "1:00:00"]);
        assert_eq!(one("#SBATCH --job-name    keras-bert-normal"), vec!["--job-name", "keras-bert-normal"]);
        assert_eq!(one("#SBATCH --comment=\"a b c\"  # trailing comment"), vec!["--comment=a b c"]);
        assert_eq!(one("#SBATCH --comment='a \"b\" c'"), vec!["--comment=a \"b\" c"]);
        assert_eq!(one("#SBATCH --comment=\"python\""), vec!["--comment=python"]);
        assert_eq!(one("#SBATCH --comment=\"#1 job\""), vec!["--comment=#1 job"]);
        assert_eq!(one("#SBATCH --comment=a\\ b"), vec!["--comment=a b"]);
        assert_eq!(one("#SBATCH --hold   "), vec!["--hold"]);
        assert_eq!(one("#SBATCH -Jname"), vec!["-Jname"]);
        assert_eq!(one("#SBATCH -J name"), vec!["-J", "name"]);
        assert_eq!(one("#SBATCH -N2"), vec!["-N2"]);
        assert_eq!(one("#SBATCH -o out#1"), vec!["-o", "out"]);
        assert_eq!(one("#SBATCH -J a -t 5 -p gpu"), vec!["-J", "a", "-t", "5", "-p", "gpu"]);
        assert_eq!(one("#SBATCH --signal=USR1@90"), vec!["--signal=USR1@90"]);
        assert_eq!(
            one("#SBATCH --error=/scratch/${USER}/log/%j_0_log.err"),
            vec!["--error=/scratch/${USER}/log/%j_0_log.err"]
        );
        assert_eq!(one("#SBATCH --job-name=torch-test    # 提交的作业的名字"), vec!["--job-name=torch-test"]);
        assert_eq!(
            one("#SBATCH --cpus-per-task=1        #* 每个任务的 cpu 核心数 (>1 if multi-threaded tasks)，不填写默认 1"),
            vec!["--cpus-per-task=1"]
        );
        assert_eq!(one("#SBATCH --comment=\"数据 – 测试\""), vec!["--comment=数据 – 测试"]);
    }

    #[test]
    fn byte_order_mark() {
        assert_eq!(args("\u{feff}#!/bin/bash\n#SBATCH -J bom\n"), vec![vec!["-J", "bom"]]);
        assert!(check_script("\u{feff}#!/bin/bash\necho\n".as_bytes()).is_ok());
        assert_eq!(strip_bom("\u{feff}#!x"), "#!x");
        assert_eq!(strip_bom("#!x"), "#!x");
    }

    #[test]
    fn look_alike_dashes() {
        let s = "#!/bin/bash\n#SBATCH -J tf\n#SBATCH --time 00:30:00\n#SBATCH –comment etc\necho\n";
        let (line, msg) = err(s);
        assert_eq!(line, 4);
        assert_eq!(msg, "\"–comment\" starts with '–' (U+2013 EN DASH), not '-'; retype it as \"--comment\"");
        assert!(err("#!/bin/sh\n#SBATCH —time=5\n").1.contains("U+2014 EM DASH"));
        assert!(err("#!/bin/sh\n#SBATCH —time=5\n").1.contains("\"--time=5\""));
        assert!(err("#!/bin/sh\n#SBATCH −N 1\n").1.contains("U+2212 MINUS SIGN"));
        assert!(err("#!/bin/sh\n#SBATCH −N 1\n").1.ends_with("retype it as \"-N\""));
        assert!(err("#!/bin/sh\n#SBATCH ‑J x\n").1.contains("U+2011 NON-BREAKING HYPHEN"));
        assert_eq!(
            err("#!/bin/sh\n#SBATCH -–gres=gpu:1\n").1,
            "\"-–gres=gpu:1\" has '–' (U+2013 EN DASH), not '-'; retype it as \"--gres=gpu:1\""
        );
        // a dash inside a value is the value's business
        assert_eq!(one("#SBATCH --comment=a–b"), vec!["--comment=a–b"]);
        // in a trailing comment it does not matter
        assert_eq!(one("#SBATCH -J x # –comment"), vec!["-J", "x"]);
    }

    #[test]
    fn look_alike_quotes_and_spaces() {
        let (line, msg) = err("#!/bin/sh\n#SBATCH --comment=“a b”\n");
        assert_eq!(line, 2);
        assert!(msg.contains("'“' (U+201C LEFT DOUBLE QUOTATION MARK)"), "{msg}");
        assert!(err("#!/bin/sh\n#SBATCH --comment=‘x’\n").1.contains("U+2018"));
        assert!(err("#!/bin/sh\n#SBATCH -J\u{a0}x\n").1.contains("U+00A0 NO-BREAK SPACE"));
    }

    #[test]
    fn slurm_errors() {
        let (line, msg) = err("#!/bin/sh\n#SBATCH --comment=\"open\n");
        assert_eq!(line, 2);
        assert_eq!(msg, "Unmatched `\"` in [#SBATCH --comment=\"open]");
        assert!(err("#!/bin/sh\n#SBATCH :x\n").1.starts_with("Unexpected `:`"));
    }

    #[test]
    fn other_prefixes() {
        let d = extract("#!/bin/sh\n#PBS -N x\n#SBATCH -J y\n", "#PBS", "f").unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].args, vec!["-N", "x"]);
    }

    #[test]
    fn check_script_texts() {
        let text = |b: &[u8]| check_script(b).unwrap_err().to_string();
        assert_eq!(text(b""), "Batch script is empty!");
        assert_eq!(text(b"  \n\n"), "Batch script is empty!");
        assert_eq!(
            text(b"#!/bin/sh\n\0"),
            "The Slurm controller does not allow scripts that\ncontain a NULL character '\\0'."
        );
        assert_eq!(
            text(b"#!/bin/sh\r\necho\r\n"),
            "Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n)."
        );
        assert_eq!(
            text(b"echo no shebang here\n"),
            "This does not look like a batch script.  The first\nline must start with #! followed by the path to an interpreter.\nFor instance: #!/bin/sh"
        );
        assert!(check_script(b"#!/bin/bash -l\necho\n").is_ok());
    }

    #[test]
    fn every_short_line_splits_or_fails_without_hanging() {
        for text in crate::options::test_support::short_strings(" a\"'#\\:=-", 5) {
            match split_words(&text, &text) {
                Ok(words) => assert!(words.iter().all(|w| !w.is_empty()), "{text:?}"),
                Err(e) => assert!(e.starts_with("Un"), "{text:?}: {e}"),
            }
        }
        assert_eq!(split_words(r#"--comment="a \"b\" c" x\ y 'q'"#, "").unwrap(), ["--comment=a \"b\" c", "x y", "q"]);
        assert_eq!(split_words("-J a#b c", "").unwrap(), ["-J", "a"]);
        assert_eq!(split_words("-J x\\", "").unwrap(), ["-J", "x"]);
    }
}
