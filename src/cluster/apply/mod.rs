//! `slurmlet cluster apply`: the plan's directory made into a running cluster, over the
//! transport the plan used. Each step looks before it changes anything, so that applying
//! twice changes nothing the second time; each is reported; the first failure stops it with
//! what to do. Then the cluster is checked end to end: every node idle, a one-GPU job on
//! each node with GPUs, a job across all nodes.
//!
//! It starts the daemons through systemd where systemd runs the host, else directly (a
//! container, the test's namespaces). With accounting, MariaDB and slurmdbd come up on the
//! controller before slurmctld (`database.rs`).

mod database;
pub mod plan_dir;
pub mod rest;
pub mod scripts;

use super::transport::Transport;
use plan_dir::PlanDir;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long one command on a host may take (a package installation included).
const STEP_DEADLINE: Duration = Duration::from_secs(600);

/// How long the cluster has to come up before the checks give up.
const UP_DEADLINE: Duration = Duration::from_secs(90);

/// Why apply stopped: the step, the host, what happened and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The host, or `cluster`.
    pub host: String,
    /// What failed.
    pub what: String,
    /// What to do.
    pub fix: String,
}

/// Applies a plan, reporting each step on standard output.
pub struct Apply<'a> {
    transport: &'a Transport,
    plan: &'a PlanDir,
    dry_run: bool,
    /// Where this machine reaches the controller's slurmrestd.
    rest_url: String,
    /// The profiles file the cluster's profile is added to.
    profiles: PathBuf,
}

impl<'a> Apply<'a> {
    /// Applies `plan` through `transport`; with `dry_run`, prints the commands instead. The
    /// cluster's profile (its slurmrestd at `rest_url`, default the controller's name and
    /// slurmrestd's port) goes into `profiles`.
    pub fn new(
        transport: &'a Transport,
        plan: &'a PlanDir,
        dry_run: bool,
        rest_url: Option<String>,
        profiles: PathBuf,
    ) -> Apply<'a> {
        let rest_url = rest_url.unwrap_or_else(|| format!("http://{}:{}", plan.controller, rest::REST_PORT));
        Apply { transport, plan, dry_run, rest_url, profiles }
    }

    fn say(&self, host: &str, text: &str) {
        println!("{host:<12} {text}");
    }

    /// Runs `argv` on `host` with `input`; its standard output's last line.
    fn step(&self, host: &str, what: &str, argv: &[String], input: Option<&[u8]>) -> Result<String, Stop> {
        if self.dry_run {
            let line = self.command_line(host, argv).map_err(|e| self.stop(host, what, &e))?;
            self.say(host, &format!("{what}: {line}"));
            return Ok("dry-run".into());
        }
        let done =
            self.transport.run(host, argv, input, STEP_DEADLINE).map_err(|e| self.stop(host, what, &e.to_string()))?;
        if !done.status.success() {
            let err = done.stderr_text();
            let last = err.lines().last().unwrap_or("").to_string();
            return Err(self.stop(host, what, &format!("{} ({last})", done.status)));
        }
        let said = done.stdout_text().lines().last().unwrap_or("").trim().to_string();
        self.say(host, &format!("{what}: {said}"));
        Ok(said)
    }

    /// The shell line that runs `argv` on `host` through the transport.
    fn command_line(&self, host: &str, argv: &[String]) -> Result<String, String> {
        let cmd = self.transport.command(host, argv).map_err(|e| e.to_string())?;
        let words: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        Ok(super::shell::join(&words))
    }

    fn stop(&self, host: &str, what: &str, why: &str) -> Stop {
        Stop { host: host.into(), what: format!("{what}: {why}"), fix: fix_for(what) }
    }

    /// Every step, in order; the first failure stops it.
    pub fn run(&self) -> Result<(), Stop> {
        let plan = self.plan;
        plan.refusal()?;
        let ctl = plan.controller.as_str();
        let hosts: Vec<&str> = std::iter::once(ctl).chain(plan.nodes.iter().map(|n| n.reach.as_str())).collect();
        for host in &hosts {
            let mut packages = vec!["munge"];
            if *host == ctl {
                packages.extend(["slurmctld", "slurm-client"]);
                if plan.accounting.is_some() {
                    packages.extend(["slurmdbd", "mariadb-server"]);
                }
                if plan.jwt_key.is_some() {
                    packages.push("slurmrestd");
                }
            } else {
                packages.push("slurmd");
            }
            if plan.jwt_key.is_some() {
                // slurm.conf names auth/jwt, so every daemon and command loads the plugin.
                packages.push("slurm-wlm-jwt-plugin");
            }
            self.step(host, "packages", &scripts::ensure_packages(&packages), None)?;
        }
        for host in &hosts {
            let key = self.step(
                host,
                "munge key",
                &scripts::ensure_file("/etc/munge/munge.key", "0400", "munge:munge"),
                Some(&plan.munge_key),
            )?;
            self.step(host, "munged", &scripts::munged(key == "written"), None)?;
        }
        self.credentials_cross(ctl)?;
        self.controller(ctl)?;
        for node in &plan.nodes {
            let host = node.reach.as_str();
            self.step(
                host,
                "directories",
                &scripts::ensure_dirs("root:root", &["/var/spool/slurmd", "/var/log/slurm"]),
                None,
            )?;
            self.step(host, "local slurm.conf", &scripts::no_local_slurm_conf(), None)?;
            let dropin = "/etc/systemd/system/slurmd.service.d/slurmlet-configless.conf";
            self.step(
                host,
                "slurmd drop-in",
                &scripts::ensure_file(dropin, "0644", "root:root"),
                Some(plan.dropin.as_bytes()),
            )?;
            self.step(
                host,
                "slurmd",
                &scripts::daemon("/run/slurmd.pid", "slurmd", &["/usr/sbin/slurmd", "--conf-server", ctl]),
                None,
            )?;
        }
        if self.dry_run {
            if plan.jwt_key.is_some() {
                let profile = self.profile_for(ctl)?;
                let token = profile.token_command.unwrap_or_default();
                self.say(
                    "this machine",
                    &format!("profile {}: url {}, token_command {token}", plan.cluster, profile.url),
                );
            }
            return Ok(());
        }
        self.check(ctl)?;
        if plan.jwt_key.is_some() {
            self.install_profile(ctl, &self.profiles)?;
        }
        Ok(())
    }

    /// A credential of the controller's munged is taken by every node's: the key is the
    /// same and each munged has read it (a munged started before the key was copied keeps
    /// the old one).
    fn credentials_cross(&self, ctl: &str) -> Result<(), Stop> {
        if self.dry_run {
            return Ok(());
        }
        let cred = self
            .transport
            .run(ctl, &["munge".into(), "-n".into()], None, STEP_DEADLINE)
            .map_err(|e| self.stop(ctl, "munge -n", &e.to_string()))?;
        for node in &self.plan.nodes {
            let host = node.reach.as_str();
            let done = self
                .transport
                .run(host, &["unmunge".into()], Some(&cred.stdout), STEP_DEADLINE)
                .map_err(|e| self.stop(host, "unmunge", &e.to_string()))?;
            if !done.status.success() {
                return Err(Stop {
                    host: host.into(),
                    what: format!(
                        "munged there does not take the controller's credentials ({})",
                        done.stderr_text().lines().last().unwrap_or("")
                    ),
                    fix: format!(
                        "restart munged on {host} (systemctl restart munge): it still runs with the key it had before"
                    ),
                });
            }
            self.say(host, &format!("munge: takes {ctl}'s credentials"));
        }
        Ok(())
    }

    /// The controller's files and slurmctld, reconfigured when a file changed under it.
    fn controller(&self, ctl: &str) -> Result<(), Stop> {
        let plan = self.plan;
        self.step(
            ctl,
            "directories",
            &scripts::ensure_dirs("slurm:slurm", &["/var/spool/slurmctld", "/var/log/slurm"]),
            None,
        )?;
        let mut changed = false;
        if let Some(key) = &plan.jwt_key {
            let path = format!("{}/{}", crate::cluster::plan::JWT_KEY_DIR, crate::cluster::plan::JWT_KEY_FILE);
            changed |=
                self.step(ctl, "JWT key", &scripts::ensure_file(&path, "0600", "slurm:slurm"), Some(key))? == "written";
        } else {
            self.say(ctl, "slurmrestd: none (the plan has no jwt_hs256.key: plan again to have it)");
        }
        for (name, text) in
            [("slurm.conf", &plan.slurm_conf), ("gres.conf", &plan.gres_conf), ("cgroup.conf", &plan.cgroup_conf)]
        {
            let path = format!("/etc/slurm/{name}");
            changed |=
                self.step(ctl, name, &scripts::ensure_file(&path, "0644", "root:root"), Some(text.as_bytes()))?
                    == "written";
        }
        if let Some(accounting) = &plan.accounting {
            self.database(ctl, accounting)?;
        }
        let started = self.step(
            ctl,
            "slurmctld",
            &scripts::daemon("/run/slurmctld.pid", "slurmctld", &["/usr/sbin/slurmctld"]),
            None,
        )?;
        if !self.dry_run {
            self.wait(ctl, "slurmctld to answer", &["scontrol", "ping"], |out| out.contains("is UP"))?;
            if changed && started == "running" {
                self.step(ctl, "scontrol reconfigure", &["scontrol".into(), "reconfigure".into()], None)?;
            }
        }
        if plan.jwt_key.is_some() {
            self.rest(ctl)?;
        }
        Ok(())
    }

    /// Runs `argv` on `host` until `ready` says its output will do, within [`UP_DEADLINE`].
    fn wait(&self, host: &str, what: &str, argv: &[&str], ready: impl Fn(&str) -> bool) -> Result<String, Stop> {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let until = Instant::now() + UP_DEADLINE;
        loop {
            let seen = self
                .transport
                .run(host, &argv, None, Duration::from_secs(30))
                .map(|d| d.stdout_text())
                .unwrap_or_default();
            if ready(&seen) {
                return Ok(seen);
            }
            if Instant::now() > until {
                return Err(Stop {
                    host: host.into(),
                    what: format!("waited {} s for {what}; last seen: {}", UP_DEADLINE.as_secs(), seen.trim()),
                    fix: "read the daemons' logs (/var/log/slurm/) on the hosts named".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Every node idle, a one-GPU job on each node that has GPUs, a job across all nodes.
    fn check(&self, ctl: &str) -> Result<(), Stop> {
        let names: Vec<&str> = self.plan.nodes.iter().map(|n| n.name.as_str()).collect();
        let idle = |out: &str| names.iter().all(|n| out.lines().any(|l| l.trim() == format!("{n} idle")));
        self.wait(ctl, "every node to be idle", &["sinfo", "-h", "-N", "-o", "%N %t"], idle)?;
        self.say(ctl, &format!("check: {} idle", names.join(" ")));
        for node in self.plan.nodes.iter().filter(|n| n.gpus) {
            let argv = [
                "timeout",
                "60",
                "srun",
                "-w",
                &node.name,
                "-N1",
                "-n1",
                "--gres=gpu:1",
                "printenv",
                "CUDA_VISIBLE_DEVICES",
            ];
            let seen =
                self.step(ctl, &format!("check: a one-GPU job on {}", node.name), &argv.map(String::from), None)?;
            if seen.is_empty() {
                return Err(Stop {
                    host: node.name.clone(),
                    what: "a one-GPU job saw no CUDA_VISIBLE_DEVICES".into(),
                    fix: "check gres.conf's lines for the node".into(),
                });
            }
        }
        let n = names.len().to_string();
        let argv = ["timeout", "60", "srun", "-N", &n, "-n", &n, "hostname"].map(String::from);
        let out = self
            .transport
            .run(ctl, &argv, None, Duration::from_secs(90))
            .map_err(|e| self.stop(ctl, "check: srun across all nodes", &e.to_string()))?;
        let mut seen: Vec<String> = out.stdout_text().lines().map(|l| l.trim().to_string()).collect();
        seen.sort();
        let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        want.sort();
        if seen != want {
            return Err(Stop {
                host: ctl.into(),
                what: format!("srun -N{n} hostname printed {seen:?}, not {want:?}"),
                fix: "read slurmd's log on the nodes missing".into(),
            });
        }
        self.say(ctl, &format!("check: srun -N{n} -n{n} hostname ran on {}", want.join(" ")));
        Ok(())
    }
}

/// What to do when a step of this name fails.
fn fix_for(what: &str) -> String {
    match what {
        "packages" => "install them by hand (apt-get install …) and apply again".into(),
        "munged" | "munge key" => "read munged's log (/var/log/munge/munged.log) there and apply again".into(),
        "slurmctld" => "read /var/log/slurm/slurmctld.log on the controller".into(),
        "slurmd" => "read /var/log/slurm/slurmd.log on the node".into(),
        "MariaDB" | "slurmdbd's database" => "read MariaDB's log (/var/log/mysql/) on the controller".into(),
        "slurmdbd" => "read /var/log/slurm/slurmdbd.log on the controller".into(),
        "slurmrestd" => "read /var/log/slurm/slurmrestd.log on the controller".into(),
        "accounts.sh" => {
            "read what sacctmgr said above; fix accounts.sh or the database by hand, and apply again".into()
        }
        _ => "make the transport run commands there as root, and apply again".into(),
    }
}
