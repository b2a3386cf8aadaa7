//! The report's checks: what was looked at on each node, whether it will do, and what to do
//! when it will not. A failed check does not stop the plan from being written (a person
//! reads it and fixes the node), but `cluster plan` then exits non-zero.

use crate::cluster::facts::NodeFacts;
use std::collections::BTreeMap;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// It will do.
    Ok,
    /// It will do, but a person should know.
    Warn,
    /// The cluster will not work until it is fixed.
    Fail,
}

impl Level {
    /// The report's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        }
    }
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// How it came out.
    pub level: Level,
    /// The node it is about; `None` for the cluster as a whole.
    pub node: Option<String>,
    /// What was found.
    pub what: String,
    /// What to do about it, when anything.
    pub fix: Option<String>,
}

impl Check {
    /// A check that came out well.
    pub fn ok(node: Option<&str>, what: impl Into<String>) -> Check {
        Check { level: Level::Ok, node: node.map(String::from), what: what.into(), fix: None }
    }

    /// A check a person should know of, and what they may do.
    pub fn warn(node: Option<&str>, what: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { level: Level::Warn, node: node.map(String::from), what: what.into(), fix: Some(fix.into()) }
    }

    /// A check that stops the cluster from working, and its fix.
    pub fn fail(node: Option<&str>, what: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { level: Level::Fail, node: node.map(String::from), what: what.into(), fix: Some(fix.into()) }
    }

    /// The report's line(s) for it.
    pub fn line(&self) -> String {
        let node = self.node.as_deref().unwrap_or("cluster");
        let mut line = format!("{:<4} {:<12} {}", self.level.word(), node, self.what);
        if let Some(fix) = &self.fix {
            line.push_str(&format!("\n{:<17} fix: {fix}", ""));
        }
        line
    }
}

/// How far apart two clocks may be before the report warns (the jobs' times and munge's
/// credentials start to disagree) and before it fails (munge's credentials live five
/// minutes; past a minute, "Expired credential" is near).
pub const CLOCK_WARN_SECS: f64 = 1.0;
/// See [`CLOCK_WARN_SECS`].
pub const CLOCK_FAIL_SECS: f64 = 60.0;

/// The checks on every node's facts: versions, ids, users, clocks, names, cgroups, GPUs.
/// `offsets` is each node's clock less this machine's; `box_users` the box's users by name
/// with their uids.
pub fn node_checks(
    nodes: &[(String, NodeFacts)],
    offsets: &BTreeMap<String, f64>,
    controller: &str,
    box_users: &BTreeMap<String, u32>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut hosts: BTreeMap<&str, &str> = BTreeMap::new();
    for (given, facts) in nodes {
        if let Some(other) = hosts.insert(&facts.hostname, given) {
            checks.push(Check::fail(
                Some(given),
                format!("its host name {} is also {other}'s", facts.hostname),
                "give each node its own host name (hostnamectl set-hostname NAME): slurmd finds its node by it",
            ));
        }
        checks.extend(one_node(given, facts, offsets.get(given).copied(), controller, box_users));
    }
    checks.extend(same_everywhere(
        nodes,
        "Slurm",
        |f| f.slurm_version.clone(),
        "install the same Slurm release on every node (the controller must not be older than any slurmd)",
    ));
    checks.extend(same_everywhere(nodes, "the slurm user's uid:gid", |f| f.slurm_user.map(|i| format!("{}:{}", i.uid, i.gid)), "make the slurm user's uid and gid the same everywhere (usermod -u UID slurm; groupmod -g GID slurm; chown its files), before the packages are installed where they are not"));
    checks.extend(same_everywhere(nodes, "the munge user's uid:gid", |f| f.munge_user.map(|i| format!("{}:{}", i.uid, i.gid)), "make the munge user's uid and gid the same everywhere (usermod -u UID munge; groupmod -g GID munge; chown -R munge: /etc/munge /var/lib/munge /var/log/munge)"));
    checks
}

fn one_node(
    node: &str,
    facts: &NodeFacts,
    offset: Option<f64>,
    controller: &str,
    box_users: &BTreeMap<String, u32>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let at = Some(node);
    checks.push(Check::ok(
        at,
        format!(
            "{} CPUs ({}x{}x{}), {} MiB, {} GPU(s) found by {}, {} on {}",
            facts.cpu.cpus,
            facts.cpu.sockets,
            facts.cpu.cores_per_socket,
            facts.cpu.threads_per_core,
            facts.real_memory_mib,
            facts.gpus.len(),
            facts.gpu_source.as_deref().unwrap_or("nothing"),
            facts.arch,
            facts.os
        ),
    ));
    match &facts.slurm_version {
        Some(v) => checks.push(Check::ok(at, format!("Slurm {v} installed"))),
        None => checks.push(Check::warn(at, "slurmd is not installed", "install the distribution's: apt-get install slurmd (Debian, Ubuntu), dnf install slurm-slurmd (Fedora, EPEL)")),
    }
    if !facts.packages.contains_key("munge") && facts.munge_user.is_none() {
        checks.push(Check::warn(
            at,
            "munge is not installed",
            "install it: apt-get install munge, or dnf install munge",
        ));
    }
    if let Some(offset) = offset {
        let text = format!("its clock is {offset:+.3} s from this machine's");
        let fix = "keep the clocks in step (timedatectl set-ntp true, or chrony)";
        checks.push(match offset.abs() {
            d if d > CLOCK_FAIL_SECS => {
                Check::fail(at, format!("{text}: munge will refuse its credentials (\"Expired credential\")"), fix)
            }
            d if d > CLOCK_WARN_SECS => Check::warn(at, text, fix),
            _ => Check::ok(at, text),
        });
    }
    if facts.controller_addresses.is_empty() {
        checks.push(Check::fail(
            at,
            format!("the controller's name {controller} does not resolve there"),
            format!("add {controller} to the node's /etc/hosts or to DNS"),
        ));
    } else {
        checks.push(Check::ok(at, format!("{controller} resolves to {}", facts.controller_addresses.join(" "))));
    }
    for (user, uid) in box_users {
        match facts.users.get(user) {
            Some(Some(there)) if there == uid => {}
            Some(Some(there)) => checks.push(Check::fail(
                at,
                format!("user {user} has uid {there} there but {uid} here"),
                format!(
                    "give {user} the same uid on every machine (usermod -u {uid} {user}), or use a directory service"
                ),
            )),
            _ => checks.push(Check::fail(
                at,
                format!("user {user} does not exist there"),
                format!("create it with the box's uid (useradd -u {uid} {user}), or use a directory service"),
            )),
        }
    }
    checks.push(match facts.cgroup_version {
        Some(2) => Check::ok(at, format!("cgroup v2 ({})", facts.cgroup_controllers.join(" "))),
        Some(_) => Check::warn(
            at,
            "cgroup v1 hierarchies (legacy or hybrid): cgroup.conf names cgroup/v1, which Slurm deprecates, as its autodetection refuses a hybrid machine",
            "boot with systemd.unified_cgroup_hierarchy=1 and plan again",
        ),
        None => {
            Check::warn(at, "no cgroup hierarchy: jobs are tracked but not confined", "mount cgroup2 on /sys/fs/cgroup")
        }
    });
    if facts.local_slurm_conf {
        checks.push(Check::warn(
            at,
            "/etc/slurm/slurm.conf exists: slurmd would read it rather than the controller's",
            "move it aside (mv /etc/slurm/slurm.conf /etc/slurm/slurm.conf.local)",
        ));
    }
    checks.extend(gpu_checks(node, facts));
    checks
}

fn gpu_checks(node: &str, facts: &NodeFacts) -> Vec<Check> {
    let at = Some(node);
    let mut checks = Vec::new();
    if facts.gpus.is_empty() {
        return checks;
    }
    let nvidia = facts.gpus.iter().any(|g| g.vendor == "nvidia");
    match (&facts.nvml_plugin, nvidia) {
        (Some(p), true) => checks.push(Check::ok(at, format!("Slurm's NVML plugin is installed ({}): gres.conf says AutoDetect=nvml", p.display()))),
        (None, true) => checks.push(Check::warn(at, "Slurm's NVML GPU plugin (gpu_nvml.so) is not installed: gres.conf lists the GPUs with their types and device files", "nothing, unless the GPUs change; or install the plugin (Ubuntu: slurm-wlm-nvml-plugin) and plan again")),
        _ => {}
    }
    if facts.gpus.iter().any(|g| g.files.is_empty()) {
        let fix = "list the GPUs with their device files in the node's slurmlet.toml (gpus = { ids = [...], files = [...] }) and plan again";
        checks.push(if nvidia {
            Check::warn(at, "some GPUs have no device file known: /dev/nvidiaN by their index is assumed", fix)
        } else {
            Check::fail(at, "some GPUs have no device file known", fix)
        });
    }
    if facts.gpus.iter().any(|g| g.gres_type.is_none()) {
        checks.push(Check::warn(
            at,
            "some GPUs have no type: they are gres gpu without one, and no partition by GPU type holds them",
            "give them a type (gpus = { type = \"...\", ids = [...] })",
        ));
    }
    checks
}

/// A failed check when the nodes do not agree on `what`; an ok one naming it when they do.
fn same_everywhere(
    nodes: &[(String, NodeFacts)],
    what: &str,
    value: impl Fn(&NodeFacts) -> Option<String>,
    fix: &str,
) -> Option<Check> {
    let mut seen: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (node, facts) in nodes {
        if let Some(v) = value(facts) {
            seen.entry(v).or_default().push(node);
        }
    }
    match seen.len() {
        0 => None,
        1 => Some(Check::ok(
            None,
            format!("{what} is {} on every node that has it", seen.keys().next().unwrap_or(&String::new())),
        )),
        _ => {
            let list: Vec<String> = seen.iter().map(|(v, n)| format!("{v} on {}", n.join(","))).collect();
            Some(Check::fail(None, format!("{what} differs: {}", list.join("; ")), fix))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::facts::{sample, Ids};

    #[test]
    fn mismatched_ids_clocks_and_users_fail_with_their_fix() {
        let n1 = sample("n1");
        let mut n2 = sample("n2");
        n2.munge_user = Some(Ids { uid: 999, gid: 999 });
        n2.users.insert("alice".into(), Some(1500));
        let offsets = BTreeMap::from([("n1".to_string(), 0.2), ("n2".to_string(), 75.0)]);
        let users = BTreeMap::from([("alice".to_string(), 1001)]);
        let checks = node_checks(&[("n1".into(), n1), ("n2".into(), n2)], &offsets, "ctl", &users);
        let failed: Vec<&Check> = checks.iter().filter(|c| c.level == Level::Fail).collect();
        let text: Vec<String> = failed.iter().map(|c| c.line()).collect();
        assert!(
            text.iter().any(|l| l.contains("munge user's uid:gid differs: 100:101 on n1; 999:999 on n2")
                && l.contains("usermod -u UID munge")),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|l| l.starts_with("FAIL n2") && l.contains("+75.000 s") && l.contains("Expired credential")),
            "{text:#?}"
        );
        assert!(
            text.iter().any(|l| l.contains("user alice does not exist there") && l.contains("useradd -u 1001 alice")),
            "{text:#?}"
        );
        assert!(
            text.iter().any(|l| l.starts_with("FAIL n2") && l.contains("uid 1500 there but 1001 here")),
            "{text:#?}"
        );
        assert!(!text.iter().any(|l| l.contains("slurm user's")), "{text:#?}");
    }

    #[test]
    fn two_nodes_of_one_host_name_fail() {
        let checks = node_checks(
            &[("a".into(), sample("same")), ("b".into(), sample("same"))],
            &BTreeMap::new(),
            "ctl",
            &BTreeMap::new(),
        );
        assert!(checks.iter().any(|c| c.level == Level::Fail && c.what.contains("host name same is also a's")));
    }
}
