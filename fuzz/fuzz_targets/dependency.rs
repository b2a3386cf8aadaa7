#![no_main]
//! `--dependency` specs: never a panic; a spec that parses reads back unchanged from its
//! canonical form.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::dependency::parse_dependency;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = parse_dependency(text) else { return };
    let canonical = spec.to_slurm_string();
    let again = parse_dependency(&canonical).unwrap_or_else(|e| panic!("{text:?} -> {canonical:?}: {e}"));
    assert_eq!(again, spec, "{text:?} -> {canonical:?}");
});
