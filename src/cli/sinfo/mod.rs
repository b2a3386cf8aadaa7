//! `sinfo`: view partitions and nodes.

use super::format::{self, Field, Token};
use crate::api::types::{Node, PartitionInfo};
use clap::Parser;
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
        format::emit(&format::date_line(crate::options::now()));
    }
    if !args.noheader {
        format::emit(&header(&tokens));
    }
    for row in &rows {
        format::emit(&format_row(&tokens, row));
    }
    0
}

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

/// The node's state in sinfo's compact form (`idle`, `mix`, `alloc`, …).
pub fn state_compact(n: &Node) -> String {
    let s = n.state.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    match s.as_str() {
        "IDLE" => "idle",
        "MIXED" => "mix",
        "ALLOCATED" => "alloc",
        "DOWN" => "down",
        "DRAIN" | "DRAINED" => "drain",
        "DRAINING" => "drng",
        "COMPLETING" => "comp",
        "RESERVED" => "resv",
        "FUTURE" => "futr",
        "UNKNOWN" | "" => "unk",
        other => return other.to_ascii_lowercase(),
    }
    .to_string()
}

/// The node's state in sinfo's long form (`idle`, `mixed`, `allocated`, …).
pub fn state_long(n: &Node) -> String {
    let s = n.state.first().map(|s| s.to_ascii_lowercase()).unwrap_or_else(|| "unknown".into());
    match s.as_str() {
        "drain" => "drained".to_string(),
        _ => s,
    }
}

fn title(code: &str) -> &'static str {
    match code {
        "P" | "R" | "partition" | "partitionname" => "PARTITION",
        "a" | "available" => "AVAIL",
        "l" | "timelimit" => "TIMELIMIT",
        "L" | "defaulttime" => "DEFAULTTIME",
        "s" | "size" => "JOB_SIZE",
        "r" | "root" => "ROOT",
        "h" | "oversubscribe" => "OVERSUBSCRIBE",
        "g" | "groups" => "GROUPS",
        "D" | "nodes" => "NODES",
        "t" | "T" | "statecompact" | "statelong" => "STATE",
        "N" | "nodelist" => "NODELIST",
        "n" | "nodehost" => "HOSTNAMES",
        "o" | "nodeaddr" => "NODE_ADDR",
        "G" | "gres" => "GRES",
        "gresused" => "GRES_USED",
        "C" | "cpusstate" => "CPUS(A/I/O/T)",
        "c" | "cpus" => "CPUS",
        "m" | "memory" => "MEMORY",
        "e" | "freemem" => "FREE_MEM",
        "O" | "cpusload" => "CPU_LOAD",
        "p" | "prioritytier" => "PRIO_TIER",
        "z" | "socketcorethread" => "S:C:T",
        "d" | "disk" => "TMP_DISK",
        "w" | "weight" => "WEIGHT",
        "f" | "features" => "AVAIL_FEATURES",
        "b" | "features_act" => "ACTIVE_FEATURES",
        "E" | "reason" => "REASON",
        "u" | "user" => "USER",
        "H" | "timestamp" => "TIMESTAMP",
        "F" | "nodeaiot" => "NODES(A/I/O/T)",
        "A" | "nodeai" => "NODES(A/I)",
        "X" | "sockets" => "SOCKETS",
        "Y" | "cores" => "CORES",
        "Z" | "threads" => "THREADS",
        "i" | "reservation" => "RESERVATION",
        "V" | "cluster" => "CLUSTER",
        _ => "",
    }
}

/// The header line for `tokens`.
pub fn header(tokens: &[Token]) -> String {
    format::render(tokens, |f| title(&f.key).to_string())
}

/// One row for `tokens`.
pub fn format_row(tokens: &[Token], row: &Row) -> String {
    format::render(tokens, |f: &Field| value(&f.key, row))
}

fn time_text(limit: &crate::api::noval::NoVal<u32>, unset: &str) -> String {
    if limit.infinite {
        return "infinite".to_string();
    }
    match limit.get() {
        Some(m) => crate::options::time::format_elapsed(m as u64 * 60),
        None => unset.to_string(),
    }
}

fn min_max(values: impl Iterator<Item = u64>, suffix_plus: bool) -> String {
    let v: Vec<u64> = values.collect();
    let (Some(min), Some(max)) = (v.iter().min(), v.iter().max()) else {
        return "0".to_string();
    };
    if min == max || !suffix_plus {
        min.to_string()
    } else {
        format!("{min}+")
    }
}

fn or_null(s: &str) -> String {
    if s.is_empty() {
        "(null)".to_string()
    } else {
        s.to_string()
    }
}

/// The value of field `key` (a `-o` code or a lowercase `-O` name) for `row`.
pub fn value(key: &str, row: &Row) -> String {
    let p = row.partition;
    let first = row.nodes.first().copied();
    let nodes = &row.nodes;
    match key {
        "P" | "partition" => match p {
            Some(p) if p.flags.iter().any(|f| f == "DEFAULT") => format!("{}*", p.name),
            Some(p) => p.name.clone(),
            None => "n/a".to_string(),
        },
        "R" | "partitionname" => p.map(|p| p.name.clone()).unwrap_or_else(|| "n/a".into()),
        "a" | "available" => match p {
            Some(p) => p
                .partition
                .state
                .first()
                .map(|s| match s.as_str() {
                    "UP" => "up".to_string(),
                    "DOWN" => "down".to_string(),
                    "DRAIN" => "drain".to_string(),
                    "INACTIVE" => "inact".to_string(),
                    other => other.to_ascii_lowercase(),
                })
                .unwrap_or_else(|| "up".into()),
            None => "n/a".to_string(),
        },
        "l" | "timelimit" => p.map(|p| time_text(&p.maximums.time, "infinite")).unwrap_or_else(|| "n/a".into()),
        "L" | "defaulttime" => p.map(|p| time_text(&p.defaults.time, "n/a")).unwrap_or_else(|| "n/a".into()),
        "s" | "size" => match p {
            Some(p) if !p.maximums.nodes.infinite => match p.maximums.nodes.get() {
                Some(n) => format!("1-{n}"),
                None => "1-infinite".to_string(),
            },
            _ => "1-infinite".to_string(),
        },
        "r" | "root" => "no".to_string(),
        "h" | "oversubscribe" => "NO".to_string(),
        "g" | "groups" => "all".to_string(),
        "D" | "nodes" => nodes.len().to_string(),
        "t" | "statecompact" => first.map(state_compact).unwrap_or_default(),
        "T" | "statelong" => first.map(state_long).unwrap_or_default(),
        "N" | "nodelist" | "n" | "nodehost" | "o" | "nodeaddr" => {
            let names: Vec<String> = nodes
                .iter()
                .map(|n| match key {
                    "n" | "nodehost" if !n.hostname.is_empty() => n.hostname.clone(),
                    "o" | "nodeaddr" if !n.address.is_empty() => n.address.clone(),
                    _ => n.name.clone(),
                })
                .collect();
            crate::options::hostlist::compress(&names)
        }
        "G" | "gres" => or_null(first.map(|n| n.gres.as_str()).unwrap_or("")),
        "gresused" => or_null(first.map(|n| n.gres_used.as_str()).unwrap_or("")),
        "C" | "cpusstate" => {
            let alloc: u32 = nodes.iter().map(|n| n.alloc_cpus).sum();
            let total: u32 = nodes.iter().map(|n| n.cpus).sum();
            let idle = total.saturating_sub(alloc);
            format!("{alloc}/{idle}/0/{total}")
        }
        "c" | "cpus" => min_max(nodes.iter().map(|n| n.cpus as u64), true),
        "m" | "memory" => min_max(nodes.iter().map(|n| n.real_memory), true),
        "e" | "freemem" => min_max(nodes.iter().map(|n| n.free_mem.get().unwrap_or(0)), false),
        "O" | "cpusload" => {
            let load = first.map(|n| n.cpu_load).unwrap_or(0);
            format!("{}.{:02}", load / 100, load % 100)
        }
        "p" | "prioritytier" => p.map(|p| p.priority.tier.to_string()).unwrap_or_default(),
        "z" | "socketcorethread" => first
            .map(|n| {
                let sockets = n.sockets.max(1);
                format!("{}:{}:{}", sockets, n.cores / sockets, n.threads.max(1))
            })
            .unwrap_or_default(),
        "d" | "disk" => first.map(|n| n.temporary_disk.to_string()).unwrap_or_default(),
        "w" | "weight" => first.map(|n| n.weight.to_string()).unwrap_or_default(),
        "f" | "features" => or_null(&first.map(|n| n.features.join(",")).unwrap_or_default()),
        "b" | "features_act" => or_null(&first.map(|n| n.active_features.join(",")).unwrap_or_default()),
        "E" | "reason" => match first.map(|n| n.reason.as_str()) {
            Some(r) if !r.is_empty() => r.to_string(),
            _ => "none".to_string(),
        },
        "u" | "user" => match first.map(|n| n.reason_set_by_user.as_str()) {
            Some(u) if !u.is_empty() => u.to_string(),
            _ => "Unknown".to_string(),
        },
        "H" | "timestamp" => match first.and_then(|n| n.reason_changed_at.get()) {
            Some(t) if t > 0 => crate::sys::format_local_time(t),
            _ => "Unknown".to_string(),
        },
        "F" | "nodeaiot" | "A" | "nodeai" => {
            let (mut a, mut i, mut o) = (0, 0, 0);
            for n in nodes {
                match state_compact(n).as_str() {
                    "alloc" | "mix" | "comp" => a += 1,
                    "idle" => i += 1,
                    _ => o += 1,
                }
            }
            if matches!(key, "A" | "nodeai") {
                format!("{a}/{i}")
            } else {
                format!("{a}/{i}/{o}/{}", nodes.len())
            }
        }
        "X" | "sockets" => first.map(|n| n.sockets.to_string()).unwrap_or_default(),
        "Y" | "cores" => first.map(|n| n.cores.to_string()).unwrap_or_default(),
        "Z" | "threads" => first.map(|n| n.threads.to_string()).unwrap_or_default(),
        "V" | "cluster" => first.map(|n| or_null(&n.cluster_name)).unwrap_or_default(),
        _ => String::new(),
    }
}

/// The `--json` body: one `sinfo[]` entry per row, as `sinfo --json` (v0.0.43) shapes it.
pub fn json_value(rows: &[Row]) -> serde_json::Value {
    use serde_json::json;
    let entries: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let nodes = &row.nodes;
            let count = |want: &[&str]| nodes.iter().filter(|n| want.contains(&state_compact(n).as_str())).count();
            let alloc_cpus: u32 = nodes.iter().map(|n| n.alloc_cpus).sum();
            let total_cpus: u32 = nodes.iter().map(|n| n.cpus).sum();
            let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
            let first = nodes.first();
            let u = |f: fn(&Node) -> u64| -> (u64, u64) {
                let v: Vec<u64> = nodes.iter().map(|n| f(n)).collect();
                (v.iter().copied().min().unwrap_or(0), v.iter().copied().max().unwrap_or(0))
            };
            let noval = |n: u64| json!({"set": true, "infinite": false, "number": n});
            let (cmin, cmax) = u(|n| n.cpus as u64);
            let (lmin, lmax) = u(|n| n.cpu_load as u64);
            let (mmin, mmax) = u(|n| n.real_memory);
            let (fmin, fmax) = u(|n| n.free_mem.get().unwrap_or(0));
            let (smin, smax) = u(|n| n.sockets as u64);
            let (comin, comax) = u(|n| n.cores as u64);
            let (tmin, tmax) = u(|n| n.threads as u64);
            let (dmin, dmax) = u(|n| n.temporary_disk as u64);
            let (wmin, wmax) = u(|n| n.weight as u64);
            json!({
                "port": 6818,
                "node": {"state": first.map(|n| n.state.clone()).unwrap_or_default()},
                "nodes": {
                    "allocated": count(&["alloc", "mix", "comp"]),
                    "idle": count(&["idle"]),
                    "other": nodes.len() - count(&["alloc", "mix", "comp", "idle"]),
                    "total": nodes.len(),
                    "hostnames": [],
                    "addresses": [],
                    "nodes": names,
                },
                "cpus": {
                    "allocated": alloc_cpus,
                    "idle": total_cpus.saturating_sub(alloc_cpus),
                    "other": 0,
                    "total": total_cpus,
                    "minimum": cmin,
                    "maximum": cmax,
                    "load": {"minimum": lmin, "maximum": lmax},
                    "per_node": {"max": {"set": false, "infinite": true, "number": 0}},
                },
                "sockets": {"minimum": smin, "maximum": smax},
                "cores": {"minimum": comin, "maximum": comax},
                "threads": {"minimum": tmin, "maximum": tmax},
                "disk": {"minimum": dmin, "maximum": dmax},
                "memory": {
                    "minimum": mmin,
                    "maximum": mmax,
                    "free": {"minimum": noval(fmin), "maximum": noval(fmax)},
                    "allocated": nodes.iter().map(|n| n.alloc_memory).sum::<u64>(),
                },
                "weight": {"minimum": wmin, "maximum": wmax},
                "features": {
                    "total": first.map(|n| n.features.join(",")).unwrap_or_default(),
                    "active": first.map(|n| n.active_features.join(",")).unwrap_or_default(),
                },
                "gres": {
                    "total": first.map(|n| n.gres.clone()).unwrap_or_default(),
                    "used": first.map(|n| n.gres_used.clone()).unwrap_or_default(),
                },
                "cluster": first.map(|n| n.cluster_name.clone()).unwrap_or_default(),
                "comment": first.map(|n| n.comment.clone()).unwrap_or_default(),
                "extra": "",
                "reason": {
                    "description": first.map(|n| n.reason.clone()).unwrap_or_default(),
                    "time": 0,
                    "user": "",
                },
                "reservation": "",
                "resource_spec": {"cpus": "", "memory": 0},
                "partition": row.partition.map(|p| serde_json::to_value(p).unwrap_or_default()).unwrap_or_default(),
            })
        })
        .collect();
    json!({
        "sinfo": entries,
        "meta": crate::api::types::Meta::default(),
        "errors": [],
        "warnings": [],
    })
}

fn print_json(rows: &[Row]) {
    match serde_json::to_string_pretty(&json_value(rows)) {
        Ok(s) => format::emit(&s),
        Err(e) => super::error(CMD, &e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;
    use crate::api::types::PartitionState;

    fn node(state: &str, alloc: u32) -> Node {
        Node {
            name: "vm".into(),
            hostname: "vm".into(),
            address: "vm".into(),
            cpus: 2,
            cores: 2,
            sockets: 1,
            threads: 1,
            real_memory: 23081,
            free_mem: NoVal::of(22965),
            cpu_load: 41,
            gres: "gpu:4".into(),
            gres_used: "gpu:0".into(),
            state: vec![state.into()],
            partitions: vec!["gpu".into(), "debug".into()],
            alloc_cpus: alloc,
            weight: 1,
            ..Default::default()
        }
    }

    fn partition(name: &str, max: Option<u32>, default: bool) -> PartitionInfo {
        let mut p = PartitionInfo { name: name.into(), ..Default::default() };
        p.maximums.time = max.map(NoVal::of).unwrap_or_else(NoVal::infinite);
        p.maximums.nodes = NoVal::infinite();
        p.priority.tier = 1;
        p.partition = PartitionState { state: vec!["UP".into()] };
        p.nodes.configured = "vm".into();
        if default {
            p.flags = vec!["DEFAULT".into()];
        }
        p
    }

    fn render(format: &str, node_mode: bool, state: &str, alloc: u32) -> Vec<String> {
        let parts = [partition("gpu", None, true), partition("debug", Some(30), false)];
        let n = node(state, alloc);
        let prefs: Vec<&PartitionInfo> = parts.iter().collect();
        let nodes = vec![&n];
        let rows = if node_mode { node_rows(&prefs, &nodes) } else { partition_rows(&prefs, &nodes) };
        let mut tokens = format::parse(format);
        if format == NODE_FORMAT || format == NODE_LONG_FORMAT {
            if let Some(Token::Field(f)) = tokens.first_mut() {
                f.width = 9;
            }
        }
        let mut out = vec![header(&tokens)];
        out.extend(rows.iter().map(|r| format_row(&tokens, r)));
        out
    }

    #[test]
    fn default_format() {
        assert_eq!(
            render(DEFAULT_FORMAT, false, "IDLE", 0),
            vec![
                "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
                "gpu*         up   infinite      1   idle vm",
                "debug        up      30:00      1   idle vm",
            ]
        );
    }

    #[test]
    fn node_format() {
        assert_eq!(
            render(NODE_FORMAT, true, "IDLE", 0),
            vec![
                "NODELIST   NODES PARTITION STATE ",
                "vm             1      gpu* idle  ",
                "vm             1     debug idle  "
            ]
        );
        assert_eq!(
            render(NODE_LONG_FORMAT, true, "IDLE", 0),
            vec![
                "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              ",
                "vm             1      gpu*        idle 2       1:2:1  23081        0      1   (null) none                ",
                "vm             1     debug        idle 2       1:2:1  23081        0      1   (null) none                ",
            ]
        );
    }

    #[test]
    fn summarize_and_long() {
        assert_eq!(
            render(SUMMARIZE_FORMAT, false, "IDLE", 0),
            vec![
                "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
                "gpu*         up   infinite          0/1/0/1 vm",
                "debug        up      30:00          0/1/0/1 vm",
            ]
        );
        assert_eq!(
            render(LONG_FORMAT, false, "IDLE", 0),
            vec![
                "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST",
                "gpu*         up   infinite 1-infinite   no       NO        all      1        idle vm",
                "debug        up      30:00 1-infinite   no       NO        all      1        idle vm",
            ]
        );
    }

    #[test]
    fn custom_formats() {
        assert_eq!(
            render("%P %a %l %D %t %N %G %c %m", false, "IDLE", 0),
            vec![
                "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST GRES CPUS MEMORY",
                "gpu* up infinite 1 idle vm gpu:4 2 23081",
                "debug up 30:00 1 idle vm gpu:4 2 23081"
            ]
        );
        assert_eq!(
            render("%N %c %m %G %t %O %e", true, "IDLE", 0)[..2],
            ["NODELIST CPUS MEMORY GRES STATE CPU_LOAD FREE_MEM", "vm 2 23081 gpu:4 idle 0.41 22965"]
        );
        assert_eq!(
            render("%N %C %G %t", true, "MIXED", 1)[..2],
            ["NODELIST CPUS(A/I/O/T) GRES STATE", "vm 1/1/0/2 gpu:4 mix"]
        );
        assert_eq!(render("%P %G %l %p %c %m", false, "ALLOCATED", 2)[1], "gpu* gpu:4 infinite 1 2 23081");
        assert_eq!(render("%T", false, "ALLOCATED", 2)[1], "allocated");
        assert_eq!(render("%t", false, "ALLOCATED", 2)[1], "alloc");
    }

    #[test]
    fn null_gres_and_long_fields() {
        let parts = [partition("gpu", Some(24 * 60), true)];
        let mut n = node("IDLE", 0);
        n.gres = String::new();
        let rows = partition_rows(&[&parts[0]], &[&n]);
        assert_eq!(value("G", &rows[0]), "(null)");
        assert_eq!(value("l", &rows[0]), "1-00:00:00");
        let t = format::parse_long("Partition,Gres:8,CPUsState", 20);
        assert_eq!(header(&t), "PARTITION           GRES    CPUS(A/I/O/T)       ");
        assert_eq!(format_row(&t, &rows[0]), "gpu*                (null)  0/2/0/2             ");
    }

    #[test]
    fn json_shape() {
        let parts = [partition("gpu", None, true)];
        let n = node("MIXED", 1);
        let rows = partition_rows(&[&parts[0]], &[&n]);
        let v = json_value(&rows);
        assert_eq!(v["sinfo"][0]["nodes"]["allocated"], 1);
        assert_eq!(v["sinfo"][0]["cpus"]["idle"], 1);
        assert_eq!(v["sinfo"][0]["gres"]["total"], "gpu:4");
        assert_eq!(v["sinfo"][0]["partition"]["name"], "gpu");
    }
}
