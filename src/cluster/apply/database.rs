//! The accounting half of `cluster apply`, on the controller before slurmctld starts:
//! MariaDB (with the settings slurmdbd needs), slurmdbd's database and user, slurmdbd, and
//! then the plan's `accounts.sh`, which gives the database the box's cluster, QOS, accounts
//! and users. slurmctld comes after, so that it finds its cluster and associations there.

use super::plan_dir::Accounting;
use super::{scripts, Apply, Stop};

impl Apply<'_> {
    /// Every accounting step on `ctl`, in order.
    pub(super) fn database(&self, ctl: &str, accounting: &Accounting) -> Result<(), Stop> {
        let dir = self.step(ctl, "MariaDB's drop-in directory", &scripts::mariadb_conf_dir(), None)?;
        let dir = if self.dry_run { "/etc/mysql/mariadb.conf.d".to_string() } else { dir };
        let cnf = format!("{dir}/60-slurmdbd.cnf");
        let written = self.step(
            ctl,
            "MariaDB settings",
            &scripts::ensure_file(&cnf, "0644", "root:root"),
            Some(scripts::MARIADB_CNF.as_bytes()),
        )? == "written";
        self.step(ctl, "MariaDB", &scripts::mariadb(written), None)?;
        let sql = scripts::database_sql(
            accounting.setting("StorageUser"),
            accounting.setting("StoragePass"),
            accounting.setting("StorageLoc"),
        )
        .map_err(|why| Stop {
            host: "cluster".into(),
            what: why,
            fix: "plan again (the plan writes a password apply can use), or change it by hand".into(),
        })?;
        self.step(ctl, "slurmdbd's database", &scripts::mariadb_root(), Some(sql.as_bytes()))?;
        let conf_written = self.step(
            ctl,
            "slurmdbd.conf",
            &scripts::ensure_file("/etc/slurm/slurmdbd.conf", "0600", "slurm:slurm"),
            Some(accounting.slurmdbd_conf.as_bytes()),
        )? == "written";
        self.step(ctl, "slurmdbd's directory", &scripts::ensure_dirs("slurm:slurm", &["/run/slurmdbd"]), None)?;
        let started = self.step(
            ctl,
            "slurmdbd",
            &scripts::daemon("/run/slurmdbd/slurmdbd.pid", "slurmdbd", &["/usr/sbin/slurmdbd"]),
            None,
        )?;
        if self.dry_run {
            return self.step(ctl, "accounts.sh", &["sh".into(), "-s".into()], None).map(drop);
        }
        let answers = ["sh", "-c", "sacctmgr -n list cluster >/dev/null 2>&1 && echo answers"];
        self.wait(ctl, "slurmdbd to answer", &answers, |out| out.contains("answers"))?;
        if conf_written && started == "running" {
            self.step(ctl, "sacctmgr reconfigure", &["sacctmgr".into(), "-i".into(), "reconfigure".into()], None)?;
        }
        self.step(ctl, "accounts.sh", &["sh".into(), "-s".into()], Some(&accounting.accounts_sh))?;
        Ok(())
    }
}
