//! `scontrol show step [ID]` (and `show steps`): the steps of the running jobs in Slurm's
//! `Key=Value` layout (`_sprint_step_info`), a step of an array task named `A_T.S`.
//!
//! ID is read as Slurm 26.05 reads it (`J`, `A_T`, `J.S`, `A_T.S`, `J.batch`): a job id alone
//! names its steps (an array's id, those of all its tasks); `J.S` names step S of job J
//! itself; `A_T.S` names step S of job A itself when job A is task T (slurmlet's array id is
//! its first task's, so `A_0.S`), and no step otherwise. `--json` prints the steps as Slurm's
//! data parser does (see [`crate::api::step_list`]); there `A_T.S` is step S of job A, its
//! task not looked at, and an id that names nothing lists no step, as in Slurm 26.05.

use super::record::{or_null, time, Record};
use super::Flags;
use crate::api::acct::{parse_selection, Selection};
use crate::api::step_info::StepInfo;
use crate::options::time::format_limit_long;
use std::fmt::Write;

/// Slurm's text when the job a step id names does not exist.
const INVALID_JOB_ID: &str = "Invalid job id specified";

/// Whether `sel` names step `s`.
fn selects(sel: &Selection, s: &StepInfo) -> bool {
    if sel.het_offset.is_some() {
        return false;
    }
    match (sel.step, sel.array_task) {
        (None, task) => s.of_job(sel.job, task),
        (Some(step), None) => step == s.step && s.job_id == sel.job,
        (Some(step), Some(task)) => step == s.step && s.job_id == sel.job && s.array_task_id == Some(task),
    }
}

/// Whether `sel` names step `s` for `--json`, which reads `A_T.S` as step S of job A.
fn selects_for_json(sel: &Selection, s: &StepInfo) -> bool {
    match sel.step {
        Some(_) => selects(&Selection { array_task: None, ..*sel }, s),
        None => selects(sel, s),
    }
}

/// One step as `scontrol show step` prints it.
pub fn render(s: &StepInfo, flags: Flags) -> String {
    let mut r = Record::new(flags.one_liner);
    let _ = write!(
        r,
        "StepId={} UserId={} StartTime={} TimeLimit={}",
        s.display_id(),
        s.user_id,
        time(Some(s.start_time)),
        format_limit_long(s.time_limit)
    );
    r.end_line();
    let _ = write!(r, "State={} Partition={} NodeList={}", s.state, s.partition, s.nodes);
    r.end_line();
    let _ = write!(r, "Nodes=1 CPUs={} Tasks={} Name={} Network=(null)", s.cpus, s.tasks, s.name);
    r.end_line();
    let _ = write!(r, "TRES={}", or_null(&s.tres));
    r.end_line();
    let _ = write!(r, "ResvPorts=(null)");
    r.end_line();
    let _ = write!(r, "CPUFreqReq=Default");
    if !s.distribution.is_empty() {
        let _ = write!(r, " Dist={}", s.distribution);
    }
    r.end_line();
    let _ = write!(r, "SrunHost:Pid={}:{}", or_null(&s.srun_host), s.srun_pid);
    if !s.tres_per_node.is_empty() {
        r.end_line();
        let _ = write!(r, "TresPerNode={}", s.tres_per_node);
    }
    r.finish()
}

/// Runs `scontrol show step [ID]`; `argv`, the command line, goes in `--json`'s `meta`.
pub fn run(arg: Option<&str>, flags: Flags, argv: &[String]) -> i32 {
    let complain = |text: &str| {
        if !flags.quiet {
            crate::cli::error("scontrol", text);
        }
        1
    };
    let failed =
        |id: &str, why: &str| complain(&format!("scontrol_print_step: slurm_get_job_steps({id}) failed: {why}"));
    let selection = match arg.map(parse_selection).transpose() {
        Ok(sel) => sel,
        Err(e) => {
            let id = arg.unwrap_or_default();
            let why = e.strip_prefix(&format!("Bad job/step specified: {id}: ")).unwrap_or("JobID can not be zero");
            return failed(id, why);
        }
    };
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.steps("scontrol show step") {
        Ok(r) => r,
        Err(e) => return complain(&e.to_string()),
    };
    if let Some(e) = reply.errors.first() {
        return failed(arg.unwrap_or_default(), &e.error);
    }
    if flags.json {
        let named = reply.steps.iter().filter(|s| selection.as_ref().is_none_or(|sel| selects_for_json(sel, s)));
        let mut doc = crate::api::step_list::StepList::of(named, reply.meta.clone(), crate::sys::now());
        super::json::stamp(&mut doc.meta, argv);
        super::json::print(&doc);
        return 0;
    }
    let steps: Vec<&StepInfo> =
        reply.steps.iter().filter(|s| selection.as_ref().is_none_or(|sel| selects(sel, s))).collect();
    if let Some(sel) = selection.filter(|_| steps.is_empty()) {
        // As Slurm's controller: a job it does not know is an error, a job without that
        // step is not.
        let known = client.job(&sel.job.to_string()).is_ok_and(|r| r.errors.is_empty() && !r.jobs.is_empty());
        if !known {
            return failed(arg.unwrap_or_default(), INVALID_JOB_ID);
        }
        if !flags.quiet {
            let task = sel.array_task.map(|t| format!("_{t}")).unwrap_or_default();
            let step = sel.step.map(|s| s.to_string()).unwrap_or_default();
            println!("Job step {}{task}.{step} not found", sel.job);
        }
        return 1;
    }
    if steps.is_empty() {
        if !flags.quiet {
            println!("No job steps in the system");
        }
        return 0;
    }
    let text: String = steps.iter().map(|s| render(s, flags)).collect();
    crate::cli::format::emit_text(&text);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::StepId;

    fn step(job: u32, array: u32, task: Option<u32>, step: StepId) -> StepInfo {
        StepInfo {
            job_id: job,
            array_job_id: array,
            array_task_id: task,
            step,
            partition: "gpu".into(),
            user_id: 2001,
            nodes: "node1".into(),
            state: "RUNNING".into(),
            start_time: 1_795_311_682,
            tasks: 1,
            ..Default::default()
        }
    }

    #[test]
    fn records_in_slurms_layout() {
        let local = crate::sys::format_local_time(1_795_311_682);
        let batch = StepInfo { name: "batch".into(), ..step(28, 23, Some(1), StepId::Batch) };
        assert_eq!(
            render(&batch, Flags::default()),
            format!(
                "StepId=23_1.batch UserId=2001 StartTime={local} TimeLimit=UNLIMITED\n   \
                 State=RUNNING Partition=gpu NodeList=node1\n   \
                 Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)\n   \
                 TRES=(null)\n   ResvPorts=(null)\n   CPUFreqReq=Default\n   SrunHost:Pid=(null):0\n\n"
            )
        );
        let srun = StepInfo {
            name: "sleep".into(),
            time_limit: Some(5),
            cpus: 2,
            tasks: 2,
            tres: "cpu=2,gres/gpu=1,mem=1000M,node=1".into(),
            tres_per_node: "gres/gpu:1".into(),
            distribution: "Block".into(),
            srun_host: "vm".into(),
            srun_pid: 919,
            ..step(37, 0, None, StepId::Number(0))
        };
        assert_eq!(
            render(&srun, Flags { one_liner: true, ..Default::default() }),
            format!(
                "StepId=37.0 UserId=2001 StartTime={local} TimeLimit=00:05:00 State=RUNNING Partition=gpu \
                 NodeList=node1 Nodes=1 CPUs=2 Tasks=2 Name=sleep Network=(null) \
                 TRES=cpu=2,gres/gpu=1,mem=1000M,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Block \
                 SrunHost:Pid=vm:919 TresPerNode=gres/gpu:1\n"
            )
        );
    }

    #[test]
    fn ids_name_steps_as_in_slurm() {
        let steps = [
            step(23, 23, Some(2), StepId::Batch),
            step(23, 23, Some(2), StepId::Number(0)),
            step(28, 23, Some(1), StepId::Batch),
            step(28, 23, Some(1), StepId::Number(0)),
            step(30, 0, None, StepId::Number(0)),
        ];
        let named = |id: &str| {
            let sel = parse_selection(id).unwrap();
            steps.iter().filter(|s| selects(&sel, s)).map(StepInfo::display_id).collect::<Vec<_>>()
        };
        assert_eq!(named("23"), ["23_2.batch", "23_2.0", "23_1.batch", "23_1.0"]);
        assert_eq!(named("23_1"), ["23_1.batch", "23_1.0"]);
        assert_eq!(named("28"), ["23_1.batch", "23_1.0"]);
        assert_eq!(named("23.0"), ["23_2.0"]);
        assert_eq!(named("28.0"), ["23_1.0"]);
        // Step 0 of job 23 itself, which is task 2, as Slurm 26.05 looks it up.
        assert!(named("23_1.0").is_empty() && named("23_1.batch").is_empty());
        assert_eq!(named("23_2.0"), ["23_2.0"]);
        assert_eq!(named("28_1.batch"), ["23_1.batch"]);
        assert_eq!(named("30.0"), ["30.0"]);
        assert!(named("30.1").is_empty() && named("30+1").is_empty() && named("30_0").is_empty());
    }
}
