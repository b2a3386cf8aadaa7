//! `sinfo --json`: the rows in the shape of Slurm's `sinfo --json` (data_parser v0.0.43).

use super::fields::state_compact;
use super::{Row, CMD};
use crate::api::types::Node;
use crate::cli::format;

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

/// Prints the `--json` body of `rows`.
pub(super) fn print_json(rows: &[Row]) {
    match serde_json::to_string_pretty(&json_value(rows)) {
        Ok(s) => format::emit(&s),
        Err(e) => crate::cli::error(CMD, &e.to_string()),
    }
}
