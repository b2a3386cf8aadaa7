#![no_main]
//! `--mem` / `--mem-per-cpu` sizes: never a panic; megabytes print and parse back.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::memory::parse_mem_mb;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mb) = parse_mem_mb(text, "mem") {
        assert_eq!(parse_mem_mb(&mb.to_string(), "mem"), Ok(mb));
        assert_eq!(parse_mem_mb(&format!("{mb}M"), "mem"), Ok(mb));
    }
});
