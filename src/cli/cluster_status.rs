//! `slurmlet cluster status`: the plan beside the running cluster (every node answering,
//! not drained, with its planned GPUs; the partitions; the associations), slurmrestd as this
//! machine's profile reaches it, and the jobs still waiting on this machine. One check per
//! line, as the plan's report; exit 1 when one failed.

use crate::api::client::Client;
use crate::cluster::apply::plan_dir::PlanDir;
use crate::cluster::plan::checks::{Check, Level};
use crate::cluster::status::{self, Seen};
use crate::cluster::transport::Transport;
use std::path::PathBuf;
use std::time::Duration;

const CMD: &str = "slurmlet cluster status";

/// How long one of the controller's commands may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// `slurmlet cluster status`'s options.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// the plan's directory
    #[arg(short, long, default_value = "slurm-cluster", value_name = "DIR")]
    output: PathBuf,
    /// how commands reach the controller; {node} stands for its name
    #[arg(long, value_name = "COMMAND", default_value = crate::cluster::transport::DEFAULT)]
    via: String,
}

/// Runs `slurmlet cluster status`.
pub fn run(a: StatusArgs) -> i32 {
    let transport = match Transport::parse(&a.via) {
        Ok(t) => t,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 2;
        }
    };
    let plan = match PlanDir::read(&a.output) {
        Ok(p) => p,
        Err(e) => {
            super::error(CMD, &format!("{e} (is it a plan's directory? see slurmlet cluster plan)"));
            return 1;
        }
    };
    let ctl = plan.controller.as_str();
    println!("# cluster {} beside the plan in {}", plan.cluster, a.output.display());
    let ask = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|w| w.to_string()).collect();
        match transport.run(ctl, &argv, None, DEADLINE) {
            Ok(done) if done.status.success() => Ok(done.stdout_text()),
            Ok(done) => Err(done.stderr_text().lines().last().unwrap_or("").to_string()),
            Err(e) => Err(e.to_string()),
        }
    };
    let mut checks = Vec::new();
    match ask(&["sinfo", "-h", "-N", "-o", status::SINFO_FORMAT]) {
        Ok(sinfo) => {
            let associations = match plan.accounting {
                Some(_) => ask(&["sacctmgr", "-n", "-P", "show", "assoc", "format=account,user"]).ok(),
                None => None,
            };
            checks.extend(status::compare(&plan, &Seen { sinfo, associations }));
        }
        Err(why) => checks.push(Check::fail(
            Some(ctl),
            format!("slurmctld does not answer: {why}"),
            "start it (slurmlet cluster apply); read /var/log/slurm/slurmctld.log",
        )),
    }
    checks.push(rest_check(&plan.cluster));
    checks.push(pending_check(&plan.cluster));
    for check in &checks {
        println!("{}", check.line());
    }
    let count = |level| checks.iter().filter(|c| c.level == level).count();
    let failed = count(Level::Fail);
    println!("{failed} failed, {} to know of, {} fine", count(Level::Warn), count(Level::Ok));
    i32::from(failed > 0)
}

/// slurmrestd, reached through this machine's profile of the cluster.
fn rest_check(cluster: &str) -> Check {
    let path = crate::api::profile::profiles_path();
    let known = crate::api::profile::read(&path).is_ok_and(|f| f.profiles.contains_key(cluster));
    if !known {
        return Check::warn(
            Some("this machine"),
            format!("no profile {cluster} in {}", path.display()),
            "slurmlet cluster apply writes it",
        );
    }
    let pinged = crate::api::profile::selected(Some(cluster))
        .map_err(|e| e.to_string())
        .and_then(|r| r.ok_or_else(|| format!("{cluster} names this machine")))
        .and_then(|r| Client::remote(&r).map_err(|e| e.to_string()))
        .and_then(|c| c.ping().map(|_| c.data_parser()).map_err(|e| e.to_string()));
    match pinged {
        Ok(version) => Check::ok(Some("this machine"), format!("profile {cluster}: slurmrestd answers ({version})")),
        Err(why) => Check::fail(
            Some("this machine"),
            format!("profile {cluster}: {why}"),
            "read /var/log/slurm/slurmrestd.log on the controller",
        ),
    }
}

/// The jobs still waiting on this machine.
fn pending_check(cluster: &str) -> Check {
    let jobs = Client::local().and_then(|c| c.jobs());
    match jobs {
        Ok(r) => match r.jobs.iter().filter(|j| j.job_state.iter().any(|s| s == "PENDING")).count() {
            0 => Check::ok(Some("this machine"), "no jobs pending"),
            n => Check::warn(
                Some("this machine"),
                format!("{n} job(s) pending"),
                format!("move them: slurmlet cluster pending -M {cluster}"),
            ),
        },
        Err(e) => Check::warn(Some("this machine"), format!("its queue does not answer: {e}"), "nothing to move"),
    }
}
