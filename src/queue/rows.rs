//! The rows of `POST /slurmlet/v1/jobs/query` (a [`JobRows`](crate::api::types::JobRows)):
//! written from jobs (by the daemon, or by squeue itself for a remote cluster's jobs), and
//! laid out as squeue's text while they are parsed: each value goes from the reply's bytes
//! into its padded column, and no row is kept in between.

use super::fields::{by_code, Writer};
use super::QueueJob;
use crate::api::types::{ApiError, LayoutField, LayoutItem};
use crate::format::{push_justified, Token};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The text of a query's rows, and what else the reply said.
#[derive(Debug, Default)]
pub struct Rendered {
    /// One line per row, each ending in a newline.
    pub text: String,
    /// Whether any job has one of the ids asked for.
    pub ids_found: bool,
    /// The reply's errors.
    pub errors: Vec<ApiError>,
}

/// The JSON of a [`JobRows`](crate::api::types::JobRows) reply: for each of `jobs`, the
/// values of the query's `%` codes at UNIX time `now`. The reply is written as it is
/// rendered: one buffer for every value, and no row kept.
pub fn rows_json<J: QueueJob>(jobs: &[J], q: &crate::api::types::JobQuery, ids_found: bool, now: u64) -> Vec<u8> {
    let writers: Vec<Option<Writer>> = q.codes.chars().map(|code| by_code(code).map(|f| f.write)).collect();
    let mut out = Vec::with_capacity(64 + jobs.len() * writers.len() * 12);
    out.extend_from_slice(b"{\"rows\":[");
    let mut cell = String::new();
    for (i, job) in jobs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        for (k, write) in writers.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            cell.clear();
            if let Some(write) = write {
                write(&mut cell, job, now);
            }
            push_json_string(&mut out, &cell);
        }
        out.push(b']');
    }
    out.extend_from_slice(format!("],\"ids_found\":{ids_found},\"errors\":[]}}").as_bytes());
    out
}

/// squeue's text of `jobs` laid out by `layout` at UNIX time `now`: one line per job, each
/// value cut or padded to its field's width, control characters shown as `?`.
pub fn rows_text<J: QueueJob>(jobs: &[J], layout: &[LayoutItem], now: u64) -> String {
    let line: usize = layout
        .iter()
        .map(|item| match item {
            LayoutItem::Text(t) => t.len(),
            LayoutItem::Field(f) => f.width.max(8),
        })
        .sum();
    let mut out = String::with_capacity(jobs.len() * (line + 1));
    // Each field's writer, looked up once for every job.
    let writers: Vec<Option<Writer>> = layout
        .iter()
        .map(|item| match item {
            LayoutItem::Field(f) => by_code(f.code).map(|field| field.write),
            LayoutItem::Text(_) => None,
        })
        .collect();
    let mut cell = String::new();
    for job in jobs {
        for (item, write) in layout.iter().zip(&writers) {
            match item {
                LayoutItem::Text(t) => out.push_str(t),
                LayoutItem::Field(f) => {
                    cell.clear();
                    if let Some(write) = write {
                        write(&mut cell, job, now);
                    }
                    push_cell(&mut out, &cell, f.width, f.right);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The layout of `tokens`: literal text, and fields by their `%` codes.
pub fn layout_of(tokens: &[Token]) -> Vec<LayoutItem> {
    tokens
        .iter()
        .map(|token| match token {
            Token::Literal(t) => LayoutItem::Text(t.clone()),
            Token::Field(f) => {
                LayoutItem::Field(LayoutField { code: super::fields::field_code(f), width: f.width, right: f.right })
            }
        })
        .collect()
}

/// Whether a daemon lays `layout` out: no width, and no text, longer than
/// [`MAX_LAYOUT_WIDTH`], and at most that many items.
pub fn layout_fits(layout: &[LayoutItem]) -> bool {
    layout.len() <= MAX_LAYOUT_WIDTH
        && layout.iter().all(|item| match item {
            LayoutItem::Text(t) => t.len() <= MAX_LAYOUT_WIDTH,
            LayoutItem::Field(f) => f.width <= MAX_LAYOUT_WIDTH,
        })
}

/// The widest field, and the longest text, a daemon lays out: a listing is built while the
/// daemon waits, and a width of millions would make each line megabytes.
pub const MAX_LAYOUT_WIDTH: usize = 4096;

/// Appends `value` cut or padded to `width` (0: as it is; `right`: padded on the left), its
/// control characters shown as `?`: a value is never sent to the terminal as it is, whatever
/// the daemon stored (a job from before they were refused at submit) or another daemon says.
fn push_cell(out: &mut String, value: &str, width: usize, right: bool) {
    if value.contains(char::is_control) {
        let shown: String = value.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
        push_justified(out, &shown, width, right);
    } else {
        push_justified(out, value, width, right);
    }
}

/// `text` with each control character but the newline shown as `?`.
pub fn shown(text: &str) -> Cow<'_, str> {
    // A control character is a byte below 0x20, DEL, or U+0080 to U+009F (0xC2 0x80-0x9F);
    // a listing seldom has any, and a look at its bytes is quick.
    let control = |b: u8| (b < 0x20 && b != b'\n') | (b == 0x7f) | (b == 0xc2);
    // Looked at a block at a time, without stopping at each byte, the look is vectorized.
    if !text.as_bytes().chunks(256).any(|block| block.iter().fold(false, |any, &b| any | control(b))) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if c.is_control() && c != '\n' { '?' } else { c }).collect())
}

/// Appends `text` as a JSON string; most values need no escape and are copied as they are.
fn push_json_string(out: &mut Vec<u8>, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, text).expect("a string serializes");
    }
}

/// Parses `body` (a `JobRows` reply) and lays its rows out with `tokens`, the format whose
/// fields the query asked for, in order.
pub fn render(body: &[u8], tokens: &[Token]) -> Result<Rendered, serde_json::Error> {
    let mut out = Rendered { text: String::with_capacity(body.len() * 2), ..Default::default() };
    let mut de = serde_json::Deserializer::from_slice(body);
    Reply { tokens, out: &mut out }.deserialize(&mut de)?;
    de.end()?;
    Ok(out)
}

/// The reply object.
struct Reply<'a> {
    tokens: &'a [Token],
    out: &'a mut Rendered,
}

impl<'de> DeserializeSeed<'de> for Reply<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Reply<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a job query reply")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<Cow<str>>()? {
            match key.as_ref() {
                "rows" => map.next_value_seed(Rows { tokens: self.tokens, text: &mut self.out.text })?,
                "ids_found" => self.out.ids_found = map.next_value()?,
                "errors" => self.out.errors = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `rows` array.
struct Rows<'a> {
    tokens: &'a [Token],
    text: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of rows")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq.next_element_seed(Row { tokens: self.tokens, text: &mut *self.text })?.is_some() {}
        Ok(())
    }
}

/// One row: its values in the order of the format's fields.
struct Row<'a> {
    tokens: &'a [Token],
    text: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for Row<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Row<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of values")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        for token in self.tokens {
            match token {
                Token::Literal(s) => self.text.push_str(s),
                Token::Field(f) => {
                    let cell: Option<crate::api::types::Cell> = seq.next_element()?;
                    push_cell(self.text, cell.as_ref().map_or("", |c| c.0.as_ref()), f.width, f.right);
                }
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.text.push('\n');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format;

    #[test]
    fn rows_are_laid_out_as_they_are_parsed() {
        let tokens = format::parse("%.4i|%-5j|%t");
        let body = br#"{"rows":[["7","a\"b","PD"],["12","x\u00e9yz12345","R"]],"ids_found":true,"errors":[]}"#;
        let out = render(body, &tokens).unwrap();
        assert_eq!(out.text, "   7|a\"b  |PD\n  12|x\u{e9}yz1|R\n");
        assert!(out.ids_found);
        assert!(out.errors.is_empty());
    }

    #[test]
    fn text_laid_out_in_place_matches_rows_laid_out_by_the_client() {
        use crate::api::types::JobInfo;
        let tokens = format::parse("%.4i|%-5j|%t %M%%%R");
        let jobs = [
            JobInfo {
                job_id: 7,
                name: "a\u{1b}[31m\nb".into(),
                job_state: vec!["PENDING".into()],
                ..Default::default()
            },
            JobInfo {
                job_id: 123456,
                name: "x\u{e9}yz12345".into(),
                job_state: vec!["RUNNING".into()],
                ..Default::default()
            },
        ];
        let query = crate::api::types::JobQuery { codes: "ijtMR".into(), ..Default::default() };
        let by_rows = render(&rows_json(&jobs, &query, true, 1_000), &tokens).unwrap().text;
        let text = rows_text(&jobs, &layout_of(&tokens), 1_000);
        assert_eq!(text, by_rows);
        assert!(text.starts_with("   7|a?[31|PD 0:00%(None)\n"), "{text}");
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn a_text_shows_control_characters_but_newlines_as_question_marks() {
        assert!(matches!(shown("plain\ntext \u{e9}\n"), Cow::Borrowed(_)));
        assert_eq!(shown("a\u{1b}b\nc\u{9b}d\u{7f}\t\u{a0}"), "a?b\nc?d??\u{a0}");
    }

    #[test]
    fn a_layout_fits_a_daemon_up_to_its_widths() {
        assert!(layout_fits(&layout_of(&format::parse("%.18i %.4096j"))));
        assert!(!layout_fits(&layout_of(&format::parse("%.4097i"))));
        assert!(!layout_fits(&[LayoutItem::Text("x".repeat(MAX_LAYOUT_WIDTH + 1))]));
    }

    #[test]
    fn control_characters_in_a_value_are_shown_as_question_marks() {
        let tokens = format::parse("%j|%k");
        let body = br#"{"rows":[["\u001b]0;x\u0007red","a\nb\u009b"]],"ids_found":true,"errors":[]}"#;
        assert_eq!(render(body, &tokens).unwrap().text, "?]0;x?red|a?b?\n");
    }

    #[test]
    fn errors_and_unknown_keys_are_read() {
        let tokens = format::parse("%i");
        let body = br#"{"extra":{"a":[1]},"rows":[],"ids_found":false,"errors":[{"description":"bad","error_number":9003,"error":"e","source":"body"}]}"#;
        let out = render(body, &tokens).unwrap();
        assert_eq!(out.text, "");
        assert!(!out.ids_found);
        assert_eq!(out.errors[0].description, "bad");
    }

    #[test]
    fn a_malformed_reply_is_an_error() {
        let tokens = format::parse("%i");
        assert!(render(br#"{"rows":[["1"]"#, &tokens).is_err());
        assert!(render(br#"{"rows":[[1]]}"#, &tokens).is_err());
    }
}
