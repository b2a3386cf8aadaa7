#![no_main]
//! `--signal` values: never a panic; a parsed spec prints and parses back.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::signal::{parse_signal_spec, signal_name, MAX_SIGNAL_TIME};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = parse_signal_spec(text) {
        assert!((1..=64).contains(&spec.signal) && spec.seconds <= MAX_SIGNAL_TIME, "{spec:?}");
        let flags = if spec.batch_only { "B:" } else { "" };
        let again = format!("{flags}{}@{}", signal_name(spec.signal), spec.seconds);
        assert_eq!(parse_signal_spec(&again), Ok(spec), "{again}");
    }
});
