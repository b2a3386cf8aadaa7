#![no_main]
//! `--tres-per-task` lists: never a panic; what parses reads back through the TRES string.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::gres::{parse_gres, parse_tres_per_task, to_tres};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok((_, gpus)) = parse_tres_per_task(text) else { return };
    if !gpus.is_empty() {
        assert_eq!(parse_gres(&to_tres(&gpus)).expect("a TRES string parses"), gpus, "{text:?}");
    }
});
