#![no_main]
//! The query of a cancel (`signal=…&flags=…`): never a panic; a signal read is a real one.
use libfuzzer_sys::fuzz_target;
use slurmlet::daemon::http::request::parse_cancel_query;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let params = text.split('&').map(|p| p.split_once('=').unwrap_or((p, "")));
    if let Ok(q) = parse_cancel_query(params) {
        if let Some(sig) = q.signal {
            assert!((0..=64).contains(&sig), "signal {sig} from {text:?}");
        }
    }
});
