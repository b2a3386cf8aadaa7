#![no_main]
//! Output file name patterns: never a panic; text without `%` or `\` is kept as written.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::pattern::{expand, PatternContext};

fuzz_target!(|data: &[u8]| {
    let Ok(pattern) = std::str::from_utf8(data) else { return };
    let batch = PatternContext {
        job_id: 42,
        job_name: "train".into(),
        user: "alice".into(),
        node: "gpu12".into(),
        array_job_id: 40,
        array_task_id: Some(2),
        step: "batch".into(),
        task_id: 3,
        node_id: 1,
    };
    let step = PatternContext { job_id: u32::MAX, array_task_id: None, step: "7".into(), ..batch.clone() };
    for ctx in [&batch, &step, &PatternContext::default()] {
        let out = expand(pattern, ctx);
        if !pattern.contains(['%', '\\']) {
            assert_eq!(out, pattern);
        }
    }
});
