//! Turning a REST job description into a job: defaults, checks, and Slurm's refusals.
//!
//! A request that no configuration of this node could ever satisfy is refused here, at
//! submit time, instead of pending forever.

use super::submit_gres::{per_gpu, requested_gres, GpuRequest};
use super::submit_refusals::{explained, submit_error, NODE_CONFIG};
use crate::api::types::{errno, JobDescMsg};
use crate::config::{Config, Partition};
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState, Resources};
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::model::text::Text;
use crate::daemon::store::Payload;
use crate::options::signal;
use crate::stepd::WarnSignal;
use std::path::Path;

/// The largest batch script accepted, in bytes: Slurm's default `max_script_size`.
pub const MAX_SCRIPT: usize = 4 << 20;

/// The latest begin time a job may ask for: the end of the year 9999 (UTC). Later times
/// would not print as dates, and the times computed from them (start plus time limit) would
/// overflow.
pub const MAX_TIME: u64 = 253_402_300_799;

/// Everything a new job needs besides its id.
pub struct NewJob {
    /// The job record (id filled in by the caller).
    pub job: Job,
    /// Script, environment, arguments.
    pub payload: Payload,
    /// Notices for the submitter.
    pub warnings: Vec<String>,
}

/// Checks `desc` against `config` and builds the job. The steps run in this order, each
/// refusing what it checks: the script, environment, working directory and account; the
/// partition and time limit; the node count; the CPUs, memory and GPUs; the warning signal;
/// the flags; the begin time; and the text fields.
pub fn build(
    desc: &JobDescMsg,
    top_script: Option<&str>,
    caller: Caller,
    config: &Config,
    now: u64,
    interactive: bool,
) -> Result<NewJob, Refusal> {
    let script = read_script(desc, top_script, interactive)?;
    let environment = read_environment(desc)?;
    let cwd = read_cwd(desc)?;
    let account = read_account(desc, caller, config)?;
    let mut warnings = Vec::new();
    let partition = read_partition(desc, config)?;
    let time_limit = read_time_limit(desc, partition, &mut warnings);
    check_nodes(desc, config)?;
    let resources = read_resources(desc, config)?;
    let warn_signal = read_warn_signal(desc)?;
    let kill_on_invalid_dep = read_flags(desc)?;
    let begin_time = read_begin_time(desc)?;
    let labels = read_labels(desc, &environment, &cwd)?;
    let qos = read_qos(desc, caller, &account, config)?;
    let (mail_type, mail_user) = super::submit_mail::read_mail(desc, caller.uid, config, &mut warnings)?;
    let Requested { cpus, mem_mb, gpus, shards, gpu_type, ntasks, cpus_per_task, mem_per_cpu } = resources;
    // A job without a time limit gets its QOS's longest, as Slurm's does.
    let time_limit = time_limit.or_else(|| config.qos.get(&qos).and_then(|q| q.max_wall_minutes));
    let job = Job {
        id: 0,
        name: labels.name.into(),
        uid: caller.uid,
        gid: caller.gid,
        partition: Text::new(&partition.name),
        state: Some(JobState::Pending),
        reason: "None".into(),
        priority: 1,
        held: desc.hold.unwrap_or(false),
        submit_time: now,
        begin_time,
        time_limit,
        req: Resources { cpus, mem_mb, gpus, shards, gpu_type },
        ntasks,
        cpus_per_task,
        cpus_per_task_set: desc.cpus_per_task.is_some(),
        mem_per_cpu,
        tres_per_node: desc.tres_per_node.as_deref().unwrap_or_default().into(),
        tres_per_job: desc.tres_per_job.as_deref().unwrap_or_default().into(),
        stdout: desc.standard_output.as_deref().filter(|s| !s.is_empty()).unwrap_or("slurm-%j.out").into(),
        stderr: desc.standard_error.as_deref().unwrap_or_default().into(),
        stdin: desc.standard_input.as_deref().unwrap_or_default().into(),
        append: desc.open_mode.iter().flatten().any(|m| m == "APPEND"),
        cwd: cwd.into(),
        command: labels.command.into(),
        comment: desc.comment.as_deref().unwrap_or_default().into(),
        wckey: desc.wckey.as_deref().unwrap_or_default().into(),
        mail_type,
        mail_user,
        account: account.into(),
        qos: qos.as_str().into(),
        nice: desc.nice.unwrap_or(0),
        warn_signal,
        submit_host: labels.submit_host.unwrap_or_else(crate::paths::hostname).into(),
        interactive,
        kill_on_invalid_dep,
        requeue: desc.requeue.unwrap_or(true),
        reservation: read_reservation(desc)?.into(),
        ..Default::default()
    };
    let payload = Payload {
        script: script.to_string(),
        environment,
        argv: desc.argv.as_ref().map(|a| a.iter().skip(1).cloned().collect()).unwrap_or_default(),
    };
    Ok(NewJob { job, payload, warnings })
}

/// The reservation the job names (`--reservation`), one at most; whether it exists and lets
/// the job in is the scheduler's to say (see `Core::check_reservation_access`).
fn read_reservation(desc: &JobDescMsg) -> Result<String, Refusal> {
    let name = desc.reservation.as_deref().unwrap_or_default().trim();
    if name.contains(',') {
        return Err(explained(
            errno::RESERVATION_INVALID,
            "Requested reservation is invalid",
            format!("--reservation={name}: a job here runs in one reservation; name one"),
        ));
    }
    if name.len() > crate::daemon::model::reservation::MAX_NAME_LEN || name.chars().any(char::is_control) {
        return Err(explained(
            errno::RESERVATION_INVALID,
            "Requested reservation is invalid",
            format!("--reservation={}: no reservation is named so", name.escape_debug()),
        ));
    }
    Ok(name.to_string())
}

/// The batch script: the description's, else the one beside it; required (and at most
/// [`MAX_SCRIPT`] bytes) but for an interactive allocation, whose script is empty.
fn read_script<'a>(desc: &'a JobDescMsg, top_script: Option<&'a str>, interactive: bool) -> Result<&'a str, Refusal> {
    let script = desc.script.as_deref().or(top_script).filter(|s| !s.is_empty() || interactive);
    let script = if interactive { Some(script.unwrap_or_default()) } else { script };
    let script = script.ok_or_else(|| Refusal {
        kind: Kind::Invalid,
        description: "Populated \"script\" field is required for job submission".into(),
        number: 9000,
        error: "Query empty or not RFC7320 compliant".into(),
        source: "_job_post".into(),
    })?;
    if script.len() > MAX_SCRIPT {
        return Err(explained(
            errno::PATHNAME_TOO_LONG,
            "Pathname of a file, directory or other parameter too long",
            format!(
                "the batch script has {} bytes; the limit is {MAX_SCRIPT} (4 MiB, Slurm's max_script_size)",
                script.len()
            ),
        ));
    }
    Ok(script)
}

/// The job's environment, which must not be missing or empty.
fn read_environment(desc: &JobDescMsg) -> Result<Vec<String>, Refusal> {
    desc.environment
        .clone()
        .filter(|e| !e.is_empty())
        .ok_or_else(|| submit_error(2127, "Environment is missing in job"))
}

/// The job's working directory: given and absolute. Whether its owner sees a directory
/// there is checked later, as the owner and outside the daemon's lock (see
/// [`super::submit_paths`]).
fn read_cwd(desc: &JobDescMsg) -> Result<String, Refusal> {
    let cwd = desc.current_working_directory.clone().filter(|c| !c.is_empty()).ok_or_else(|| {
        submit_error(2063, "Job cannot be submitted without the current working directory specified.")
    })?;
    if !Path::new(&cwd).is_absolute() {
        // A relative one would be resolved against the daemon's own working directory.
        return Err(explained(
            2063,
            "Invalid working directory",
            format!("working directory {cwd} is not an absolute path"),
        ));
    }
    Ok(cwd)
}

/// The QOS the job runs in: the one asked for, when it exists and the account offers it,
/// else the user's or account's default (see [`crate::config::accounts::AccountTree::qos_for`]).
fn read_qos(desc: &JobDescMsg, caller: Caller, account: &str, config: &Config) -> Result<String, Refusal> {
    use crate::config::accounts::QosRefused;
    const INVALID_QOS: i32 = 2066;
    config.account_tree.qos_for(&config.qos, caller.uid, account, desc.qos.as_deref()).map_err(|refused| {
        let why = match refused {
            QosRefused::Unknown(name) => format!(
                "no QOS is named '{name}' (there are: {})",
                config.qos.0.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            QosRefused::NotOffered(name, offered) => {
                format!("account '{account}' does not offer QOS '{name}' (it offers: {})", offered.join(", "))
            }
        };
        explained(INVALID_QOS, "Invalid qos specification", why)
    })
}

/// The account the job is charged to: the one asked for, when the caller may charge it,
/// else the caller's default.
fn read_account(desc: &JobDescMsg, caller: Caller, config: &Config) -> Result<String, Refusal> {
    config.account_for(caller.uid, desc.account.as_deref()).map_err(|allowed| {
        explained(
            errno::INVALID_ACCOUNT,
            "Invalid account or account/partition combination specified",
            format!(
                "account '{}' is not one user {} may charge ({})",
                desc.account.as_deref().unwrap_or_default(),
                crate::identity::user_name(caller.uid),
                allowed.join(", ")
            ),
        )
    })
}

/// The job's partition: the first of those it names (each of which must exist), else the
/// default one.
fn read_partition<'a>(desc: &JobDescMsg, config: &'a Config) -> Result<&'a Partition, Refusal> {
    let partition = match desc.partition.as_deref().filter(|p| !p.is_empty()) {
        None => config.partitions.iter().find(|p| p.default).expect("config has a default partition"),
        Some(list) => {
            let mut found = None;
            for name in list.split(',') {
                match config.partitions.iter().find(|p| p.name == name) {
                    Some(p) => found = found.or(Some(p)),
                    None => {
                        return Err(explained(
                            errno::INVALID_PARTITION_NAME,
                            "Invalid partition name specified",
                            format!("invalid partition specified: {name}"),
                        ))
                    }
                }
            }
            found.expect("split yields at least one name")
        }
    };
    Ok(partition)
}

/// The job's time limit (`None`: none), the partition's default when it gives none; one
/// past the partition's MaxTime is kept, with a warning that the job will wait.
fn read_time_limit(desc: &JobDescMsg, partition: &Partition, warnings: &mut Vec<String>) -> Option<u32> {
    let time_limit = match desc.time_limit {
        Some(t) if t.infinite => None,
        Some(t) if t.set => Some(t.number),
        _ => partition.default_time.or(partition.max_time),
    };
    if let (Some(max), Some(t)) = (partition.max_time, time_limit) {
        if t > max {
            warnings.push(format!(
                "time limit {} exceeds partition {}'s MaxTime {}; the job stays pending (PartitionTimeLimit) until the limit or the partition changes",
                crate::options::time::format_limit_long(Some(t)),
                partition.name,
                crate::options::time::format_limit_long(Some(max))
            ));
        }
    }
    time_limit
}

/// Refuses node requests this one-node cluster can never satisfy: more than one node, a
/// node by another name, or the exclusion of its only node.
fn check_nodes(desc: &JobDescMsg, config: &Config) -> Result<(), Refusal> {
    let min_nodes = desc.minimum_nodes.unwrap_or(1).max(1);
    let min_nodes = match desc.nodes.as_deref().filter(|t| !t.is_empty()) {
        None => min_nodes,
        // `min[-max][:step]`: the minimum is what must fit here.
        Some(text) => {
            text.split(['-', ':']).next().and_then(|n| n.parse::<u32>().ok()).map(|n| n.max(min_nodes)).ok_or_else(
                || {
                    explained(
                        errno::ERROR,
                        "Node count specification invalid",
                        format!("invalid node count \"{text}\": expected MIN[-MAX]"),
                    )
                },
            )?
        }
    };
    if min_nodes > 1 {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!(
                "this cluster has one node ({}); a job asking for {min_nodes} nodes can never run here. Multi-node jobs need a real Slurm cluster",
                config.node_name
            ),
        ));
    }
    for n in desc.required_nodes.iter().flatten() {
        if n != &config.node_name {
            return Err(explained(
                errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
                NODE_CONFIG,
                format!("node {n} does not exist; this cluster has one node ({})", config.node_name),
            ));
        }
    }
    if desc.excluded_nodes.iter().flatten().any(|n| n == &config.node_name) {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!("--exclude={} excludes the only node of this cluster", config.node_name),
        ));
    }
    Ok(())
}

/// What a job asks of the node, as [`read_resources`] reads it.
struct Requested {
    /// CPUs in all.
    cpus: u32,
    /// Memory in MB.
    mem_mb: u64,
    /// GPUs in all.
    gpus: u32,
    /// Shards of one GPU.
    shards: u32,
    /// The type of its GPUs, if it names one.
    gpu_type: Option<crate::daemon::model::gres_type::GresType>,
    /// Tasks.
    ntasks: u32,
    /// CPUs per task.
    cpus_per_task: u32,
    /// Memory per CPU, when the job's memory is counted so.
    mem_per_cpu: Option<u64>,
}

/// The CPUs, memory and GPUs a job asks for, refused (in that order) when the node has
/// fewer.
fn read_resources(desc: &JobDescMsg, config: &Config) -> Result<Requested, Refusal> {
    // CPUs and GPUs.
    let cpus_per_task = desc.cpus_per_task.unwrap_or(1).max(1);
    let ntasks = desc.tasks.or(desc.tasks_per_node).unwrap_or(1).max(1);
    let GpuRequest { gpus, shards, gpu_type } = requested_gres(desc, config, ntasks)?;
    let cpus_per_gpu = per_gpu(desc.cpus_per_tres.as_deref())?.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let cpus =
        ntasks.saturating_mul(cpus_per_task).max(desc.minimum_cpus.unwrap_or(0)).max(gpus.saturating_mul(cpus_per_gpu));
    if cpus > config.cpus {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!("the job asks for {cpus} CPUs; node {} has {}", config.node_name, config.cpus),
        ));
    }

    // Memory.
    let per_node = desc.memory_per_node.and_then(|m| m.get());
    let per_cpu = desc.memory_per_cpu.and_then(|m| m.get());
    let mem_mb = match (per_node, per_cpu) {
        (Some(m), _) if m > 0 => m,
        (Some(_), _) => config.memory,
        // A product past u64 asks for more than any node has: saturate, never wrap.
        (None, Some(m)) => m.saturating_mul(cpus as u64),
        (None, None) => match per_gpu(desc.memory_per_tres.as_deref())? {
            Some(m) => m.saturating_mul(gpus as u64),
            None => config.def_mem_per_cpu.map(|m| m.saturating_mul(cpus as u64)).unwrap_or(0),
        },
    };
    if mem_mb > config.memory {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!(
                "Memory specification can not be satisfied: the job asks for {mem_mb}M; node {} has {}M",
                config.node_name, config.memory
            ),
        ));
    }

    if gpus as usize > config.gpus.len() {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!("the job asks for {gpus} GPUs; node {} has {}", config.node_name, config.gpus.len()),
        ));
    }
    let mem_per_cpu = if per_node.is_none() { per_cpu.or(config.def_mem_per_cpu) } else { None };
    Ok(Requested { cpus, mem_mb, gpus, shards, gpu_type, ntasks, cpus_per_task, mem_per_cpu })
}

/// The signal sent ahead of the time limit (`--signal`), when one is asked for.
fn read_warn_signal(desc: &JobDescMsg) -> Result<Option<WarnSignal>, Refusal> {
    let warn_signal = match desc.kill_warning_signal.as_deref() {
        None | Some("") => None,
        Some(s) => Some(WarnSignal {
            signal: signal::signal_number(s)
                .ok_or_else(|| submit_error(errno::ERROR, &format!("Invalid signal specification: {s}")))?,
            seconds: desc.kill_warning_delay.and_then(|d| d.get()).unwrap_or(60) as u32,
            batch_only: desc.kill_warning_flags.iter().flatten().any(|f| f == "BATCH_JOB"),
        }),
    };
    Ok(warn_signal)
}

/// Refuses flags this daemon does not know (in `open_mode`, `kill_warning_flags` and
/// `flags`); returns whether the job is cancelled when its dependency can never be
/// satisfied (`--kill-on-invalid-dep`).
fn read_flags(desc: &JobDescMsg) -> Result<bool, Refusal> {
    for (field, values, known) in [
        ("open_mode", &desc.open_mode, &["APPEND", "TRUNCATE"][..]),
        ("kill_warning_flags", &desc.kill_warning_flags, &["BATCH_JOB"][..]),
    ] {
        if let Some(v) = values.iter().flatten().find(|v| !known.contains(&v.as_str())) {
            return Err(Refusal {
                kind: Kind::Invalid,
                description: format!(
                    "Unknown or unsupported flag \"{v}\" in {field} (slurmlet knows {})",
                    known.join(", ")
                ),
                number: errno::DATA_FLAGS_INVALID,
                error: "Data parser unable to parse invalid flag".into(),
                source: format!("#/job/{field}/"),
            });
        }
    }
    let kill_on_invalid_dep = match desc.flags.iter().flatten().find(|f| f.ends_with("KILL_INVALID_DEPENDENCY")) {
        Some(f) => f == "KILL_INVALID_DEPENDENCY",
        None => false,
    };
    if let Some(f) = desc
        .flags
        .iter()
        .flatten()
        .find(|f| !matches!(f.as_str(), "KILL_INVALID_DEPENDENCY" | "NO_KILL_INVALID_DEPENDENCY"))
    {
        return Err(Refusal { kind: Kind::Invalid,
            description: format!(
                "Unknown or unsupported flag \"{f}\" in flags (slurmlet knows KILL_INVALID_DEPENDENCY, NO_KILL_INVALID_DEPENDENCY)"
            ),
            number: errno::DATA_FLAGS_INVALID,
            error: "Data parser unable to parse invalid flag".into(),
            source: "#/job/flags/".into(),
        });
    }
    Ok(kill_on_invalid_dep)
}

/// The time before which the job may not start (0: none), at most [`MAX_TIME`].
fn read_begin_time(desc: &JobDescMsg) -> Result<u64, Refusal> {
    let begin_time = desc.begin_time.and_then(|b| b.get()).unwrap_or(0);
    if begin_time > MAX_TIME {
        return Err(explained(
            errno::ERROR,
            "Invalid begin time",
            format!("begin_time {begin_time} is past the end of the year 9999 ({MAX_TIME})"),
        ));
    }
    Ok(begin_time)
}

/// The names a job is listed by, as [`read_labels`] reads them.
struct Labels<'a> {
    /// The job's name (`sbatch` when it gives none).
    name: String,
    /// Its command (argv\[0\]).
    command: &'a str,
    /// The host it was submitted from, as its environment's `HOSTNAME` says.
    submit_host: Option<String>,
}

/// The job's name, command and submit host, once its text fields are known to be
/// printable (see [`check_printable`]).
fn read_labels<'a>(desc: &'a JobDescMsg, environment: &[String], cwd: &str) -> Result<Labels<'a>, Refusal> {
    let env_value = |name: &str| {
        environment.iter().find_map(|e| e.strip_prefix(name).and_then(|r| r.strip_prefix('='))).map(str::to_string)
    };
    let name = desc.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "sbatch".into());
    let command = desc.argv.as_ref().and_then(|a| a.first()).map_or("", String::as_str);
    let submit_host = env_value("HOSTNAME");
    check_printable(&[
        ("the command (argv[0])", Some(command)),
        ("HOSTNAME (the submit host)", submit_host.as_deref()),
        ("--gres (tres_per_node)", desc.tres_per_node.as_deref()),
        ("--gpus (tres_per_job)", desc.tres_per_job.as_deref()),
        ("--gpus-per-task (tres_per_task)", desc.tres_per_task.as_deref()),
        ("--job-name", Some(name.as_str())),
        ("--comment", desc.comment.as_deref()),
        ("--wckey", desc.wckey.as_deref()),
        ("--account", desc.account.as_deref()),
        ("--qos", desc.qos.as_deref()),
        ("--output", desc.standard_output.as_deref()),
        ("--error", desc.standard_error.as_deref()),
        ("--input", desc.standard_input.as_deref()),
        ("--chdir", Some(cwd)),
    ])?;
    check_lengths(&[
        ("HOSTNAME (the submit host)", submit_host.as_deref(), MAX_FIELD),
        ("--gres (tres_per_node)", desc.tres_per_node.as_deref(), MAX_FIELD),
        ("--gpus (tres_per_job)", desc.tres_per_job.as_deref(), MAX_FIELD),
        ("--gpus-per-task (tres_per_task)", desc.tres_per_task.as_deref(), MAX_FIELD),
        ("--job-name", Some(name.as_str()), MAX_FIELD),
        ("--comment", desc.comment.as_deref(), MAX_FIELD),
        ("--wckey", desc.wckey.as_deref(), MAX_FIELD),
        ("--account", desc.account.as_deref(), MAX_FIELD),
        ("--qos", desc.qos.as_deref(), MAX_FIELD),
        ("--partition", desc.partition.as_deref(), MAX_FIELD),
        ("--output", desc.standard_output.as_deref(), MAX_PATH),
        ("--error", desc.standard_error.as_deref(), MAX_PATH),
        ("--input", desc.standard_input.as_deref(), MAX_PATH),
        ("--chdir", Some(cwd), MAX_PATH),
    ])?;
    Ok(Labels { name, command, submit_host })
}

/// The most bytes of a job's name, comment, account, QOS, submit host and other short text
/// fields: Slurm's controller refuses longer ones (`_test_job_desc_fields`). Each of them
/// goes to the job's environment, and the name and host to an interactive client's grant.
pub(in crate::daemon) const MAX_FIELD: usize = 1024;

/// The most bytes of a job's file and directory paths (`PATH_MAX`, as in Slurm).
pub(in crate::daemon) const MAX_PATH: usize = 4096;

/// Refuses text fields longer than Slurm takes them, `(option, value, limit)`, as Slurm
/// does (`ESLURM_PATHNAME_TOO_LONG`), naming the field and its limit.
pub(in crate::daemon) fn check_lengths(fields: &[(&str, Option<&str>, usize)]) -> Result<(), Refusal> {
    for (option, value, limit) in fields {
        if let Some(len) = value.map(str::len).filter(|len| len > limit) {
            return Err(explained(
                errno::PATHNAME_TOO_LONG,
                "Pathname of a file, directory or other parameter too long",
                format!("{option} has {len} bytes; the limit is {limit}, as in Slurm"),
            ));
        }
    }
    Ok(())
}

/// Refuses text fields that `squeue`, `scontrol` and `sacct` would print with control
/// characters in them: an escape sequence in a job name would run in the terminal of whoever
/// lists the queue.
pub(in crate::daemon) fn check_printable(fields: &[(&str, Option<&str>)]) -> Result<(), Refusal> {
    for (option, value) in fields {
        if let Some(c) = value.and_then(|v| v.chars().find(|c| c.is_control())) {
            return Err(explained(
                errno::ERROR,
                "Invalid character in job description",
                format!("{option} contains a control character (U+{:04X}); job fields may not hold any", c as u32),
            ));
        }
    }
    Ok(())
}
