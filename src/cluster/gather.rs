//! Asking every node for its facts at once, through the transport: `slurmlet cluster probe`
//! where the node has slurmlet, else this very binary sent over the transport's standard
//! input and run from a temporary file there (so a node needs nothing installed to be
//! planned). Each node's clock is compared with this machine's around the call.

use super::facts::NodeFacts;
use super::plan::checks::Check;
use super::transport::Transport;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a node may take to answer (a copy of the binary included).
const PROBE_DEADLINE: Duration = Duration::from_secs(120);

/// The shell command that runs the binary read from standard input with the arguments
/// that follow, and removes it after.
const RUN_FROM_STDIN: &str =
    "f=$(mktemp) || exit 1; trap 'rm -f \"$f\"' EXIT; cat > \"$f\" && chmod 700 \"$f\" && \"$f\" cluster probe \"$@\"";

/// What the nodes answered.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Each node that answered, by the name it was given, with its facts.
    pub nodes: Vec<(String, NodeFacts)>,
    /// Each answering node's clock less this machine's, in seconds.
    pub offsets: BTreeMap<String, f64>,
    /// A failed check for each node that did not answer with facts.
    pub failures: Vec<Check>,
}

/// What the probe is to be asked.
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    /// How nodes are reached.
    pub transport: &'a Transport,
    /// slurmlet's path on the nodes.
    pub remote: &'a str,
    /// The controller's name, which every node must resolve.
    pub controller: &'a str,
    /// The users the box's accounts name.
    pub users: &'a [String],
}

/// One node's facts and clock offset, or why there are none.
type Answer = Result<(NodeFacts, f64), String>;

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Asks every node in `nodes`, all at once.
pub fn gather(nodes: &[String], ask: &Ask) -> Gathered {
    // This binary, read once for all the nodes that lack slurmlet.
    let binary: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let answers: Vec<(String, Answer)> = std::thread::scope(|scope| {
        let binary = &binary;
        let handles: Vec<_> =
            nodes.iter().map(|node| (node, scope.spawn(move || ask_one(node, ask, binary)))).collect();
        handles
            .into_iter()
            .map(|(node, h)| (node.clone(), h.join().unwrap_or_else(|_| Err("the probe's thread panicked".into()))))
            .collect()
    });
    let mut gathered = Gathered::default();
    for (node, answer) in answers {
        match answer {
            Ok((facts, offset)) => {
                gathered.offsets.insert(node.clone(), offset);
                gathered.nodes.push((node, facts));
            }
            Err(why) => gathered.failures.push(Check::fail(
                Some(&node),
                format!("no facts: {why}"),
                format!("make `{}` run commands on {node} without a password", ask.transport.describe()),
            )),
        }
    }
    gathered
}

fn probe_args(ask: &Ask) -> Vec<String> {
    let mut args = vec!["--controller".to_string(), ask.controller.to_string()];
    if !ask.users.is_empty() {
        args.extend(["--users".to_string(), ask.users.join(",")]);
    }
    args
}

/// One node's facts and clock offset, or why there are none.
fn ask_one(node: &str, ask: &Ask, binary: &OnceLock<Result<Vec<u8>, String>>) -> Answer {
    let mut argv = vec![ask.remote.to_string(), "cluster".into(), "probe".into()];
    argv.extend(probe_args(ask));
    let mut done = ask.transport.run(node, &argv, None, PROBE_DEADLINE).map_err(|e| e.to_string())?;
    let mut after = now();
    // 127: no slurmlet there; send this one.
    if done.status.code() == Some(127) {
        let binary = binary
            .get_or_init(|| std::env::current_exe().and_then(std::fs::read).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| format!("slurmlet is not installed there, and this binary cannot be read to send it: {e}"))?;
        let mut argv = vec!["sh".to_string(), "-c".into(), RUN_FROM_STDIN.into(), "sh".into()];
        argv.extend(probe_args(ask));
        done = ask.transport.run(node, &argv, Some(binary), PROBE_DEADLINE).map_err(|e| e.to_string())?;
        after = now();
    }
    if !done.status.success() {
        let err = done.stderr_text();
        let last = err.lines().last().unwrap_or("").to_string();
        return Err(format!("the probe ended with {} ({last})", done.status));
    }
    let facts = NodeFacts::from_json(&done.stdout_text()).map_err(|e| e.to_string())?;
    // The node read its clock just before it answered: what is left is the answer's way
    // back, a few milliseconds.
    let offset = facts.time - after;
    Ok((facts, offset))
}
