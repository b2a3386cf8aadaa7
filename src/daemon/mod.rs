//! The scheduler daemon (`slurmletd`): owns the node's CPUs, memory and GPUs, keeps the job
//! store, and serves the REST API on a Unix socket (and, to token holders, on a TCP address).

pub mod accounting;
pub mod auth;
pub mod fault;
pub mod gpu_use;
pub mod http;
pub mod model;
pub mod mps;
pub mod runtime;
pub mod scheduling;
pub mod store;
pub mod supervision;
pub mod views;

/// The store's layout at its earlier path, for programs outside the crate that build
/// stores of earlier versions.
pub use store::schema;

use crate::config::Config;
use std::sync::Arc;
use thiserror::Error;

/// Why the daemon could not run.
#[derive(Debug, Error)]
pub enum DaemonError {
    /// Another daemon holds the state directory.
    #[error("another slurmletd is already running with state directory {0}")]
    AlreadyRunning(String),
    /// A file or socket problem.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// System mode asked for by someone other than root.
    #[error("the system daemon must run as root, to run each job as its owner (uid {0} here)")]
    SystemNeedsRoot(u32),
    /// The key that signs REST tokens could not be had.
    #[error(transparent)]
    Key(#[from] auth::KeyError),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let what = what.into();
    move |source| DaemonError::Io { what, source }
}

/// Sets directory `path`'s mode through a descriptor: a link put in its place is never
/// followed (see [`crate::sys::create_private_dir`], which made sure it is the
/// daemon's own and nobody else may write it).
fn set_dir_mode(path: &std::path::Path, mode: u32) -> Result<(), DaemonError> {
    crate::fs_at::Dir::open(path)
        .and_then(|dir| dir.chmod(mode))
        .map_err(io(format!("cannot set the mode of {}", path.display())))
}

/// Sets the mode of the socket the daemon just made, in a directory nobody else may write.
fn set_socket_mode(path: &std::path::Path, mode: u32) -> Result<(), DaemonError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(io(format!("cannot set the mode of {}", path.display())))
}

/// Runs the daemon until it is told to stop (SIGTERM, SIGINT or `slurmlet daemon stop`).
/// Running jobs are left running; the next daemon re-adopts them. SIGHUP re-reads the
/// configuration from `config_path`.
pub fn run(mut config: Config, config_path: std::path::PathBuf) -> Result<(), DaemonError> {
    let system = config.mode == crate::config::Mode::System;
    let _lock_file = take_state_dir(&config)?;
    // The one place GPUs are looked for: client commands only read the configuration.
    let machine = model::machine::Machine {
        gpu_source: config.discover_gpus(),
        mps_control: mps::found::find(&config),
        cgroups: contain_in_cgroups(&config),
    };
    let jwt_key = auth::Key::load_or_create(&config.state_dir)?;
    let socket = config.socket.clone();
    let listen = config.listen;
    if let Some(dir) = socket.parent() {
        crate::sys::create_private_dir(dir).map_err(io(format!("cannot create {}", dir.display())))?;
        if system {
            set_dir_mode(dir, 0o755)?;
        }
    }
    let _ = std::fs::remove_file(&socket);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime"))?;
    rt.block_on(async move {
        // One stop for both listeners, and for the board's long polls.
        let (stopped, stopping) = tokio::sync::watch::channel(false);
        let daemon = start(config, machine, jwt_key, config_path, stopping.clone())?;

        let tcp = match listen {
            Some(addr) => {
                Some(tokio::net::TcpListener::bind(addr).await.map_err(io(format!("cannot listen on {addr}")))?)
            }
            None => None,
        };
        let listener =
            tokio::net::UnixListener::bind(&socket).map_err(io(format!("cannot listen on {}", socket.display())))?;
        // Everyone may connect to the system daemon: it knows each caller by the socket's
        // peer credentials, never by what the caller says.
        set_socket_mode(&socket, if system { 0o666 } else { 0o700 })?;
        // One limit on the connections held, for both listeners.
        let gate = http::admission::Gate::new(views::info::meta(&daemon.core.lock().config));
        tracing::info!(socket = %socket.display(), listen = ?listen, max_connections = gate.limit(), "slurmletd listening");

        let app = http::routes::router(daemon.clone());
        let stop = daemon.clone();
        let shutdown = async move {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).expect("signal handler");
            let mut int = signal(SignalKind::interrupt()).expect("signal handler");
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
                _ = stop.shutdown.notified() => {},
            }
        };
        tokio::spawn(async move {
            shutdown.await;
            let _ = stopped.send(true);
        });
        let until_stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let unix = http::accept::serve(listener, app.clone(), &gate, until_stopped(stopping.clone()));
        let tcp = async {
            if let Some(tcp) = tcp {
                http::tcp::serve(tcp, app, daemon.clone(), &gate, until_stopped(stopping.clone())).await;
            }
        };
        tokio::join!(unix, tcp);
        let _ = std::fs::remove_file(&socket);
        let core = daemon.core.lock();
        tokio::task::block_in_place(|| core.flush());
        if let Some(setup) = &core.machine.cgroups {
            setup.remove_base();
        }
        tracing::info!("slurmletd stopped");
        Ok(())
    })
}

/// What the daemon does before it looks at anything else: as the system daemon, checks it
/// is root and keeps what it creates to itself; makes its state directory and takes its
/// lock, held for as long as the returned file is open.
fn take_state_dir(config: &Config) -> Result<std::fs::File, DaemonError> {
    // Descriptors the daemon was started with (a terminal's, a build tool's pipe) must not
    // reach the supervisors and jobs it starts.
    crate::sys::close_inherited_on_exec();
    let system = config.mode == crate::config::Mode::System;
    if system {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        if euid != 0 {
            return Err(DaemonError::SystemNeedsRoot(euid));
        }
        // What the daemon creates (store, job files) is for root alone unless it says so.
        // SAFETY: umask has no preconditions.
        unsafe { libc::umask(0o077) };
    }
    crate::sys::tune_allocator();
    crate::sys::create_private_dir(&config.state_dir)
        .map_err(io(format!("cannot create state directory {}", config.state_dir.display())))?;
    if system {
        // Users pass through (never list) the state directory to their own job's script.
        set_dir_mode(&config.state_dir, 0o711)?;
    }
    let lock_path = config.state_dir.join("daemon.lock");
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(format!("cannot open {}", lock_path.display())))?;
    if !crate::lock::try_lock_forever(&lock_file).map_err(io("cannot lock the state directory"))? {
        return Err(DaemonError::AlreadyRunning(config.state_dir.display().to_string()));
    }
    Ok(lock_file)
}

/// Opens the store, takes up the jobs and MPS servers an earlier daemon left, and starts
/// the daemon's tasks beside its requests (the scheduler, its timer, the reload on SIGHUP,
/// the GPU watch, the purge, the backstop); `stopping` becomes true when it is told to stop.
fn start(
    config: Config,
    machine: model::machine::Machine,
    jwt_key: auth::Key,
    config_path: std::path::PathBuf,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Result<Arc<runtime::Daemon>, DaemonError> {
    let db = config.state_dir.join("slurmlet.db");
    let mut core = scheduling::core::Core::open(config, machine)?;
    // A copy to go back to if the store is ever damaged, made once the daemon serves.
    let _ = std::thread::Builder::new().name("backup".into()).spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        match store::write_backup(&db) {
            Ok(()) => tracing::debug!("job store backed up"),
            Err(e) => tracing::warn!("cannot back up the job store: {e}"),
        }
    });
    let effects = core.recover();
    let mps = runtime::mps::servers(&core);
    let history = accounting::history::History::new(core.config.state_dir.join("slurmlet.db"));
    let (timer, _) = tokio::sync::watch::channel(0u64);
    let changes = core.changes();
    let daemon = Arc::new(runtime::Daemon {
        core: scheduling::core_lock::CoreLock::new(core),
        timer,
        shutdown: tokio::sync::Notify::new(),
        kick: tokio::sync::Notify::new(),
        clients: Default::default(),
        steps_changed: tokio::sync::Notify::new(),
        jwt_key,
        listings: tokio::sync::Semaphore::new(1),
        path_checks: supervision::path_check::PathChecks::new(
            std::env::current_exe().unwrap_or_else(|_| "slurmlet".into()),
            supervision::path_check::DEADLINE,
        ),
        history,
        mps,
        changes,
        stopping,
    });
    // Listening for job ends before any is recorded.
    tokio::spawn(runtime::mps::quit_idle(daemon.clone()));
    tokio::spawn(daemon.clone().run_scheduler());
    tokio::spawn(runtime::purge::purge_periodically(daemon.clone()));
    daemon.apply(effects);
    tokio::spawn(daemon.clone().run_timer());
    tokio::spawn(daemon.clone().reload_on_hangup(config_path));
    tokio::spawn(runtime::gpu_watch::watch(daemon.clone()));
    tokio::spawn(runtime::backstop::watch(daemon.clone()));
    if let Some(outbox) = daemon.core.lock().take_notices() {
        tokio::spawn(runtime::notify::run(daemon.clone(), outbox));
    }
    Ok(daemon)
}

/// Works out whether and how jobs are contained in cgroups, for the rest of the daemon's
/// life, and says in one warning line which of the constraints asked for are not enforced
/// (none said: all of them are). `None`: jobs are held by their process groups only.
fn contain_in_cgroups(config: &Config) -> Option<crate::stepd::containment::cgroup::setup::CgroupSetup> {
    use crate::stepd::containment::cgroup::{hierarchy::Hierarchies, setup::CgroupSetup, setup::NoCgroups};
    let machine = Hierarchies::of_this_machine();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let system = config.mode == crate::config::Mode::System;
    // SAFETY: getuid has no preconditions.
    let base = crate::stepd::containment::cgroup::setup::base_for(system, unsafe { libc::getuid() }, &config.state_dir);
    // A daemon that is not root may have been given a subtree of its own (systemd's
    // Delegate=yes): it takes it over before it makes any group.
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let delegated = machine.unified.as_ref().filter(|_| !root).and_then(|(mount, _)| {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        crate::stepd::containment::cgroup::delegation::Delegated::find(mount, &own, uid)
    });
    let take_over = delegated.clone();
    let setup = CgroupSetup::work_out(&config.cgroup, system, root, &machine, base, delegated)
        .and_then(|s| match &take_over {
            Some(subtree) => subtree.take_over(&["memory", "pids", "cpu", "cpuset"]).map(|()| s).map_err(|e| {
                NoCgroups::NotWritable(format!("cannot take over the delegated cgroup {}: {e}", subtree.own.display()))
            }),
            None => Ok(s),
        })
        .and_then(|s| s.prepare().map(|()| s))
        .map(|s| s.sampling_every(config.job_acct_gather_frequency));
    if let Some(line) = CgroupSetup::warning(&config.cgroup, &setup, &machine) {
        tracing::warn!("{line}");
    }
    match &setup {
        Ok(_) => tracing::info!("jobs are contained in cgroups"),
        Err(why) => tracing::debug!(?why, "jobs are held by their process groups"),
    }
    let jobs_leave = setup.as_ref().is_ok_and(|s| s.moves_jobs_out_of_memory_group());
    if let Some(limit) = machine.own_memory_limit().filter(|_| system && !jobs_leave) {
        tracing::warn!(
            "jobs stay in the daemon's memory cgroup, whose limit of {} MiB (the unit's MemoryMax) they share with it; raise that limit, or let the daemon contain jobs in cgroups",
            limit >> 20
        );
    }
    setup.ok()
}
