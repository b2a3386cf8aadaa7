//! `slurmlet cluster pending -M CLUSTER [--move-pending]`: the jobs still waiting in this
//! machine's queue, each with the command that asks the cluster for it again (its script,
//! as submitted, piped into the cluster's `sbatch` with the job's own options), then the
//! `scancel` of this machine's copy. With `--move-pending`, the caller's own jobs are moved
//! so: submitted to the cluster through its profile, and cancelled here only once the
//! cluster has taken them. This machine's history stays where it is (`sacct -M local`).

use crate::api::client::Client;
use crate::api::types::{JobInfo, SignalScope};
use crate::cluster::resubmit::{self, Resubmit};
use crate::cluster::shell;
use std::io::Write;
use std::process::{Command, Stdio};

const CMD: &str = "slurmlet cluster pending";

/// `slurmlet cluster pending`'s options.
#[derive(Debug, clap::Args)]
pub struct PendingArgs {
    /// the cluster's profile (see `slurmlet profiles`), as sbatch -M names it
    #[arg(short = 'M', long = "clusters", value_name = "CLUSTER")]
    cluster: String,
    /// submit your own pending jobs to the cluster, and cancel each here once it is taken
    #[arg(long)]
    move_pending: bool,
}

/// Runs `slurmlet cluster pending`.
pub fn run(a: PendingArgs) -> i32 {
    let remote = match crate::api::profile::selected(Some(&a.cluster)) {
        Ok(r) => r,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if a.move_pending && remote.is_none() {
        super::error(CMD, &format!("{} is this machine's own queue: name the cluster's profile", a.cluster));
        return 2;
    }
    let local = match Client::local() {
        Ok(c) => c,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let jobs = match local.jobs() {
        Ok(r) => r.jobs,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    let pending: Vec<&JobInfo> = jobs.iter().filter(|j| j.job_state.iter().any(|s| s == "PENDING")).collect();
    if pending.is_empty() {
        println!("no jobs pending on this machine");
        return 0;
    }
    let me = crate::identity::uid();
    let mut failed = false;
    for job in pending {
        let options = resubmit::options(job);
        println!("# job {} of {} ({}):", job.job_id, job.user_name, job.name);
        let r = match options {
            Ok(r) => r,
            Err(why) => {
                println!("#   not moved: {why}");
                continue;
            }
        };
        for note in &r.notes {
            println!("#   note: {note}");
        }
        if !a.move_pending {
            println!("{}", command_line(job.job_id, &a.cluster, &r));
        } else if job.user_id != me {
            println!("#   not moved: it is {}'s; they move their own", job.user_name);
        } else {
            failed |= !move_one(&local, job.job_id, &a.cluster, &r);
        }
    }
    i32::from(failed)
}

/// The shell line that asks `cluster` for job `id` again, then cancels it here.
fn command_line(id: u32, cluster: &str, r: &Resubmit) -> String {
    let mut sbatch = vec!["sbatch".to_string(), "-M".into(), cluster.into()];
    sbatch.extend(r.options.iter().cloned());
    format!("scontrol -M local write batch_script {id} - | {} && scancel -M local {id}", shell::join(&sbatch))
}

/// Submits job `id` to `cluster` with its script and options, then cancels it here; says
/// which happened. `false` when it was not moved (or moved but left here too).
fn move_one(local: &Client, id: u32, cluster: &str, r: &Resubmit) -> bool {
    let script = match local.batch_script(&id.to_string()) {
        Ok(reply) if reply.errors.is_empty() => reply.script,
        Ok(reply) => {
            let why = reply.errors.first().map(|e| e.error.clone()).unwrap_or_default();
            println!("#   not moved: its script cannot be read here: {why}");
            return false;
        }
        Err(e) => {
            println!("#   not moved: its script cannot be read here: {e}");
            return false;
        }
    };
    let submitted = submit(cluster, r, &script);
    let new_id = match submitted {
        Ok(new_id) => new_id,
        Err(why) => {
            println!("#   not moved: the cluster's sbatch refused it: {why}");
            return false;
        }
    };
    match local.cancel(&id.to_string(), None, SignalScope::default()) {
        Ok(_) => {
            println!("job {id} moved: {cluster} job {new_id}");
            true
        }
        Err(e) => {
            println!("job {id} submitted to {cluster} as job {new_id}, but still here: scancel -M local {id} ({e})");
            false
        }
    }
}

/// This binary's `sbatch -M cluster --parsable OPTIONS…` with `script` on its standard
/// input: the new job's id, or what sbatch said.
fn submit(cluster: &str, r: &Resubmit, script: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut child = Command::new(exe)
        .args(["sbatch", "-M", cluster, "--parsable"])
        .args(&r.options)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run sbatch: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(script.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| format!("sbatch: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let id = said.split(';').next().unwrap_or_default().to_string();
    if out.status.success() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(id)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err.lines().last().unwrap_or(&said).to_string())
    }
}
