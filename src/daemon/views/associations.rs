//! `GET /slurmdb/v0.0.43/associations`, `…/users`, `…/accounts` and `…/qos` (sacctmgr's
//! data): the accounts, users and QOS of the configuration, with the associations the daemon
//! has seen jobs of, in slurmrestd's v0.0.43 shapes (the fields sacctmgr prints). The tree is
//! walked as sshare walks it (an account's users by name, then its sub-accounts by name).
//! slurmlet keeps no limits on associations: those fields are unset.

use crate::config::accounts::ROOT;
use crate::config::qos::{PreemptMode, Qos, TresLimits};
use crate::config::Config;
use crate::daemon::scheduling::priority::Shares;
use serde_json::{json, Value};

fn unset() -> Value {
    json!({ "set": false, "infinite": false, "number": 0 })
}

fn number(n: impl Into<Value>) -> Value {
    json!({ "set": true, "infinite": false, "number": n.into() })
}

/// A user of an association: uid and name.
type Member = (u32, String);

/// The tree's associations in sshare's order: (index, account, user).
fn walk(shares: &Shares) -> Vec<(usize, String, Option<Member>)> {
    shares
        .listing_order()
        .into_iter()
        .map(|(i, name)| (i, shares.names[i].0.clone(), shares.tree[i].user.map(|uid| (uid, name))))
        .collect()
}

/// The QOS an account offers (its own list, its parent's, …), else every QOS.
fn offered(config: &Config, account: &str) -> Vec<String> {
    config.account_tree.offered_qos(account).cloned().unwrap_or_else(|| qos_names(config))
}

/// The QOS names, `normal` first, the others in the file's order.
pub fn qos_names(config: &Config) -> Vec<String> {
    config.qos.names().to_vec()
}

/// Every association of `shares`, as slurmrestd's `associations`.
pub fn associations(config: &Config, shares: &Shares) -> Vec<Value> {
    let tree = &config.account_tree;
    walk(shares)
        .into_iter()
        .map(|(i, account, user)| {
            let a = &shares.tree[i];
            let parent = match (&user, a.parent) {
                (None, Some(p)) => shares.tree[p].name.clone(),
                _ => String::new(),
            };
            let default_qos = user
                .as_ref()
                .and_then(|(uid, _)| tree.default_qos.get(uid).cloned())
                .or_else(|| tree.account_default_qos(&account).cloned());
            let is_default =
                user.as_ref().is_some_and(|(uid, _)| tree.defaults.get(uid).is_some_and(|d| *d == account));
            json!({
                "account": account,
                "cluster": config.cluster_name,
                "user": user.map(|(_, name)| name).unwrap_or_default(),
                "partition": "",
                "parent_account": parent,
                "shares_raw": a.shares,
                "priority": unset(),
                "qos": offered(config, &account),
                "default": { "qos": default_qos.unwrap_or_default() },
                "id": i + 1,
                "is_default": is_default,
                "flags": [],
            })
        })
        .collect()
}

/// Every user with an association, by name, as slurmrestd's `users`.
pub fn users(config: &Config, shares: &Shares) -> Vec<Value> {
    let mut by_name: std::collections::BTreeMap<String, (u32, Vec<Value>)> = std::collections::BTreeMap::new();
    for (_, account, user) in walk(shares) {
        let Some((uid, name)) = user else { continue };
        by_name.entry(name.clone()).or_insert_with(|| (uid, Vec::new())).1.push(json!({
            "account": account, "cluster": config.cluster_name, "partition": "", "user": name,
        }));
    }
    by_name
        .into_iter()
        .map(|(name, (uid, associations))| {
            let default = config
                .account_tree
                .defaults
                .get(&uid)
                .cloned()
                .or_else(|| associations.first().and_then(|a| a["account"].as_str().map(str::to_string)))
                .unwrap_or_default();
            let admin = uid == 0 || config.operators.contains(&uid);
            json!({
                "name": name,
                "default": { "account": default, "wckey": "" },
                "administrator_level": [if admin { "Administrator" } else { "None" }],
                "associations": associations,
                "coordinators": [],
                "flags": [],
            })
        })
        .collect()
}

/// Every account, root among them, by name, as slurmrestd's `accounts`.
pub fn accounts(config: &Config, shares: &Shares) -> Vec<Value> {
    let mut by_name: std::collections::BTreeMap<String, Vec<Value>> = std::collections::BTreeMap::new();
    for (_, account, user) in walk(shares) {
        by_name.entry(account.clone()).or_default().push(json!({
            "account": account, "cluster": config.cluster_name, "partition": "",
            "user": user.map(|(_, name)| name).unwrap_or_default(),
        }));
    }
    by_name
        .into_iter()
        .map(|(name, associations)| {
            let (description, organization) = match config.account_tree.accounts.get(&name) {
                Some(a) => (a.description.clone(), a.organization.clone()),
                None if name == ROOT => ("default root account".to_string(), ROOT.to_string()),
                None => (name.clone(), name.clone()),
            };
            json!({
                "name": name,
                "description": description,
                "organization": organization,
                "associations": associations,
                "coordinators": [],
                "flags": [],
            })
        })
        .collect()
}

/// TRES limits as slurmrestd's lists of `{type, name, count}`.
fn tres(limits: &TresLimits) -> Value {
    let mut list = Vec::new();
    let mut add = |kind: &str, name: &str, count: Option<u64>| {
        if let Some(count) = count {
            list.push(json!({ "type": kind, "name": name, "count": count }));
        }
    };
    add("cpu", "", limits.cpu);
    add("mem", "", limits.mem_mb);
    add("node", "", limits.nodes);
    add("gres", "gpu", limits.gpus);
    Value::Array(list)
}

fn qos_value(name: &str, q: &Qos, id: usize) -> Value {
    // A QOS with no mode of its own takes the cluster's: slurmrestd says so.
    let mode = match q.preempt_mode {
        None => "CLUSTER",
        Some(PreemptMode::Off) => "DISABLED",
        Some(PreemptMode::Requeue) => "REQUEUE",
        Some(PreemptMode::Cancel) => "CANCEL",
    };
    let count = |n: Option<u32>| n.map_or_else(unset, number);
    json!({
        "name": name,
        "id": id,
        "description": q.description,
        "priority": number(q.priority),
        "usage_factor": number(q.usage_factor),
        "usage_threshold": unset(),
        "flags": if q.deny_on_limit { vec!["DENY_LIMIT"] } else { Vec::new() },
        "preempt": { "list": q.preempt, "mode": [mode], "exempt_time": unset() },
        "limits": {
            "grace_time": q.grace_time_secs,
            "max": {
                "wall_clock": { "per": { "job": count(q.max_wall_minutes) } },
                "jobs": { "active_jobs": { "per": { "user": count(q.max_jobs_per_user) } },
                          "per": { "user": count(q.max_submit_jobs_per_user) } },
                "tres": { "total": tres(&q.grp_tres), "per": { "user": tres(&q.max_tres_per_user) } },
            },
        },
    })
}

/// Every QOS, `normal` first, as slurmrestd's `qos`.
pub fn qos(config: &Config) -> Vec<Value> {
    qos_names(config)
        .iter()
        .enumerate()
        .filter_map(|(i, name)| config.qos.get(name).map(|q| qos_value(name, q, i + 1)))
        .collect()
}
