//! `salloc`: get an allocation, run a command in it (the user's shell by default) with the
//! allocation's variables, and release the allocation when the command ends.

use super::allocate;
use super::job_command;
use super::job_failure::Failure;
use crate::api::stream::Frame;
use crate::options::Tool;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;

const CMD: &str = "salloc";

/// Whether the command's variable `name` is one salloc sets: Slurm's salloc sets
/// `SLURM_MEM_PER_CPU` and `SLURM_MEM_PER_NODE` only from its own `--mem-per-cpu` and `--mem`
/// (or their input variables), never from the partition's default, which a batch job's
/// variables do show.
fn asked_for(o: &crate::options::JobOptions, name: &str) -> bool {
    match name {
        "SLURM_MEM_PER_CPU" => o.value("mem-per-cpu").is_some(),
        "SLURM_MEM_PER_NODE" => o.value("mem").is_some(),
        _ => true,
    }
}

/// Runs salloc.
pub fn run(args: Vec<OsString>) -> i32 {
    salloc(args).unwrap_or_else(|failure| failure.report(CMD))
}

fn salloc(args: Vec<OsString>) -> Result<i32, Failure> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let o = job_command::options(Tool::Salloc, CMD, &args, &env)?;
    let quiet = o.has("quiet");
    let mut desc = o.to_job_desc()?;
    let cwd = job_command::working_directory(&o)?;
    desc.current_working_directory = Some(cwd.display().to_string());
    desc.environment = Some(job_command::environment(&o, &env));
    if desc.name.is_none() {
        desc.name = Some("interactive".into());
    }
    super::choose_cluster(o.value("clusters"));
    super::set_verbosity(o.count("verbose"));
    let client = super::connect(CMD).map_err(Failure::Usage)?;
    let how = allocate::Waiting { immediate: o.has("immediate"), quiet, interrupt: None };
    let allocation = allocate::allocate(CMD, &client, desc, &how)?;
    let id = allocation.grant.job_id;
    if o.has("bell") {
        eprint!("\x07");
    }
    if !quiet {
        eprintln!("{CMD}: Granted job allocation {id}");
    }
    if o.has("no-shell") {
        let _ = Frame::Detach.write_to(&mut &allocation.conn);
        return Ok(0);
    }
    let command = if o.positional.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        o.positional.clone()
    };
    let mut child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .current_dir(&cwd)
        .envs(allocation.grant.env.iter().filter_map(|e| e.split_once('=')).filter(|(k, _)| asked_for(&o, k)))
        .spawn()
        .map_err(|e| Failure::Message(format!("cannot run {}: {e}", command[0]), 1))?;
    let pid = child.id() as i32;
    // Ctrl-C and Ctrl-\ are for the command (an interactive shell handles them), not for us.
    // SAFETY: setting dispositions has no memory preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    let kill_signal = match o.value("kill-command") {
        None => None,
        Some("") => Some(libc::SIGTERM),
        Some(sig) => Some(
            crate::options::signal::signal_number(sig)
                .ok_or_else(|| Failure::Message(format!("Invalid --kill-command specification: {sig}"), 1))?,
        ),
    };
    let watcher = watch_revocation(&allocation, pid, kill_signal);
    let status = child.wait().map_err(|e| Failure::Message(format!("cannot wait for {}: {e}", command[0]), 1))?;
    if !quiet {
        eprintln!("{CMD}: Relinquishing job allocation {id}");
    }
    allocation.release(status.into_raw());
    if let Some(w) = watcher {
        let _ = w.join();
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    })
}

/// Watches the allocation while the command runs: the time limit's warning is printed; a
/// revocation (time limit, scancel) is reported, and with `--kill-command` the command gets
/// its signal. Without it the command goes on, as with Slurm's salloc.
fn watch_revocation(
    allocation: &allocate::Allocation,
    pid: i32,
    kill_signal: Option<i32>,
) -> Option<std::thread::JoinHandle<()>> {
    let conn = allocation.conn.try_clone().ok()?;
    Some(std::thread::spawn(move || {
        while let Ok(Some(frame)) = Frame::read_from(&mut &conn) {
            match frame {
                Frame::Message(warning) => eprintln!("{CMD}: {warning}"),
                Frame::Revoked(why) => {
                    eprintln!("{CMD}: {why}");
                    if let Some(sig) = kill_signal {
                        let _ = crate::sys::kill_pid(pid, sig);
                    }
                }
                _ => {}
            }
        }
    }))
}
