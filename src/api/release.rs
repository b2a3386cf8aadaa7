//! The Slurm release whose interface the commands and the daemon follow.
//!
//! Every command's `--version`/`-V` prints it as Slurm's commands print their own
//! (`slurm 26.05.0`): tools match `slurm (\d+)\.(\d+)` to decide which options they may use.
//! The daemon reports it as `meta.slurm.version`. slurmlet's own version is
//! `slurmlet --version`'s, and `meta.slurm.release`'s.

/// Major version of the Slurm release followed.
pub const MAJOR: &str = "26";
/// Minor version (two digits, as Slurm writes it).
pub const MINOR: &str = "05";
/// Micro version.
pub const MICRO: &str = "0";

/// `MAJOR.MINOR.MICRO`: `26.05.0`.
pub fn number() -> String {
    format!("{MAJOR}.{MINOR}.{MICRO}")
}

/// What a command's `--version` prints: `slurm 26.05.0`.
pub fn version_line() -> String {
    format!("slurm {}", number())
}

/// slurmlet's own version line: `slurmlet X.Y.Z`.
pub fn slurmlet_line() -> String {
    format!("slurmlet {}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_reads_as_tools_parse_it() {
        let line = version_line();
        let rest = line.strip_prefix("slurm ").expect("starts with 'slurm '");
        let parts: Vec<u32> = rest.split('.').map(|p| p.parse().expect("numeric")).collect();
        assert_eq!(parts.len(), 3, "{line}");
        assert!(parts[0] >= 20 && parts[1] <= 12, "{line}");
    }
}
