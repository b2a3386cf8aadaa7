//! How a request names a job: `N`, `N_T` (task T of array N) or `N.STEP`.

/// A job, one task of an array, or one step of a job, as a path names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRef {
    /// The job id (never 0); for `A_T`, the array's.
    pub job: u32,
    /// The array task index, for `A_T`.
    pub task: Option<u32>,
    /// The step id, for `JOB.STEP`.
    pub step: Option<u32>,
}

/// Reads the `{job_id}` of a path: `N`, `N_T` (task T of array N) or `N.STEP`, with N from 1
/// to 4294967295. `None` for anything else (`abc`, `-1`, `0`, a number too large, `N_`).
pub fn parse_job_ref(text: &str) -> Option<JobRef> {
    let digits = |t: &str| t.parse::<u32>().ok().filter(|_| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    let (job, step) = match text.split_once('.') {
        None => (text, None),
        Some((job, step)) => (job, Some(digits(step)?)),
    };
    let (job, task) = match job.split_once('_') {
        None => (job, None),
        Some((job, task)) => (job, Some(digits(task)?)),
    };
    Some(JobRef { job: digits(job).filter(|&n| n > 0)?, task, step })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_refs_are_positive_ids_with_an_optional_step() {
        assert_eq!(parse_job_ref("12"), Some(JobRef { job: 12, task: None, step: None }));
        assert_eq!(parse_job_ref("12.0"), Some(JobRef { job: 12, task: None, step: Some(0) }));
        assert_eq!(parse_job_ref("12_3"), Some(JobRef { job: 12, task: Some(3), step: None }));
        assert_eq!(parse_job_ref("4294967295"), Some(JobRef { job: u32::MAX, task: None, step: None }));
        for bad in [
            "",
            "0",
            "-1",
            "+1",
            "abc",
            "99999999999999",
            "4294967296",
            "1.",
            ".1",
            "1.x",
            "1.-1",
            "1_",
            "_2",
            "1_x",
            " 1",
            "1.2.3",
        ] {
            assert_eq!(parse_job_ref(bad), None, "{bad:?}");
        }
    }
}
