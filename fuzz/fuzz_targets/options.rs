#![no_main]
//! Whole command lines and #SBATCH headers through the option table: never a panic, whatever
//! the words, for each of sbatch, srun and salloc.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::directive;
use slurmlet::options::sources::compose;
use slurmlet::options::Tool;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The first line is the command line (words split at spaces); the rest is a script.
    let (line, script) = text.split_once('\n').unwrap_or((text, ""));
    let cli: Vec<String> = line.split(' ').filter(|w| !w.is_empty()).map(str::to_string).collect();
    let script = format!("#!/bin/sh\n{script}");
    for tool in Tool::ALL {
        let dirs = directive::extract(&script, "#SBATCH", "f").unwrap_or_default();
        if let Ok(composed) = compose(tool, &dirs, Some(&script), "f", &[], &cli) {
            let _ = composed.options.to_job_desc();
        }
    }
});
