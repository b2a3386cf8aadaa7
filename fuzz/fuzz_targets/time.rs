#![no_main]
//! `--time` / `--time-min` values: never a panic; a parsed limit prints and parses back.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::time::{format_limit, format_limit_long, parse_time_limit, parse_time_secs};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_time_secs(text, "time-min");
    if let Ok(Some(minutes)) = parse_time_limit(text) {
        assert!(minutes > 0, "a zero limit is no limit");
        assert_eq!(parse_time_limit(&format_limit(Some(minutes))), Ok(Some(minutes)));
        assert_eq!(parse_time_limit(&format_limit_long(Some(minutes))), Ok(Some(minutes)));
    }
});
