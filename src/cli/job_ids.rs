//! Job ids as users write them to scancel, squeue `-j` and scontrol: `N`, `A_T` (task T of
//! array A) and `A_[1-3,7]` (those tasks), in comma-separated lists.

use crate::options::array::{parse_array, MAX_ARRAY_SIZE_LIMIT};

/// What one written id names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobIds {
    /// A job, or a whole array: `N`.
    Job(u32),
    /// Tasks of array `A`: `A_T` or `A_[list]`.
    Tasks(u32, Vec<u32>),
}

impl JobIds {
    /// The ids as the daemon's paths take them: `N`, or `A_T` for each task.
    pub fn path_ids(&self) -> Vec<String> {
        match self {
            JobIds::Job(id) => vec![id.to_string()],
            JobIds::Tasks(array, tasks) => tasks.iter().map(|t| format!("{array}_{t}")).collect(),
        }
    }
}

/// Splits a list at the commas outside brackets: `1,2_[1,3]` is `1` and `2_[1,3]`.
pub fn split(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// A number written in digits only (no sign, no spaces).
pub fn number(t: &str) -> Option<u32> {
    t.parse::<u32>().ok().filter(|_| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// Reads one written id; `None` when it is not `N`, `A_T` or `A_[list]` (ids from 1).
pub fn parse(word: &str) -> Option<JobIds> {
    let Some((job, tasks)) = word.split_once('_') else {
        return number(word).filter(|&n| n > 0).map(JobIds::Job);
    };
    let job = number(job).filter(|&n| n > 0)?;
    if let Some(list) = tasks.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return parse_array(list, MAX_ARRAY_SIZE_LIMIT).ok().map(|spec| JobIds::Tasks(job, spec.indices));
    }
    Some(JobIds::Tasks(job, vec![number(tasks)?]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_tasks_and_task_lists() {
        assert_eq!(split("1,2_[1,3], 4"), vec!["1", "2_[1,3]", "4"]);
        assert_eq!(parse("12"), Some(JobIds::Job(12)));
        assert_eq!(parse("12_3"), Some(JobIds::Tasks(12, vec![3])));
        assert_eq!(parse("12_[1-3,7]").unwrap().path_ids(), vec!["12_1", "12_2", "12_3", "12_7"]);
        for bad in ["0", "x", "12_", "12_x", "12_[3-1]", "_1", "1.x", "12_[]"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
