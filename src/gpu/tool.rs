//! Running a vendor's command-line tool (`nvidia-smi`, `rocm-smi`) and reading what it
//! prints, for the sources and samplers that ask one. A tool hung in the driver is killed at
//! [`TOOL_DEADLINE`], and one that floods its output is read to [`TOOL_OUTPUT_MAX`] only
//! (see [`crate::program`]): the daemon runs them while users wait for it.

use super::GpuError;
use crate::program::{self, Limits};
use std::time::Duration;

/// How long a tool may run. `nvidia-smi` answers within a second or two on a healthy
/// machine (a few more the first time, while the driver loads); one that takes longer is
/// stuck in the driver.
pub const TOOL_DEADLINE: Duration = Duration::from_secs(10);

/// How much of a tool's output is read: the GPUs of a machine and their processes take a
/// few kilobytes; past this the rest is dropped (and the last line, which may be cut).
pub const TOOL_OUTPUT_MAX: usize = 1 << 20;

/// What `program ARGS` (looked up in `PATH`, with no input) prints, in whole lines; an error
/// when it cannot be started, runs past its deadline or exits with a failure.
pub fn output_of(program: &str, args: &[&str]) -> Result<String, GpuError> {
    output_within(program, args, TOOL_DEADLINE)
}

/// [`output_of`] with a deadline of `deadline` (at most [`TOOL_DEADLINE`]): for a sampler
/// that asks several tools in one look and keeps them all within the look's time.
pub fn output_within(program: &str, args: &[&str], deadline: Duration) -> Result<String, GpuError> {
    let limits = Limits { deadline: deadline.min(TOOL_DEADLINE), max_output: TOOL_OUTPUT_MAX };
    let done = program::run(std::process::Command::new(program).args(args), None, limits)?;
    if !done.status.success() {
        return Err(GpuError::Failed { program: program.to_string(), status: done.status });
    }
    let mut text = done.stdout_text();
    if done.truncated {
        tracing::warn!("{program} printed more than {TOOL_OUTPUT_MAX} bytes; the rest is not read");
        text.truncate(text.rfind('\n').map_or(0, |end| end + 1));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_failures() {
        assert_eq!(output_of("echo", &["a", "b"]).unwrap(), "a b\n");
        assert!(matches!(output_of("false", &[]), Err(GpuError::Failed { .. })));
        assert!(matches!(output_of("/nonexistent/tool", &[]), Err(GpuError::Tool(_))));
    }

    #[test]
    fn a_flood_is_read_in_whole_lines_up_to_the_cap() {
        let text = output_of("sh", &["-c", "yes 'GPU-1, 4242, 11468' | head -n 200000"]).unwrap();
        assert!(text.len() <= TOOL_OUTPUT_MAX && text.len() > TOOL_OUTPUT_MAX - 100, "{}", text.len());
        assert!(text.lines().all(|l| l == "GPU-1, 4242, 11468"));
    }
}
