//! slurmrestd's v0.0.43 accounting records (`GET /slurmdb/v0.0.43/jobs`) read back into the
//! records sacct prints ([`AcctJob`]): what `sacct` through a cluster profile shows.
//!
//! The inverse of the daemon's own writing of those records: what it writes from an
//! [`AcctJob`] reads back as the same job. What the records do not carry (a uid, only a user
//! name) is looked up on this machine, or left out.

use super::acct::{AcctJob, AcctStep, GpuUse, StepId, Tres, Usage, NO_VAL};
use super::slurmdb::{DbCpuTime, DbJob, DbStep, DbTres, DbTresUsage};
use super::types::ExitCode;

/// The raw wait status an exit code object stands for: the signal (with the core flag) when
/// there is one, else the return code.
pub fn wait_status(code: &ExitCode) -> i32 {
    match code.signal.id.get() {
        Some(signal) => {
            let core = if code.status.iter().any(|s| s == "CORE_DUMPED") { 0x80 } else { 0 };
            i32::from(signal) | core
        }
        None => (code.return_code.get().unwrap_or(0) as i32 & 0xff) << 8,
    }
}

/// A TRES list's CPUs, memory (MB), GPUs, shards and nodes.
fn tres(list: &[DbTres]) -> Tres {
    let mut t = Tres::default();
    for entry in list {
        let count = entry.count.max(0) as u64;
        match (entry.kind.as_str(), entry.name.as_str()) {
            ("cpu", _) => t.cpus = count as u32,
            ("mem", _) => t.mem_mb = count,
            ("node", _) => t.nodes = count as u32,
            ("gres", "gpu") => t.gpus = count as u32,
            ("gres", "shard") => t.shards = count as u32,
            _ => {}
        }
    }
    t
}

fn usec(t: &DbCpuTime) -> u64 {
    t.seconds * 1_000_000 + t.microseconds
}

/// The uids of the users a cluster's records name (they name users, not uids): those the
/// cluster itself told, else this machine's for the same name.
#[derive(Debug, Clone, Default)]
pub struct ClusterUids(std::collections::HashMap<String, u32>);

impl ClusterUids {
    /// The uids the cluster gave for these `(name, uid)` pairs.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, u32)>) -> ClusterUids {
        ClusterUids(pairs.into_iter().collect())
    }

    /// The uid of user `name`, if known.
    fn uid_of(&self, name: &str) -> Option<u32> {
        match self.0.get(name) {
            Some(&uid) => Some(uid),
            None => (!name.is_empty()).then(|| crate::identity::user_uid(name)).flatten(),
        }
    }
}

/// A step id's part after the job's (`5.batch` → batch, `5.0` → 0).
fn step_id(id: &str) -> StepId {
    match id.rsplit_once('.').map_or(id, |(_, s)| s) {
        "batch" => StepId::Batch,
        "extern" => StepId::Extern,
        "interactive" => StepId::Interactive,
        n => n.parse().map(StepId::Number).unwrap_or(StepId::Pending),
    }
}

/// Whether a state is one a job or step is still in.
fn active(state: &str) -> bool {
    matches!(state, "PENDING" | "RUNNING" | "SUSPENDED" | "REQUEUED" | "RESIZING")
}

/// One step.
fn step(s: &DbStep, uids: &ClusterUids) -> AcctStep {
    let state = s.state.first().cloned().unwrap_or_default();
    let ended = !active(&state);
    let max_rss = s.tres.requested.max.iter().find(|t| t.kind == "mem").map_or(0, |t| t.count.max(0) as u64 / 1024);
    let ave_rss = s.tres.requested.average.iter().find(|t| t.kind == "mem").map_or(0, |t| t.count.max(0) as u64 / 1024);
    AcctStep {
        id: step_id(&s.step.id),
        name: s.step.name.clone(),
        cancelled_by: uids.uid_of(&s.kill_request_user),
        start: s.time.start.get().unwrap_or(0),
        end: if ended { s.time.end.get().unwrap_or(0) } else { 0 },
        exit_status: ended.then(|| wait_status(&s.exit_code)),
        ntasks: s.tasks.count,
        alloc: tres(&s.tres.allocated),
        time_limit: s.time.limit.get(),
        usage: ended.then(|| Usage {
            user_usec: usec(&s.time.user),
            sys_usec: usec(&s.time.system),
            max_rss_kb: max_rss,
            ave_rss_kb: ave_rss,
        }),
        gpu_use: gpu_use(&s.tres.requested),
        nodes: s.nodes.range.clone(),
        state,
    }
}

/// A step's GPU use from its usage TRES (`gres/gpumem`, `gres/gpuutil` in `max` and
/// `average`); `None` when they are not there.
fn gpu_use(usage: &DbTresUsage) -> Option<GpuUse> {
    let max = |name: &str| usage.max.iter().find(|t| t.kind == "gres" && t.name == name).map(|t| t.count.max(0) as u64);
    let ave =
        |name: &str| usage.average.iter().find(|t| t.kind == "gres" && t.name == name).map(|t| t.count.max(0) as u64);
    Some(GpuUse {
        mem_max: max("gpumem")?,
        mem_ave: ave("gpumem")?,
        util_max: max("gpuutil")? as u32,
        util_ave: ave("gpuutil")? as u32,
    })
}

impl DbJob {
    /// Whether this record names a user who cancelled the job or one of its steps.
    pub fn names_a_canceller(&self) -> bool {
        !self.kill_request_user.is_empty() || self.steps.iter().any(|s| !s.kill_request_user.is_empty())
    }

    /// This record as sacct prints it, its users' uids looked up on this machine.
    pub fn to_acct(&self) -> AcctJob {
        self.to_acct_with(&ClusterUids::default())
    }

    /// This record as sacct prints it, its users' uids as `uids` knows them.
    pub fn to_acct_with(&self, uids: &ClusterUids) -> AcctJob {
        let state = self.state.current.first().cloned().unwrap_or_default();
        let allocated = tres(&self.tres.allocated);
        let started = self.time.start != 0 && self.time.start != NO_VAL;
        AcctJob {
            id: self.job_id,
            array_job_id: self.array.job_id,
            array_task_id: self.array.task_id.get(),
            name: self.name.clone(),
            uid: uids.uid_of(&self.user).unwrap_or(0),
            user: self.user.clone(),
            gid: crate::identity::group_gid(&self.group).unwrap_or(0),
            group: self.group.clone(),
            partition: self.partition.clone(),
            account: self.account.clone(),
            qos: self.qos.clone(),
            comment: self.comment.job.clone(),
            admin_comment: self.comment.administrator.clone(),
            reservation: self.reservation.name.clone(),
            wckey: self.wckey.wckey.clone(),
            cwd: self.working_directory.clone(),
            cluster: self.cluster.clone(),
            cancelled_by: uids.uid_of(&self.kill_request_user),
            reason: self.state.reason.clone(),
            submit: self.time.submission,
            eligible: self.time.eligible,
            // A job that ended without starting has no start: sacct prints None.
            start: if !started && !active(&state) { NO_VAL } else { self.time.start },
            end: if active(&state) { 0 } else { self.time.end },
            time_limit: self.time.limit.get(),
            req: tres(&self.tres.requested),
            alloc: (!self.tres.allocated.is_empty()).then_some(allocated),
            mem_per_cpu: self.required.memory_per_cpu.get().is_some(),
            // slurmdbd keeps no GPU indices.
            gpu_indices: Vec::new(),
            nodes: self.nodes.clone(),
            exit_status: wait_status(&self.exit_code),
            derived_status: wait_status(&self.derived_exit_code),
            priority: self.priority.get().unwrap_or(0),
            held: self.hold,
            stdout: self.stdout.clone(),
            stdout_expanded: self.stdout_expanded.clone(),
            stderr: self.stderr.clone(),
            stderr_expanded: self.stderr_expanded.clone(),
            stdin: self.stdin.clone(),
            stdin_expanded: self.stdin_expanded.clone(),
            show_full: true,
            steps: self.steps.iter().map(|s| step(s, uids)).collect(),
            state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clusters_uids_come_first_then_this_machines() {
        let uids = ClusterUids::from_pairs([("alice".to_string(), 2001), ("root".to_string(), 7)]);
        assert_eq!(uids.uid_of("alice"), Some(2001));
        assert_eq!(uids.uid_of("root"), Some(7), "the cluster's word wins");
        assert_eq!(ClusterUids::default().uid_of("root"), Some(0));
        assert_eq!(ClusterUids::default().uid_of(""), None);
        assert_eq!(ClusterUids::default().uid_of("no-such-user-here"), None);
    }
    use crate::api::slurmdb::DbJobsResponse;

    /// Records slurmrestd 26.05 wrote read as sacct printed the same jobs.
    #[test]
    fn reference_records_read_as_sacct_saw_them() {
        let text = include_str!("../../tests/fixtures/sacct/db_job_timeout.json").replace("\\/", "/");
        let reply: DbJobsResponse = serde_json::from_str(&text).unwrap();
        let job = reply.jobs[0].to_acct();
        assert_eq!(job.state, "TIMEOUT");
        assert!(job.end > job.start && job.start > 0, "{job:?}");
        assert_eq!(job.steps.first().map(|s| s.id), Some(StepId::Batch));
        assert!(job.steps.iter().all(|s| s.exit_status.is_some()));
        let text = include_str!("../../tests/fixtures/sacct/db_job_cancelled.json").replace("\\/", "/");
        let reply: DbJobsResponse = serde_json::from_str(&text).unwrap();
        assert_eq!(reply.jobs[0].to_acct().state, "CANCELLED");
    }

    #[test]
    fn exit_codes_read_back_as_wait_statuses() {
        use crate::api::noval::NoVal;
        use crate::api::types::ExitSignal;
        let code = |status: &str, rc: Option<u32>, sig: Option<u16>| ExitCode {
            status: vec![status.into()],
            return_code: NoVal::from_option(rc),
            signal: ExitSignal { id: NoVal::from_option(sig), name: String::new() },
        };
        assert_eq!(wait_status(&code("SUCCESS", Some(0), None)), 0);
        assert_eq!(wait_status(&code("ERROR", Some(3), None)), 3 << 8);
        assert_eq!(wait_status(&code("SIGNALED", None, Some(9))), 9);
        let mut core = code("SIGNALED", None, Some(11));
        core.status.push("CORE_DUMPED".into());
        assert_eq!(wait_status(&core), 11 | 0x80);
        assert_eq!(step_id("5.batch"), StepId::Batch);
        assert_eq!(step_id("5.12"), StepId::Number(12));
        assert_eq!(step_id("5.extern"), StepId::Extern);
    }
}
