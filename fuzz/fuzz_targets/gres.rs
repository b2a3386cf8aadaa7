#![no_main]
//! `--gres` and `--gpus` values: never a panic; parsed requests survive the TRES form.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::gres::{parse_gpus, parse_gres, to_tres};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(requests) = parse_gres(text) {
        assert!(!requests.is_empty());
        assert_eq!(parse_gres(&to_tres(&requests)), Ok(requests));
    }
    if let Ok(gpus) = parse_gpus(text, "gpus") {
        let again = match &gpus.kind {
            Some(k) => format!("{k}:{}", gpus.count),
            None => gpus.count.to_string(),
        };
        assert_eq!(parse_gpus(&again, "gpus"), Ok(gpus));
    }
});
