//! A job as squeue reads it: the [`QueueJob`] facts its fields, filters and sort order read.
//!
//! Two kinds of job implement it: the REST `job_info` (what `--json` prints and what any
//! slurmrestd returns), read here, and the daemon's own job records, which render rows
//! without building a `job_info` first. Every field reads either the same way, so both
//! print the same.

use crate::api::types::JobInfo;
use std::borrow::Cow;

/// The facts of a job that squeue's codes, filters and sort order read.
pub trait QueueJob {
    /// `job_id`.
    fn job_id(&self) -> u32;
    /// `array_job_id` (0: not an array job).
    fn array_job_id(&self) -> u32;
    /// `array_task_id`.
    fn array_task_id(&self) -> Option<u32>;
    /// `array_task_string` (the pending tasks of an array, `3-15%2`).
    fn array_task_string(&self) -> &str;
    /// `partition` (a comma list when several).
    fn partition(&self) -> &str;
    /// `name`.
    fn name(&self) -> &str;
    /// `account`.
    fn account(&self) -> &str;
    /// `qos`.
    fn qos(&self) -> &str;
    /// `resv_name`: the reservation it runs in (empty: none).
    fn reservation(&self) -> &str;
    /// `comment`.
    fn comment(&self) -> &str;
    /// `wckey`.
    fn wckey(&self) -> &str;
    /// `user_id`.
    fn user_id(&self) -> u32;
    /// `user_name`.
    fn user_name(&self) -> Cow<'_, str>;
    /// `group_id`.
    fn group_id(&self) -> u32;
    /// `group_name`.
    fn group_name(&self) -> Cow<'_, str>;
    /// The state as squeue names it: `COMPLETING` while the job completes, `CONFIGURING`
    /// while it holds its resources but nothing of it runs yet, else its base state
    /// (`PENDING` when none is known).
    fn state(&self) -> &str;
    /// `state_reason`.
    fn state_reason(&self) -> &str;
    /// `nodes` (empty before the job starts).
    fn nodes(&self) -> &str;
    /// `batch_host`.
    fn batch_host(&self) -> &str;
    /// `node_count`.
    fn node_count(&self) -> u32;
    /// `cpus`.
    fn cpus(&self) -> u32;
    /// `minimum_cpus_per_node`.
    fn minimum_cpus_per_node(&self) -> u32;
    /// `tasks`.
    fn tasks(&self) -> u32;
    /// `cpus_per_task`.
    fn cpus_per_task(&self) -> u32;
    /// `submit_time` (0: unknown).
    fn submit_time(&self) -> u64;
    /// `start_time` (0: not started).
    fn start_time(&self) -> u64;
    /// `end_time` (0: none).
    fn end_time(&self) -> u64;
    /// `time_limit` in minutes (`None`: unlimited).
    fn time_limit(&self) -> Option<u32>;
    /// `priority`.
    fn priority(&self) -> u32;
    /// `nice`.
    fn nice(&self) -> i32;
    /// `tres_per_node`.
    fn tres_per_node(&self) -> &str;
    /// `tres_per_job`.
    fn tres_per_job(&self) -> &str;
    /// `memory_per_cpu` in MB.
    fn memory_per_cpu(&self) -> Option<u64>;
    /// `memory_per_node` in MB.
    fn memory_per_node(&self) -> Option<u64>;
    /// `dependency`.
    fn dependency(&self) -> &str;
    /// `features`.
    fn features(&self) -> &str;
    /// `required_nodes`.
    fn required_nodes(&self) -> &str;
    /// `excluded_nodes`.
    fn excluded_nodes(&self) -> &str;
    /// `scheduled_nodes`.
    fn scheduled_nodes(&self) -> &str;
    /// `command`.
    fn command(&self) -> &str;
    /// `contiguous`.
    fn contiguous(&self) -> bool;
    /// `current_working_directory`.
    fn current_working_directory(&self) -> &str;
    /// `standard_output` with its patterns filled in.
    fn stdout_expanded(&self) -> Cow<'_, str>;
    /// `standard_error` with its patterns filled in.
    fn stderr_expanded(&self) -> Cow<'_, str>;
    /// `standard_input` with its patterns filled in.
    fn stdin_expanded(&self) -> Cow<'_, str>;
    /// `cluster`.
    fn cluster(&self) -> &str;
}

/// `expanded`, else (a reply without it) `asked`.
fn or_asked<'a>(expanded: &'a str, asked: &'a str) -> &'a str {
    if expanded.is_empty() {
        asked
    } else {
        expanded
    }
}

impl QueueJob for JobInfo {
    fn job_id(&self) -> u32 {
        self.job_id
    }
    fn array_job_id(&self) -> u32 {
        self.array_job_id.get().unwrap_or(0)
    }
    fn array_task_id(&self) -> Option<u32> {
        self.array_task_id.get()
    }
    fn array_task_string(&self) -> &str {
        &self.array_task_string
    }
    fn partition(&self) -> &str {
        &self.partition
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn account(&self) -> &str {
        &self.account
    }
    fn qos(&self) -> &str {
        &self.qos
    }
    fn reservation(&self) -> &str {
        &self.resv_name
    }
    fn comment(&self) -> &str {
        &self.comment
    }
    fn wckey(&self) -> &str {
        &self.wckey
    }
    fn user_id(&self) -> u32 {
        self.user_id
    }
    fn user_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.user_name)
    }
    fn group_id(&self) -> u32 {
        self.group_id
    }
    fn group_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.group_name)
    }
    fn state(&self) -> &str {
        if self.job_state.iter().any(|s| s == "COMPLETING") {
            return "COMPLETING";
        }
        if self.job_state.iter().any(|s| s == "CONFIGURING") {
            return "CONFIGURING";
        }
        self.job_state.first().map(String::as_str).unwrap_or("PENDING")
    }
    fn state_reason(&self) -> &str {
        &self.state_reason
    }
    fn nodes(&self) -> &str {
        &self.nodes
    }
    fn batch_host(&self) -> &str {
        &self.batch_host
    }
    fn node_count(&self) -> u32 {
        self.node_count.get().unwrap_or(1)
    }
    fn cpus(&self) -> u32 {
        self.cpus.get().unwrap_or(1)
    }
    fn minimum_cpus_per_node(&self) -> u32 {
        self.minimum_cpus_per_node.get().map_or(1, u32::from)
    }
    fn tasks(&self) -> u32 {
        self.tasks.get().unwrap_or(1)
    }
    fn cpus_per_task(&self) -> u32 {
        self.cpus_per_task.get().map_or(1, u32::from)
    }
    fn submit_time(&self) -> u64 {
        self.submit_time.get().unwrap_or(0)
    }
    fn start_time(&self) -> u64 {
        self.start_time.get().unwrap_or(0)
    }
    fn end_time(&self) -> u64 {
        self.end_time.get().unwrap_or(0)
    }
    fn time_limit(&self) -> Option<u32> {
        if self.time_limit.infinite {
            None
        } else {
            self.time_limit.get()
        }
    }
    fn priority(&self) -> u32 {
        self.priority.get().unwrap_or(0)
    }
    fn nice(&self) -> i32 {
        self.nice
    }
    fn tres_per_node(&self) -> &str {
        &self.tres_per_node
    }
    fn tres_per_job(&self) -> &str {
        &self.tres_per_job
    }
    fn memory_per_cpu(&self) -> Option<u64> {
        self.memory_per_cpu.get()
    }
    fn memory_per_node(&self) -> Option<u64> {
        self.memory_per_node.get()
    }
    fn dependency(&self) -> &str {
        &self.dependency
    }
    fn features(&self) -> &str {
        &self.features
    }
    fn required_nodes(&self) -> &str {
        &self.required_nodes
    }
    fn excluded_nodes(&self) -> &str {
        &self.excluded_nodes
    }
    fn scheduled_nodes(&self) -> &str {
        &self.scheduled_nodes
    }
    fn command(&self) -> &str {
        &self.command
    }
    fn contiguous(&self) -> bool {
        self.contiguous
    }
    fn current_working_directory(&self) -> &str {
        &self.current_working_directory
    }
    // data_parser v0.0.42 has no `*_expanded` fields: the path the job asked for stands in.
    fn stdout_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stdout_expanded, &self.standard_output))
    }
    fn stderr_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stderr_expanded, &self.standard_error))
    }
    fn stdin_expanded(&self) -> Cow<'_, str> {
        Cow::Borrowed(or_asked(&self.stdin_expanded, &self.standard_input))
    }
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_expanded_paths_v0_0_42_replies_print_the_paths_asked_for() {
        let v42 = JobInfo {
            standard_output: "/w/slurm-%j.out".into(),
            standard_input: "/dev/null".into(),
            ..Default::default()
        };
        assert_eq!(v42.stdout_expanded(), "/w/slurm-%j.out");
        assert_eq!(v42.stderr_expanded(), "", "no path of its own: show job prints stdout's");
        assert_eq!(v42.stdin_expanded(), "/dev/null");
        let v43 = JobInfo { stdout_expanded: "/w/slurm-5.out".into(), ..v42 };
        assert_eq!(v43.stdout_expanded(), "/w/slurm-5.out");
    }
}
