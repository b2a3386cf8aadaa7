//! `--json`: a REST reply printed as scontrol prints it, pretty and with its `meta` saying who
//! asked and with which command line.

use crate::api::types::Meta;
use serde::Serialize;

/// Fills `meta.command` with the command line and `meta.client` with the caller's user and
/// group, as Slurm's commands do in their JSON output.
pub fn stamp(meta: &mut Meta, argv: &[String]) {
    meta.command = argv.to_vec();
    meta.client.user = crate::identity::user_name(crate::identity::uid());
    meta.client.group = crate::identity::group_name(crate::identity::gid());
}

/// Prints `reply` pretty-printed, with a final newline.
pub fn print<T: Serialize>(reply: &T) {
    let mut text = serde_json::to_string_pretty(reply).expect("a reply serializes");
    text.push('\n');
    crate::cli::format::emit_text(&text);
}
