//! Resolving the file as written into the configuration the daemon runs with: defaults
//! filled in, each number checked against its key's range ([`super::bounds`]), names and
//! lists checked; a refusal names the file, the key and the value.

use super::*;

/// Refusals of the file at `path`.
struct Refuse<'a> {
    path: &'a Path,
}

impl Refuse<'_> {
    /// A value that cannot be used, and why.
    fn invalid(&self, message: String) -> ConfigError {
        ConfigError::Invalid { path: self.path.to_path_buf(), message }
    }

    /// A number outside its key's range.
    fn out_of_range(&self, which: bounds::OutOfRange) -> ConfigError {
        ConfigError::OutOfRange { path: self.path.to_path_buf(), which: Box::new(which) }
    }
}

impl Config {
    /// Fills in defaults and checks values: a number outside its key's range
    /// ([`bounds`]) is refused, naming the key, the value and the range.
    pub fn resolve(mut file: ConfigFile, path: &Path) -> Result<Config, ConfigError> {
        let refuse = Refuse { path };
        let out_of_range = |which| refuse.out_of_range(which);
        let nvml_library = file.nvml_library.clone().unwrap_or_else(|| crate::gpu::DEFAULT_NVML_LIBRARY.into());
        let (gpu_setting, gpus) = read_gpus(file.gpus.take(), &nvml_library, &refuse)?;
        let partitions = read_partitions(file.partitions.take(), &refuse)?;
        let operators = read_operators(file.operators.take(), &refuse)?;
        let mode = file.mode.unwrap_or_default();
        let notify = read_notify(&mut file, mode, &refuse)?;
        let sharing = read_sharing(&mut file, &refuse)?;
        let idle_gpus =
            file.idle_gpus.take().map(idle_gpus::IdleGpus::read).transpose().map_err(|m| refuse.invalid(m))?;
        let cpus = bounds::CPUS
            .read_opt("cpus", file.cpus)
            .map_err(out_of_range)?
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1));
        let limits = read_limits(file.limits.take(), &refuse)?;
        check_cgroup_spaces(file.cgroup.as_ref(), &refuse)?;
        if let Some(addr) = file.listen {
            bounds::PORT.check("listen port", addr.port()).map_err(out_of_range)?;
        }
        Ok(Config {
            shards_per_gpu: bounds::SHARDS_PER_GPU
                .read_opt("shards_per_gpu", file.shards_per_gpu)
                .map_err(out_of_range)?
                .unwrap_or(0),
            shard_memory: file.shard_memory.unwrap_or_default(),
            mps: file.mps.unwrap_or(false),
            cluster_name: file.cluster_name.unwrap_or_else(|| "slurmlet".into()),
            node_name: file.node_name.unwrap_or_else(crate::paths::hostname),
            cpus,
            memory: bounds::MEMORY_MB
                .read_opt("memory", file.memory)
                .map_err(out_of_range)?
                .unwrap_or_else(detect_memory_mb),
            gpu_setting,
            gpus,
            nvml_library,
            gpu_sample_interval: bounds::GPU_SAMPLE_INTERVAL
                .read_opt("gpu_sample_interval", file.gpu_sample_interval)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_SAMPLE_INTERVAL),
            job_acct_gather_frequency: bounds::JOB_ACCT_GATHER_FREQUENCY
                .read_opt("job_acct_gather_frequency", file.job_acct_gather_frequency)
                .map_err(out_of_range)?
                .unwrap_or(cgroup::DEFAULT_SAMPLE_SECS),
            gpu_history_resolution: bounds::GPU_HISTORY_RESOLUTION
                .read_opt("gpu_history_resolution", file.gpu_history_resolution)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_HISTORY_RESOLUTION),
            gpu_history_days: bounds::GPU_HISTORY_DAYS
                .read_opt("gpu_history_days", file.gpu_history_days)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_GPU_HISTORY_DAYS),
            foreign_gpu_memory_mib: bounds::FOREIGN_GPU_MEMORY_MIB
                .read_opt("foreign_gpu_memory", file.foreign_gpu_memory)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_FOREIGN_GPU_MEMORY_MIB),
            foreign_gpu_processes: file.foreign_gpu_processes.unwrap_or_default(),
            def_mem_per_cpu: bounds::MEM_PER_CPU_MB
                .read_opt("def_mem_per_cpu", file.def_mem_per_cpu)
                .map_err(out_of_range)?,
            partitions,
            kill_wait: bounds::KILL_WAIT.read_opt("kill_wait", file.kill_wait).map_err(out_of_range)?.unwrap_or(30),
            min_job_age: bounds::MIN_JOB_AGE
                .read_opt("min_job_age", file.min_job_age)
                .map_err(out_of_range)?
                .unwrap_or(300),
            history_days: bounds::HISTORY_DAYS
                .read_opt("history_days", file.history_days)
                .map_err(out_of_range)?
                .filter(|&d: &u32| d > 0),
            max_array_size: bounds::MAX_ARRAY_SIZE
                .read_opt("max_array_size", file.max_array_size)
                .map_err(out_of_range)?
                .unwrap_or(crate::options::array::DEFAULT_MAX_ARRAY_SIZE),
            state_dir: file.state_dir.unwrap_or_else(|| default_state_dir(mode)),
            socket: file.socket.unwrap_or_else(|| default_socket(mode)),
            hide_gpus_from_cpu_jobs: file.hide_gpus_from_cpu_jobs.unwrap_or(true),
            limits,
            cgroup: cgroup::Settings::resolve(file.cgroup, mode == Mode::System),
            mode,
            operators,
            private_jobs: file.private_data.as_deref().unwrap_or_default().contains(&PrivateData::Jobs),
            private_usage: file.private_data.unwrap_or_default().contains(&PrivateData::Usage),
            listen: file.listen,
            path: path.to_path_buf(),
            default_account: sharing.default_account,
            accounts: sharing.accounts,
            account_tree: sharing.account_tree,
            priority: sharing.priority,
            qos: sharing.qos,
            preempt_mode: sharing.preempt_mode,
            requeue_delay: sharing.requeue_delay,
            notify,
            idle_gpus,
        })
    }
}

/// The `gpus` key: the GPUs it lists (found now, with no hardware probed, their device
/// files and type given), or none to detect at the daemon's start.
fn read_gpus(
    gpus: Option<GpuConfig>,
    nvml_library: &Path,
    refuse: &Refuse,
) -> Result<(GpuSetting, Vec<crate::gpu::Gpu>), ConfigError> {
    let invalid = |message| refuse.invalid(message);
    let out_of_range = |which| refuse.out_of_range(which);
    let (gpu_setting, gpu_type, gpu_files) = match gpus {
        Some(GpuConfig::Count(n)) => {
            let n: u32 = bounds::GPUS.read("gpus", n).map_err(out_of_range)?;
            (GpuSetting::Configured((0..n).collect()), None, None)
        }
        Some(GpuConfig::List { kind, ids, files }) => {
            if files.as_ref().is_some_and(|f| f.len() != ids.len()) {
                return Err(invalid(format!(
                    "gpus: {} files for {} ids: give one device file per GPU, in the order of ids",
                    files.as_ref().map_or(0, Vec::len),
                    ids.len()
                )));
            }
            (GpuSetting::Configured(gpu_ids(&ids).map_err(out_of_range)?), kind, files)
        }
        None => (GpuSetting::Detect, None, None),
    };
    if let GpuSetting::Configured(ids) = &gpu_setting {
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = ids.iter().find(|&&id| !seen.insert(id)) {
            return Err(invalid(format!(
                "gpus: id {twice} is listed twice: each GPU may be given to one job at a time"
            )));
        }
    }
    let mut found = match &gpu_setting {
        GpuSetting::Configured(_) => crate::gpu::discover(&gpu_setting, nvml_library),
        GpuSetting::Detect => crate::gpu::Found::default(),
    };
    for (gpu, file) in found.gpus.iter_mut().zip(gpu_files.into_iter().flatten()) {
        gpu.devices = vec![file];
    }
    // Each GPU carries its type, as detected ones do.
    for gpu in &mut found.gpus {
        gpu.gres_type = gpu_type.clone();
    }
    Ok((gpu_setting, found.gpus))
}

/// The partitions (one, `gpu`, when the file names none), their time limits checked, one of
/// them the default.
fn read_partitions(written: Option<Vec<PartitionConfig>>, refuse: &Refuse) -> Result<Vec<Partition>, ConfigError> {
    let invalid = |message| refuse.invalid(message);
    let out_of_range = |which| refuse.out_of_range(which);
    let parse_time = |field: &str, part: &str, v: &Option<String>| -> Result<Option<u32>, ConfigError> {
        let Some(t) = v else { return Ok(None) };
        let secs = crate::options::time::parse_time_secs(t, "time")
            .map_err(|_| invalid(format!("partition {part}: invalid {field} '{t}'")))?;
        // Checked before the limit is read, which would hold a longer one to the longest.
        if let Some(minutes) = secs.map(|s| s.div_ceil(60)) {
            let key = format!("partition {part}: {field}");
            bounds::PARTITION_MINUTES.check(&key, minutes).map_err(|e| out_of_range(quoted(e, t)))?;
        }
        crate::options::time::parse_time_limit(t)
            .map_err(|_| invalid(format!("partition {part}: invalid {field} '{t}'")))
    };
    let mut partitions = Vec::new();
    for p in written.unwrap_or_else(|| {
        vec![PartitionConfig {
            name: "gpu".into(),
            default: true,
            max_time: None,
            default_time: None,
            priority_job_factor: None,
        }]
    }) {
        if p.name.is_empty() || p.name.contains([',', ' ']) {
            return Err(invalid(format!("invalid partition name '{}'", p.name)));
        }
        partitions.push(Partition {
            max_time: parse_time("max_time", &p.name, &p.max_time)?,
            default_time: parse_time("default_time", &p.name, &p.default_time)?,
            priority_job_factor: bounds::PRIORITY_JOB_FACTOR
                .read_opt(&format!("partition {}: priority_job_factor", p.name), p.priority_job_factor)
                .map_err(out_of_range)?
                .unwrap_or(1),
            name: p.name,
            default: p.default,
        });
    }
    if partitions.is_empty() {
        return Err(invalid("at least one partition is needed".into()));
    }
    if partitions.iter().filter(|p| p.default).count() > 1 {
        return Err(invalid("more than one partition has default = true".into()));
    }
    if !partitions.iter().any(|p| p.default) {
        partitions[0].default = true;
    }
    Ok(partitions)
}

/// The operators, by user name, as uids.
fn read_operators(names: Option<Vec<String>>, refuse: &Refuse) -> Result<Vec<u32>, ConfigError> {
    let mut operators = Vec::new();
    for name in names.unwrap_or_default() {
        match crate::identity::user_uid(&name) {
            Some(uid) => operators.push(uid),
            None => return Err(refuse.invalid(format!("operators: no such user '{name}'"))),
        }
    }
    Ok(operators)
}

/// How the machine is shared: the accounts, priorities, QOS and preemption.
struct Sharing {
    default_account: String,
    accounts: Option<std::collections::BTreeMap<u32, Vec<String>>>,
    account_tree: accounts::AccountTree,
    priority: priority::PrioritySettings,
    qos: qos::QosList,
    preempt_mode: qos::PreemptMode,
    requeue_delay: u32,
}

/// The keys of [`Sharing`], each checked, the QOS the accounts name among them.
fn read_sharing(file: &mut ConfigFile, refuse: &Refuse) -> Result<Sharing, ConfigError> {
    let (default_account, account_tree) =
        read_accounts(file.default_account.take(), file.accounts.take(), file.users.take(), refuse)?;
    let priority = read_priority(file, refuse)?;
    let (qos, preempt_mode) = read_qos(file, refuse)?;
    if let Some(tree) = &account_tree {
        tree.check_qos(&qos).map_err(|m| refuse.invalid(m))?;
    }
    let requeue_delay = bounds::REQUEUE_DELAY
        .read_opt("requeue_delay", file.requeue_delay)
        .map_err(|which| refuse.out_of_range(which))?
        .unwrap_or(120);
    Ok(Sharing {
        default_account,
        accounts: account_tree.as_ref().map(accounts::AccountTree::charges),
        account_tree: account_tree.unwrap_or_default(),
        priority,
        qos,
        preempt_mode,
        requeue_delay,
    })
}

/// Refuses `[cgroup]`'s allowed spaces out of their ranges.
fn check_cgroup_spaces(cgroup: Option<&cgroup::CgroupTable>, refuse: &Refuse) -> Result<(), ConfigError> {
    let Some(cgroup) = cgroup else { return Ok(()) };
    for (key, bounds, value) in [
        ("cgroup.allowed_ram_space", bounds::ALLOWED_RAM_SPACE, cgroup.allowed_ram_space),
        ("cgroup.allowed_swap_space", bounds::ALLOWED_SWAP_SPACE, cgroup.allowed_swap_space),
    ] {
        value.map(|v| bounds.check(key, v)).transpose().map_err(|which| refuse.out_of_range(which))?;
    }
    Ok(())
}

/// Where notices go (see [`super::notify`]). The users' webhooks are taken out of their
/// `[users.NAME]` tables; a table left with nothing else goes too, so that a user with a
/// webhook alone needs no account tree.
fn read_notify(file: &mut ConfigFile, mode: Mode, refuse: &Refuse) -> Result<super::notify::Notify, ConfigError> {
    let mut user_webhooks = Vec::new();
    if let Some(users) = file.users.as_mut() {
        for (name, table) in users.iter_mut() {
            if let Some(url) = table.webhook.take() {
                user_webhooks.push((name.clone(), url));
            }
        }
        users.retain(|_, t| t != &accounts::UserTable::default());
    }
    super::notify::read(
        file.mail_program.take(),
        file.mail_domain.take(),
        file.webhook.take(),
        user_webhooks,
        mode == Mode::System,
    )
    .map_err(|m| refuse.invalid(m))
}

/// The account of jobs that name none, and the tree of accounts (`None`: the file has no
/// `accounts`, and any account is accepted).
fn read_accounts(
    default_account: Option<String>,
    accounts: Option<toml::Table>,
    users: Option<std::collections::BTreeMap<String, accounts::UserTable>>,
    refuse: &Refuse,
) -> Result<(String, Option<accounts::AccountTree>), ConfigError> {
    let invalid = |message| refuse.invalid(message);
    let default_account = default_account.unwrap_or_else(|| DEFAULT_ACCOUNT.into());
    if default_account.is_empty() || default_account.contains([',', ' ']) {
        return Err(invalid(format!("default_account: '{default_account}' is no account name")));
    }
    let users = users.unwrap_or_default();
    let tree = match accounts {
        None if users.is_empty() => None,
        None => return Err(invalid("users: the file has no accounts for them to charge".into())),
        Some(table) => Some(accounts::AccountTree::read(&table, &users).map_err(invalid)?),
    };
    Ok((default_account, tree))
}

/// The multifactor priority's keys (see [`priority`]).
fn read_priority(file: &mut ConfigFile, refuse: &Refuse) -> Result<priority::PrioritySettings, ConfigError> {
    let keys = priority::PriorityKeys {
        weight_age: file.priority_weight_age,
        weight_fairshare: file.priority_weight_fairshare,
        weight_job_size: file.priority_weight_job_size,
        weight_partition: file.priority_weight_partition,
        weight_qos: file.priority_weight_qos,
        weight_tres: file.priority_weight_tres.take(),
        max_age: file.priority_max_age.take(),
        favor_small: file.priority_favor_small,
        calc_period: file.priority_calc_period.take(),
        decay_half_life: file.priority_decay_half_life.take(),
        usage_reset_period: file.priority_usage_reset_period.take(),
        tres_billing_weights: file.tres_billing_weights.take(),
    };
    keys.resolve().map_err(|e| match e {
        priority::PriorityRefusal::OutOfRange(which) => refuse.out_of_range(which),
        priority::PriorityRefusal::Invalid(message) => refuse.invalid(message),
    })
}

/// The QOS tables and how preempted jobs end (`Off` without `preempt_type = "preempt/qos"`).
fn read_qos(file: &mut ConfigFile, refuse: &Refuse) -> Result<(qos::QosList, qos::PreemptMode), ConfigError> {
    let invalid = |message| refuse.invalid(message);
    let list = qos::QosList::read(file.qos.take().unwrap_or_default()).map_err(invalid)?;
    let by_qos = match file.preempt_type.take().as_deref() {
        None | Some("preempt/none") => false,
        Some("preempt/qos") => true,
        Some(other) => {
            return Err(invalid(format!(
                "preempt_type: '{other}' is none of preempt/none, preempt/qos (preempt/partition_prio is not offered: one node)"
            )))
        }
    };
    let mode = match file.preempt_mode.take() {
        Some(text) => qos::PreemptMode::parse("preempt_mode", &text).map_err(invalid)?,
        None if by_qos => qos::PreemptMode::Requeue,
        None => qos::PreemptMode::Off,
    };
    if !by_qos && mode != qos::PreemptMode::Off {
        return Err(invalid(format!(
            "preempt_mode = \"{}\" preempts nothing without preempt_type = \"preempt/qos\"",
            mode.name()
        )));
    }
    if by_qos && mode == qos::PreemptMode::Off {
        return Err(invalid(
            "preempt_type = \"preempt/qos\" with preempt_mode = \"OFF\" preempts nothing: give REQUEUE or CANCEL"
                .into(),
        ));
    }
    let preempting = list.0.iter().find(|(_, q)| !q.preempt.is_empty()).map(|(n, _)| n.clone());
    if let (false, Some(name)) = (by_qos, preempting) {
        return Err(invalid(format!(
            "qos.{name}.preempt: preemption needs preempt_type = \"preempt/qos\" (its jobs would never preempt)"
        )));
    }
    Ok((list, mode))
}

/// The `[limits]` table, each number within its range.
fn read_limits(limits: Option<LimitsTable>, refuse: &Refuse) -> Result<UserLimits, ConfigError> {
    let out_of_range = |which| refuse.out_of_range(which);
    let limits = limits.unwrap_or_default();
    Ok(UserLimits {
        max_running_jobs_per_user: bounds::JOBS_PER_USER
            .read_opt("limits.max_running_jobs_per_user", limits.max_running_jobs_per_user)
            .map_err(out_of_range)?,
        max_submitted_jobs_per_user: Some(
            bounds::JOBS_PER_USER
                .read_opt("limits.max_submitted_jobs_per_user", limits.max_submitted_jobs_per_user)
                .map_err(out_of_range)?
                .unwrap_or(DEFAULT_MAX_SUBMITTED_JOBS_PER_USER),
        ),
        max_gpus_per_user: bounds::GPUS
            .read_opt("limits.max_gpus_per_user", limits.max_gpus_per_user)
            .map_err(out_of_range)?,
    })
}

/// The configured GPU ids, each within [`bounds::GPU_ID`], at most [`bounds::GPUS`] of them.
fn gpu_ids(ids: &[i64]) -> Result<Vec<u32>, bounds::OutOfRange> {
    bounds::GPUS.check("the number of gpus.ids", ids.len() as i64)?;
    ids.iter().map(|&id| bounds::GPU_ID.read("gpus.ids", id)).collect()
}

/// `refusal` with its value as the file wrote it, quoted (a partition's time, an address).
fn quoted(refusal: bounds::OutOfRange, written: &str) -> bounds::OutOfRange {
    bounds::OutOfRange { value: format!("\"{written}\""), ..refusal }
}

/// Total memory in MB from /proc/meminfo.
fn detect_memory_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(1024)
}
