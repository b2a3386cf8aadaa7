//! `scontrol show job [ID]`: jobs in Slurm's `Key=Value` layout (that of Slurm 24.11 and
//! later: `ReqTRES`/`AllocTRES` lines, no `Power=`), or with `--json` the v0.0.43 jobs reply
//! that `GET /slurm/v0.0.43/job/{id}` gives.
//!
//! The daemon runs no job on more than one node, so `-d` prints one `Nodes=` line, whose
//! `CPU_IDs` are the CPUs the daemon gave the job (its `job_resources`).

use super::record::{megabytes, or_null, time, Record};
use super::Flags;
use crate::api::types::{ExitCode, JobInfo, JobsResponse};
use crate::id_set::ranges;
use crate::options::time::{format_hms, format_limit_long};
use crate::queue::QueueJob;
use std::fmt::Write;

/// Slurm's text for an id that is not a job id, or a job that does not exist.
const INVALID_JOB_ID: &str = "Invalid job id specified";

/// What `show job` was asked for.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// Every job.
    All,
    /// One job id.
    Job(u32),
    /// One task of an array: `ID_TASK`.
    Task(u32, u32),
}

/// Reads the id argument: digits, with an optional `_TASK`; `None` when it is not an id.
fn wanted(arg: Option<&str>) -> Option<Wanted> {
    let Some(arg) = arg else { return Some(Wanted::All) };
    if arg.is_empty() || !arg.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return None;
    }
    match arg.split_once('_') {
        Some((job, task)) => Some(Wanted::Task(job.parse().ok()?, task.parse().ok()?)),
        None => arg.parse().ok().map(Wanted::Job),
    }
}

/// `rc:signal` of an exit code.
fn exit_pair(code: &ExitCode) -> String {
    format!("{}:{}", code.return_code.get().unwrap_or(0), code.signal.id.get().unwrap_or(0))
}

/// `lo` or `lo-hi` (Slurm prints the range only when `hi` is set).
fn range(lo: u32, hi: u32) -> String {
    if hi > 0 {
        format!("{lo}-{hi}")
    } else {
        lo.to_string()
    }
}

/// The base state (`PENDING`, `RUNNING`, …) without flags.
fn base_state(job: &JobInfo) -> &str {
    job.job_state.first().map(String::as_str).unwrap_or("PENDING")
}

/// Seconds the job has run at UNIX time `now`.
fn run_time(job: &JobInfo, now: u64) -> u64 {
    let start = job.start_time();
    if base_state(job) == "PENDING" || start == 0 {
        return 0;
    }
    let end = if base_state(job) == "RUNNING" || job.end_time() == 0 { now } else { job.end_time() };
    end.saturating_sub(start)
}

/// The memory line's key and value: `MinMemoryCPU=1000M`, `MinMemoryNode=4G`, or
/// `MinMemoryNode=0` when the job asked for none.
fn min_memory(job: &JobInfo) -> String {
    match (job.memory_per_cpu.get(), job.memory_per_node.get()) {
        (Some(mb), _) => format!("MinMemoryCPU={}", megabytes(mb)),
        (None, Some(mb)) => format!("MinMemoryNode={}", megabytes(mb)),
        (None, None) => "MinMemoryNode=0".into(),
    }
}

/// The memory the job holds on its node, in MB (the `-d` line's `Mem=`).
fn node_memory(job: &JobInfo) -> u64 {
    match (job.memory_per_node.get(), job.memory_per_cpu.get()) {
        (Some(mb), _) => mb,
        (None, Some(mb)) => mb * u64::from(job.cpus()),
        (None, None) => 0,
    }
}

/// The `-d` line's `CPU_IDs=`: the CPUs the job holds, in Slurm's range form (`0-1,4`). A job
/// given its CPUs before they were given by id (its `job_resources` is `null`) shows its
/// count as a range from 0.
fn cpu_ids(job: &JobInfo) -> String {
    match &job.job_resources {
        Some(res) => ranges(&res.cpu_ids()),
        None => ranges(&(0..job.cpus().max(1)).collect::<Vec<u32>>()),
    }
}

/// The `-d` lines: `JOB_GRES=` and `Nodes=… CPU_IDs=… Mem=… GRES=…`, for a job that holds or
/// held an allocation.
fn write_details(r: &mut Record, job: &JobInfo) {
    let gres = job.gres_detail.first().map(String::as_str).unwrap_or("");
    let _ = write!(r, "JOB_GRES={}", or_null(&super::job_gres::gres_totals(gres)));
    r.end_line();
    let _ = write!(r, "  Nodes={} CPU_IDs={} Mem={} GRES={gres}", job.nodes, cpu_ids(job), node_memory(job));
    r.end_line();
}

/// One job as `scontrol show job` prints it at UNIX time `now`.
pub fn render(job: &JobInfo, flags: Flags, now: u64) -> String {
    let mut r = Record::new(flags.one_liner);
    write_identity(&mut r, job);
    write_state(&mut r, job, flags);
    write_times(&mut r, job, now);
    write_placement(&mut r, job);
    write_resources(&mut r, job, flags);
    write_command_and_files(&mut r, job);
    r.end_line();
    r.finish()
}

/// `JobId=` (with the array's ids), `JobName=`, the owner, the priority and the account.
fn write_identity(r: &mut Record, job: &JobInfo) {
    let _ = write!(r, "JobId={} ", job.job_id);
    if let Some(array) = job.array_job_id.get().filter(|&a| a != 0) {
        let task = match job.array_task_id.get() {
            _ if !job.array_task_string.is_empty() => job.array_task_string.clone(),
            Some(t) => t.to_string(),
            None => String::new(),
        };
        let _ = write!(r, "ArrayJobId={array} ArrayTaskId={task} ");
        if let Some(throttle) = job.array_max_tasks.get().filter(|&t| t != 0) {
            let _ = write!(r, "ArrayTaskThrottle={throttle} ");
        }
    }
    let _ = write!(r, "JobName={}", job.name);
    r.end_line();

    let _ = write!(
        r,
        "UserId={}({}) GroupId={}({}) MCS_label=N/A",
        job.user_name, job.user_id, job.group_name, job.group_id
    );
    r.end_line();
    let _ = write!(
        r,
        "Priority={} Nice={} Account={} QOS={}",
        job.priority(),
        job.nice,
        or_null(&job.account),
        or_null(&job.qos)
    );
    r.end_line();
}

/// `JobState=` with its reason and dependency, how it ended, and with `-d` its derived exit
/// code.
fn write_state(r: &mut Record, job: &JobInfo, flags: Flags) {
    let reason = if job.state_description.is_empty() {
        if job.state_reason.is_empty() {
            "None".to_string()
        } else {
            job.state_reason.clone()
        }
    } else {
        job.state_description.replace(char::is_whitespace, "_")
    };
    let _ = write!(r, "JobState={} Reason={reason} Dependency={}", job.state(), or_null(&job.dependency));
    r.end_line();
    let _ = write!(
        r,
        "Requeue={} Restarts={} BatchFlag={} Reboot=0 ExitCode={}",
        u8::from(job.requeue),
        job.restart_cnt,
        u8::from(job.batch_flag),
        exit_pair(&job.exit_code)
    );
    r.end_line();
    if flags.details {
        let _ = write!(r, "DerivedExitCode={}", exit_pair(&job.derived_exit_code));
        r.end_line();
    }
}

/// The run time and time limits, and the job's times from its submit to its last
/// scheduling look, at UNIX time `now`.
fn write_times(r: &mut Record, job: &JobInfo, now: u64) {
    let limit = if job.time_limit.infinite {
        "UNLIMITED".to_string()
    } else {
        match job.time_limit.get() {
            Some(m) => format_limit_long(Some(m)),
            None => "Partition_Limit".to_string(),
        }
    };
    let time_min = match job.time_minimum.get().filter(|&m| m != 0) {
        Some(m) => format_limit_long(Some(m)),
        None => "N/A".into(),
    };
    let _ = write!(r, "RunTime={} TimeLimit={limit} TimeMin={time_min}", format_hms(run_time(job, now)));
    r.end_line();
    let _ = write!(r, "SubmitTime={} EligibleTime={}", time(job.submit_time.get()), time(job.eligible_time.get()));
    r.end_line();
    let _ = write!(r, "AccrueTime={}", time(job.accrue_time.get()));
    r.end_line();
    let end = if job.time_limit.infinite && job.end_time() > now { "Unknown".into() } else { time(job.end_time.get()) };
    let _ = write!(r, "StartTime={} EndTime={end} Deadline=N/A", time(job.start_time.get()));
    r.end_line();
    let suspended = match job.suspend_time.get().filter(|&t| t != 0) {
        Some(t) => time(Some(t)),
        None => "None".into(),
    };
    let _ = write!(
        r,
        "SuspendTime={suspended} SecsPreSuspend=0 LastSchedEval={} Scheduler=Main",
        time(job.last_sched_evaluation.get())
    );
    r.end_line();
}

/// Where the job runs: its partition, the nodes it asked for or excluded, those it holds,
/// and the batch host.
fn write_placement(r: &mut Record, job: &JobInfo) {
    let _ = write!(r, "Partition={} AllocNode:Sid={}:0", job.partition, or_null(&job.allocating_node));
    r.end_line();
    let _ = write!(r, "ReqNodeList={} ExcNodeList={}", or_null(&job.required_nodes), or_null(&job.excluded_nodes));
    r.end_line();
    let _ = write!(r, "NodeList={}", job.nodes);
    if !job.scheduled_nodes.is_empty() {
        let _ = write!(r, " SchedNodeList={}", job.scheduled_nodes);
    }
    r.end_line();
    if !job.batch_host.is_empty() {
        let _ = write!(r, "BatchHost={}", job.batch_host);
        r.end_line();
    }
}

/// What the job asked for and holds: nodes, CPUs, tasks, TRES, with `-d` the allocation's
/// details, memory and features.
fn write_resources(r: &mut Record, job: &JobInfo, flags: Flags) {
    let pending = base_state(job) == "PENDING";
    let nodes = job.node_count();
    let (min_nodes, max_nodes) = match job.max_nodes.get().unwrap_or(0) {
        max if pending && max != 0 && max < nodes => (max, max),
        max if pending => (nodes, max),
        _ => (nodes, 0),
    };
    let _ = write!(
        r,
        "NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:0:*:*",
        range(min_nodes, max_nodes),
        range(job.cpus(), job.max_cpus.get().unwrap_or(0)),
        job.tasks(),
        job.cpus_per_task()
    );
    r.end_line();
    let _ = write!(r, "ReqTRES={}", or_null(&job.tres_req_str));
    r.end_line();
    let _ = write!(r, "AllocTRES={}", or_null(&job.tres_alloc_str));
    r.end_line();
    let _ = write!(r, "Socks/Node=* NtasksPerN:B:S:C={}:0:*:* CoreSpec=*", job.tasks_per_node.get().unwrap_or(0));
    r.end_line();
    if flags.details && !pending && !job.nodes.is_empty() {
        write_details(r, job);
    }
    let _ = write!(r, "MinCPUsNode={} {} MinTmpDiskNode=0", job.minimum_cpus_per_node(), min_memory(job));
    r.end_line();
    let _ = write!(r, "Features={} DelayBoot=00:00:00", or_null(&job.features));
    r.end_line();
    if !job.resv_name.is_empty() {
        let _ = write!(r, "Reservation={}", job.resv_name);
        r.end_line();
    }
    let _ = write!(r, "OverSubscribe=OK Contiguous={} Licenses=(null) Network=(null)", u8::from(job.contiguous));
    r.end_line();
}

/// The command, its directory, comments, the batch job's standard files and the TRES per
/// job, node and task.
fn write_command_and_files(r: &mut Record, job: &JobInfo) {
    let _ = write!(r, "Command={}", or_null(&job.command));
    r.end_line();
    let _ = write!(r, "WorkDir={}", job.current_working_directory);
    if !job.admin_comment.is_empty() {
        r.end_line();
        let _ = write!(r, "AdminComment={} ", job.admin_comment);
    }
    if !job.comment.is_empty() {
        r.end_line();
        let _ = write!(r, "Comment={} ", job.comment);
    }
    if job.batch_flag {
        let stdout = job.stdout_expanded();
        let stderr = job.stderr_expanded();
        let stdin = job.stdin_expanded();
        r.end_line();
        let _ = write!(r, "StdErr={}", if stderr.is_empty() { &stdout } else { &stderr });
        r.end_line();
        let _ = write!(r, "StdIn={}", if stdin.is_empty() { "/dev/null" } else { &stdin });
        r.end_line();
        let _ = write!(r, "StdOut={stdout}");
    }
    for (key, value) in
        [("TresPerJob", &job.tres_per_job), ("TresPerNode", &job.tres_per_node), ("TresPerTask", &job.tres_per_task)]
    {
        if !value.is_empty() {
            r.end_line();
            let _ = write!(r, "{key}={value}");
        }
    }
}

/// Runs `scontrol show job [ID]`; `argv` is the command line, for `--json`'s `meta`.
pub fn run(arg: Option<&str>, flags: Flags, argv: &[String]) -> i32 {
    let Some(wanted) = wanted(arg) else {
        if !flags.quiet {
            eprintln!("scontrol_print_job error: {INVALID_JOB_ID}");
        }
        return 1;
    };
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match &wanted {
        Wanted::Job(id) => client.job(&id.to_string()),
        Wanted::Task(array, task) => client.job(&format!("{array}_{task}")),
        Wanted::All => client.jobs(),
    };
    let mut reply = match reply {
        Ok(r) => r,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
    };
    reply.jobs.sort_by_key(|j| j.job_id);
    if flags.json {
        return print_json(reply, argv);
    }
    if let Some(e) = reply.errors.first() {
        if !flags.quiet {
            eprintln!("slurm_load_jobs error: {}", e.error);
        }
        return 1;
    }
    if reply.jobs.is_empty() {
        let (text, code) = match wanted {
            Wanted::All => ("No jobs in the system".to_string(), 0),
            Wanted::Job(id) => (format!("Job {id} not found"), 1),
            Wanted::Task(array, task) => (format!("Job {array}_{task} not found"), 1),
        };
        if !flags.quiet {
            println!("{text}");
        }
        return code;
    }
    let now = crate::sys::now();
    let text: String = reply.jobs.iter().map(|job| render(job, flags, now)).collect();
    crate::cli::format::emit_text(&text);
    0
}

/// `--json`: the jobs reply as slurmrestd's `GET /job/{id}` has it, pretty-printed; exit 1
/// when it carries an error.
fn print_json(mut reply: JobsResponse, argv: &[String]) -> i32 {
    super::json::stamp(&mut reply.meta, argv);
    super::json::print(&reply);
    i32::from(!reply.errors.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::job_resources::JobRes;
    use crate::api::noval::NoVal;

    #[test]
    fn ids_are_digits_with_an_optional_task() {
        assert_eq!(wanted(None), Some(Wanted::All));
        assert_eq!(wanted(Some("22")), Some(Wanted::Job(22)));
        assert_eq!(wanted(Some("22_3")), Some(Wanted::Task(22, 3)));
        assert_eq!(wanted(Some("abc")), None);
        assert_eq!(wanted(Some("22x")), None);
        assert_eq!(wanted(Some("")), None);
        assert_eq!(wanted(Some("_3")), None);
    }

    /// slurmrestd's exit code object of a job not ended by a signal: its `status` (`PENDING`
    /// while it runs) and return code.
    fn exit_code(status: &str, return_code: u32) -> crate::api::types::ExitCode {
        crate::api::types::ExitCode {
            status: vec![status.into()],
            return_code: NoVal::of(return_code),
            ..Default::default()
        }
    }

    /// Job 22 of the slurm-24.11 transcript (section 4), running: its fields as the daemon
    /// reports them, with times in UTC seconds.
    fn running() -> JobInfo {
        JobInfo {
            job_id: 22,
            name: "sleeper".into(),
            user_id: 2001,
            user_name: "alice".into(),
            group_id: 2001,
            group_name: "alice".into(),
            priority: NoVal::of(1),
            qos: String::new(),
            job_state: vec!["RUNNING".into()],
            state_reason: "None".into(),
            requeue: true,
            batch_flag: true,
            exit_code: exit_code("PENDING", 0),
            time_limit: NoVal::of(10),
            time_minimum: NoVal::of(0),
            submit_time: NoVal::of(1000),
            eligible_time: NoVal::of(1000),
            accrue_time: NoVal::of(1000),
            start_time: NoVal::of(1003),
            end_time: NoVal::of(1603),
            last_sched_evaluation: NoVal::of(1003),
            partition: "gpu".into(),
            allocating_node: "localhost".into(),
            nodes: "vm".into(),
            batch_host: "vm".into(),
            node_count: NoVal::of(1),
            cpus: NoVal::of(1),
            tasks: NoVal::of(1),
            cpus_per_task: NoVal::of(1),
            tres_req_str: "cpu=1,mem=1000M,node=1,billing=1".into(),
            tres_alloc_str: "cpu=1,mem=1000M,node=1,billing=1".into(),
            minimum_cpus_per_node: NoVal::of(1),
            memory_per_cpu: NoVal::of(1000),
            current_working_directory: "/home/alice/ref-transcript".into(),
            stdout_expanded: "/home/alice/ref-transcript/slurm-22.out".into(),
            stderr_expanded: "/home/alice/ref-transcript/slurm-22.out".into(),
            stdin_expanded: "/dev/null".into(),
            ..Default::default()
        }
    }

    /// Replaces the local-time stamps (`YYYY-MM-DDTHH:MM:SS`) of `text` with `T`, so that
    /// the layout compares in any time zone.
    fn untimed(text: &str) -> String {
        let is_stamp = |b: &[u8]| {
            b.len() >= 19
                && b.iter().take(19).enumerate().all(|(i, c)| match i {
                    4 | 7 => *c == b'-',
                    10 => *c == b'T',
                    13 | 16 => *c == b':',
                    _ => c.is_ascii_digit(),
                })
        };
        let bytes = text.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < bytes.len() {
            if is_stamp(&bytes[i..]) {
                out.push(b'T');
                i += 19;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_running_job_in_slurm_24_11_layout() {
        let text = render(&running(), Flags::default(), 1009);
        let expected = "JobId=22 JobName=sleeper
   UserId=alice(2001) GroupId=alice(2001) MCS_label=N/A
   Priority=1 Nice=0 Account=(null) QOS=(null)
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:06 TimeLimit=00:10:00 TimeMin=N/A
   SubmitTime=T EligibleTime=T
   AccrueTime=T
   StartTime=T EndTime=T Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=T Scheduler=Main
   Partition=gpu AllocNode:Sid=localhost:0
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=vm
   BatchHost=vm
   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   ReqTRES=cpu=1,mem=1000M,node=1,billing=1
   AllocTRES=cpu=1,mem=1000M,node=1,billing=1
   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*
   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=(null)
   WorkDir=/home/alice/ref-transcript
   StdErr=/home/alice/ref-transcript/slurm-22.out
   StdIn=/dev/null
   StdOut=/home/alice/ref-transcript/slurm-22.out
   

";
        assert_eq!(untimed(&text), expected);
    }

    #[test]
    fn a_pending_gpu_job_and_the_one_line_form() {
        let job = JobInfo {
            job_state: vec!["PENDING".into()],
            state_reason: "Resources".into(),
            start_time: NoVal::of(0),
            end_time: NoVal::of(0),
            nodes: String::new(),
            batch_host: String::new(),
            tres_alloc_str: String::new(),
            tres_per_node: "gres/gpu:1".into(),
            ..running()
        };
        let text = render(&job, Flags::default(), 5000);
        assert!(text.contains("\n   JobState=PENDING Reason=Resources Dependency=(null)\n"), "{text}");
        assert!(text.contains("\n   RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=N/A\n"), "{text}");
        assert!(text.contains("\n   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"), "{text}");
        assert!(text.contains("\n   NodeList=\n   NumNodes=1 "), "no BatchHost line: {text}");
        assert!(text.contains("\n   AllocTRES=(null)\n"), "{text}");
        assert!(
            text.ends_with("\n   StdOut=/home/alice/ref-transcript/slurm-22.out\n   TresPerNode=gres/gpu:1\n   \n\n")
        );

        let one = render(&job, Flags { one_liner: true, ..Flags::default() }, 5000);
        assert_eq!(one.lines().count(), 1);
        assert!(one
            .starts_with("JobId=22 JobName=sleeper UserId=alice(2001) GroupId=alice(2001) MCS_label=N/A Priority=1 "));
        assert!(one.ends_with(" StdOut=/home/alice/ref-transcript/slurm-22.out TresPerNode=gres/gpu:1 \n"), "{one}");
    }

    /// `scontrol show job -d` of a running 2-GPU job (slurm-24.11 transcript, job 115).
    #[test]
    fn details_add_the_derived_exit_code_and_the_allocation() {
        let job =
            JobInfo { gres_detail: vec!["gpu:2(IDX:0-1)".into()], tres_per_node: "gres/gpu:2".into(), ..running() };
        let text = render(&job, Flags { details: true, ..Flags::default() }, 1009);
        assert!(text.contains("ExitCode=0:0\n   DerivedExitCode=0:0\n   RunTime="), "{text}");
        assert!(
            text.contains(
                "\n   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n   JOB_GRES=gpu:2\n     Nodes=vm CPU_IDs=0 Mem=1000 GRES=gpu:2(IDX:0-1)\n   MinCPUsNode=1 "
            ),
            "{text}"
        );
        let cpu_only = render(&running(), Flags { details: true, ..Flags::default() }, 1009);
        assert!(cpu_only.contains("\n   JOB_GRES=(null)\n     Nodes=vm CPU_IDs=0 Mem=1000 GRES=\n"), "{cpu_only}");
    }

    #[test]
    fn finished_jobs_show_their_run_time_exit_code_and_comment() {
        let job = JobInfo {
            job_state: vec!["FAILED".into()],
            state_reason: "NonZeroExitCode".into(),
            exit_code: exit_code("ERROR", 3),
            end_time: NoVal::of(1065),
            comment: "note".into(),
            cpus: NoVal::of(4),
            ..running()
        };
        let text = render(&job, Flags { details: true, ..Flags::default() }, 99_999);
        assert!(text.contains("ExitCode=3:0\n"), "{text}");
        assert!(text.contains("RunTime=00:01:02 "), "{text}");
        assert!(text.contains("\n   WorkDir=/home/alice/ref-transcript\n   Comment=note \n   StdErr="), "{text}");
        assert!(text.contains("CPU_IDs=0-3 Mem=4000 "), "{text}");
    }

    /// The CPUs the daemon gave a job, by id, as slurmrestd reports them in `job_resources`.
    #[test]
    fn details_print_the_cpus_given_by_id() {
        let held = |ids: &[u32]| JobInfo {
            cpus: NoVal::of(ids.len() as u32),
            job_resources: Some(JobRes::on_one_node("vm", 8, ids, 3000)),
            ..running()
        };
        let text = render(&held(&[0, 1, 4]), Flags { details: true, ..Flags::default() }, 1009);
        assert!(
            text.contains(
                "
     Nodes=vm CPU_IDs=0-1,4 Mem=3000 GRES=
"
            ),
            "{text}"
        );
        let text = render(&held(&[5]), Flags { details: true, ..Flags::default() }, 1009);
        assert!(text.contains(" CPU_IDs=5 "), "{text}");
    }
}
