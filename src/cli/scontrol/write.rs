//! `scontrol write batch_script JOBID [FILE|-]`: a job's batch script, as it was submitted,
//! written to `slurm-JOBID.sh`, to `FILE`, or to stdout for `-`.
//!
//! As Slurm's scontrol, it opens the file before asking, removes it again when the daemon has
//! no script to give, and reports a refusal (`job script retrieval failed: …`) or a file it
//! cannot open on stderr while still exiting 0; only a malformed command line exits 1.

use crate::api::client::Client;
use crate::api::client_error::ClientError;
use std::io::Write;

/// The first word after `write` that names `batch_script` (`batch`, `batch_s`…).
fn is_batch_script(word: &str) -> bool {
    word.len() >= 5 && word.len() <= "batch_script".len() && "batch_script"[..word.len()].eq_ignore_ascii_case(word)
}

/// The first word after `write` that names `config`.
fn is_config(word: &str) -> bool {
    word.len() >= 6 && "config".eq_ignore_ascii_case(word)
}

/// A number as `strtol` reads it at the start of `text`: the value (`None` without digits)
/// and the rest.
fn strtol(text: &str) -> (Option<i128>, &str) {
    let trimmed = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, unsigned) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let digits = unsigned.len() - unsigned.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return (None, text);
    }
    let value = unsigned[..digits].parse::<i128>().unwrap_or(i128::MAX);
    (Some(if negative { -value } else { value }), &unsigned[digits..])
}

/// The job id of a job or step as Slurm's scontrol reads it (`N`, `N_T`, `N+H`, `N.S`,
/// `N.batch`…), or Slurm's words for what is wrong with it. Only the job id is asked for: as
/// in Slurm, an array task's script is its array's.
pub fn job_of(word: &str) -> Result<u32, &'static str> {
    if word.is_empty() {
        return Err("JobID must not be an empty string");
    }
    let (job, mut rest) = strtol(word);
    match job {
        None | Some(0) => return Err("JobID can not be zero"),
        Some(j) if j < 0 => return Err("JobID can not be a negative number"),
        Some(j) if j >= 0xffff_fffd => return Err("JobID larger than acceptable range"),
        Some(_) => {}
    }
    let job = job.unwrap_or_default() as u32;
    if rest.starts_with("_[") {
        return Err("JobID includes unexpected non-numeric characters");
    }
    if let Some(task) = rest.strip_prefix('_') {
        if task.is_empty() {
            return Err("Job Array ID must not be an empty string");
        }
        match strtol(task) {
            (None, _) => return Err("Job Array ID includes unexpected non-numeric characters"),
            (Some(t), _) if t < 0 => return Err("Job Array ID can not be a negative number"),
            (Some(_), after) => rest = after,
        }
    }
    if let Some(het) = rest.strip_prefix('+') {
        match strtol(het) {
            (None, _) => return Err("HetJob component includes unexpected non-numeric characters"),
            (Some(h), _) if h < 0 => return Err("HetJob component can not be a negative number"),
            (Some(_), after) => rest = after,
        }
    }
    let Some(step) = rest.strip_prefix('.') else {
        return if rest.is_empty() { Ok(job) } else { Err("JobID includes unexpected non-numeric characters") };
    };
    if step.is_empty() {
        return Err("StepID must not be an empty string");
    }
    let after = match strtol(step) {
        (Some(s), _) if s < 0 => return Err("StepID can not be a negative number"),
        (Some(_), after) => after,
        (None, _) => {
            let name = ["batch", "extern", "interactive", "TBD"]
                .into_iter()
                .find(|n| step.len() >= n.len() && step[..n.len()].eq_ignore_ascii_case(n))
                .ok_or("StepID includes unexpected non-numeric characters")?;
            &step[name.len()..]
        }
    };
    if after.is_empty() || after.starts_with('+') {
        Ok(job)
    } else {
        Err("StepID includes unexpected non-numeric characters")
    }
}

/// Runs `scontrol write WORDS…` (`tag` is the keyword as written).
pub fn run(tag: &str, words: &[String], quiet: bool) -> i32 {
    let Some((what, args)) = words.split_first() else {
        eprintln!("too few arguments for keyword:{tag}");
        return 1;
    };
    if is_config(what) {
        crate::cli::error("scontrol", "write config is not supported: slurmlet has no slurm.conf to write");
        return 1;
    }
    if !is_batch_script(what) {
        eprintln!("invalid write argument:{what}");
        return 1;
    }
    if args.len() > 2 {
        eprintln!("too many arguments for keyword:{tag}");
        return 1;
    }
    let Some(word) = args.first() else { return 0 };
    let job = match job_of(word) {
        Ok(job) => job,
        Err(why) => {
            crate::cli::fatal("scontrol", &format!("Bad job/step specified: {word}: {why}"));
            return 1;
        }
    };
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let name = args.get(1).cloned().unwrap_or_else(|| format!("slurm-{job}.sh"));
    batch_script(&client, job, &name, quiet)
}

/// Writes job `job`'s script to `name` (`-`: stdout).
fn batch_script(client: &Client, job: u32, name: &str, quiet: bool) -> i32 {
    let mut file = if name == "-" {
        None
    } else {
        match std::fs::File::create(name) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("failed to open file `{name}`: {}", crate::sys::c_error_text(&e));
                return 0;
            }
        }
    };
    let script = match client.batch_script(&job.to_string()) {
        Ok(reply) => match reply.errors.first() {
            None => Ok(reply.script),
            Some(e) => Err(e.error.clone()),
        },
        // A cluster profile's slurmrestd has no endpoint for it: said as for scontrol's
        // other such actions.
        Err(e @ ClientError::Unsupported(_)) => {
            if file.take().is_some() {
                let _ = std::fs::remove_file(name);
            }
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
        Err(e) => Err(e.to_string()),
    };
    let written = script.and_then(|script| {
        let result = match file.as_mut() {
            Some(f) => f.write_all(script.as_bytes()),
            None => std::io::stdout().write_all(script.as_bytes()).and_then(|_| std::io::stdout().flush()),
        };
        result.map_err(|e| crate::sys::c_error_text(&e))
    });
    match written {
        Ok(()) => {
            if file.is_some() && !quiet {
                println!("batch script for job {job} written to {name}");
            }
        }
        Err(why) => {
            if file.take().is_some() {
                let _ = std::fs::remove_file(name);
            }
            eprintln!("job script retrieval failed: {why}");
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_and_step_ids_read_as_slurm_reads_them() {
        for (word, job) in
            [("11", 11), ("11_1", 11), ("11.0", 11), ("11.batch", 11), ("11.extern", 11), (" 11", 11), ("11+0", 11)]
        {
            assert_eq!(job_of(word), Ok(job), "{word}");
        }
        assert_eq!(job_of("abc"), Err("JobID can not be zero"));
        assert_eq!(job_of("0"), Err("JobID can not be zero"));
        assert_eq!(job_of("11x"), Err("JobID includes unexpected non-numeric characters"));
        assert_eq!(job_of("-3"), Err("JobID can not be a negative number"));
        assert_eq!(job_of("11_"), Err("Job Array ID must not be an empty string"));
        assert_eq!(job_of("11_x"), Err("Job Array ID includes unexpected non-numeric characters"));
        assert_eq!(job_of("11.x"), Err("StepID includes unexpected non-numeric characters"));
        assert_eq!(job_of("4294967295"), Err("JobID larger than acceptable range"));
        assert_eq!(job_of(""), Err("JobID must not be an empty string"));
    }

    #[test]
    fn keywords_abbreviate_as_in_slurm() {
        assert!(is_batch_script("batch") && is_batch_script("BATCH_SCRIPT") && is_batch_script("batch_s"));
        assert!(!is_batch_script("batc") && !is_batch_script("batch_scriptx"));
        assert!(is_config("config") && !is_config("conf"));
    }
}
