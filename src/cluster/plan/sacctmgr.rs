//! The `sacctmgr` commands that give the cluster's database the box's accounts, users, QOS
//! and limits.
//!
//! A lab moving from one slurmlet machine to a Slurm cluster keeps its fair-share tree,
//! QOS and limits by running [`commands`] once against the cluster's slurmdbd (checked
//! against a real Slurm 26.05). Their order is the one sacctmgr needs:
//!
//! 1. `add cluster`;
//! 2. every QOS other than `normal`, then a `modify qos` for each with settings (all QOS
//!    first, as `Preempt=` names other QOS); the `[limits]` table becomes limits of `normal`;
//! 3. `modify account root`: the QOS every account offers. Without a `qos` list the box
//!    offers every QOS, a cluster's root only `normal`, so root is given every QOS then;
//! 4. the accounts, parents before children, each under `cluster=` (a slurmdbd may keep
//!    several clusters, and an account added without one goes to all of them);
//! 5. the users, one `add user` per association, the default account's first.
//!
//! `default_account` is made too (under root, one share) when the tree has no such account:
//! on the box every user the tree does not list, or every user when there is no tree,
//! charges it, so a cluster without it would refuse their jobs. Those users are not known
//! here: [`notes`] says so, with what else the cluster cannot take this way.
//!
//! What real sacctmgr 26.05 does with these: the long limit names (`MaxJobsPerUser`,
//! `MaxSubmitJobsPerUser`, `MaxTRESPerUser`) are taken by `modify qos`, the short
//! `MaxSubmitPU` is refused (`Unknown option: MaxSubmitPU=4`); account names, descriptions
//! and organizations are kept in lower case, a single quote in them as a backquote; `add cluster` of a cluster it has fails
//! (`This cluster ci26 already exists.  Not adding.`); `add user` of a user it has adds the
//! association but leaves the default account as it was; an association whose default QOS
//! is not among its QOS is refused (`This request would make it so some associations would
//! not have access to their default qos.`). `gres/gpu` limits need
//! `AccountingStorageTRES=gres/gpu` in the cluster's `slurm.conf`.

use crate::cluster::shell::quote;
use crate::config::accounts::{Account, AccountTree, ROOT};
use crate::config::qos::{Qos, TresLimits, NORMAL};
use crate::config::{Config, UserLimits, DEFAULT_MAX_SUBMITTED_JOBS_PER_USER};

/// Why the commands cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SacctmgrError {
    /// A uid of the account tree has no user name: the cluster knows users by name only.
    #[error("uid {uid} (in account {account}) has no user name: the cluster's database knows users by name")]
    NoUserName {
        /// The uid.
        uid: u32,
        /// The account that lists it.
        account: String,
    },
}

/// The `sacctmgr` command lines, in order, that give cluster `cluster`'s database what
/// `config` says of accounts, users, QOS and limits. `user_name` names a uid as the cluster
/// knows it (the box knows users by uid). Each line is one shell command, values quoted
/// where the shell needs it.
pub fn commands(
    config: &Config,
    cluster: &str,
    user_name: &dyn Fn(u32) -> Option<String>,
) -> Result<Vec<String>, SacctmgrError> {
    let mut out = vec![format!("sacctmgr -i add cluster {}", quote(cluster))];
    qos_commands(config, &mut out);
    let tree = tree_of(config);
    let (root_qos, root_default) = root_settings(config, &tree);
    if root_qos.is_some() || tree.root.default_qos.is_some() {
        let mut set = Vec::new();
        if let Some(list) = &root_qos {
            set.push(word("qos", &list.join(",")));
        }
        if let Some(default) = root_default {
            set.push(word("defaultqos", &default));
        }
        out.push(format!("sacctmgr -i modify account root where {} set {}", word("cluster", cluster), set.join(" ")));
    }
    for name in account_order(&tree) {
        let a = &tree.accounts[name];
        let mut line = format!(
            "sacctmgr -i add account {} {} {} {} {} {}",
            quote(name),
            word("cluster", cluster),
            word("parent", &a.parent),
            word("fairshare", &a.fairshare.to_string()),
            word("description", &a.description),
            word("organization", &a.organization)
        );
        if let Some(list) = a.qos.as_ref().filter(|l| !l.is_empty()) {
            line += &format!(" {}", word("qos", &list.join(",")));
        }
        if let Some(default) = account_default(&tree, name) {
            line += &format!(" {}", word("defaultqos", &default));
        }
        out.push(line);
    }
    user_commands(&tree, cluster, user_name, &mut out)?;
    Ok(out)
}

/// What the box has that the commands do not carry, and why, one line each: for the person
/// moving the lab to read before the cluster takes its jobs.
pub fn notes(config: &Config) -> Vec<String> {
    let mut notes = Vec::new();
    let tree = tree_of(config);
    let account = &config.default_account;
    if config.accounts.is_none() {
        notes.push(format!(
            "accounts: this machine takes any account a job names; the cluster only those made: only '{account}' is \
             made, with no users (add each: sacctmgr add user NAME account={account})"
        ));
    } else {
        notes.push(format!(
            "accounts: users the accounts do not list charge '{account}' on this machine; on the cluster each needs \
             an association (sacctmgr add user NAME account={account})"
        ));
    }
    let others: Vec<&str> = config.qos.names().iter().map(String::as_str).filter(|n| *n != NORMAL).collect();
    if set_limits(config) != UserLimits::default() && !others.is_empty() {
        notes.push(format!(
            "limits: on this machine they hold all of a user's jobs together; on the cluster they are limits of QOS \
             normal, and jobs in {} are not counted",
            others.join(", ")
        ));
    }
    let (root_qos, root_default) = root_settings(config, &tree);
    let wanted = box_default(tree.root.default_qos.as_ref(), root_qos.as_ref());
    if let Some(written) = root_default.filter(|w| *w != wanted) {
        notes.push(format!(
            "accounts.root: its default QOS {wanted} is not among the QOS it offers; the cluster's is {written}"
        ));
    }
    for name in account_order(&tree) {
        let a = &tree.accounts[name];
        if a.qos.as_ref().is_some_and(Vec::is_empty) {
            notes.push(format!("accounts.{name}.qos: an empty list is not carried; it offers its parent's QOS"));
        }
        let wanted = box_default(tree.account_default_qos(name), tree.offered_qos(name).filter(|l| !l.is_empty()));
        if let Some(written) = account_default(&tree, name).filter(|w| *w != wanted) {
            notes.push(format!(
                "accounts.{name}: its default QOS {wanted} is not among the QOS it offers; the cluster's is {written}"
            ));
        }
    }
    for ((name, uid), q) in tree.users.keys().filter_map(|(a, u)| Some(((a, u), tree.default_qos.get(u)?))) {
        if !offers(&tree, name, q) {
            notes.push(format!(
                "users: uid {uid}'s default QOS {q} is not among the QOS account {name} offers; that association keeps \
                 the account's"
            ));
        }
    }
    for (name, q) in config.qos.0.iter() {
        if q.max_tres_per_user.nodes == Some(0) || q.grp_tres.nodes == Some(0) {
            notes.push(format!(
                "qos.{name}: node=0 means any number here (one machine), no node on the cluster: left out"
            ));
        }
    }
    let texts = || tree.accounts.iter().flat_map(|(n, a)| [n, &a.description, &a.organization]);
    let qos_texts = || {
        let named = config.qos.0.keys().filter(|n| *n != NORMAL);
        named.chain(config.qos.0.iter().filter_map(|(n, q)| description(n, q)))
    };
    let upper: Vec<&str> =
        texts().chain(qos_texts()).filter(|t| t.chars().any(char::is_uppercase)).map(String::as_str).collect();
    if !upper.is_empty() {
        notes.push(format!(
            "names: sacctmgr keeps account and QOS names, descriptions and organizations in lower case: {}",
            upper.join(", ")
        ));
    }
    let quoted: Vec<&str> = texts().chain(qos_texts()).filter(|t| t.contains('\'')).map(String::as_str).collect();
    if !quoted.is_empty() {
        notes.push(format!("names: slurmdbd keeps a single quote as a backquote (`): {}", quoted.join(", ")));
    }
    if !config.operators.is_empty() {
        let uids: Vec<String> = config.operators.iter().map(u32::to_string).collect();
        notes.push(format!(
            "operators: uids {} are not made the cluster's operators (sacctmgr modify user NAME set adminlevel=Operator)",
            uids.join(", ")
        ));
    }
    notes
}

/// `add qos` for each QOS but `normal`, then `modify qos` for each with a setting.
fn qos_commands(config: &Config, out: &mut Vec<String>) {
    let names = config.qos.names();
    for name in names.iter().filter(|n| *n != NORMAL) {
        out.push(format!("sacctmgr -i add qos {}", quote(name)));
    }
    for name in names {
        let Some(qos) = config.qos.get(name) else { continue };
        let set = qos_settings(name, qos, config);
        if !set.is_empty() {
            out.push(format!("sacctmgr -i modify qos {} set {}", quote(name), set.join(" ")));
        }
    }
}

/// The settings of a QOS that differ from a new QOS's (`normal`'s: with `[limits]`).
fn qos_settings(name: &str, qos: &Qos, config: &Config) -> Vec<String> {
    let mut per_user = qos.max_tres_per_user;
    let (mut jobs, mut submit) = (qos.max_jobs_per_user, qos.max_submit_jobs_per_user);
    if name == NORMAL {
        let l = set_limits(config);
        jobs = least(jobs, l.max_running_jobs_per_user);
        submit = least(submit, l.max_submitted_jobs_per_user);
        per_user.gpus = least(per_user.gpus, l.max_gpus_per_user.map(u64::from));
    }
    let mut set = Vec::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            set.push(word(key, &v));
        }
    };
    put("Priority", (qos.priority != 0).then(|| qos.priority.to_string()));
    put("MaxWall", qos.max_wall_minutes.map(|m| m.to_string()));
    put("MaxTRESPerUser", tres(&per_user));
    put("GrpTRES", tres(&qos.grp_tres));
    put("MaxJobsPerUser", jobs.map(|n| n.to_string()));
    put("MaxSubmitJobsPerUser", submit.map(|n| n.to_string()));
    put("UsageFactor", (qos.usage_factor != 1.0).then(|| qos.usage_factor.to_string()));
    put("Flags", qos.deny_on_limit.then(|| "DenyOnLimit".to_string()));
    put("Preempt", (!qos.preempt.is_empty()).then(|| qos.preempt.join(",")));
    put("PreemptMode", qos.preempt_mode.map(|m| m.name().to_string()));
    put("GraceTime", (qos.grace_time_secs != 0).then(|| qos.grace_time_secs.to_string()));
    put("Description", description(name, qos).cloned());
    set
}

/// A QOS's description where it is not the one sacctmgr gives (its name; `normal`'s
/// `Normal QOS default`).
fn description<'a>(name: &str, qos: &'a Qos) -> Option<&'a String> {
    let given = if name == NORMAL { "Normal QOS default" } else { name };
    (qos.description != given).then_some(&qos.description)
}

/// The `[limits]` the lab set: a `max_submitted_jobs_per_user` of
/// [`DEFAULT_MAX_SUBMITTED_JOBS_PER_USER`] is the box's default (Slurm's `MaxJobCount`, all
/// users together on a cluster), no limit to carry.
fn set_limits(config: &Config) -> UserLimits {
    let mut limits = config.limits;
    limits.max_submitted_jobs_per_user =
        limits.max_submitted_jobs_per_user.filter(|n| *n != DEFAULT_MAX_SUBMITTED_JOBS_PER_USER);
    limits
}

/// The smaller of two limits, either of which may be unset.
fn least<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A TRES limit as sacctmgr takes it (`cpu=8,mem=65536M,node=1,gres/gpu=2`); `node=0`,
/// which means any number on one machine, is left out.
fn tres(limits: &TresLimits) -> Option<String> {
    let parts: Vec<String> = [
        limits.cpu.map(|n| format!("cpu={n}")),
        limits.mem_mb.map(|n| format!("mem={n}M")),
        limits.nodes.filter(|n| *n > 0).map(|n| format!("node={n}")),
        limits.gpus.map(|n| format!("gres/gpu={n}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(","))
}

/// The tree the commands carry: the config's, or (when it has none) one made of
/// `Config::accounts`, each account under root with one share; `default_account` is
/// added under root when it is not among them.
fn tree_of(config: &Config) -> AccountTree {
    let mut tree = config.account_tree.clone();
    let plain = |name: &str| Account {
        parent: ROOT.into(),
        fairshare: 1,
        description: name.into(),
        organization: name.into(),
        qos: None,
        default_qos: None,
    };
    if tree.accounts.is_empty() {
        for (uid, list) in config.accounts.iter().flatten() {
            for name in list {
                tree.accounts.entry(name.clone()).or_insert_with(|| plain(name));
                tree.users.insert((name.clone(), *uid), 1);
            }
            if let Some(first) = list.first() {
                tree.defaults.insert(*uid, first.clone());
            }
        }
    }
    let account = &config.default_account;
    if account != ROOT && !tree.accounts.contains_key(account) {
        tree.accounts.insert(account.clone(), plain(account));
    }
    tree
}

/// The root association's QOS list (the box's, else every QOS where there are more than
/// `normal`, as the box offers every QOS where no list says otherwise) and its default QOS.
fn root_settings(config: &Config, tree: &AccountTree) -> (Option<Vec<String>>, Option<String>) {
    let names = config.qos.names();
    let listed = tree.root.qos.clone().filter(|l| !l.is_empty());
    let qos = listed.or_else(|| (names.len() > 1).then(|| names.to_vec()));
    let default = default_to_write(box_default(tree.root.default_qos.as_ref(), qos.as_ref()), qos.as_ref());
    (qos, default)
}

/// The accounts, parents before children (by depth, then name).
fn account_order(tree: &AccountTree) -> Vec<&str> {
    let mut names: Vec<&str> = tree.accounts.keys().map(String::as_str).collect();
    names.sort_by_key(|n| (tree.ancestors(n).count(), *n));
    names
}

/// The QOS of jobs naming none on the box: the default given, else `normal` unless the
/// QOS offered leave it out (then the first of them).
fn box_default(given: Option<&String>, offered: Option<&Vec<String>>) -> String {
    match (given, offered) {
        (Some(d), _) => d.clone(),
        (None, Some(list)) if !list.iter().any(|q| q == NORMAL) => list.first().cloned().unwrap_or(NORMAL.into()),
        _ => NORMAL.into(),
    }
}

/// The default QOS to give an association offering `offered`: the box's `wanted` where it
/// offers it, else the first it offers (sacctmgr refuses an association whose default it
/// does not offer).
fn default_to_write(wanted: String, offered: Option<&Vec<String>>) -> Option<String> {
    match offered {
        Some(list) if !list.contains(&wanted) => list.first().cloned(),
        _ => Some(wanted),
    }
}

/// The `defaultqos` of an account that has its own `qos` or `default_qos` (`None`: it
/// inherits its parent's, as on the box).
fn account_default(tree: &AccountTree, name: &str) -> Option<String> {
    let a = &tree.accounts[name];
    if a.qos.as_ref().is_none_or(Vec::is_empty) && a.default_qos.is_none() {
        return None;
    }
    let offered = tree.offered_qos(name).filter(|l| !l.is_empty());
    default_to_write(box_default(tree.account_default_qos(name), offered), offered)
}

/// Whether account `name` offers QOS `qos` (every QOS when no list says otherwise).
fn offers(tree: &AccountTree, name: &str, qos: &str) -> bool {
    tree.offered_qos(name).filter(|l| !l.is_empty()).is_none_or(|l| l.iter().any(|q| q == qos))
}

/// One `add user` per association, each user's default account first; `root`, whom every
/// cluster has, gets its default account by `modify user`, as `add user` keeps a known
/// user's.
fn user_commands(
    tree: &AccountTree,
    cluster: &str,
    user_name: &dyn Fn(u32) -> Option<String>,
    out: &mut Vec<String>,
) -> Result<(), SacctmgrError> {
    let order = account_order(tree);
    for (uid, charges) in tree.charges() {
        let default = &charges[0];
        let name = user_name(uid).ok_or_else(|| SacctmgrError::NoUserName { uid, account: default.clone() })?;
        let mut accounts: Vec<&String> = charges.iter().skip(1).collect();
        accounts.sort_by_key(|a| order.iter().position(|o| o == a));
        for account in std::iter::once(default).chain(accounts) {
            let shares = tree.users[&(account.clone(), uid)];
            let mut line = format!(
                "sacctmgr -i add user {} {} {} {}",
                quote(&name),
                word("cluster", cluster),
                word("account", account),
                word("fairshare", &shares.to_string())
            );
            if account == default {
                line += &format!(" {}", word("defaultaccount", default));
            }
            if let Some(q) = tree.default_qos.get(&uid).filter(|q| offers(tree, account, q)) {
                line += &format!(" {}", word("defaultqos", q));
            }
            out.push(line);
        }
        if name == "root" {
            out.push(format!(
                "sacctmgr -i modify user root where {} set {}",
                word("cluster", cluster),
                word("defaultaccount", default)
            ));
        }
    }
    Ok(())
}

/// `key=value`, the value quoted for the shell where it needs it.
fn word(key: &str, value: &str) -> String {
    format!("{key}={}", quote(value))
}

#[cfg(test)]
mod tests;
