#![no_main]
//! `--export` values: never a panic, also when building the job's environment from them; a
//! value that parses selects the whole environment exactly when it says ALL (or is empty).
use libfuzzer_sys::fuzz_target;
use slurmlet::options::{job_environment, parse_export, ExportMode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mode) = parse_export(text) {
        let all = text.split(',').any(|item| item.trim_matches(['\'', '"']).eq_ignore_ascii_case("ALL"));
        if matches!(mode, ExportMode::All(_)) && !all {
            panic!("{text:?} selects the whole environment without ALL");
        }
    }
    let submit = [("HOME".to_string(), "/home/a".to_string()), ("PATH".to_string(), "/bin".to_string())];
    let _ = job_environment(Some(text), &submit);
});
