//! `slurmlet cluster status`: what the plan wanted beside what the running cluster says, one
//! check per line as the plan's report has them. Every node of the plan must be in the
//! cluster, answering, not drained, with the GPUs the plan gave it; every partition of the
//! plan must be there; with accounting, every association `accounts.sh` adds must be in the
//! database. What the cluster has beyond the plan is said, not failed.

use super::apply::plan_dir::PlanDir;
use super::plan::checks::Check;
use std::collections::{BTreeMap, BTreeSet};

/// What the cluster said, as the controller's own commands print it.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// `sinfo -h -N -o '%N|%P|%T|%G|%E'`: a line per node and partition.
    pub sinfo: String,
    /// `sacctmgr -n -P show assoc format=account,user`, with accounting.
    pub associations: Option<String>,
}

/// `sinfo`'s format for [`Seen::sinfo`].
pub const SINFO_FORMAT: &str = "%N|%P|%T|%G|%E";

/// One node as sinfo shows it.
#[derive(Debug, Default)]
struct NodeSeen {
    partitions: BTreeSet<String>,
    state: String,
    gres: String,
    reason: String,
}

/// The checks of `plan` against `seen`.
pub fn compare(plan: &PlanDir, seen: &Seen) -> Vec<Check> {
    let mut nodes: BTreeMap<&str, NodeSeen> = BTreeMap::new();
    for line in seen.sinfo.lines() {
        let f: Vec<&str> = line.trim().splitn(5, '|').collect();
        let [name, partition, state, gres, reason] = f[..] else { continue };
        let node = nodes.entry(name).or_default();
        node.partitions.insert(partition.trim_end_matches('*').to_string());
        (node.state, node.gres, node.reason) = (state.into(), gres.into(), reason.into());
    }
    let mut checks = Vec::new();
    for planned in &plan.nodes {
        let name = planned.name.as_str();
        let Some(node) = nodes.get(name) else {
            checks.push(Check::fail(Some(name), "not in the cluster", "apply the plan again (slurmlet cluster apply)"));
            continue;
        };
        checks.push(node_check(name, planned.gres.as_deref(), node));
    }
    for name in nodes.keys().filter(|n| !plan.nodes.iter().any(|p| p.name == **n)) {
        checks.push(Check::warn(Some(name), "in the cluster, not in the plan", "plan again with it, or take it out"));
    }
    let have: BTreeSet<&str> = nodes.values().flat_map(|n| n.partitions.iter().map(String::as_str)).collect();
    for partition in &plan.partitions {
        if have.contains(partition.as_str()) {
            checks.push(Check::ok(None, format!("partition {partition} as planned")));
        } else {
            checks.push(Check::fail(None, format!("partition {partition} is missing"), "scontrol reconfigure"));
        }
    }
    if let (Some(accounting), Some(assocs)) = (&plan.accounting, &seen.associations) {
        checks.extend(association_checks(&String::from_utf8_lossy(&accounting.accounts_sh), assocs));
    }
    checks
}

/// A node that is in the cluster: answering, not drained or down, with the planned GRES.
fn node_check(name: &str, planned_gres: Option<&str>, node: &NodeSeen) -> Check {
    let state = node.state.trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']);
    if node.state.ends_with('*') {
        return Check::fail(Some(name), format!("{state}, not responding"), "start slurmd there; read its log");
    }
    if !matches!(state, "idle" | "mixed" | "allocated" | "completing" | "planned") {
        let reason = if node.reason.is_empty() || node.reason == "none" { "no reason" } else { &node.reason };
        return Check::fail(
            Some(name),
            format!("{state}: {reason}"),
            format!("once fixed: scontrol update NodeName={name} State=RESUME"),
        );
    }
    let items = |g: &str| -> BTreeSet<String> {
        g.split(',')
            .map(|i| i.split('(').next().unwrap_or(i).trim().to_string())
            .filter(|i| !i.is_empty() && i != "(null)")
            .collect()
    };
    let (want, have) = (items(planned_gres.unwrap_or("")), items(&node.gres));
    if want != have {
        let shown = |s: &BTreeSet<String>| {
            if s.is_empty() {
                "none".to_string()
            } else {
                s.iter().cloned().collect::<Vec<_>>().join(",")
            }
        };
        return Check::fail(
            Some(name),
            format!("{state}, GRES {}, but the plan says {}", shown(&have), shown(&want)),
            "read slurmd's log there (gres.conf, device files), then apply again",
        );
    }
    let gres = if want.is_empty() { String::new() } else { format!(", {} as planned", node.gres) };
    Check::ok(Some(name), format!("{state}{gres}"))
}

/// Every association `accounts.sh` adds (`add user NAME … account=ACCOUNT`), and every account,
/// in the database's `account|user` lines.
fn association_checks(accounts_sh: &str, assocs: &str) -> Vec<Check> {
    let have: BTreeSet<&str> = assocs.lines().map(str::trim).collect();
    let mut wanted = Vec::new();
    for line in accounts_sh.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let value = |key: &str| words.iter().find_map(|w| w.strip_prefix(key)).map(|v| v.trim_matches('\''));
        match words.get(2..5) {
            Some(["-i", "add", "account"]) => {
                if let Some(name) = words.get(5) {
                    wanted.push(format!("{}|", name.trim_matches('\'')));
                }
            }
            Some(["-i", "add", "user"]) => {
                if let (Some(user), Some(account)) = (words.get(5), value("account=")) {
                    wanted.push(format!("{account}|{}", user.trim_matches('\'')));
                }
            }
            _ => {}
        }
    }
    let missing: Vec<&String> = wanted.iter().filter(|w| !have.contains(w.as_str())).collect();
    if missing.is_empty() {
        return vec![Check::ok(None, format!("{} accounts and associations as planned", wanted.len()))];
    }
    let shown: Vec<String> = missing.iter().map(|m| m.trim_end_matches('|').replace('|', "/")).collect();
    vec![Check::fail(
        None,
        format!("{} missing from the database: {}", missing.len(), shown.join(", ")),
        "run accounts.sh on the controller (slurmlet cluster apply)",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::plan::checks::Level;

    fn plan() -> PlanDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let conf = "ClusterName=lab\nSlurmctldHost=ctl\n\
                    NodeName=n1 CPUs=2 Gres=gpu:v100:2 State=UNKNOWN\nNodeName=n2 CPUs=2 Gres=gpu:a100:2 State=UNKNOWN\n\
                    PartitionName=short Nodes=ALL Default=YES\nPartitionName=a100 Nodes=n2\n";
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        for f in ["gres.conf", "cgroup.conf", "munge.key", "report.txt", "slurmdbd.conf"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let accounts = "run sacctmgr -i add account bio cluster=lab parent=root fairshare=1\n\
                        run sacctmgr -i add user ann cluster=lab account=bio fairshare=1 defaultaccount=bio\n";
        std::fs::write(d.join("accounts.sh"), accounts).unwrap();
        std::fs::create_dir_all(d.join("systemd/slurmd.service.d")).unwrap();
        std::fs::write(d.join("systemd/slurmd.service.d/slurmlet-configless.conf"), "").unwrap();
        PlanDir::read(d).unwrap()
    }

    fn lines(checks: &[Check]) -> Vec<String> {
        checks.iter().map(Check::line).collect()
    }

    #[test]
    fn a_cluster_as_planned_has_every_check_fine() {
        let seen = Seen {
            sinfo:
                "n1|short*|idle|gpu:v100:2(S:0)|none\nn2|short*|mixed|gpu:a100:2|none\nn2|a100|mixed|gpu:a100:2|none\n"
                    .into(),
            associations: Some("root|\nroot|root\nbio|\nbio|ann\n".into()),
        };
        let checks = compare(&plan(), &seen);
        assert!(checks.iter().all(|c| c.level == Level::Ok), "{:#?}", lines(&checks));
        assert_eq!(checks.len(), 5, "{:#?}", lines(&checks));
    }

    #[test]
    fn a_drained_node_wrong_gpus_a_missing_partition_and_association_fail_with_the_fix() {
        let seen = Seen {
            sinfo: "n1|short*|drained|gpu:v100:2|slurmlet: gpu 0 busy\nn2|short*|idle|gpu:a100:1|none\nn3|short*|idle*|(null)|none\n".into(),
            associations: Some("bio|\n".into()),
        };
        let checks = compare(&plan(), &seen);
        let failed: Vec<String> = checks.iter().filter(|c| c.level == Level::Fail).map(|c| c.what.clone()).collect();
        assert_eq!(
            failed,
            [
                "drained: slurmlet: gpu 0 busy",
                "idle, GRES gpu:a100:1, but the plan says gpu:a100:2",
                "partition a100 is missing",
                "1 missing from the database: bio/ann",
            ]
        );
        let n1 = checks.iter().find(|c| c.node.as_deref() == Some("n1")).unwrap();
        assert_eq!(n1.fix.as_deref(), Some("once fixed: scontrol update NodeName=n1 State=RESUME"));
        let n3 = checks.iter().find(|c| c.node.as_deref() == Some("n3")).unwrap();
        assert_eq!((n3.level, n3.what.as_str()), (Level::Warn, "in the cluster, not in the plan"));
    }
}
