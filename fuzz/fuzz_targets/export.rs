#![no_main]
//! `--export` values: never a panic, also when building the job's environment from them.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::{job_environment, parse_export, ExportMode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let all = text.is_empty() || text.split(',').any(|item| item == "ALL");
    assert_eq!(matches!(parse_export(text), ExportMode::All(_)), all, "{text:?}");
    let submit = [("HOME".to_string(), "/home/a".to_string()), ("PATH".to_string(), "/bin".to_string())];
    let _ = job_environment(Some(text), &submit);
});
