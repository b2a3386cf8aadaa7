//! sinfo's fields: the title and the value of each, for a row of a partition and its nodes,
//! and the node states as sinfo names them.

use super::Row;
use crate::api::types::{Node, PartitionInfo};
use crate::cli::format::{self, Field, Token};

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

/// The column title of field `code` (a `-o` code or a lowercase `-O` name).
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

/// A partition's time limit as sinfo prints it (`unset` when it has none).
fn time_text(limit: &crate::api::noval::NoVal<u32>, unset: &str) -> String {
    if limit.infinite {
        return "infinite".to_string();
    }
    match limit.get() {
        Some(m) => crate::options::time::format_elapsed(m as u64 * 60),
        None => unset.to_string(),
    }
}

/// The smallest of `values`, with a `+` after it when `suffix_plus` and they differ.
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

/// `s`, or `(null)` when it is empty, as Slurm prints a missing text.
fn or_null(s: &str) -> String {
    if s.is_empty() {
        "(null)".to_string()
    } else {
        s.to_string()
    }
}

/// The value of field `key` (a `-o` code or a lowercase `-O` name) for `row`; empty for a
/// field sinfo does not know.
pub fn value(key: &str, row: &Row) -> String {
    partition_value(key, row.partition).or_else(|| node_value(key, &row.nodes)).unwrap_or_default()
}

/// The value of partition field `key` for partition `p` (`n/a` for none); `None` when `key`
/// is no partition field.
fn partition_value(key: &str, p: Option<&PartitionInfo>) -> Option<String> {
    Some(match key {
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
        "p" | "prioritytier" => p.map(|p| p.priority.tier.to_string()).unwrap_or_default(),
        _ => return None,
    })
}

/// The value of node field `key` for `nodes` (of one row; those that show one node's value
/// show the first's); `None` when `key` is no node field.
fn node_value(key: &str, nodes: &[&Node]) -> Option<String> {
    let first = nodes.first().copied();
    Some(match key {
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
        _ => return None,
    })
}
