#![no_main]
//! The `{job_id}` of a path (`N`, `N.STEP`): never a panic, and what is read prints back as
//! a job id that reads the same.
use libfuzzer_sys::fuzz_target;
use slurmlet::daemon::model::job_ref::parse_job_ref;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some(r) = parse_job_ref(text) else { return };
    assert!(r.job > 0);
    let printed = match r.step {
        Some(step) => format!("{}.{step}", r.job),
        None => r.job.to_string(),
    };
    assert_eq!(parse_job_ref(&printed), Some(r), "{text:?} read as {r:?}, printed as {printed:?}");
});
