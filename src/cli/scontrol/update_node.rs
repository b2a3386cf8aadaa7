//! `scontrol update NodeName=NODE State=RESUME`: on this one-node cluster, what an
//! administrator does to a node whose GPUs were taken out of service for what their driver
//! reported (see `slurmlet gpus --resume`): every failed GPU goes back in service. Other
//! states and keys are refused by name, never ignored.

use crate::api::client::Client;

/// Runs the node update `words`; the exit code.
pub fn run(words: &[String]) -> i32 {
    let mut node = None;
    let mut state = None;
    for word in words {
        let (key, value) = word.split_once('=').unwrap_or((word.as_str(), ""));
        if super::abbreviates(key, "NodeName", 3) {
            node = Some(value.to_string());
        } else if key.eq_ignore_ascii_case("State") {
            state = Some(value.to_string());
        } else {
            crate::cli::error("scontrol", &format!("updating a node's {key} is not supported here; only State=RESUME"));
            return 1;
        }
    }
    let Some(state) = state else {
        eprintln!("No changes specified");
        return 1;
    };
    if !state.eq_ignore_ascii_case("RESUME") {
        let why = format!(
            "updating a node to State={state} is not supported here; only State=RESUME (failed GPUs back in service)"
        );
        crate::cli::error("scontrol", &why);
        return 1;
    }
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    match known_node(&client, node.as_deref().unwrap_or_default()) {
        Ok(true) => {}
        Ok(false) => {
            crate::cli::error("scontrol", "Invalid node name specified");
            return 1;
        }
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
    }
    match client.resume_gpus("all") {
        Ok(reply) if !reply.errors.is_empty() => {
            for e in &reply.errors {
                crate::cli::error("scontrol", &e.description);
            }
            1
        }
        Ok(_) => 0,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            1
        }
    }
}

/// Whether `name` is this cluster's node.
fn known_node(client: &Client, name: &str) -> Result<bool, crate::api::client_error::ClientError> {
    Ok(client.nodes()?.nodes.iter().any(|n| n.name == name))
}
