//! `slurmlet node-check`: Slurm's `HealthCheckProgram` (or a prolog) on a Slurm node. One
//! look at the node's GPUs ([`crate::cluster::node_check`]); a GPU held outside the queue
//! or failing drains the node with the reason, and a node it drained is resumed once all is
//! clear. The node's state is read and changed with Slurm's own `scontrol`, within a
//! deadline.

use crate::cluster::node_check::{self, Verdict, REASON_PREFIX};
use crate::config::Config;
use crate::program::{self, Limits};
use clap::Parser;
use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

const CMD: &str = "slurmlet node-check";

/// How long `scontrol` may take.
const SCONTROL_DEADLINE: Duration = Duration::from_secs(20);

/// `slurmlet node-check`'s options.
#[derive(Debug, Parser)]
#[command(about = "drain this Slurm node while a GPU is used outside the queue or failing; resume it when clear")]
pub struct NodeCheckArgs {
    /// the node's name in Slurm (default: SLURMD_NODENAME, else the short host name)
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// Slurm's scontrol, as a command line (`ssh ctl scontrol`)
    #[arg(long, value_name = "COMMAND", default_value = "scontrol")]
    scontrol: String,
    /// say what would be done, and change nothing
    #[arg(long)]
    dry_run: bool,
    /// run as a prolog (as when Slurm sets SLURM_SCRIPT_CONTEXT=prolog_slurmd): exit 1 when
    /// the node is drained, so that the job does not start there
    #[arg(long)]
    prolog: bool,
}

/// The node as Slurm shows it: its state and the reason it was drained with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeState {
    /// `IDLE+DRAIN`, `MIXED`, ….
    pub state: String,
    /// Its reason without Slurm's `[user@time]`; empty when none.
    pub reason: String,
}

impl NodeState {
    /// Reads `scontrol show node NAME`'s text.
    pub fn parse(text: &str) -> NodeState {
        let mut found = NodeState::default();
        for line in text.lines().map(str::trim) {
            if let Some(reason) = line.strip_prefix("Reason=") {
                let reason = match reason.rfind(" [") {
                    Some(at) if reason.ends_with(']') => &reason[..at],
                    _ => reason,
                };
                found.reason = reason.to_string();
            } else if let Some(state) = line.split_whitespace().find_map(|w| w.strip_prefix("State=")) {
                found.state = state.to_string();
            }
        }
        found
    }

    /// Whether it is drained or draining.
    pub fn drained(&self) -> bool {
        self.state.contains("DRAIN")
    }

    /// Whether this command drained it.
    pub fn drained_by_us(&self) -> bool {
        self.drained() && self.reason.starts_with(REASON_PREFIX)
    }
}

/// What to do about `verdict` on a node in `now`: the `scontrol update` arguments, or none.
pub fn action(verdict: &Verdict, node: &str, now: &NodeState) -> Option<Vec<String>> {
    let update = |rest: &[String]| {
        let mut args = vec!["update".to_string(), format!("NodeName={node}")];
        args.extend_from_slice(rest);
        Some(args)
    };
    match verdict.reason() {
        // Drained by somebody else: theirs to resume, and their reason stands.
        Some(_) if now.drained() && !now.drained_by_us() => None,
        Some(reason) if now.reason == reason && now.drained() => None,
        Some(reason) => update(&["State=DRAIN".into(), format!("Reason={reason}")]),
        None if now.drained_by_us() => update(&["State=RESUME".into()]),
        None => None,
    }
}

fn scontrol(command: &str, args: &[String]) -> Result<String, String> {
    let words = crate::cluster::shell::split(command).map_err(|e| format!("--scontrol: {e}"))?;
    let Some((program, before)) = words.split_first() else { return Err("--scontrol names no command".into()) };
    let mut cmd = Command::new(program);
    cmd.args(before).args(args);
    let limits = Limits { deadline: SCONTROL_DEADLINE, max_output: 1 << 20 };
    let done = program::run(&mut cmd, None, limits).map_err(|e| e.to_string())?;
    if !done.status.success() {
        return Err(format!("{command} {} failed: {}", args.join(" "), done.stderr_text()));
    }
    Ok(done.stdout_text())
}

/// Runs `slurmlet node-check`.
pub fn run(args: Vec<OsString>) -> i32 {
    let opts: NodeCheckArgs = match super::parse_args(CMD, args, 2) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let node = opts
        .node
        .clone()
        .or_else(|| std::env::var("SLURMD_NODENAME").ok().filter(|n| !n.is_empty()))
        .unwrap_or_else(crate::paths::hostname);
    let (path, _) = crate::config::target::client_config();
    let mut config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let threshold = config.foreign_gpu_memory_mib.saturating_mul(1 << 20);
    let verdict = match node_check::look(&mut config) {
        Ok((gpus, _)) if gpus.is_empty() => {
            println!("node {node}: no GPU found here: nothing to look at");
            return 0;
        }
        Ok((gpus, sample)) => node_check::assess(&sample, &gpus, threshold, node_check::in_a_job),
        Err(e) => {
            super::error(CMD, &e);
            return 1;
        }
    };
    let now = match scontrol(&opts.scontrol, &["show".into(), "node".into(), node.clone()]) {
        Ok(text) => NodeState::parse(&text),
        Err(e) => {
            super::error(CMD, &e);
            return 1;
        }
    };
    match (action(&verdict, &node, &now), opts.dry_run) {
        (Some(args), true) => println!("node {node}: would run {} {}", opts.scontrol, args.join(" ")),
        (Some(args), false) => {
            if let Err(e) = scontrol(&opts.scontrol, &args) {
                super::error(CMD, &e);
                return 1;
            }
            println!(
                "node {node}: {}",
                if verdict == Verdict::Clear {
                    "resumed".to_string()
                } else {
                    format!("drained: {}", verdict.reason().unwrap_or_default())
                }
            );
        }
        (None, _) => match verdict.reason() {
            Some(reason) if now.drained() && !now.drained_by_us() => {
                println!("node {node}: {reason} (left drained as it was: {})", now.reason)
            }
            Some(reason) => println!("node {node}: drained: {reason}"),
            None => println!("node {node}: clear"),
        },
    }
    // Slurm tells a prolog that it is one.
    let prolog = opts.prolog || std::env::var("SLURM_SCRIPT_CONTEXT").is_ok_and(|c| c == "prolog_slurmd");
    i32::from(prolog && verdict != Verdict::Clear)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOWN: &str = "NodeName=n1 Arch=x86_64 CoresPerSocket=2\n   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n   Reason=slurmlet: gpu 0 busy outside the queue: pid 7 (bob), 900 MiB [root@2026-12-07T03:00:00]\n";

    #[test]
    fn the_state_and_reason_are_read_without_slurms_stamp() {
        let now = NodeState::parse(SHOWN);
        assert_eq!(now.state, "IDLE+DRAIN");
        assert_eq!(now.reason, "slurmlet: gpu 0 busy outside the queue: pid 7 (bob), 900 MiB");
        assert!(now.drained_by_us());
    }

    #[test]
    fn it_drains_resumes_only_its_own_and_leaves_others_reasons() {
        let busy = Verdict::Drain(vec!["gpu 0 busy outside the queue: pid 8 (eve), 1 MiB".into()]);
        let idle = NodeState { state: "IDLE".into(), reason: String::new() };
        assert_eq!(
            action(&busy, "n1", &idle).unwrap(),
            [
                "update",
                "NodeName=n1",
                "State=DRAIN",
                "Reason=slurmlet: gpu 0 busy outside the queue: pid 8 (eve), 1 MiB"
            ]
        );
        let ours = NodeState::parse(SHOWN);
        assert_eq!(action(&Verdict::Clear, "n1", &ours).unwrap(), ["update", "NodeName=n1", "State=RESUME"]);
        let admins = NodeState { state: "IDLE+DRAIN".into(), reason: "bad fan".into() };
        assert_eq!(action(&Verdict::Clear, "n1", &admins), None);
        assert_eq!(action(&busy, "n1", &admins), None);
        assert_eq!(action(&Verdict::Clear, "n1", &idle), None);
        let same = NodeState { state: "IDLE+DRAIN".into(), reason: busy.reason().unwrap() };
        assert_eq!(action(&busy, "n1", &same), None);
    }
}
