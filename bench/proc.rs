//! Wall-clock timing of processes: from the spawn to the exit, output collected through pipes.

use crate::error::{failed, io, Result};
use std::process::{Command, Output};
use std::time::Instant;

/// Runs `cmd` to completion (stdout and stderr piped) and returns the wall time in ms from
/// just before the spawn to the exit, with the output.
pub fn timed(cmd: &mut Command) -> Result<(f64, Output)> {
    let t = Instant::now();
    let out = cmd.output().map_err(io(format!("cannot run {:?}", cmd.get_program())))?;
    Ok((t.elapsed().as_secs_f64() * 1e3, out))
}

/// Runs `cmd` as [`timed`] does and fails unless it exits 0.
pub fn timed_ok(cmd: &mut Command) -> Result<(f64, Output)> {
    let (ms, out) = timed(cmd)?;
    if !out.status.success() {
        return Err(failed(format!(
            "{:?} {:?} failed ({}): {}",
            cmd.get_program(),
            cmd.get_args().collect::<Vec<_>>(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok((ms, out))
}

/// `/bin/true`, the floor of a process start.
pub fn bin_true() -> Command {
    let mut c = Command::new("/bin/true");
    c.stdin(std::process::Stdio::null());
    c
}

/// The job id a `--parsable` sbatch printed (`id` or `id;cluster`).
pub fn parsable_id(out: &Output) -> Result<u32> {
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .split(';')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| failed(format!("sbatch printed no job id: {:?}", text.trim())))
}

/// `n` interleaved runs of two measurements (A, B, A, B, …, starting with B on odd rounds
/// so that neither always runs first), returning both sets of samples.
pub fn interleaved(
    n: usize,
    mut a: impl FnMut() -> Result<f64>,
    mut b: impl FnMut() -> Result<f64>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let (mut xs, mut ys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        if i % 2 == 0 {
            xs.push(a()?);
            ys.push(b()?);
        } else {
            ys.push(b()?);
            xs.push(a()?);
        }
    }
    Ok((xs, ys))
}
