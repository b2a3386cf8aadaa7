//! `--help` and `--usage` texts, laid out as Slurm's commands print them, from the option table.

use super::table::{self, OptSpec, Section, Support, Tool, Value};

/// Width of the option column in `--help`.
const OPTION_COLUMN: usize = 30;
/// Width `--usage` wraps at.
const USAGE_WIDTH: usize = 80;

fn positional(tool: Tool) -> &'static str {
    match tool {
        Tool::Sbatch => "script [args...]",
        Tool::Srun | Tool::Salloc => "executable [args...]",
    }
}

/// The `--help` text of `tool`: a usage line, then the options by section, each with its
/// description and a note when it has no effect or is refused here.
pub fn help(tool: Tool) -> String {
    let mut out = format!("Usage: {} [OPTIONS...] {}\n", tool.name(), positional(tool));
    for section in Section::ALL {
        let mut options: Vec<&OptSpec> = table::options_for(tool).filter(|o| o.section == section).collect();
        if options.is_empty() {
            continue;
        }
        options.sort_by_key(|o| o.long);
        out.push('\n');
        out.push_str(section.heading());
        out.push('\n');
        for o in options {
            let synopsis = o.synopsis(tool);
            let note = match o.support {
                Support::Implemented => "",
                Support::Recorded(_) | Support::NoEffect(_) => " (no effect here)",
                Support::Refused(_) => " (not available here)",
            };
            if synopsis.len() + 2 < OPTION_COLUMN {
                out.push_str(&format!("  {synopsis:<width$}{}{note}\n", o.help, width = OPTION_COLUMN - 2));
            } else {
                out.push_str(&format!("  {synopsis}\n{:OPTION_COLUMN$}{}{note}\n", "", o.help));
            }
        }
    }
    out
}

/// The `--usage` text of `tool`: every option in brackets, wrapped at 80 columns.
pub fn usage(tool: Tool) -> String {
    let lead = format!("Usage: {} ", tool.name());
    let mut out = lead.clone();
    let mut column = lead.len();
    let mut options: Vec<&OptSpec> = table::options_for(tool).collect();
    options.sort_by_key(|o| o.long);
    let items = options.iter().map(|o| usage_item(o, tool)).chain(std::iter::once(positional(tool).to_string()));
    for (i, item) in items.enumerate() {
        if i > 0 && column + 1 + item.len() > USAGE_WIDTH {
            out.push('\n');
            out.push_str(&" ".repeat(lead.len()));
            column = lead.len();
        } else if i > 0 {
            out.push(' ');
            column += 1;
        }
        out.push_str(&item);
        column += item.len();
    }
    out.push('\n');
    out
}

fn usage_item(o: &OptSpec, tool: Tool) -> String {
    match (o.short_for(tool), o.value) {
        (Some(c), Value::Flag | Value::Count) => format!("[-{c}]"),
        (Some(c), Value::Required(v)) => format!("[-{c} {v}]"),
        (_, Value::Optional(v)) => format!("[--{}[={v}]]", o.long),
        (None, Value::Flag | Value::Count) => format!("[--{}]", o.long),
        (None, Value::Required(v)) => format!("[--{}={v}]", o.long),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_option_of_the_command_once() {
        for tool in Tool::ALL {
            let text = help(tool);
            for o in table::options_for(tool) {
                let needle = format!("--{}", o.long);
                let hits = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("  "))
                    .map(|l| if l.starts_with("-") && !l.starts_with("--") { &l[4..] } else { l.trim_start() })
                    .filter(|l| l.split([' ', '=', '[']).next() == Some(needle.as_str()))
                    .count();
                assert_eq!(hits, 1, "{} --help lists {needle} {hits} times", tool.name());
            }
        }
        assert!(help(Tool::Sbatch).contains("  -J, --job-name=jobname      name of job\n"));
        assert!(!help(Tool::Sbatch).contains("--pty"), "srun's options stay out of sbatch --help");
    }

    #[test]
    fn usage_wraps_at_80_columns_and_ends_with_the_script() {
        let text = usage(Tool::Sbatch);
        assert!(text.starts_with("Usage: sbatch [-A name] "), "{text}");
        assert!(text.lines().all(|l| l.len() <= USAGE_WIDTH), "{text}");
        assert!(text.trim_end().ends_with("script [args...]"));
        assert!(text.contains("[--exclusive[=user|mcs|topo]]"));
    }
}
