//! The daemon's state as slurmrestd v0.0.43 shapes it: `job_info`, `node`, `partition_info`.

use super::gres;
use super::listing::{state_list, JobRow};
use crate::api::job_resources::JobRes;
use crate::api::noval::NoVal;
use crate::api::release;
use crate::api::types::*;
use crate::config::Config;
use crate::daemon::gpu_use::foreign::command_visible;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::scheduling::core::{Core, GpuHeld};
use crate::queue::QueueJob;

/// The `meta` block of every reply.
pub fn meta(config: &Config) -> Meta {
    Meta {
        plugin: MetaPlugin {
            kind: "openapi/slurmctld".into(),
            name: "Slurm OpenAPI slurmctld".into(),
            data_parser: format!("data_parser/{DATA_PARSER}"),
            accounting_storage: "accounting_storage/slurmlet".into(),
        },
        client: MetaClient::default(),
        command: Vec::new(),
        slurm: MetaSlurm {
            version: Version {
                major: release::MAJOR.into(),
                micro: release::MICRO.into(),
                minor: release::MINOR.into(),
            },
            release: release::slurmlet_line(),
            cluster: config.cluster_name.clone(),
        },
    }
}

fn time(t: u64) -> NoVal<u64> {
    NoVal::of(t)
}

/// slurmrestd's exit-code object for `(exit, signal)`.
pub fn exit_code(state: JobState, exit: u32, signal: u32) -> ExitCode {
    let status = if matches!(state, JobState::Pending | JobState::Running | JobState::Suspended) {
        "PENDING"
    } else if signal != 0 {
        "SIGNALED"
    } else if exit != 0 {
        "ERROR"
    } else {
        "SUCCESS"
    };
    ExitCode {
        status: vec![status.into()],
        return_code: NoVal::of(exit),
        signal: ExitSignal {
            id: if signal != 0 { NoVal::of(signal as u16) } else { NoVal::unset() },
            name: if signal != 0 { crate::options::signal::signal_name(signal as i32) } else { String::new() },
        },
    }
}

/// A TRES string in Slurm's order (`cpu=1,mem=1000M,node=1,billing=1,gres/gpu=2`, then
/// `gres/shard=N`); the node itself reports no `node=` count.
fn tres(cpus: u32, mem_mb: u64, with_node: bool, gpus: usize, shards: u32) -> String {
    let node = if with_node { "node=1," } else { "" };
    let mut s = format!("cpu={cpus},mem={mem_mb}M,{node}billing={cpus}");
    if gpus > 0 {
        s.push_str(&format!(",gres/gpu={gpus}"));
    }
    if shards > 0 {
        s.push_str(&format!(",gres/shard={shards}"));
    }
    s
}

/// What a step was given, as Slurm's step `TRES` (`cpu=2,gres/gpu=1,mem=2000M,node=1`,
/// `cpu=1,gres/shard=2,mem=1000M,node=1` in a shard job): by name, without what it has none
/// of.
pub fn step_tres(cpus: u32, mem_mb: u64, gpus: u32, shards: u32) -> String {
    let gpus = if gpus > 0 { format!("gres/gpu={gpus},") } else { String::new() };
    let shards = if shards > 0 { format!("gres/shard={shards},") } else { String::new() };
    let mem = if mem_mb > 0 { format!("mem={mem_mb}M,") } else { String::new() };
    format!("cpu={cpus},{gpus}{shards}{mem}node=1")
}

/// What a node has handed out, as Slurm's node `AllocTRES`
/// (`cpu=2,mem=2000M,gres/gpu=1,gres/shard=4`): only what is in use, empty when nothing is.
fn alloc_tres(cpus: u32, mem_mb: u64, gpus: u32, shards: u32) -> String {
    let mut parts = Vec::new();
    if cpus > 0 {
        parts.push(format!("cpu={cpus}"));
    }
    if mem_mb > 0 {
        parts.push(format!("mem={mem_mb}M"));
    }
    if gpus > 0 {
        parts.push(format!("gres/gpu={gpus}"));
    }
    if shards > 0 {
        parts.push(format!("gres/shard={shards}"));
    }
    parts.join(",")
}

/// The TRES string of a job's request: a shard job counts its shards, not the GPU they are
/// on.
pub fn tres_string(job: &Job) -> String {
    tres(job.req.cpus, job.req.mem_mb, true, job.req.gpus as usize, job.req.shards)
}

/// One job as `job_info`. The fields squeue prints are read through [`JobRow`], as the
/// rows of `POST /slurmlet/v1/jobs/query` are.
pub fn job_info(job: &Job, config: &Config) -> JobInfo {
    let user_name = crate::identity::user_name(job.uid);
    let row = JobRow { job, config, user_name: &user_name, tasks: None };
    let state = job.state();
    let (exit, signal) = job.exit_pair();
    let started = job.start_time > 0;
    JobInfo {
        job_id: job.id,
        array_job_id: NoVal::of(row.array_job_id()),
        array_task_id: NoVal::from_option(row.array_task_id()),
        array_task_string: row.array_task_string().to_string(),
        dependency: job.dependency.to_string(),
        restart_cnt: job.restarts,
        resv_name: job.reservation.to_string(),
        partition: job.partition.to_string(),
        name: job.name.to_string(),
        account: job.account.to_string(),
        qos: row.qos().to_string(),
        comment: job.comment.to_string(),
        admin_comment: job.admin_comment.to_string(),
        wckey: job.wckey.to_string(),
        user_id: job.uid,
        user_name: user_name.clone(),
        job_state: state_list(job),
        state_reason: job.reason.to_string(),
        nodes: row.nodes().to_string(),
        node_count: NoVal::of(row.node_count()),
        cpus: NoVal::of(row.cpus()),
        minimum_cpus_per_node: NoVal::of(row.minimum_cpus_per_node() as u16),
        tasks: NoVal::of(row.tasks()),
        cpus_per_task: NoVal::of(row.cpus_per_task() as u16),
        submit_time: time(job.submit_time),
        start_time: time(job.shown_start()),
        end_time: time(row.end_time()),
        time_limit: match job.time_limit {
            Some(m) => NoVal::of(m),
            None => NoVal::infinite(),
        },
        priority: NoVal::of(row.priority()),
        nice: job.nice,
        tres_per_node: job.tres_per_node.to_string(),
        tres_per_job: job.tres_per_job.to_string(),
        memory_per_cpu: NoVal::from_option(row.memory_per_cpu()),
        memory_per_node: NoVal::from_option(row.memory_per_node()),
        accrue_time: time(job.submit_time),
        allocating_node: job.submit_host.to_string(),
        array_max_tasks: NoVal::of(job.array.map_or(0, |a| a.max_running)),
        batch_flag: !job.interactive,
        batch_host: row.batch_host().to_string(),
        cluster: row.cluster().to_string(),
        command: job.command.to_string(),
        derived_exit_code: {
            let (exit, signal) = crate::daemon::model::job::split_wait_status(job.derived_status);
            exit_code(state, exit, signal)
        },
        eligible_time: time(job.begin_time.max(job.submit_time)),
        exit_code: exit_code(state, exit, signal),
        gres_detail: if started { job_gres(job, config).into_iter().collect() } else { Vec::new() },
        job_resources: (started && !job.cpu_ids.is_empty())
            .then(|| JobRes::on_one_node(&config.node_name, config.cpus, &job.cpu_ids, job.req.mem_mb)),
        group_id: job.gid,
        group_name: row.group_name().into_owned(),
        last_sched_evaluation: time(job.submit_time),
        max_cpus: NoVal::of(0),
        max_nodes: NoVal::of(0),
        tasks_per_node: NoVal::of(0),
        hold: job.held,
        requeue: job.requeue,
        standard_input: if job.stdin.is_empty() { "/dev/null".into() } else { job.stdin.to_string() },
        standard_output: job.stdout.to_string(),
        standard_error: job.stderr.to_string(),
        stdin_expanded: row.stdin_expanded().into_owned(),
        stderr_expanded: row.stderr_expanded().into_owned(),
        stdout_expanded: row.stdout_expanded().into_owned(),
        suspend_time: time(job.suspend_time),
        time_minimum: NoVal::of(0),
        tres_req_str: tres_string(job),
        tres_alloc_str: if started { tres_string(job) } else { String::new() },
        current_working_directory: job.cwd.to_string(),
        mail_type: job.mail_type.flags(),
        mail_user: match job.mail_user.as_str() {
            "" => config.notify.default_address(&user_name),
            given => given.to_string(),
        },
        ..Default::default()
    }
}

/// A started job's `gres_detail` (see [`gres::job_gres`]).
fn job_gres(job: &Job, config: &Config) -> Option<String> {
    let node_gpus: Vec<(u32, Option<&str>)> = config.gpus.iter().map(|g| (g.index, g.gres_type.as_deref())).collect();
    let job_gpus: Vec<u32> = job.gpus.iter().map(|g| g.index).collect();
    let job_type = job.req.gpu_type.as_ref().map(|t| t.as_str());
    gres::job_gres(&node_gpus, &job_gpus, job_type, job.req.shards, config.shards_per_gpu)
}

/// The node as `node`.
pub fn node(core: &Core, caller: Caller) -> Node {
    let c = &core.config;
    let used = core.used();
    let state = if used.cpus == 0 && used.gpus == 0 && used.shards == 0 && used.mem_mb == 0 {
        "IDLE"
    } else if used.cpus >= c.cpus {
        "ALLOCATED"
    } else {
        "MIXED"
    };
    let held: Vec<(u32, Option<&str>, GpuHeld)> =
        c.gpus.iter().map(|g| (g.index, g.gres_type.as_deref(), core.gpu_held(g.index))).collect();
    let gres_used = gres::gres_used(&held, c.shards_per_gpu);
    // Slurm lists gres/shard in a node's TRES only where AccountingStorageTRES tracks it;
    // this node's accounting always counts shards (sacct's AllocTRES has them), so it is
    // listed wherever GPUs are split.
    let tres = tres(c.cpus, c.memory, false, c.gpus.len(), c.shards());
    Node {
        tres_used: alloc_tres(used.cpus, used.mem_mb, used.gpus, used.shards),
        architecture: std::env::consts::ARCH.into(),
        boards: 1,
        boot_time: NoVal::of(core.started_at),
        cluster_name: c.cluster_name.clone(),
        cores: c.cpus,
        cpus: c.cpus,
        effective_cpus: c.cpus,
        free_mem: NoVal::of(c.memory.saturating_sub(used.mem_mb)),
        gres: c.gres(),
        gres_drained: "N/A".into(),
        gres_used,
        name: c.node_name.clone(),
        address: c.node_name.clone(),
        hostname: c.node_name.clone(),
        state: vec![state.into()],
        operating_system: "Linux".into(),
        partitions: c.partitions.iter().map(|p| p.name.clone()).collect(),
        real_memory: c.memory,
        alloc_memory: used.mem_mb,
        alloc_cpus: used.cpus,
        alloc_idle_cpus: c.cpus - used.cpus.min(c.cpus),
        slurmd_start_time: NoVal::of(core.started_at),
        sockets: 1,
        threads: 1,
        weight: 1,
        tres,
        version: env!("CARGO_PKG_VERSION").into(),
        reason: node_reasons(core, caller).join("; "),
        reason_changed_at: reason_changed_at(core),
        reason_set_by_user: if core.foreign_gpu_processes().is_empty()
            && core.gpu_drains().is_empty()
            && core.failed_gpus().is_empty()
        {
            String::new()
        } else {
            crate::identity::user_name(crate::identity::uid())
        },
        ..Default::default()
    }
}

/// When the node's reason last changed: the latest change of what it names.
fn reason_changed_at(core: &Core) -> NoVal<u64> {
    let parts = [
        (!core.foreign_gpu_processes().is_empty(), core.foreign_gpu_processes_since()),
        (!core.gpu_drains().is_empty(), core.gpu_drains_since()),
        (!core.failed_gpus().is_empty(), core.failed_gpus_since()),
    ];
    match parts.iter().filter(|(named, _)| *named).map(|(_, since)| *since).max() {
        Some(at) => NoVal::of(at),
        None => NoVal::default(),
    }
}

/// How many processes outside the queue the node's reason names per GPU; the rest are
/// counted (a GPU may have thousands, and the reason is one line).
const REASONS_PER_GPU: usize = 3;

/// Why the node is not wholly usable, one part each (`sinfo -R`): the GPUs in use outside
/// the queue, and those drained because their MPS server could not be started or quit.
fn node_reasons(core: &Core, caller: Caller) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut per_gpu: std::collections::BTreeMap<u32, usize> = Default::default();
    let privileged = caller.privileged(&core.config);
    for p in core.foreign_gpu_processes() {
        let seen = per_gpu.entry(p.gpu).or_default();
        *seen += 1;
        if *seen <= REASONS_PER_GPU {
            let shown = command_visible(p, caller.uid, privileged, core.config.private_jobs);
            reasons.push(p.describe_for(shown));
        }
    }
    for (gpu, seen) in per_gpu.into_iter().filter(|(_, n)| *n > REASONS_PER_GPU) {
        reasons.push(format!("gpu {gpu}: {} more processes outside the queue", seen - REASONS_PER_GPU));
    }
    reasons.extend(core.gpu_drains().iter().map(|(&gpu, why)| Core::describe_drain(gpu, why)));
    reasons.extend(core.failed_gpus().iter().map(|(&gpu, why)| Core::describe_failure(gpu, why)));
    reasons
}

/// The configuration as `scontrol show config` reports it.
pub fn config(core: &Core) -> ConfigInfo {
    let c = &core.config;
    let uid = crate::identity::uid();
    ConfigInfo {
        cluster_name: c.cluster_name.clone(),
        control_host: c.node_name.clone(),
        boot_time: core.started_at,
        last_update: core.started_at,
        kill_wait: c.kill_wait,
        min_job_age: c.min_job_age,
        max_array_size: c.max_array_size,
        def_mem_per_cpu: c.def_mem_per_cpu,
        gres_types: gres_types(c).into(),
        gpu_source: core.machine.gpu_source.clone().unwrap_or_default(),
        mps: crate::daemon::mps::found::describe(c, core.machine.mps_control.as_deref()),
        private_data: [("jobs", c.private_jobs), ("usage", c.private_usage)]
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect(),
        state_save_location: c.state_dir.display().to_string(),
        slurm_user_id: uid,
        slurm_user_name: crate::identity::user_name(uid),
        cgroup: cgroup_keys(&c.cgroup, core.machine.cgroups.as_ref()),
    }
}

/// `GresTypes`: `gpu`, `gpu,shard` where GPUs are split, empty without GPUs.
fn gres_types(c: &Config) -> &'static str {
    match (c.gpus.is_empty(), c.shards() > 0) {
        (true, _) => "",
        (false, false) => "gpu",
        (false, true) => "gpu,shard",
    }
}

/// The `Cgroup Support Configuration` keys: what the daemon asked for `asked` enforces.
fn cgroup_keys(
    asked: &crate::config::cgroup::Settings,
    setup: Option<&crate::stepd::containment::cgroup::setup::CgroupSetup>,
) -> Vec<(String, String)> {
    use crate::stepd::containment::cgroup::setup::CgroupSetup;
    CgroupSetup::slurm_keys(setup, asked).into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// The partitions as `partition_info`.
pub fn partitions(config: &Config) -> Vec<PartitionInfo> {
    let tres = tres(config.cpus, config.memory, true, config.gpus.len(), config.shards());
    config
        .partitions
        .iter()
        .map(|p| PartitionInfo {
            nodes: PartitionNodes { allowed_allocation: String::new(), configured: config.node_name.clone(), total: 1 },
            tres: PartitionTres { billing_weights: String::new(), configured: tres.clone() },
            cluster: config.cluster_name.clone(),
            cpus: PartitionCpus { task_binding: 0, total: config.cpus },
            defaults: PartitionDefaults {
                time: NoVal::from_option(p.default_time),
                partition_memory_per_cpu: NoVal::from_option(config.def_mem_per_cpu),
                ..Default::default()
            },
            maximums: PartitionMaximums {
                time: match p.max_time {
                    Some(m) => NoVal::of(m),
                    None => NoVal::infinite(),
                },
                nodes: NoVal::infinite(),
                cpus_per_node: NoVal::infinite(),
                shares: 1,
                ..Default::default()
            },
            name: p.name.clone(),
            node_sets: "ALL".into(),
            priority: PartitionPriority { job_factor: 1, tier: 1 },
            partition: PartitionState { state: vec!["UP".into()] },
            flags: if p.default { vec!["DEFAULT".into()] } else { Vec::new() },
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AllocTRES` of `scontrol show node` in the slurm-22.05 transcript.
    #[test]
    fn alloc_tres_lists_what_is_in_use() {
        assert_eq!(alloc_tres(2, 2000, 0, 0), "cpu=2,mem=2000M");
        assert_eq!(alloc_tres(2, 2000, 4, 0), "cpu=2,mem=2000M,gres/gpu=4");
        assert_eq!(alloc_tres(1, 0, 1, 0), "cpu=1,gres/gpu=1");
        assert_eq!(alloc_tres(0, 0, 0, 0), "");
        assert_eq!(alloc_tres(3, 3000, 1, 4), "cpu=3,mem=3000M,gres/gpu=1,gres/shard=4");
    }

    #[test]
    fn tres_lists_shards_after_gpus() {
        assert_eq!(tres(1, 1000, true, 0, 2), "cpu=1,mem=1000M,node=1,billing=1,gres/shard=2");
        assert_eq!(tres(8, 16000, false, 4, 32), "cpu=8,mem=16000M,billing=8,gres/gpu=4,gres/shard=32");
        assert_eq!(tres(2, 0, true, 1, 0), "cpu=2,mem=0M,node=1,billing=2,gres/gpu=1");
    }

    #[test]
    fn gres_types_name_shard_where_gpus_are_split() {
        let config =
            |text: &str| Config::resolve(toml::from_str(text).unwrap(), std::path::Path::new("t.toml")).unwrap();
        assert_eq!(gres_types(&config("gpus = 0")), "");
        assert_eq!(gres_types(&config("gpus = 2")), "gpu");
        assert_eq!(gres_types(&config("gpus = 2\nshards_per_gpu = 4")), "gpu,shard");
    }

    #[test]
    fn step_tres_is_by_name() {
        assert_eq!(step_tres(2, 2000, 1, 0), "cpu=2,gres/gpu=1,mem=2000M,node=1");
        assert_eq!(step_tres(1, 1000, 0, 2), "cpu=1,gres/shard=2,mem=1000M,node=1");
        assert_eq!(step_tres(1, 0, 0, 0), "cpu=1,node=1");
    }
}
