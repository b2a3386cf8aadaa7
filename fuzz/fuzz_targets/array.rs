#![no_main]
//! `--array` specs: never a panic; a spec that parses has sorted, distinct indices below the
//! limit and reads back unchanged from Slurm's compressed form.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::array::{format_array, parse_array, DEFAULT_MAX_ARRAY_SIZE};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = parse_array(text, DEFAULT_MAX_ARRAY_SIZE) else { return };
    assert!(spec.indices.windows(2).all(|w| w[0] < w[1]), "{text:?}");
    assert!(spec.indices.iter().all(|&i| i < DEFAULT_MAX_ARRAY_SIZE), "{text:?}");
    let again = parse_array(&format_array(&spec.indices), DEFAULT_MAX_ARRAY_SIZE).expect("the compressed form parses");
    assert_eq!(again.indices, spec.indices, "{text:?}");
});
