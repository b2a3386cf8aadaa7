//! A plan as `cluster plan` left it on disk, read back for `cluster apply`: the files it
//! installs, the controller and nodes its `slurm.conf` names, and the checks its report
//! failed (a plan with any is not applied).

use super::Stop;
use std::path::Path;

/// One node of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanNode {
    /// Its `NodeName`.
    pub name: String,
    /// What the transport reaches it by: its `NodeAddr`, else its name.
    pub reach: String,
    /// Whether it has GPUs (`Gres=gpu…`).
    pub gpus: bool,
    /// Its `Gres=`, if any.
    pub gres: Option<String>,
}

/// The plan's directory.
#[derive(Debug, Clone)]
pub struct PlanDir {
    /// `slurm.conf`.
    pub slurm_conf: String,
    /// `gres.conf`.
    pub gres_conf: String,
    /// `cgroup.conf`.
    pub cgroup_conf: String,
    /// The systemd drop-in for slurmd.
    pub dropin: String,
    /// `munge.key`.
    pub munge_key: Vec<u8>,
    /// `jwt_hs256.key`; `None` in a plan written before slurmrestd was part of it.
    pub jwt_key: Option<Vec<u8>>,
    /// `ClusterName`.
    pub cluster: String,
    /// With accounting: `slurmdbd.conf` and `accounts.sh`.
    pub accounting: Option<Accounting>,
    /// `SlurmctldHost`, without an address in parentheses.
    pub controller: String,
    /// The nodes.
    pub nodes: Vec<PlanNode>,
    /// The partitions' names.
    pub partitions: Vec<String>,
    /// The report's failed checks.
    pub failed: Vec<String>,
}

/// The plan's accounting: slurmdbd's configuration and the script that fills its database.
#[derive(Debug, Clone)]
pub struct Accounting {
    /// `slurmdbd.conf`.
    pub slurmdbd_conf: String,
    /// `accounts.sh`.
    pub accounts_sh: Vec<u8>,
}

/// `KEY=VALUE` words of a configuration line, the key as written.
fn words(line: &str) -> impl Iterator<Item = (&str, &str)> {
    line.split_whitespace().filter_map(|w| w.split_once('='))
}

impl PlanDir {
    /// Reads the plan in `dir`.
    pub fn read(dir: &Path) -> Result<PlanDir, String> {
        let text = |name: &str| {
            std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
        };
        let slurm_conf = text("slurm.conf")?;
        let controller = slurm_conf
            .lines()
            .find_map(|l| l.trim().strip_prefix("SlurmctldHost="))
            .map(|h| h.split('(').next().unwrap_or(h).trim().to_string())
            .ok_or_else(|| format!("{}: no SlurmctldHost", dir.join("slurm.conf").display()))?;
        let cluster = slurm_conf
            .lines()
            .find_map(|l| l.trim().strip_prefix("ClusterName="))
            .map(|n| n.trim().to_string())
            .ok_or_else(|| format!("{}: no ClusterName", dir.join("slurm.conf").display()))?;
        let jwt_key = std::fs::read(dir.join(crate::cluster::plan::JWT_KEY_FILE)).ok();
        let nodes = slurm_conf
            .lines()
            .filter(|l| l.trim_start().starts_with("NodeName="))
            .map(|l| {
                let get = |key: &str| words(l).find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.to_string());
                let name = get("NodeName").unwrap_or_default();
                PlanNode {
                    reach: get("NodeAddr").unwrap_or_else(|| name.clone()),
                    gpus: get("Gres").is_some_and(|g| g.starts_with("gpu")),
                    gres: get("Gres"),
                    name,
                }
            })
            .collect();
        let partitions = slurm_conf
            .lines()
            .filter_map(|l| words(l).next().filter(|(k, _)| *k == "PartitionName").map(|(_, v)| v.to_string()))
            .collect();
        let report = text("report.txt")?;
        let failed: Vec<String> = report.lines().filter(|l| l.starts_with("FAIL")).map(String::from).collect();
        Ok(PlanDir {
            gres_conf: text("gres.conf")?,
            cgroup_conf: text("cgroup.conf")?,
            dropin: text("systemd/slurmd.service.d/slurmlet-configless.conf")?,
            munge_key: std::fs::read(dir.join("munge.key"))
                .map_err(|e| format!("{}: {e}", dir.join("munge.key").display()))?,
            // A plan with a failed check may lack accounts.sh; it is refused for the check.
            accounting: if failed.is_empty() { Accounting::read(dir)? } else { None },
            failed,
            slurm_conf,
            controller,
            cluster,
            partitions,
            jwt_key,
            nodes,
        })
    }

    /// Why this plan is not applied: a failed check.
    pub fn refusal(&self) -> Result<(), Stop> {
        if let Some(first) = self.failed.first() {
            return Err(Stop {
                host: "cluster".into(),
                what: format!("the plan has {} failed check(s), the first: {}", self.failed.len(), first.trim()),
                fix: "fix what report.txt says, plan again, and apply the new plan".into(),
            });
        }
        Ok(())
    }
}

impl Accounting {
    /// The plan's accounting files, `None` where it has no `slurmdbd.conf`.
    fn read(dir: &Path) -> Result<Option<Accounting>, String> {
        let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()));
        if !dir.join("slurmdbd.conf").exists() {
            return Ok(None);
        }
        let slurmdbd_conf = String::from_utf8_lossy(&read("slurmdbd.conf")?).into_owned();
        Ok(Some(Accounting { slurmdbd_conf, accounts_sh: read("accounts.sh")? }))
    }

    /// `slurmdbd.conf`'s value of `key` (the last one, as slurmdbd reads it).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.slurmdbd_conf
            .lines()
            .filter_map(|l| l.trim().split_once('='))
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case(key))
            .map(|(_, v)| v.trim())
            .next_back()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(report: &str, accounting: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let conf = "ClusterName=lab\nSlurmctldHost=ctl\nNodeName=n1 NodeAddr=n1.lab CPUs=2 Gres=gpu:v100:2 State=UNKNOWN\nNodeName=n2 CPUs=2 State=UNKNOWN\n";
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        for f in ["gres.conf", "cgroup.conf", "munge.key", "accounts.sh"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        std::fs::create_dir_all(d.join("systemd/slurmd.service.d")).unwrap();
        std::fs::write(d.join("systemd/slurmd.service.d/slurmlet-configless.conf"), "[Unit]\n").unwrap();
        std::fs::write(d.join("report.txt"), report).unwrap();
        if accounting {
            std::fs::write(d.join("slurmdbd.conf"), "StorageUser=slurm\nStoragePass=abc\nstoragepass=def\n").unwrap();
        }
        dir
    }

    #[test]
    fn the_nodes_are_reached_by_their_address_and_known_by_their_name() {
        let dir = plan("0 failed\n", false);
        let p = PlanDir::read(dir.path()).unwrap();
        assert_eq!(p.controller, "ctl");
        assert_eq!(
            p.nodes,
            [
                PlanNode { name: "n1".into(), reach: "n1.lab".into(), gpus: true, gres: Some("gpu:v100:2".into()) },
                PlanNode { name: "n2".into(), reach: "n2".into(), gpus: false, gres: None }
            ]
        );
        assert_eq!(p.refusal(), Ok(()));
    }

    #[test]
    fn a_plan_with_a_failed_check_is_not_applied() {
        let failed =
            PlanDir::read(plan("ok   n1  fine\nFAIL n2  user bob does not exist there\n", false).path()).unwrap();
        let stop = failed.refusal().unwrap_err();
        assert!(stop.what.contains("1 failed check(s), the first: FAIL n2  user bob"), "{stop:?}");
        assert!(failed.accounting.is_none());
    }

    #[test]
    fn slurmdbds_settings_are_read_as_slurmdbd_reads_them() {
        let dir = plan("", true);
        let dbd = PlanDir::read(dir.path()).unwrap();
        assert_eq!(dbd.refusal(), Ok(()));
        let accounting = dbd.accounting.unwrap();
        assert_eq!(
            (accounting.setting("StorageUser"), accounting.setting("StoragePass")),
            (Some("slurm"), Some("def"))
        );
        assert_eq!(accounting.setting("StorageLoc"), None);
        std::fs::remove_file(dir.path().join("accounts.sh")).unwrap();
        let missing = PlanDir::read(dir.path()).unwrap_err();
        assert!(missing.ends_with("accounts.sh: No such file or directory (os error 2)"), "{missing}");
    }
}
