//! `--export={[ALL,]NAME[=value],…|ALL|NIL|NONE}`: which variables of the submit environment
//! the job gets.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{is_not, take_till};
use nom::character::complete::char;
use nom::combinator::{map, opt, recognize};
use nom::multi::{many1, separated_list1};
use nom::sequence::delimited;
use nom::{IResult, Parser};

/// How `--export` selects the job's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportMode {
    /// The whole submit environment, plus the listed assignments.
    All(Vec<(String, Option<String>)>),
    /// Only the listed variables (plus SLURM_* that the job gets anyway).
    Only(Vec<(String, Option<String>)>),
}

/// `'…'` or `"…"`, quotes included.
fn quoted(i: &str) -> IResult<&str, &str> {
    alt((
        recognize(delimited(char('\''), take_till(|c| c == '\''), char('\''))),
        recognize(delimited(char('"'), take_till(|c| c == '"'), char('"'))),
    ))
    .parse(i)
}

/// One comma-separated item; commas inside quotes belong to it. May be empty.
fn token(i: &str) -> IResult<&str, &str> {
    map(opt(recognize(many1(alt((quoted, is_not(",'\"")))))), Option::unwrap_or_default).parse(i)
}

/// The items of a list, and the text after the last one that could be read (which starts
/// with an unterminated quote when it is not empty).
fn tokens(text: &str) -> (Vec<&str>, &str) {
    match separated_list1(char(','), token).parse(text) {
        Ok((rest, toks)) => (toks, rest),
        Err(_) => (Vec::new(), text),
    }
}

/// An item wholly in matching quotes (`'A=x,y'`) loses them, as in Slurm; quotes inside a
/// value (`A="x,y"`) stay part of it.
fn unquote(tok: &str) -> &str {
    for q in ['\'', '"'] {
        if tok.len() >= 2 && tok.starts_with(q) && tok.ends_with(q) {
            return &tok[1..tok.len() - 1];
        }
    }
    tok
}

/// A shell variable name: a letter or `_`, then letters, digits and `_`.
pub fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME` or `NAME=value`, or why it is neither.
fn variable(tok: &str) -> Result<(String, Option<String>), String> {
    let (name, value) = match tok.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (tok, None),
    };
    if name.is_empty() {
        return Err(format!("'{tok}' has no variable name"));
    }
    if !is_name(name) {
        return Err(format!("'{name}' is not a variable name (letters, digits and '_', not starting with a digit)"));
    }
    Ok((name.to_string(), value))
}

/// Parses `--export`: `ALL`, `NONE`, `NIL` (any case), or a comma-separated list of `ALL`,
/// `NAME` (the submit environment's value) and `NAME=value`; with `ALL` in the list the
/// job gets the whole submit environment as well, without it only the listed variables.
/// A comma inside quotes does not separate (`'B=x,y'` gives `B` the value `x,y`; `B="x,y"`
/// gives it `"x,y"`, quotes included, as Slurm does). Empty items (`A,,B`) are skipped.
///
/// Errors ([`OptionError::Invalid`], naming the item): an empty value, a name that is not a
/// shell variable name (`=x`, `1A=x`, `A B`), an unterminated quote, and `NONE`/`NIL` inside
/// a list (Slurm reads those as a variable named `NONE`; its man page says they take no
/// variables).
pub fn parse_export(text: &str) -> Result<ExportMode, OptionError> {
    let fail = |why: String| OptionError::Invalid { option: "export", value: text.to_string(), why };
    for (keyword, mode) in [("ALL", true), ("NONE", false), ("NIL", false)] {
        if text.eq_ignore_ascii_case(keyword) {
            return Ok(if mode { ExportMode::All(Vec::new()) } else { ExportMode::Only(Vec::new()) });
        }
    }
    let (toks, rest) = tokens(text);
    if !rest.is_empty() {
        return Err(fail(format!("unterminated quote in '{rest}'")));
    }
    let mut all = false;
    let mut vars = Vec::new();
    for tok in toks.into_iter().filter(|t| !t.is_empty()).map(unquote) {
        if tok.eq_ignore_ascii_case("ALL") {
            all = true;
        } else if tok.eq_ignore_ascii_case("NONE") || tok.eq_ignore_ascii_case("NIL") {
            return Err(fail(format!("{tok} cannot be combined with variables; list the variables alone")));
        } else {
            vars.push(variable(tok).map_err(fail)?);
        }
    }
    if !all && vars.is_empty() {
        return Err(fail("no variables given; use ALL, NONE, NIL or a list of variables".into()));
    }
    Ok(if all { ExportMode::All(vars) } else { ExportMode::Only(vars) })
}

/// The usable part of a value that [`parse_export`] refuses: its well-formed items, with an
/// empty value (or one with `ALL` in it) meaning the whole environment, as before the value
/// was checked.
fn salvage(text: &str) -> ExportMode {
    let (toks, rest) = tokens(text);
    let mut all = text.is_empty();
    let mut vars = Vec::new();
    for tok in toks.into_iter().chain(Some(rest)).filter(|t| !t.is_empty()).map(unquote) {
        if tok.eq_ignore_ascii_case("ALL") {
            all = true;
        } else if let Ok(var) = variable(tok) {
            if !tok.eq_ignore_ascii_case("NONE") && !tok.eq_ignore_ascii_case("NIL") {
                vars.push(var);
            }
        }
    }
    if all {
        ExportMode::All(vars)
    } else {
        ExportMode::Only(vars)
    }
}

/// Builds the job's environment (`NAME=value` strings) from the submit environment and
/// `--export` (`None` is `ALL`). Listed assignments replace the submit environment's values;
/// a listed name without a value takes the submit environment's, and is left out when that
/// has none. Without `ALL`, `SLURM_EXPORT_ENV` records the `--export` value.
///
/// A value that [`parse_export`] refuses should have been reported already; here its
/// well-formed items are used and the rest ignored.
pub fn job_environment(export: Option<&str>, submit_env: &[(String, String)]) -> Vec<String> {
    let text = export.unwrap_or("ALL");
    let mode = parse_export(text).unwrap_or_else(|_| salvage(text));
    let (base, vars) = match &mode {
        ExportMode::All(v) => (true, v),
        ExportMode::Only(v) => (false, v),
    };
    let mut env: Vec<(String, String)> = if base { submit_env.to_vec() } else { Vec::new() };
    for (k, v) in vars {
        let value = match v {
            Some(v) => Some(v.clone()),
            None => submit_env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
        };
        if let Some(value) = value {
            env.retain(|(n, _)| n != k);
            env.push((k.clone(), value));
        }
    }
    if !base {
        env.push(("SLURM_EXPORT_ENV".into(), export.unwrap_or("NONE").to_string()));
    }
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::test_support::short_strings;

    fn vars(list: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        list.iter().map(|(k, v)| (k.to_string(), v.map(str::to_string))).collect()
    }

    #[test]
    fn modes_and_lists() {
        let cases: Vec<(&str, ExportMode)> = vec![
            ("ALL", ExportMode::All(vec![])),
            ("all", ExportMode::All(vec![])),
            ("NONE", ExportMode::Only(vec![])),
            ("none", ExportMode::Only(vec![])),
            ("NIL", ExportMode::Only(vec![])),
            ("Nil", ExportMode::Only(vec![])),
            ("EDITOR", ExportMode::Only(vars(&[("EDITOR", None)]))),
            ("EDITOR,ARG1=test", ExportMode::Only(vars(&[("EDITOR", None), ("ARG1", Some("test"))]))),
            ("ALL,EDITOR=/bin/emacs", ExportMode::All(vars(&[("EDITOR", Some("/bin/emacs"))]))),
            ("EDITOR=/bin/emacs,all", ExportMode::All(vars(&[("EDITOR", Some("/bin/emacs"))]))),
            ("A=", ExportMode::Only(vars(&[("A", Some(""))]))),
            ("A=b=c", ExportMode::Only(vars(&[("A", Some("b=c"))]))),
            ("A= b c ", ExportMode::Only(vars(&[("A", Some(" b c "))]))),
            ("_x1=1", ExportMode::Only(vars(&[("_x1", Some("1"))]))),
            ("A,,B", ExportMode::Only(vars(&[("A", None), ("B", None)]))),
            ("A,", ExportMode::Only(vars(&[("A", None)]))),
            ("ALL,", ExportMode::All(vec![])),
            // quotes keep commas in a value
            ("'B=x,y'", ExportMode::Only(vars(&[("B", Some("x,y"))]))),
            ("\"B=x,y\",C", ExportMode::Only(vars(&[("B", Some("x,y")), ("C", None)]))),
            ("B=\"x,y\"", ExportMode::Only(vars(&[("B", Some("\"x,y\""))]))),
            ("B='it''s',C=1", ExportMode::Only(vars(&[("B", Some("'it''s'")), ("C", Some("1"))]))),
            ("B=\"a'b\"", ExportMode::Only(vars(&[("B", Some("\"a'b\""))]))),
            ("ALL,'B=1'", ExportMode::All(vars(&[("B", Some("1"))]))),
            ("'ALL'", ExportMode::All(vec![])),
        ];
        for (text, want) in cases {
            assert_eq!(parse_export(text), Ok(want), "{text:?}");
        }
    }

    #[test]
    fn bad_values_name_the_item() {
        let cases: &[(&str, &str)] = &[
            ("", "no variables"),
            (",", "no variables"),
            ("=x", "'=x' has no variable name"),
            ("A=1,=x", "'=x' has no variable name"),
            ("1A=x", "'1A' is not a variable name"),
            ("A-B", "'A-B' is not a variable name"),
            ("A B=1", "'A B' is not a variable name"),
            (" A", "' A' is not a variable name"),
            ("ALL, A", "' A' is not a variable name"),
            ("PATH+=x", "'PATH+' is not a variable name"),
            ("ÄB=1", "'ÄB' is not a variable name"),
            ("'A=1", "unterminated quote in ''A=1'"),
            ("A=\"x,y", "unterminated quote in '\"x,y'"),
            ("A,'", "unterminated quote"),
            ("NONE,A=1", "NONE cannot be combined"),
            ("A=1,nil", "nil cannot be combined"),
            ("ALL,NONE", "NONE cannot be combined"),
            ("''", "'' has no variable name"),
        ];
        for (text, why) in cases {
            match parse_export(text) {
                Err(e @ OptionError::Invalid { option: "export", .. }) => {
                    let OptionError::Invalid { value, why: got, .. } = &e else { unreachable!() };
                    assert_eq!(value, text);
                    assert!(got.contains(why), "{text:?}: {got}");
                    assert!(e.to_string().starts_with("invalid --export value"), "{e}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    fn env() -> Vec<(String, String)> {
        vec![("FOO".into(), "hello".into()), ("BAR".into(), "world".into())]
    }

    #[test]
    fn job_environment_follows_the_mode() {
        let e = env();
        assert_eq!(job_environment(None, &e), vec!["FOO=hello", "BAR=world"]);
        assert_eq!(job_environment(Some("ALL"), &e), vec!["FOO=hello", "BAR=world"]);
        assert_eq!(job_environment(Some("NONE"), &e), vec!["SLURM_EXPORT_ENV=NONE"]);
        assert_eq!(job_environment(Some("NIL"), &e), vec!["SLURM_EXPORT_ENV=NIL"]);
        assert_eq!(job_environment(Some("FOO"), &e), vec!["FOO=hello", "SLURM_EXPORT_ENV=FOO"]);
        assert_eq!(job_environment(Some("FOO,MISSING"), &e), vec!["FOO=hello", "SLURM_EXPORT_ENV=FOO,MISSING"]);
        assert_eq!(job_environment(Some("ALL,BAR=changed"), &e), vec!["FOO=hello", "BAR=changed"]);
        assert_eq!(job_environment(Some("NEW=1"), &e), vec!["NEW=1", "SLURM_EXPORT_ENV=NEW=1"]);
        assert_eq!(job_environment(Some("'V=a,b'"), &e), vec!["V=a,b", "SLURM_EXPORT_ENV='V=a,b'"]);
    }

    #[test]
    fn job_environment_keeps_the_good_part_of_a_bad_value() {
        let e = env();
        assert_eq!(job_environment(Some(""), &e), vec!["FOO=hello", "BAR=world"]);
        assert_eq!(job_environment(Some("FOO,=x"), &e), vec!["FOO=hello", "SLURM_EXPORT_ENV=FOO,=x"]);
        assert_eq!(job_environment(Some("ALL,1A=x"), &e), vec!["FOO=hello", "BAR=world"]);
        assert_eq!(job_environment(Some("NONE,BAR"), &e), vec!["BAR=world", "SLURM_EXPORT_ENV=NONE,BAR"]);
        assert_eq!(job_environment(Some("BAR,'X=1"), &e), vec!["BAR=world", "SLURM_EXPORT_ENV=BAR,'X=1"]);
    }

    #[test]
    fn no_input_panics() {
        for s in short_strings("A=,'\" 1é", 5) {
            let _ = parse_export(&s);
            let _ = job_environment(Some(&s), &env());
        }
    }
}
