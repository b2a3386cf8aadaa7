#![no_main]
//! `-N min[-max]` values: never a panic; a parsed range prints and parses back.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::parse_node_range;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((min, max)) = parse_node_range(text) {
        let again = match max {
            Some(max) => format!("{min}-{max}"),
            None => min.to_string(),
        };
        assert_eq!(parse_node_range(&again), Ok((min, max)), "{again}");
    }
});
