//! Running a vendor's command-line tool (`nvidia-smi`, `rocm-smi`) and reading what it
//! prints, for the sources and samplers that ask one.

use super::GpuError;

/// What `program ARGS` (looked up in `PATH`, with no input) prints; an error when it cannot
/// be started or exits with a failure.
pub fn output_of(program: &str, args: &[&str]) -> Result<String, GpuError> {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| GpuError::Run { program: program.to_string(), source })?;
    if !out.status.success() {
        return Err(GpuError::Failed { program: program.to_string(), status: out.status });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_failures() {
        assert_eq!(output_of("echo", &["a", "b"]).unwrap(), "a b\n");
        assert!(matches!(output_of("false", &[]), Err(GpuError::Failed { .. })));
        assert!(matches!(output_of("/nonexistent/tool", &[]), Err(GpuError::Run { .. })));
    }
}
