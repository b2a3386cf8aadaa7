//! The mail program, run as Slurm's `MailProg` is: `PROGRAM -s SUBJECT ADDRESS`, with the
//! `SLURM_JOB_*` variables, nothing on its input. On a shared machine it runs as the job's
//! owner: the subject and the address are the owner's text, so the program can do no more
//! with them than the owner could.

use crate::daemon::model::notice::Notice;
use crate::identity::{Identity, RunAs};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How long the program may run.
const DEADLINE: Duration = Duration::from_secs(30);

/// How much of what it prints is kept, for the log.
const MAX_OUTPUT: usize = 4096;

/// Runs `program` for `notice`; `Err` says why it failed.
pub fn send(program: &Path, notice: &Notice) -> Result<(), String> {
    let mut cmd = Command::new(program);
    cmd.arg("-s").arg(&notice.subject).arg(&notice.to);
    cmd.env_clear().env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin").current_dir("/");
    cmd.envs(notice.env.iter().map(|(k, v)| (*k, v.as_str())));
    Identity::run_command_as(&mut cmd, RunAs { uid: notice.uid, gid: notice.gid }).map_err(|e| e.to_string())?;
    let limits = crate::program::Limits { deadline: DEADLINE, max_output: MAX_OUTPUT };
    let finished = crate::program::run(&mut cmd, None, limits).map_err(|e| e.to_string())?;
    if finished.status.success() {
        return Ok(());
    }
    let said = finished.stderr_text();
    let said = if said.is_empty() { finished.stdout_text().trim().to_string() } else { said };
    Err(format!("it ended with {}: {said}", finished.status))
}
