//! `scontrol show hostnames [LIST]`, `show hostlist LIST` and `show hostlistsorted LIST`:
//! expand a hostlist expression into one name per line, or compress names into one.
//!
//! None of them needs the daemon. As in Slurm, `hostnames` reports a missing or malformed
//! list on stderr and still exits 0; `hostlist` and `hostlistsorted` exit 1. A malformed
//! range is first reported as Slurm's hostlist code logs it
//! (`scontrol: error: _parse_single_range: Invalid range: `3-1'`).

use crate::options::hostlist;

/// What one of these prints: lines for stdout and stderr, and the exit code.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Text for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
    /// The exit code.
    pub code: i32,
}

impl Outcome {
    #[cfg(test)]
    fn out(stdout: String) -> Outcome {
        Outcome { stdout, stderr: String::new(), code: 0 }
    }

    fn err(stderr: String, code: i32) -> Outcome {
        Outcome { stdout: String::new(), stderr, code }
    }

    /// Prints it; returns the exit code.
    pub fn emit(self) -> i32 {
        crate::cli::format::emit_text(&self.stdout);
        eprint!("{}", self.stderr);
        self.code
    }
}

/// `show hostnames [LIST]`: one host per line, duplicates kept. Without `LIST`, the job's
/// `SLURM_JOB_NODELIST` (or the older `SLURM_NODELIST`).
pub fn hostnames(list: Option<&str>) -> Outcome {
    let env = || std::env::var("SLURM_JOB_NODELIST").or_else(|_| std::env::var("SLURM_NODELIST")).ok();
    let Some(list) = list.map(str::to_string).or_else(env) else {
        return Outcome::err("scontrol: error: host list is empty\n".into(), 0);
    };
    let (hosts, log) = hostlist::expand_logged(&list);
    let logged: String = log.iter().map(|line| format!("scontrol: error: {line}\n")).collect();
    match hosts {
        Ok(hosts) => Outcome { stdout: hosts.iter().map(|h| format!("{h}\n")).collect(), stderr: logged, code: 0 },
        Err(e) => Outcome::err(format!("{logged}{e}\n"), 0),
    }
}

/// `show hostlist LIST` (`sorted`: `show hostlistsorted LIST`): the names compressed into one
/// expression. A `LIST` starting with `/` is a file of names, one or more per line.
pub fn hostlist(list: Option<&str>, sorted: bool) -> Outcome {
    let Some(list) = list else {
        return Outcome::err("invalid encode argument\n".into(), 1);
    };
    let text = if list.starts_with('/') {
        match std::fs::read_to_string(list) {
            Ok(t) => t.split_whitespace().collect::<Vec<_>>().join(","),
            Err(_) => return Outcome::err(format!("Can not open {list}\n"), 1),
        }
    } else {
        list.to_string()
    };
    let (hosts, log) = hostlist::expand_logged(&text);
    let logged: String = log.iter().map(|line| format!("scontrol: error: {line}\n")).collect();
    let compressed =
        |hosts: &[String]| if sorted { hostlist::compress_sorted(hosts) } else { hostlist::compress(hosts) };
    match hosts {
        Ok(hosts) => Outcome { stdout: format!("{}\n", compressed(&hosts)), stderr: logged, code: 0 },
        Err(e) => Outcome::err(format!("{logged}{e}\n"), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(text: &str) -> Outcome {
        Outcome::out(text.into())
    }

    /// The cases of the reference transcripts (slurm-22.05 and slurm-24.11, section 2).
    #[test]
    fn transcript_cases() {
        assert_eq!(hostnames(Some("gpu[12-13],n[01-03]")), out("gpu12\ngpu13\nn01\nn02\nn03\n"));
        assert_eq!(hostnames(Some("gpu12")), out("gpu12\n"));
        assert_eq!(hostnames(Some("a[1-2]-b[08-10]")), out("a1-b08\na1-b09\na1-b10\na2-b08\na2-b09\na2-b10\n"));
        assert_eq!(hostnames(Some("n[01-03")), Outcome::err("Invalid hostlist: n[01-03\n".into(), 0));
        assert_eq!(hostlist(Some("n01,n02,n03,gpu12,gpu13"), false), out("n[01-03],gpu[12-13]\n"));
        assert_eq!(hostlist(Some("n03,n01,gpu13,n02,gpu12"), true), out("gpu[12-13],n[01-03]\n"));
    }

    #[test]
    fn hostlist_errors_exit_1() {
        assert_eq!(hostlist(None, false), Outcome::err("invalid encode argument\n".into(), 1));
        assert_eq!(hostlist(Some("n[1-"), true), Outcome::err("Invalid hostlist: n[1-\n".into(), 1));
        assert_eq!(
            hostlist(Some("n[3-1]"), false),
            Outcome::err(
                "scontrol: error: _parse_single_range: Invalid range: `3-1'\nInvalid hostlist: n[3-1]\n".into(),
                1
            )
        );
        assert_eq!(
            hostlist(Some("/nonexistent/slurmlet-hosts"), false),
            Outcome::err("Can not open /nonexistent/slurmlet-hosts\n".into(), 1)
        );
    }

    #[test]
    fn hostlist_reads_a_file_of_names() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(&file, "n03\nn01\nn02\n").unwrap();
        assert_eq!(hostlist(Some(file.to_str().unwrap()), false), out("n[03,01-02]\n"));
        assert_eq!(hostlist(Some(file.to_str().unwrap()), true), out("n[01-03]\n"));
    }
}
