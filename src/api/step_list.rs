//! The steps of running jobs as Slurm's commands print them with `--json` (`squeue -s
//! --json`, `scontrol show step --json`): the data parser's step list, `{"steps": […],
//! "last_update", "meta", "errors", "warnings"}`, made from [`StepInfo`]. slurmrestd has no
//! endpoint for it; its shape is what Slurm 26.05's commands print.

use super::acct::StepId;
use super::noval::NoVal;
use super::step_info::StepInfo;
use super::types::{ApiError, ApiWarning, Meta};
use serde::Serialize;

/// Slurm's `NO_VAL`, which a step of a job in no array has as its task id.
const NO_VAL: u32 = 0xffff_fffe;

/// The document.
#[derive(Debug, Clone, Serialize)]
pub struct StepList {
    pub steps: Vec<Step>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// One step, its fields in the order Slurm prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub array: ArrayIds,
    pub cluster: String,
    pub container: String,
    pub container_id: String,
    pub container_type: String,
    pub cpu: Cpu,
    pub tres: Tres,
    pub name: String,
    pub network: String,
    pub nodes: String,
    pub number_cpus: u32,
    pub number_tasks: u32,
    pub partition: String,
    pub reserved_ports: String,
    pub time: Times,
    pub srun: Srun,
    pub state: Vec<String>,
    pub sluid: String,
    pub id: String,
    pub stderr: String,
    pub stdin: String,
    pub stdout: String,
    pub stdin_expanded: String,
    pub stdout_expanded: String,
    pub stderr_expanded: String,
    pub submit_line: String,
    pub task: Task,
    pub user: String,
}

/// `array`: the array and task of the step's job.
#[derive(Debug, Clone, Serialize)]
pub struct ArrayIds {
    pub job_id: u32,
    pub task_id: u32,
}

/// `cpu`.
#[derive(Debug, Clone, Serialize)]
pub struct Cpu {
    pub frequency: Frequency,
}

/// `cpu.frequency`: set to 0 for a batch step, unset for an srun step that asked for none.
#[derive(Debug, Clone, Serialize)]
pub struct Frequency {
    pub min: NoVal<u32>,
    pub max: NoVal<u32>,
    pub governor: NoVal<u32>,
}

/// `tres`.
#[derive(Debug, Clone, Serialize)]
pub struct Tres {
    pub per: TresPer,
    pub allocation: String,
    pub binding: String,
    pub frequency: String,
}

/// `tres.per`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TresPer {
    pub cpu: String,
    pub memory: String,
    pub step: String,
    pub node: String,
    pub socket: String,
    pub task: String,
}

/// `time`.
#[derive(Debug, Clone, Serialize)]
pub struct Times {
    pub running: NoVal<u64>,
    pub start: NoVal<u64>,
    /// Minutes; infinite when the step has no limit of its own.
    pub limit: NoVal<u32>,
}

/// `srun`.
#[derive(Debug, Clone, Serialize)]
pub struct Srun {
    pub host: String,
    pub pid: u32,
}

/// `task`.
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    pub distribution: String,
}

impl Step {
    /// `s` on cluster `cluster` at UNIX time `now`. Its id is the job's own (`42.0`), the
    /// array and task beside it, as Slurm prints it; fields slurmlet has no value for are
    /// empty, as Slurm's are for a step that has none.
    pub fn of(s: &StepInfo, cluster: &str, now: u64) -> Step {
        let batch = s.step == StepId::Batch;
        let frequency = if batch { NoVal::of(0) } else { NoVal::unset() };
        Step {
            array: ArrayIds {
                job_id: s.array_job_id,
                task_id: if s.array_job_id != 0 { s.array_task_id.unwrap_or(NO_VAL) } else { NO_VAL },
            },
            cluster: cluster.to_string(),
            container: String::new(),
            container_id: String::new(),
            container_type: String::new(),
            cpu: Cpu { frequency: Frequency { min: frequency, max: frequency, governor: frequency } },
            tres: Tres {
                per: TresPer { node: s.tres_per_node.clone(), ..Default::default() },
                allocation: s.tres.clone(),
                binding: String::new(),
                frequency: String::new(),
            },
            name: s.name.clone(),
            network: String::new(),
            nodes: s.nodes.clone(),
            number_cpus: s.cpus,
            number_tasks: s.tasks,
            partition: s.partition.clone(),
            reserved_ports: String::new(),
            time: Times {
                running: NoVal::of(s.run_time(now)),
                start: NoVal::of(s.start_time),
                limit: s.time_limit.map_or_else(NoVal::infinite, NoVal::of),
            },
            srun: Srun { host: s.srun_host.clone(), pid: s.srun_pid },
            state: vec![s.state.clone()],
            sluid: String::new(),
            id: format!("{}.{}", s.job_id, s.step),
            stderr: String::new(),
            stdin: String::new(),
            stdout: String::new(),
            stdin_expanded: String::new(),
            stdout_expanded: String::new(),
            stderr_expanded: String::new(),
            submit_line: String::new(),
            task: Task {
                distribution: if s.distribution.is_empty() { "Unknown".into() } else { s.distribution.clone() },
            },
            user: s.user_name.clone(),
        }
    }
}

impl StepList {
    /// The document of `steps`, with `meta` as the daemon sent it, at UNIX time `now`.
    pub fn of<'a>(steps: impl IntoIterator<Item = &'a StepInfo>, meta: Meta, now: u64) -> StepList {
        let cluster = meta.slurm.cluster.clone();
        StepList {
            steps: steps.into_iter().map(|s| Step::of(s, &cluster, now)).collect(),
            last_update: NoVal::of(now),
            meta,
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch step and an srun step of task 1 of array 41 as Slurm 26.05.5's `squeue -s
    /// --json` printed them (`tests/fixtures/real-slurm-parity-third/squeue-s.json`), less what
    /// slurmlet has no value for (`sluid`, srun's `submit_line`).
    #[test]
    fn steps_as_slurm_prints_them() {
        let base = StepInfo {
            job_id: 41,
            array_job_id: 41,
            array_task_id: Some(1),
            partition: "gpu".into(),
            user_name: "alice".into(),
            nodes: "node1".into(),
            state: "RUNNING".into(),
            start_time: 1_796_667_582,
            tasks: 1,
            ..Default::default()
        };
        let batch = StepInfo { step: StepId::Batch, name: "batch".into(), ..base.clone() };
        let srun = StepInfo {
            step: StepId::Number(0),
            name: "sleep".into(),
            cpus: 1,
            tres: "cpu=1,mem=1000M,node=1".into(),
            distribution: "Cyclic".into(),
            srun_host: "vm".into(),
            srun_pid: 29237,
            start_time: 1_796_667_583,
            ..base
        };
        let json = |s: &StepInfo| serde_json::to_value(Step::of(s, "ci26", 1_796_667_587)).unwrap();
        let captured: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/real-slurm-parity-third/squeue-s.json")).unwrap();
        let slurms = |i: usize| {
            let mut step = captured["steps"][i].clone();
            step["sluid"] = "".into();
            step["submit_line"] = "".into();
            step
        };
        assert_eq!(json(&batch), slurms(2));
        assert_eq!(json(&srun), slurms(3));
        // Keys in Slurm's order.
        let text = serde_json::to_string(&Step::of(&batch, "ci26", 0)).unwrap();
        assert!(text.starts_with(r#"{"array":{"job_id":41,"task_id":1},"cluster":"ci26","container":"""#), "{text}");
        assert!(text.ends_with(r#""submit_line":"","task":{"distribution":"Unknown"},"user":"alice"}"#), "{text}");
    }

    #[test]
    fn a_step_of_no_array_has_no_task() {
        let s = StepInfo { job_id: 7, step: StepId::Number(2), time_limit: Some(5), ..Default::default() };
        let step = Step::of(&s, "c", 0);
        assert_eq!((step.array.job_id, step.array.task_id, step.id.as_str()), (0, NO_VAL, "7.2"));
        assert_eq!(step.time.limit, NoVal::of(5));
    }
}
