//! The scheduler's unit tests: each builds a [`Core`] in memory ([`Core::in_memory`]: no
//! file, no job directory) and drives it as the daemon's requests and supervisors do, as
//! submits, passes, cancels and requeues, looking at its state and the effects it asks for.

mod cancel;
mod plan;
mod priority;
mod qos;
mod recovery;
mod requeue;
mod reservations;
mod submit_checks;

use super::core::{Core, Effects};
use crate::api::noval::NoVal;
use crate::api::types::JobDescMsg;
use crate::config::Config;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::JobState;

const ALICE: Caller = Caller { uid: 1000, gid: 1000 };
const BOB: Caller = Caller { uid: 1001, gid: 1001 };
const ROOT: Caller = Caller { uid: 0, gid: 0 };

/// A core on a node of 4 CPUs, 16 GB and 2 GPUs, with the configuration's `extra` lines.
fn core_with(extra: &str) -> Core {
    let text = format!("cpus = 4\nmemory = 16000\ngpus = 2\nstate_dir = \"/nonexistent/state\"\n{extra}");
    let file = toml::from_str(&text).expect("a valid configuration");
    Core::in_memory(Config::resolve(file, std::path::Path::new("/nonexistent/slurmlet.toml")).expect("resolved"))
}

fn core() -> Core {
    core_with("")
}

/// A job description as `sbatch --wrap true` sends it, with `change` applied.
fn desc(change: impl FnOnce(&mut JobDescMsg)) -> JobDescMsg {
    let mut d = JobDescMsg {
        name: Some("wrap".into()),
        current_working_directory: Some("/tmp".into()),
        environment: Some(vec!["PATH=/usr/bin".into()]),
        script: Some("#!/bin/sh\ntrue\n".into()),
        ..Default::default()
    };
    change(&mut d);
    d
}

/// Submits `d` as `caller` the way the daemon does (reserve, stage, admit), its paths taken
/// as good; the job's id, or Slurm's refusal.
fn submit(core: &mut Core, caller: Caller, d: &JobDescMsg) -> Result<u32, crate::daemon::model::refusal::Refusal> {
    let reserved = core.reserve(d, None, caller, false)?;
    let staged = core.stage(reserved);
    let id = staged.jobs[0].id;
    let _ = core.admit(staged.jobs);
    Ok(id)
}

/// Submits `d` as `caller` and runs a scheduling pass: the pass's effects.
fn submit_and_schedule(core: &mut Core, caller: Caller, d: &JobDescMsg) -> (u32, Effects) {
    let id = submit(core, caller, d).expect("accepted");
    (id, core.schedule())
}

fn state(core: &Core, id: u32) -> JobState {
    core.jobs[&id].state()
}

/// `--time` in minutes.
fn minutes(n: u32) -> Option<NoVal<u32>> {
    Some(NoVal::of(n))
}
