#![no_main]
//! `--begin` values: never a panic, whatever the present moment; `now…` is never in the past.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::begin::parse_begin;

/// 2030-06-14 10:00 UTC, a leap-year Feb 29 evening, a New Year's Eve night, and the epoch.
const NOWS: [u64; 4] = [1_907_661_600, 1_709_236_800, 1_767_221_999, 0];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let relative = text.trim().get(..3).is_some_and(|p| p.eq_ignore_ascii_case("now"));
    for now in NOWS {
        if let Ok(at) = parse_begin(text, now) {
            assert!(!relative || at >= now, "{text:?} at {now}: {at}");
        }
    }
});
