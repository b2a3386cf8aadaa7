//! Starting a job: its environment, its files, and its supervisor process.

use crate::config::Config;
use crate::daemon::model::job::Job;
use crate::daemon::model::machine::Machine;
use crate::daemon::model::output_path::output_path;
use crate::daemon::store::Payload;
use crate::stepd::containment::Share;
use crate::stepd::{files, Kind, LaunchSpec};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What Slurm's controller takes as the end of a job without a time limit: a year after its
/// start (`SLURM_JOB_END_TIME`).
const UNLIMITED_END: u64 = 365 * 24 * 60 * 60;

/// The variables a batch step gets on top of its submit environment (compare a real batch
/// step's `env | grep SLURM`).
pub fn batch_env(job: &Job, config: &Config, machine: &Machine, submit_env: &[String]) -> Vec<String> {
    let node = &config.node_name;
    let gpus = crate::gpu::index_list(&job.gpus);
    let mut vars: Vec<(&str, String)> = vec![
        ("SLURMD_NODENAME", node.clone()),
        ("SLURM_CLUSTER_NAME", config.cluster_name.clone()),
        ("SLURM_CPUS_ON_NODE", job.req.cpus.to_string()),
        ("SLURM_GTIDS", "0".into()),
        ("SLURM_JOBID", job.id.to_string()),
        ("SLURM_JOB_ID", job.id.to_string()),
        ("SLURM_JOB_CPUS_PER_NODE", job.req.cpus.to_string()),
        ("SLURM_JOB_GID", job.gid.to_string()),
        ("SLURM_JOB_NAME", job.name.to_string()),
        ("SLURM_JOB_NODELIST", node.clone()),
        ("SLURM_JOB_NUM_NODES", "1".into()),
        ("SLURM_JOB_PARTITION", job.partition.to_string()),
        ("SLURM_JOB_UID", job.uid.to_string()),
        ("SLURM_JOB_USER", crate::identity::user_name(job.uid)),
        ("SLURM_JOB_START_TIME", job.start_time.to_string()),
        ("SLURM_LOCALID", "0".into()),
        ("SLURM_NNODES", "1".into()),
        ("SLURM_NODEID", "0".into()),
        ("SLURM_NODELIST", node.clone()),
        ("SLURM_NPROCS", job.ntasks.to_string()),
        ("SLURM_NTASKS", job.ntasks.to_string()),
        ("SLURM_PRIO_PROCESS", "0".into()),
        ("SLURM_PROCID", "0".into()),
        ("SLURM_SUBMIT_DIR", job.cwd.to_string()),
        ("SLURM_SUBMIT_HOST", job.submit_host.to_string()),
        ("SLURM_TASKS_PER_NODE", job.ntasks.to_string()),
        ("SLURM_TOPOLOGY_ADDR", node.clone()),
        ("SLURM_TOPOLOGY_ADDR_PATTERN", "node".into()),
        ("SLURM_JOB_QOS", if job.qos.is_empty() { "normal".into() } else { job.qos.to_string() }),
        // Slurm always points it at the configuration its daemons read.
        ("SLURM_CONF", config.path.display().to_string()),
        ("SLURM_OOM_KILL_STEP", "0".into()),
        ("SLURM_JOB_END_TIME", job.start_time.saturating_add(job.limit_secs().unwrap_or(UNLIMITED_END)).to_string()),
    ];
    if let Some(a) = job.array {
        vars.push(("SLURM_ARRAY_JOB_ID", a.job_id.to_string()));
        vars.push(("SLURM_ARRAY_TASK_ID", a.task_id.to_string()));
        vars.push(("SLURM_ARRAY_TASK_COUNT", a.count.to_string()));
        vars.push(("SLURM_ARRAY_TASK_MIN", a.min.to_string()));
        vars.push(("SLURM_ARRAY_TASK_MAX", a.max.to_string()));
        vars.push(("SLURM_ARRAY_TASK_STEP", a.step.to_string()));
    }
    if job.restarts > 0 {
        vars.push(("SLURM_RESTART_COUNT", job.restarts.to_string()));
    }
    if !job.account.is_empty() {
        vars.push(("SLURM_JOB_ACCOUNT", job.account.to_string()));
    }
    if job.cpus_per_task_set {
        vars.push(("SLURM_CPUS_PER_TASK", job.cpus_per_task.to_string()));
        vars.push(("SLURM_TRES_PER_TASK", format!("cpu={}", job.cpus_per_task)));
    }
    match job.mem_per_cpu {
        Some(m) => vars.push(("SLURM_MEM_PER_CPU", m.to_string())),
        None if job.req.mem_mb > 0 => vars.push(("SLURM_MEM_PER_NODE", job.req.mem_mb.to_string())),
        None => {}
    }
    if !job.gpus.is_empty() {
        // The vendor's variable (CUDA_VISIBLE_DEVICES for NVIDIA GPUs), then Slurm's own.
        vars.extend(crate::gpu::visible_devices(&job.gpus, &job.gpus));
        vars.push(("GPU_DEVICE_ORDINAL", gpus.clone()));
        vars.push(("SLURM_JOB_GPUS", gpus.clone()));
        vars.push(("SLURM_GPUS_ON_NODE", job.gpus.len().to_string()));
        if job.gpus.iter().any(|g| g.vendor == crate::gpu::Vendor::Nvidia) {
            vars.push(("CUDA_DEVICE_ORDER", "PCI_BUS_ID".into()));
        }
        if job.req.shards > 0 {
            vars.push(("SLURM_SHARDS_ON_NODE", job.req.shards.to_string()));
        }
        vars.extend(crate::daemon::mps::job_vars(job, config, machine.runs_mps()));
    } else if config.hide_gpus_from_cpu_jobs && !config.gpus.is_empty() {
        // Each vendor's variable, empty: the job sees none of the node's GPUs.
        vars.extend(crate::gpu::visible_devices(&[], &config.gpus));
    }
    let overridden = |entry: &str| {
        let name = entry.split('=').next().unwrap_or(entry);
        vars.iter().any(|(k, _)| *k == name)
            || (name.starts_with("SLURM_")
                && !matches!(name, "SLURM_EXPORT_ENV" | "SLURM_UMASK")
                && name != crate::stepd::user_env::VARIABLE)
            || (job.gpus.is_empty() && matches!(name, "GPU_DEVICE_ORDINAL" | "SLURM_JOB_GPUS" | "SLURM_GPUS_ON_NODE"))
    };
    let mut env: Vec<String> = submit_env.iter().filter(|e| !overridden(e)).cloned().collect();
    env.extend(vars.into_iter().map(|(k, v)| format!("{k}={v}")));
    env
}

/// The variables a command run in an interactive allocation gets (compare `salloc … env`
/// on a real cluster): the job's, none of a step's.
pub fn allocation_env(job: &Job, config: &Config, machine: &Machine) -> Vec<String> {
    const KEPT: &[&str] = &[
        "SLURM_CLUSTER_NAME",
        "SLURM_JOBID",
        "SLURM_CONF",
        "SLURM_JOB_ACCOUNT",
        "SLURM_JOB_CPUS_PER_NODE",
        "SLURM_JOB_ID",
        "SLURM_JOB_NAME",
        "SLURM_JOB_NODELIST",
        "SLURM_JOB_NUM_NODES",
        "SLURM_JOB_PARTITION",
        "SLURM_JOB_QOS",
        "SLURM_NNODES",
        "SLURM_NODELIST",
        "SLURM_SUBMIT_DIR",
        "SLURM_SUBMIT_HOST",
        "SLURM_TASKS_PER_NODE",
        "SLURM_CPUS_PER_TASK",
        "SLURM_TRES_PER_TASK",
        "SLURM_MEM_PER_CPU",
        "SLURM_MEM_PER_NODE",
    ];
    let mut env: Vec<String> = batch_env(job, config, machine, &[])
        .into_iter()
        .filter(|e| KEPT.iter().any(|k| e.split('=').next() == Some(*k)))
        .collect();
    if job.ntasks > 1 {
        env.push(format!("SLURM_NTASKS={}", job.ntasks));
        env.push(format!("SLURM_NPROCS={}", job.ntasks));
    }
    env
}

/// The submitter's umask from `SLURM_UMASK` in the job's submit environment.
pub fn umask_of(env: &[String]) -> Option<u32> {
    env.iter().find_map(|e| e.strip_prefix("SLURM_UMASK=")).and_then(|m| u32::from_str_radix(m, 8).ok())
}

/// Everything needed to start a job's supervisor, gathered under the daemon's lock; the slow
/// part ([`Prepared::write_files`] and [`Prepared::start`]: files and a process start) runs
/// without it.
pub struct Prepared {
    spec: LaunchSpec,
    script: String,
    exe: PathBuf,
    dir: PathBuf,
}

/// Gathers what the supervisor of `job` needs.
pub fn prepare(
    job: &Job,
    config: &Config,
    machine: &Machine,
    payload: &Payload,
    env: Vec<String>,
    exe: &Path,
    dir: &Path,
) -> Prepared {
    let script_path = dir.join(files::SCRIPT);
    let node = &config.node_name;
    let stdout = output_path(job, &job.stdout, node);
    let stderr = (!job.stderr.is_empty()).then(|| output_path(job, &job.stderr, node));
    let stdin = (!job.stdin.is_empty()).then(|| output_path(job, &job.stdin, node));
    // Applied, then unset, as slurmstepd does for a batch step (a step's stays).
    let umask = umask_of(&env);
    let env = env.into_iter().filter(|e| !e.starts_with("SLURM_UMASK=")).collect();
    let spec = LaunchSpec {
        job_id: job.id,
        script: script_path,
        argv: payload.argv.clone(),
        env,
        cwd: job.cwd.as_str().into(),
        stdout,
        stderr,
        stdin,
        append: job.append,
        start_time: job.start_time,
        // A job in a reservation is ended with its window, as by its time limit.
        time_limit_secs: job.limit_end(job.start_time).map(|end| end.saturating_sub(job.start_time)),
        kill_wait: config.kill_wait,
        warn_signal: job.warn_signal,
        node_name: node.clone(),
        umask,
        interactive: job.interactive,
        run_as: crate::identity::RunAs::when_needed(job.uid, job.gid),
        share: Share {
            cpus: job.req.cpus,
            cpu_ids: job.cpu_ids.clone(),
            mem_mb: job.req.mem_mb,
            gpus: job.gpus.clone(),
            cgroup: cgroup_plan(
                job,
                config,
                machine,
                if job.interactive { "interactive" } else { "batch" },
                &job.cpu_ids,
                job.req.mem_mb,
            ),
        },
    };
    Prepared { spec, script: payload.script.clone(), exe: exe.to_path_buf(), dir: dir.to_path_buf() }
}

/// The cgroups of step `step` (`batch`, `interactive`, `0`…) of `job`, given `cpu_ids` and
/// `mem_mb` MB of it, when the daemon contains its jobs in cgroups: the job's own limits on
/// the job's group, the step's on the step's, and the node's GPU device files the job was
/// not given denied to it.
pub fn cgroup_plan(
    job: &Job,
    config: &Config,
    machine: &Machine,
    step: &str,
    cpu_ids: &[u32],
    mem_mb: u64,
) -> Option<crate::stepd::containment::cgroup::plan::CgroupPlan> {
    let setup = machine.cgroups.as_ref()?;
    let given: Vec<&PathBuf> = job.gpus.iter().flat_map(|g| &g.devices).collect();
    let denied = config.gpus.iter().flat_map(|g| &g.devices).filter(|d| !given.contains(d)).cloned().collect();
    let job_limits = setup.limits(&job.cpu_ids, job.req.mem_mb);
    Some(setup.plan(job.id, step, job_limits, setup.limits(cpu_ids, mem_mb), denied))
}

pub use crate::program::one_spawn_at_a_time;

impl Prepared {
    /// Writes the job directory (script and spec). This needs no durable allocation: until
    /// the supervisor runs, recovery ignores the directory, and a later launch rewrites it.
    pub fn write_files(&self) -> std::io::Result<()> {
        let _one_at_a_time = one_spawn_at_a_time();
        let dir = &self.dir;
        std::fs::create_dir_all(dir)?;
        std::fs::write(&self.spec.script, &self.script)?;
        std::fs::set_permissions(&self.spec.script, std::fs::Permissions::from_mode(0o700))?;
        if let Some(owner) = self.spec.run_as {
            // The owner runs its script by this path (its `$0`, as in Slurm) and may pass
            // through the directory to it; everything else in it stays root's.
            std::os::unix::fs::chown(&self.spec.script, Some(owner.uid), Some(owner.gid))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))?;
        }
        if let Some(plan) = &self.spec.share.cgroup {
            // Where the daemon finds the job's processes again, after a restart too.
            let text = crate::stepd::containment::cgroup::plan::job_groups_text(plan);
            std::fs::write(dir.join(crate::stepd::containment::JOB_CGROUPS), text)?;
        }
        std::fs::write(dir.join(files::SPEC), serde_json::to_vec(&self.spec).expect("spec serializes"))
    }

    /// Whether this is an interactive allocation, whose supervisor needs its client.
    pub fn interactive(&self) -> bool {
        self.spec.interactive
    }

    /// Starts the supervisor on the written directory (see [`start_supervisor`]); an
    /// interactive allocation's supervisor gets its client's connection `conn`.
    pub fn start(&self, conn: Option<&std::os::unix::net::UnixStream>) -> std::io::Result<Started> {
        start_supervisor(Kind::Job, &self.exe, &self.dir, conn)
    }
}

/// Starts a supervisor of `kind` on the written directory `dir`, in its own session with
/// SIGTERM blocked: forked by the fork server (see [`super::fork_client`]), or, when that
/// cannot be had, started directly (see [`super::posix_spawn::supervisor`]). The supervisor alone
/// holds the write end of a pipe whose read end is returned: it closes it once the end is
/// recorded (a job's in `status.json`, before it makes that file durable and exits). A step
/// or an interactive allocation also gets its client's connection `conn`.
pub fn start_supervisor(
    kind: Kind,
    exe: &Path,
    dir: &Path,
    conn: Option<&std::os::unix::net::UnixStream>,
) -> std::io::Result<Started> {
    use std::os::fd::AsFd;
    let _one_at_a_time = one_spawn_at_a_time();
    let (ended, end_writer) = crate::sys::pipe()?;
    let fds: Vec<_> = std::iter::once(end_writer.as_fd()).chain(conn.map(|c| c.as_fd())).collect();
    let directly = [kind.subcommand().as_ref(), dir.as_os_str()];
    let (pid, pidfd) = through_fork_server(exe, |s| s.launch(kind, dir, &fds), &directly, &fds)?;
    Ok(Started { pid, ended, pidfd })
}

/// Starts the process that looks at a user's paths (see [`crate::path_looks`]), handing it
/// `fds` (its request, then its report pipe's write end), as [`start_supervisor`] starts a
/// supervisor. Returns its pid and, when the fork server started it, a pidfd for it (else it
/// is the daemon's child).
pub fn start_path_check(exe: &Path, fds: &[BorrowedFd]) -> std::io::Result<(i32, Option<OwnedFd>)> {
    let _one_at_a_time = one_spawn_at_a_time();
    let directly = [crate::path_looks::SUBCOMMAND.as_ref()];
    through_fork_server(exe, |s| s.path_check(fds), &directly, fds)
}

/// Has the fork server (started if there is none) start a child with `ask`; when no server can
/// be had, or it fails, starts `slurmlet ARGS FD…` directly instead, with `fds` as FD….
/// Called with [`SPAWN_LOCK`] held.
fn through_fork_server(
    exe: &Path,
    ask: impl FnOnce(&super::fork_client::ForkServer) -> std::io::Result<(i32, OwnedFd)>,
    args: &[&std::ffi::OsStr],
    fds: &[BorrowedFd],
) -> std::io::Result<(i32, Option<OwnedFd>)> {
    let mut server = FORK_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    if server.is_none() {
        match super::fork_client::ForkServer::start(exe) {
            Ok(s) => *server = Some(s),
            Err(e) => tracing::warn!("cannot start the supervisors' fork server, starting them directly: {e}"),
        }
    }
    if let Some(s) = server.as_ref() {
        match ask(s) {
            Ok((pid, pidfd)) => return Ok((pid, Some(pidfd))),
            Err(e) => {
                tracing::warn!("the supervisors' fork server failed ({e}); starting this one directly");
                *server = None;
            }
        }
    }
    drop(server);
    let numbers: Vec<String> = (0..fds.len()).map(|i| (super::posix_spawn::PASSED_FD + i as i32).to_string()).collect();
    let mut argv: Vec<&std::ffi::OsStr> = vec!["slurmlet".as_ref()];
    argv.extend(args);
    argv.extend(numbers.iter().map(std::ffi::OsStr::new));
    let pid = super::posix_spawn::supervisor(exe, &argv, fds)?;
    Ok((pid, None))
}

/// A supervisor just started.
pub struct Started {
    /// Its pid.
    pub pid: i32,
    /// The read end of its end pipe.
    pub ended: std::os::fd::OwnedFd,
    /// A pidfd for it, when the fork server started it: the server, not the daemon, is its
    /// parent and reaps it, so its pid alone could name another process by the time the
    /// daemon looks.
    pub pidfd: Option<std::os::fd::OwnedFd>,
}

/// The fork server that starts supervisors, once the first one was asked for.
static FORK_SERVER: std::sync::Mutex<Option<super::fork_client::ForkServer>> = std::sync::Mutex::new(None);
