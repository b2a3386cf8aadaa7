//! `slurmlet cluster`: the move from this machine to a real Slurm cluster.
//!
//! - `slurmlet cluster plan NODE…` asks each node what it has (through ssh, or the command
//!   `--via` names) and writes the cluster's files from this machine's configuration and
//!   the answers, with a report of every check; it exits 1 when a check failed, the files
//!   written all the same.
//! - `slurmlet cluster apply` makes the plan a running cluster over the same transport, each
//!   step idempotent and reported, and checks it end to end; the first failure stops it,
//!   with what to do.
//! - `slurmlet cluster probe` is what each node runs: its facts as JSON.
//! - `slurmlet cluster pending -M CLUSTER` lists the jobs pending here with the command that
//!   submits each to the cluster; `--move-pending` moves the caller's own.
//! - `slurmlet cluster status` compares the plan with the running cluster.

use crate::cluster::gather::{self, Ask};
use crate::cluster::plan::{self, Inputs};
use crate::cluster::probe::{self, Questions};
use crate::cluster::transport::{self, Transport};
use crate::config::Config;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

const CMD: &str = "slurmlet cluster";

/// `slurmlet cluster`'s commands.
#[derive(Debug, Parser)]
#[command(about = "plan a real Slurm cluster from this machine's queue, accounts and GPUs")]
pub struct ClusterArgs {
    #[command(subcommand)]
    command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// ask each node what it has and write the cluster's files and a report
    Plan(PlanArgs),
    /// make the plan a running cluster over the same transport, step by step, and check it
    Apply(ApplyArgs),
    /// print this machine's facts as JSON (what `plan` asks each node)
    Probe(ProbeArgs),
    /// list the jobs pending here with the command that submits each to the cluster, or move them
    Pending(super::cluster_pending::PendingArgs),
    /// compare the plan with the running cluster, and say what is left on this machine
    Status(super::cluster_status::StatusArgs),
}

#[derive(Debug, clap::Args)]
struct ApplyArgs {
    /// the plan's directory
    #[arg(short, long, default_value = "slurm-cluster", value_name = "DIR")]
    output: PathBuf,
    /// how commands reach a host; {node} stands for its name
    #[arg(long, value_name = "COMMAND", default_value = transport::DEFAULT)]
    via: String,
    /// print the commands each step would run, and run none
    #[arg(long)]
    dry_run: bool,
    /// where this machine reaches the controller's slurmrestd (default: http://CONTROLLER:6820)
    #[arg(long, value_name = "URL")]
    rest_url: Option<String>,
}

#[derive(Debug, clap::Args)]
struct PlanArgs {
    /// the compute nodes, as names or host lists (`n[1-3]`)
    #[arg(value_name = "NODE")]
    nodes: Vec<String>,
    /// the directory the plan is written to
    #[arg(short, long, default_value = "slurm-cluster", value_name = "DIR")]
    output: PathBuf,
    /// the controller's host name, as the nodes reach it (default: this machine's)
    #[arg(long, value_name = "HOST")]
    controller: Option<String>,
    /// the cluster's name (default: this machine's cluster_name)
    #[arg(long, value_name = "NAME")]
    cluster: Option<String>,
    /// how commands reach a node; {node} stands for its name
    #[arg(long, value_name = "COMMAND", default_value = transport::DEFAULT)]
    via: String,
    /// slurmlet's path on the nodes (where it is missing, this binary is sent)
    #[arg(long, value_name = "PATH", default_value = "slurmlet")]
    remote_slurmlet: String,
    /// no slurmdbd: no accounting, and no accounts, QOS or limits carried
    #[arg(long)]
    no_accounting: bool,
}

#[derive(Debug, clap::Args)]
struct ProbeArgs {
    /// the controller's name, which the facts say this machine resolves or not
    #[arg(long, value_name = "HOST")]
    controller: Option<String>,
    /// users whose uids to report, comma-separated
    #[arg(long, value_name = "USERS", value_delimiter = ',')]
    users: Vec<String>,
}

/// Runs `slurmlet cluster …`.
pub fn run(args: Vec<OsString>) -> i32 {
    let opts: ClusterArgs = match super::parse_args(CMD, args, 2) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match opts.command {
        ClusterCommand::Plan(p) => plan(p),
        ClusterCommand::Apply(a) => apply(a),
        ClusterCommand::Pending(p) => super::cluster_pending::run(p),
        ClusterCommand::Status(s) => super::cluster_status::run(s),
        ClusterCommand::Probe(p) => {
            let (config, _) = crate::config::target::client_config();
            let facts = probe::probe(&config, &Questions { controller: p.controller, users: p.users });
            println!("{}", serde_json::to_string(&facts).unwrap_or_default());
            0
        }
    }
}

fn plan(p: PlanArgs) -> i32 {
    let (path, _) = crate::config::target::client_config();
    let config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let transport = match Transport::parse(&p.via) {
        Ok(t) => t,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 2;
        }
    };
    if p.nodes.is_empty() {
        super::error(CMD, "name the compute nodes: slurmlet cluster plan NODE… (names or host lists, n[1-3])");
        return 2;
    }
    let mut nodes = Vec::new();
    for text in &p.nodes {
        match crate::options::hostlist::expand(text) {
            Ok(list) => nodes.extend(list),
            Err(e) => {
                super::error(CMD, &format!("{text}: {e}"));
                return 2;
            }
        }
    }
    if let Some(bad) = nodes.iter().find(|n| !transport::valid_node_name(n)) {
        super::error(CMD, &format!("{bad:?} is not a host name"));
        return 2;
    }
    let controller = p.controller.unwrap_or_else(crate::paths::hostname);
    let users: Vec<String> = plan::box_users(&config).into_keys().collect();
    let ask = Ask { transport: &transport, remote: &p.remote_slurmlet, controller: &controller, users: &users };
    let gathered = gather::gather(&nodes, &ask);
    let secrets = match plan::secrets(&p.output) {
        Ok(s) => s,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let inputs = Inputs {
        config: &config,
        cluster: p.cluster.unwrap_or_else(|| config.cluster_name.clone()),
        controller,
        nodes: gathered.nodes,
        accounting: !p.no_accounting,
        transport: transport.describe(),
    };
    let made = plan::make(&inputs, &secrets, gathered.failures, &gathered.offsets);
    if let Err(e) = plan::write(&made, &p.output) {
        super::error(CMD, &e.to_string());
        return 1;
    }
    print!("{}", made.report());
    println!("plan written to {}", p.output.display());
    i32::from(made.failed())
}

fn apply(a: ApplyArgs) -> i32 {
    let transport = match Transport::parse(&a.via) {
        Ok(t) => t,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 2;
        }
    };
    let plan = match crate::cluster::apply::plan_dir::PlanDir::read(&a.output) {
        Ok(p) => p,
        Err(e) => {
            super::error(CMD, &format!("{e} (is it a plan's directory? see slurmlet cluster plan)"));
            return 1;
        }
    };
    println!(
        "# applying {} to controller {} and {} node(s) through {}",
        a.output.display(),
        plan.controller,
        plan.nodes.len(),
        transport.describe()
    );
    let profiles = crate::api::profile::profiles_path();
    match crate::cluster::apply::Apply::new(&transport, &plan, a.dry_run, a.rest_url, profiles).run() {
        Ok(()) if a.dry_run => 0,
        Ok(()) => {
            println!(
                "the cluster is up: {} and {}",
                plan.controller,
                plan.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(" ")
            );
            0
        }
        Err(stop) => {
            println!("FAIL {:<12} {}\n{:<17} fix: {}", stop.host, stop.what, "", stop.fix);
            1
        }
    }
}
