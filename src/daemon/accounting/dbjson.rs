//! Accounting records as slurmrestd's v0.0.43 `job` (`GET /slurmdb/v0.0.43/jobs`,
//! `sacct --json`).

use crate::api::acct::{AcctJob, AcctStep, GpuUse, StepId, Tres, Usage, NO_VAL};
use crate::api::noval::NoVal;
use crate::api::slurmdb::*;
use crate::api::types::{ExitCode, ExitSignal};

/// slurmrestd's exit code object of raw wait status `status`.
pub fn exit_code(status: i32) -> ExitCode {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        let mut states = vec!["SIGNALED".to_string()];
        if libc::WCOREDUMP(status) {
            states.push("CORE_DUMPED".into());
        }
        ExitCode {
            status: states,
            return_code: NoVal::unset(),
            signal: ExitSignal { id: NoVal::of(signal as u16), name: crate::options::signal::signal_name(signal) },
        }
    } else {
        let code = libc::WEXITSTATUS(status) as u32;
        ExitCode {
            status: vec![if code == 0 { "SUCCESS" } else { "ERROR" }.into()],
            return_code: NoVal::of(code),
            signal: ExitSignal { id: NoVal::unset(), name: String::new() },
        }
    }
}

fn tres(kind: &str, name: &str, id: u32, count: i64) -> DbTres {
    DbTres { kind: kind.into(), name: name.into(), id, count }
}

/// A job's or step's TRES list in Slurm's id order (cpu, mem, [energy,] node, [billing,]
/// gres/gpu, gres/shard); memory only when some is reserved, gres only when given.
fn tres_list(t: &Tres, job: bool, energy: bool) -> Vec<DbTres> {
    let mut list = vec![tres("cpu", "", 1, t.cpus as i64)];
    if t.mem_mb > 0 {
        list.push(tres("mem", "", 2, t.mem_mb as i64));
    }
    if energy {
        // Slurm's "no value" count of energy in an allocation.
        list.push(tres("energy", "", 3, -2));
    }
    list.push(tres("node", "", 4, t.nodes as i64));
    if job {
        list.push(tres("billing", "", 5, t.cpus as i64));
    }
    if t.gpus > 0 {
        list.push(tres("gres", "gpu", 1001, t.gpus as i64));
    }
    if t.shards > 0 {
        list.push(tres("gres", "shard", SHARD_ID, t.shards as i64));
    }
    list
}

/// The TRES ids of `gres/gpumem`, `gres/gpuutil` and `gres/shard` (after `gres/gpu`'s 1001,
/// as a Slurm database that tracks them numbers them).
const GPUMEM_ID: u32 = 1002;
const GPUUTIL_ID: u32 = 1003;
const SHARD_ID: u32 = 1004;

/// A step's usage as TRES counts: CPU time in milliseconds and the largest resident set in
/// bytes, then its GPU memory (bytes) and SM utilisation (percent) when they were watched,
/// all of it by task 0 on `node`. `max` and `min` hold the peaks, `average` and `total` the
/// averages.
fn usage_tres(usage: Option<Usage>, gpu_use: Option<GpuUse>, node: &str) -> DbTresUsage {
    // (type, name, id, peak, average)
    let mut counts: Vec<(&str, &str, u32, i64, i64)> = Vec::new();
    if let Some(u) = usage {
        let cpu_ms = ((u.user_usec + u.sys_usec) / 1000) as i64;
        let mem = (u.max_rss_kb * 1024) as i64;
        let mem_ave = (u.average_rss_kb() * 1024) as i64;
        counts.extend([("cpu", "", 1, cpu_ms, cpu_ms), ("mem", "", 2, mem, mem_ave)]);
    }
    counts.push(("energy", "", 3, 0, 0));
    if let Some(g) = gpu_use {
        counts.push(("gres", "gpumem", GPUMEM_ID, g.mem_max as i64, g.mem_ave as i64));
        counts.push(("gres", "gpuutil", GPUUTIL_ID, g.util_max as i64, g.util_ave as i64));
    }
    if usage.is_none() && gpu_use.is_none() {
        let energy = vec![tres("energy", "", 3, 0)];
        return DbTresUsage { max: Vec::new(), min: Vec::new(), average: energy.clone(), total: energy };
    }
    let at = |&(kind, name, id, peak, _): &(&str, &str, u32, i64, i64)| DbTresAt {
        kind: kind.into(),
        name: name.into(),
        id,
        count: peak,
        task: 0,
        node: node.into(),
    };
    let plain = |&(kind, name, id, _, average): &(&str, &str, u32, i64, i64)| tres(kind, name, id, average);
    DbTresUsage {
        max: counts.iter().map(at).collect(),
        min: counts.iter().map(at).collect(),
        average: counts.iter().map(plain).collect(),
        total: counts.iter().map(plain).collect(),
    }
}

fn cpu_times(usage: Option<Usage>) -> (DbCpuTime, DbCpuTime, DbCpuTime) {
    let u = usage.unwrap_or_default();
    (DbCpuTime::of(u.sys_usec), DbCpuTime::of(u.user_usec + u.sys_usec), DbCpuTime::of(u.user_usec))
}

fn time_limit(limit: Option<u32>) -> NoVal<u32> {
    match limit {
        Some(m) => NoVal::of(m),
        None => NoVal::infinite(),
    }
}

/// The user name of a uid, for `kill_request_user`.
fn requester(uid: Option<u32>) -> String {
    uid.map(crate::identity::user_name).unwrap_or_default()
}

/// One step.
fn step(job: &AcctJob, s: &AcctStep, now: u64) -> DbStep {
    let (system, total, user) = cpu_times(s.usage);
    DbStep {
        time: DbStepTime {
            elapsed: s.elapsed(job.end, now),
            end: NoVal::of(if s.end == 0 { job.end } else { s.end }),
            start: NoVal::of(s.start),
            suspended: 0,
            system,
            limit: match s.time_limit {
                Some(m) => NoVal::of(m),
                None => NoVal::infinite(),
            },
            total,
            user,
        },
        exit_code: exit_code(s.exit_status.unwrap_or(0)),
        nodes: DbStepNodes { count: s.alloc.nodes, range: s.nodes.clone(), list: vec![s.nodes.clone()] },
        tasks: DbStepTasks { count: s.ntasks },
        pid: String::new(),
        cpu: DbStepCpu {
            requested_frequency: DbCpuFrequency { min: NoVal::of(0), max: NoVal::of(0) },
            governor: "0".into(),
        },
        kill_request_user: requester(s.cancelled_by),
        state: vec![s.state.clone()],
        statistics: DbStepStatistics {
            cpu: DbStatsCpu { actual_frequency: 0 },
            energy: DbStatsEnergy { consumed: NoVal::of(0) },
        },
        step: DbStepId { id: format!("{}.{}", job.id, s.id), name: s.name.clone(), ..Default::default() },
        task: DbStepTask { distribution: if s.id == StepId::Batch { "Unknown" } else { "Block" }.into() },
        tres: DbStepTres {
            requested: usage_tres(s.usage, s.gpu_use, &s.nodes),
            consumed: usage_tres(None, None, &s.nodes),
            allocated: tres_list(&s.alloc, false, false),
        },
    }
}

/// Seconds between becoming eligible and starting (or ending unstarted; to `now` while
/// pending).
fn planned(job: &AcctJob, now: u64) -> u64 {
    if job.eligible == 0 {
        0
    } else if (job.start == 0 || job.start == NO_VAL) && job.end != 0 {
        job.end.saturating_sub(job.eligible)
    } else if job.start != 0 {
        job.start.saturating_sub(job.eligible)
    } else {
        now.saturating_sub(job.eligible)
    }
}

/// One job, at `now`.
pub fn job(j: &AcctJob, now: u64) -> DbJob {
    let usage = j.usage();
    let used = j.steps.iter().any(|s| s.usage.is_some()).then_some(usage);
    let (system, total, user) = cpu_times(used);
    DbJob {
        account: j.account.clone(),
        comment: DbComment { job: j.comment.clone(), administrator: j.admin_comment.clone(), ..Default::default() },
        allocation_nodes: j.alloc.map_or(0, |a| a.nodes),
        array: DbArray { job_id: j.array_job_id, task_id: NoVal::from_option(j.array_task_id), ..Default::default() },
        association: DbAssociation { cluster: j.cluster.clone(), ..Default::default() },
        block: String::new(),
        cluster: j.cluster.clone(),
        constraints: String::new(),
        container: String::new(),
        derived_exit_code: exit_code(j.derived_status),
        time: DbJobTime {
            elapsed: j.elapsed(now),
            eligible: j.eligible,
            end: j.end,
            planned: NoVal::of(planned(j, now)),
            start: j.start,
            submission: j.submit,
            suspended: 0,
            system,
            limit: time_limit(j.time_limit),
            total,
            user,
        },
        exit_code: exit_code(j.exit_status),
        extra: String::new(),
        failed_node: String::new(),
        flags: if j.alloc.is_some() {
            vec!["STARTED_ON_SCHEDULE".into(), "START_RECEIVED".into()]
        } else {
            vec!["START_RECEIVED".into()]
        },
        group: j.group.clone(),
        het: DbHet::default(),
        job_id: j.id,
        name: j.name.clone(),
        licenses: String::new(),
        mcs: DbMcs::default(),
        nodes: j.nodes.clone(),
        partition: j.partition.clone(),
        hold: j.held,
        priority: NoVal::of(j.priority),
        qos: j.qos.clone(),
        qosreq: String::new(),
        required: DbRequired {
            cpus: j.req.cpus,
            memory_per_cpu: if j.mem_per_cpu {
                NoVal::of(j.req.mem_mb / j.req.cpus.max(1) as u64)
            } else {
                NoVal::unset()
            },
            memory_per_node: if j.req.mem_mb > 0 && !j.mem_per_cpu { NoVal::of(j.req.mem_mb) } else { NoVal::unset() },
        },
        kill_request_user: requester(j.cancelled_by),
        restart_cnt: 0,
        reservation: DbReservation {
            name: j.reservation.clone(),
            requested: j.reservation.clone(),
            ..Default::default()
        },
        script: String::new(),
        segment_size: 0,
        stdin_expanded: j.stdin_expanded.clone(),
        stdout_expanded: j.stdout_expanded.clone(),
        stderr_expanded: j.stderr_expanded.clone(),
        stdout: j.stdout.clone(),
        stderr: j.stderr.clone(),
        stdin: j.stdin.clone(),
        state: DbState { current: vec![j.state.clone()], reason: j.reason.clone() },
        steps: j.steps.iter().map(|s| step(j, s, now)).collect(),
        submit_line: String::new(),
        tres: DbJobTres {
            allocated: j.alloc.map(|a| tres_list(&a, true, true)).unwrap_or_default(),
            requested: tres_list(&j.req, true, false),
        },
        used_gres: String::new(),
        user: j.user.clone(),
        wckey: DbWckey { wckey: j.wckey.clone(), flags: Vec::new() },
        working_directory: j.cwd.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exit codes of `db_job_completed.json` and `db_job_cancelled.json` (slurm-26.05).
    #[test]
    fn exit_codes_as_slurmrestd_writes_them() {
        let ok = serde_json::to_value(exit_code(0)).unwrap();
        assert_eq!(
            ok,
            serde_json::json!({"status": ["SUCCESS"], "return_code": {"set": true, "infinite": false, "number": 0},
                "signal": {"id": {"set": false, "infinite": false, "number": 0}, "name": ""}})
        );
        let term = serde_json::to_value(exit_code(libc::SIGTERM)).unwrap();
        assert_eq!(
            term,
            serde_json::json!({"status": ["SIGNALED"], "return_code": {"set": false, "infinite": false, "number": 0},
                "signal": {"id": {"set": true, "infinite": false, "number": 15}, "name": "TERM"}})
        );
        assert_eq!(exit_code(3 << 8).status, vec!["ERROR"]);
        assert_eq!(exit_code(3 << 8).return_code, NoVal::of(3));
    }

    /// slurmrestd's records read into these types and written again come out unchanged:
    /// every field, in slurmrestd's order, with its type.
    #[test]
    fn reference_records_round_trip_unchanged() {
        for text in [
            include_str!("../../../tests/fixtures/sacct/db_job_timeout.json"),
            include_str!("../../../tests/fixtures/sacct/db_job_cancelled.json"),
        ] {
            let text = text.replace("\\/", "/");
            let reply: DbJobsResponse = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::to_string_pretty(&reply).unwrap(), text.trim_end());
        }
    }

    /// What the daemon writes reads back (as `sacct` through a profile reads it) as the
    /// same job.
    #[test]
    fn a_job_written_reads_back_the_same() {
        let alloc = Tres { cpus: 2, mem_mb: 500, gpus: 1, shards: 0, nodes: 1 };
        let usage = Usage { user_usec: 1_500_000, sys_usec: 250_000, max_rss_kb: 2048, ave_rss_kb: 1024 };
        let step = |id, state: &str, status: Option<i32>| AcctStep {
            id,
            name: if id == StepId::Batch { "batch".into() } else { "python".into() },
            state: state.into(),
            cancelled_by: None,
            start: 1000,
            end: if status.is_some() { 1010 } else { 0 },
            exit_status: status,
            ntasks: 1,
            alloc,
            time_limit: None,
            usage: status.map(|_| usage),
            gpu_use: status.map(|_| GpuUse { mem_max: 3 << 30, mem_ave: 1 << 30, util_max: 80, util_ave: 35 }),
            nodes: "node1".into(),
        };
        let done = AcctJob {
            id: 12,
            array_job_id: 10,
            array_task_id: Some(2),
            name: "train".into(),
            user: "root".into(),
            group: "root".into(),
            partition: "gpu".into(),
            account: "lab".into(),
            qos: "normal".into(),
            cwd: "/tmp".into(),
            cluster: "c".into(),
            state: "FAILED".into(),
            reason: "None".into(),
            submit: 990,
            eligible: 995,
            start: 1000,
            end: 1010,
            time_limit: Some(60),
            req: alloc,
            alloc: Some(alloc),
            nodes: "node1".into(),
            exit_status: 3 << 8,
            derived_status: 9,
            priority: 7,
            stdout: "/tmp/slurm-%A_%a.out".into(),
            stdout_expanded: "/tmp/slurm-10_2.out".into(),
            show_full: true,
            steps: vec![step(StepId::Batch, "FAILED", Some(3 << 8)), step(StepId::Number(0), "CANCELLED", Some(9))],
            ..Default::default()
        };
        assert_eq!(job(&done, 2000).to_acct(), done);
        let running = AcctJob {
            state: "RUNNING".into(),
            end: 0,
            exit_status: 0,
            derived_status: 0,
            time_limit: None,
            steps: vec![step(StepId::Batch, "RUNNING", None)],
            ..done.clone()
        };
        assert_eq!(job(&running, 2000).to_acct(), running);
        let never = AcctJob {
            state: "CANCELLED".into(),
            start: NO_VAL,
            alloc: None,
            nodes: "None assigned".into(),
            exit_status: 0,
            derived_status: 0,
            steps: Vec::new(),
            ..done.clone()
        };
        assert_eq!(job(&never, 2000).to_acct(), never);
        // Memory asked for per CPU is recorded per CPU, as slurmdbd records it.
        let per_cpu = AcctJob { mem_per_cpu: true, ..done.clone() };
        let written = job(&per_cpu, 2000);
        assert_eq!(written.required.memory_per_cpu.get(), Some(alloc.mem_mb / alloc.cpus as u64));
        assert_eq!(written.required.memory_per_node.get(), None);
        assert_eq!(written.to_acct(), per_cpu);
        let shards = Tres { cpus: 1, mem_mb: 1000, gpus: 0, shards: 2, nodes: 1 };
        let sharded = AcctJob { req: shards, alloc: Some(shards), steps: Vec::new(), ..done };
        let written = job(&sharded, 2000);
        let given = &written.tres.allocated;
        assert!(given.iter().any(|t| (t.kind.as_str(), t.name.as_str(), t.count) == ("gres", "shard", 2)), "{given:?}");
        assert!(!given.iter().any(|t| t.name == "gpu"), "{given:?}");
        assert_eq!(written.to_acct(), sharded);
    }

    /// A record written before shards were counted reads with none.
    #[test]
    fn tres_without_shards_reads_as_none() {
        let t: Tres = serde_json::from_str(r#"{"cpus":1,"mem_mb":1000,"gpus":1,"nodes":1}"#).unwrap();
        assert_eq!(t, Tres { cpus: 1, mem_mb: 1000, gpus: 1, shards: 0, nodes: 1 });
    }

    /// Ours has every field of theirs.
    #[test]
    fn a_job_has_every_field() {
        let ours = serde_json::to_value(job(&AcctJob::default(), 0)).unwrap();
        let theirs: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/sacct/db_job_timeout.json")).unwrap();
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&ours), keys(&theirs["jobs"][0]));
    }
}
