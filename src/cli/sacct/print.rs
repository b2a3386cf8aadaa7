//! sacct's lines: fixed-width columns (each followed by a blank; text longer than its column
//! ends in `+`), or `-p`/`-P` fields joined by `|` (or `--delimiter`), as Slurm's
//! `print_fields` writes them.

use super::fields::{secs_text, Cell, Column};
use super::time::time_str;

/// How fields are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Columns of fixed width.
    Fixed,
    /// Fields followed by `delimiter`; with `trailing` (`-p`) the last one too.
    Parsable {
        /// `|`, or `--delimiter`.
        delimiter: String,
        /// `-p` rather than `-P`.
        trailing: bool,
    },
}

impl Layout {
    /// The text after field `i` of `n`.
    fn after(&self, i: usize, n: usize) -> &str {
        match self {
            Layout::Fixed => " ",
            Layout::Parsable { trailing: false, .. } if i + 1 == n => "",
            Layout::Parsable { delimiter, .. } => delimiter,
        }
    }
}

/// `text` in a column of `width` (negative: left-justified), cut to it: with `plus`, a cut
/// text ends in `+`.
fn fit(text: &str, width: i32, plus: bool) -> String {
    let w = width.unsigned_abs() as usize;
    let chars = text.chars().count();
    let shown: String = if chars > w {
        let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
        if w > 0 {
            s.push(if plus { '+' } else { text.chars().nth(w - 1).unwrap_or(' ') });
        }
        s
    } else {
        text.to_string()
    };
    pad(&shown, width)
}

/// `text` padded to `width` (negative: left-justified), never cut.
fn pad(text: &str, width: i32) -> String {
    let w = width.unsigned_abs() as usize;
    if width < 0 {
        format!("{text:<w$}")
    } else {
        format!("{text:>w$}")
    }
}

/// The header: the names, and under fixed columns a line of dashes.
pub fn header(columns: &[Column], layout: &Layout) -> String {
    let named: Vec<(&str, i32)> = columns.iter().map(|c| (c.name, c.width)).collect();
    header_of(&named, layout)
}

/// [`header`] of columns given as (name, width), for reports whose column names are made
/// at run time (sreport's job size ranges).
pub fn header_of(columns: &[(&str, i32)], layout: &Layout) -> String {
    let n = columns.len();
    let mut out = String::new();
    for (i, &(name, width)) in columns.iter().enumerate() {
        match layout {
            Layout::Fixed => out.push_str(&fit(name, width, false)),
            Layout::Parsable { .. } => out.push_str(name),
        }
        out.push_str(layout.after(i, n));
    }
    out.push('\n');
    if *layout == Layout::Fixed {
        for &(_, width) in columns {
            out.push_str(&"-".repeat(width.unsigned_abs() as usize));
            out.push(' ');
        }
        out.push('\n');
    }
    out
}

/// One field's text in its column.
fn field(cell: &Cell, width: i32, layout: &Layout) -> String {
    let fixed = *layout == Layout::Fixed;
    let w = width.unsigned_abs() as usize;
    match cell {
        Cell::Text(None) | Cell::Number(None) | Cell::Secs(None) if fixed => " ".repeat(w),
        Cell::Text(None) | Cell::Number(None) | Cell::Secs(None) => String::new(),
        Cell::Text(Some(t)) if fixed => fit(t, width, true),
        Cell::Text(Some(t)) => t.clone(),
        Cell::Number(Some(n)) if fixed => pad(&n.to_string(), width),
        Cell::Number(Some(n)) => n.to_string(),
        Cell::Secs(Some(s)) if fixed => pad(&secs_text(*s), width),
        Cell::Secs(Some(s)) => secs_text(*s),
        Cell::Date(t) => {
            let text = time_str(*t);
            if !fixed {
                text
            } else if text.chars().count() > w && !matches!(text.as_str(), "Unknown" | "None") {
                // strftime has no room: Slurm fills the column with '#'.
                "#".repeat(w)
            } else {
                fit(&text, width, false)
            }
        }
    }
}

/// One row: `cells` in `columns`.
pub fn row(columns: &[Column], cells: &[Cell], layout: &Layout) -> String {
    let widths: Vec<i32> = columns.iter().map(|c| c.width).collect();
    row_of(&widths, cells, layout)
}

/// [`row`] in columns given by their widths alone.
pub fn row_of(widths: &[i32], cells: &[Cell], layout: &Layout) -> String {
    let n = widths.len();
    let mut out = String::new();
    for (i, (&width, cell)) in widths.iter().zip(cells).enumerate() {
        out.push_str(&field(cell, width, layout));
        out.push_str(layout.after(i, n));
    }
    out.push('\n');
    out
}

/// Prints names `per_line` to a line, each padded to `width`, as sacct's `--help…` lists do.
pub fn columns_list<'a>(names: impl Iterator<Item = &'a str>, per_line: usize, width: usize) {
    let mut out = String::new();
    for (i, name) in names.enumerate() {
        if i % per_line != 0 {
            out.push(' ');
        } else if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{name:<width$}"));
    }
    out.push('\n');
    crate::cli::format::emit_text(&out);
}
