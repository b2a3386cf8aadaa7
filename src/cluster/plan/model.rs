//! What a plan is made of and from: the inputs, the files, the secrets and the plan itself,
//! and what the box's configuration says that several of the files need (whether it has
//! limits to enforce, which users it names). The files' writers read these and nothing
//! above them.

use super::checks::{Check, Level};
use crate::cluster::facts::NodeFacts;
use crate::config::Config;
use std::collections::BTreeMap;

/// What a plan is made from.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The box's configuration.
    pub config: &'a Config,
    /// The cluster's name.
    pub cluster: String,
    /// The controller's host name, as the nodes reach it.
    pub controller: String,
    /// Each node by the name it was given, with its facts.
    pub nodes: Vec<(String, NodeFacts)>,
    /// Whether the cluster keeps accounting (slurmdbd with MariaDB on the controller).
    pub accounting: bool,
    /// How the nodes were reached, for the report.
    pub transport: String,
}

/// One file of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFile {
    /// Its path in the plan's directory.
    pub path: &'static str,
    /// What it holds.
    pub contents: Vec<u8>,
    /// Its mode.
    pub mode: u32,
}

/// The secrets a plan keeps from one planning to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secrets {
    /// munge's key, the same on every machine.
    pub munge_key: Vec<u8>,
    /// The database user's password.
    pub db_password: String,
    /// The key slurmctld and slurmdbd sign and check JSON Web Tokens with (slurmrestd's
    /// users authenticate with those tokens).
    pub jwt_key: Vec<u8>,
}

/// A plan.
#[derive(Debug)]
pub struct Plan {
    /// The files, the report among them.
    pub files: Vec<PlanFile>,
    /// The checks, in the report's order.
    pub checks: Vec<Check>,
}

impl Plan {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.level == Level::Fail)
    }

    /// The report's text.
    pub fn report(&self) -> String {
        self.files
            .iter()
            .find(|f| f.path == "report.txt")
            .map(|f| String::from_utf8_lossy(&f.contents).into_owned())
            .unwrap_or_default()
    }
}

/// Whether the box has limits that need slurmdbd's enforcement on a cluster: per-user
/// limits, QOS limits, or an account tree.
pub fn limits_need_enforcing(config: &Config) -> bool {
    let l = &config.limits;
    let submit_limit =
        l.max_submitted_jobs_per_user.is_some_and(|n| n != crate::config::DEFAULT_MAX_SUBMITTED_JOBS_PER_USER);
    l.limits_starts()
        || submit_limit
        || config.qos.0.len() > 1
        || !config.account_tree.accounts.is_empty()
        || config.accounts.is_some()
}

/// The box's users the cluster must know, by name, with their uids here.
pub fn box_users(config: &Config) -> BTreeMap<String, u32> {
    let mut uids: Vec<u32> = config.account_tree.users.keys().map(|(_, uid)| *uid).collect();
    uids.extend(config.accounts.iter().flat_map(|table| table.keys().copied()));
    uids.into_iter().filter_map(|uid| crate::identity::user_name_of(uid).map(|name| (name, uid))).collect()
}
