//! `sinfo`: view partitions and nodes.
//!
//! * `fields`: each field's title and value for a row, and the node states' names;
//! * `json`: the rows as `sinfo --json` prints them.

mod fields;
mod json;
mod reservations;
#[cfg(test)]
mod tests;

use super::format::{self, Token};
use crate::api::types::{Node, PartitionInfo};
use clap::Parser;
use fields::{format_row, header, state_compact, state_long};
use json::print_json;
use std::ffi::OsString;

const CMD: &str = "sinfo";

/// The default (partition-oriented) format.
pub const DEFAULT_FORMAT: &str = "%9P %.5a %.10l %.6D %.6t %N";
/// `-s`.
pub const SUMMARIZE_FORMAT: &str = "%9P %.5a %.10l %.16F %N";
/// `-l`.
pub const LONG_FORMAT: &str = "%9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
/// `-N`; `%N`'s width is filled in from the node names.
pub const NODE_FORMAT: &str = "%N %.6D %.9P %6t";
/// `-R`; `%E`'s width is widened to the longest reason, which Slurm would cut at 20.
pub const REASONS_FORMAT: &str = "%20E %9u %19H %N";
/// `-N -l`.
pub const NODE_LONG_FORMAT: &str = "%N %.6D %.9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";

/// sinfo's options.
#[derive(Debug, Parser)]
#[command(
    disable_version_flag = true,
    disable_help_flag = true,
    about = "view information about Slurm nodes and partitions"
)]
pub struct SinfoArgs {
    /// Print this help
    #[arg(long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// no headers on output
    #[arg(short = 'h', long = "noheader")]
    pub noheader: bool,
    /// Node-centric format
    #[arg(short = 'N', long = "Node")]
    pub node: bool,
    /// Long output
    #[arg(short = 'l', long = "long")]
    pub long: bool,
    /// Summarize partition information
    #[arg(short = 's', long = "summarize")]
    pub summarize: bool,
    /// Format specification
    #[arg(short = 'o', long = "format")]
    pub format: Option<String>,
    /// Format specification by field names
    #[arg(short = 'O', long = "Format")]
    pub format_long: Option<String>,
    /// Report on specific partition(s)
    #[arg(short = 'p', long = "partition")]
    pub partition: Option<String>,
    /// Report on specific node(s)
    #[arg(short = 'n', long = "nodes")]
    pub nodes: Option<String>,
    /// List reasons nodes are unavailable
    /// report reservations
    #[arg(short = 'T', long = "reservation")]
    pub reservation: bool,

    #[arg(short = 'R', long = "list-reasons")]
    pub list_reasons: bool,
    /// Only nodes in these states
    #[arg(short = 't', long = "states")]
    pub states: Option<String>,
    /// Produce JSON output
    #[arg(long = "json")]
    pub json: bool,
    /// Show all partitions (accepted)
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Group only identical nodes (accepted)
    #[arg(short = 'e', long = "exact")]
    pub exact: bool,
    /// Report once (accepted)
    #[arg(short = 'i', long = "iterate")]
    pub iterate: Option<String>,
    /// Sort order (accepted)
    #[arg(short = 'S', long = "sort")]
    pub sort: Option<String>,
    /// The cluster to talk to: a profile of the profiles file (see `slurmlet profiles`)
    #[arg(short = 'M', long = "clusters", value_name = "cluster_name")]
    pub clusters: Option<String>,
    /// Verbosity (ignored)
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub version: super::VersionFlag,
}

/// One output row: a partition (if any) and the nodes it covers.
pub struct Row<'a> {
    /// The partition.
    pub partition: Option<&'a PartitionInfo>,
    /// Its nodes (in this state group).
    pub nodes: Vec<&'a Node>,
}

/// Runs sinfo.
pub fn run(args: Vec<OsString>) -> i32 {
    let args: SinfoArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    super::choose_cluster(args.clusters.as_deref());
    super::set_verbosity(args.verbose);
    // A malformed --nodes is refused as it is read, as Slurm's sinfo does.
    let node_names = args.nodes.as_deref().map(crate::options::hostlist::expand).transpose();
    let node_names: Option<Vec<String>> = match node_names {
        Ok(names) => names,
        Err(e) => {
            for line in &e.log {
                super::error(CMD, line);
            }
            super::error(CMD, &format!("'{}' invalid entry for --nodes", e.text));
            return 1;
        }
    };
    if args.reservation {
        return reservations::run(!args.noheader, args.long);
    }
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (nodes, partitions) = match (client.nodes(), client.partitions()) {
        (Ok(n), Ok(p)) => (n, p),
        (Err(e), _) | (_, Err(e)) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let wanted: Option<Vec<&str>> =
        args.partition.as_deref().map(|p| p.split(',').map(str::trim).filter(|s| !s.is_empty()).collect());
    let parts: Vec<&PartitionInfo> =
        partitions.partitions.iter().filter(|p| wanted.as_ref().is_none_or(|w| w.contains(&p.name.as_str()))).collect();
    let states: Option<Vec<String>> =
        args.states.as_deref().map(|s| s.split(',').map(|x| x.trim().to_ascii_lowercase()).collect());
    let node_ok = |n: &Node| {
        node_names.as_ref().is_none_or(|names| names.contains(&n.name))
            && states
                .as_ref()
                .is_none_or(|s| s.iter().any(|x| *x == state_compact(n) || *x == state_long(n) || x == "all"))
    };
    let nodes: Vec<&Node> =
        nodes.nodes.iter().filter(|n| node_ok(n) && (!args.list_reasons || !n.reason.is_empty())).collect();
    let rows = if args.list_reasons {
        nodes.iter().map(|n| Row { partition: None, nodes: vec![n] }).collect()
    } else if args.node {
        node_rows(&parts, &nodes)
    } else {
        partition_rows(&parts, &nodes)
    };

    if args.json {
        print_json(&rows);
        return 0;
    }
    let tokens = build_format(&args, &rows);
    if args.long {
        format::emit(&format::date_line(crate::sys::now()));
    }
    if !args.noheader {
        format::emit(&header(&tokens));
    }
    for row in &rows {
        format::emit(&format_row(&tokens, row));
    }
    0
}

/// The nodes of `nodes` that are in partition `p`.
fn nodes_of<'a>(p: &PartitionInfo, nodes: &[&'a Node]) -> Vec<&'a Node> {
    nodes
        .iter()
        .filter(|n| n.partitions.contains(&p.name) || p.nodes.configured.split(',').any(|c| c == n.name))
        .copied()
        .collect()
}

/// Partition-oriented rows: one per partition and node state.
pub fn partition_rows<'a>(parts: &[&'a PartitionInfo], nodes: &[&'a Node]) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    for p in parts {
        let mine = nodes_of(p, nodes);
        if mine.is_empty() {
            continue;
        }
        let mut groups: Vec<(String, Vec<&Node>)> = Vec::new();
        for n in mine {
            let s = state_long(n);
            match groups.iter_mut().find(|(k, _)| *k == s) {
                Some((_, v)) => v.push(n),
                None => groups.push((s, vec![n])),
            }
        }
        for (_, g) in groups {
            rows.push(Row { partition: Some(p), nodes: g });
        }
    }
    rows
}

/// Node-oriented rows: one per node and partition.
pub fn node_rows<'a>(parts: &[&'a PartitionInfo], nodes: &[&'a Node]) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    for n in nodes {
        for p in parts {
            if !nodes_of(p, std::slice::from_ref(n)).is_empty() {
                rows.push(Row { partition: Some(p), nodes: vec![n] });
            }
        }
    }
    rows
}

/// The format the options ask for (or `SINFO_FORMAT`, or the default), with the widths of
/// `-R`'s reasons and `-N`'s names fitted to `rows`.
fn build_format(args: &SinfoArgs, rows: &[Row]) -> Vec<Token> {
    if let Some(f) = &args.format_long {
        return format::parse_long(f, 20);
    }
    let text = match &args.format {
        Some(f) => f.clone(),
        None if args.list_reasons => REASONS_FORMAT.to_string(),
        None if args.node && args.long => NODE_LONG_FORMAT.to_string(),
        None if args.node => NODE_FORMAT.to_string(),
        None if args.summarize => SUMMARIZE_FORMAT.to_string(),
        None if args.long => LONG_FORMAT.to_string(),
        None => match std::env::var("SINFO_FORMAT") {
            Ok(f) if !f.is_empty() => f,
            _ => DEFAULT_FORMAT.to_string(),
        },
    };
    let mut tokens = format::parse(&text);
    if args.format.is_none() && args.list_reasons {
        let width = rows.iter().flat_map(|r| r.nodes.iter().map(|n| n.reason.chars().count())).max().unwrap_or(0);
        if let Some(Token::Field(f)) = tokens.first_mut() {
            f.width = width.max(f.width);
        }
    } else if args.format.is_none() && args.node {
        let width = rows.iter().flat_map(|r| r.nodes.iter().map(|n| n.name.chars().count())).max().unwrap_or(0).max(9);
        if let Some(Token::Field(f)) = tokens.first_mut() {
            f.width = width;
        }
    }
    tokens
}
