//! The scheduler daemon (`slurmletd`): owns the node's CPUs, memory and GPUs, keeps the job
//! store, and serves the REST API on a Unix socket.

pub mod accept;
pub mod core;
pub mod forkserver;
pub mod gpus;
pub mod info;
pub mod interactive;
pub mod job;
pub mod launch;
pub mod limits;
pub mod listing;
pub mod lock;
pub mod openapi;
pub mod plan;
pub mod refusal;
pub mod request;
pub mod routes;
pub mod server;
pub mod spawn;
pub mod step_spec;
pub mod steps;
pub mod store;
pub mod submit;
pub mod submit_keys;
pub mod text;
pub mod writer;

use crate::config::Config;
use std::sync::{Arc, Mutex};
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
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let what = what.into();
    move |source| DaemonError::Io { what, source }
}

/// Runs the daemon until it is told to stop (SIGTERM, SIGINT or `slurmlet daemon stop`).
/// Running jobs are left running; the next daemon re-adopts them. SIGHUP re-reads the
/// configuration from `config_path`.
pub fn run(config: Config, config_path: std::path::PathBuf) -> Result<(), DaemonError> {
    // Descriptors the daemon was started with (a terminal's, a build tool's pipe) must not
    // reach the supervisors and jobs it starts.
    crate::sys::close_inherited_on_exec();
    crate::api::client::create_private_dir(&config.state_dir)
        .map_err(io(format!("cannot create state directory {}", config.state_dir.display())))?;
    let lock_path = config.state_dir.join("daemon.lock");
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(format!("cannot open {}", lock_path.display())))?;
    if !lock::try_lock_forever(&lock_file).map_err(io("cannot lock the state directory"))? {
        return Err(DaemonError::AlreadyRunning(config.state_dir.display().to_string()));
    }
    let socket = config.socket.clone();
    if let Some(dir) = socket.parent() {
        crate::api::client::create_private_dir(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    }
    let _ = std::fs::remove_file(&socket);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the runtime"))?;
    rt.block_on(async move {
        let db = config.state_dir.join("slurmlet.db");
        let mut core = core::Core::open(config)?;
        // A copy to go back to if the store is ever damaged, made once the daemon serves.
        let _ = std::thread::Builder::new().name("backup".into()).spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(2));
            match store::write_backup(&db) {
                Ok(()) => tracing::debug!("job store backed up"),
                Err(e) => tracing::warn!("cannot back up the job store: {e}"),
            }
        });
        let effects = core.recover();
        let (timer, _) = tokio::sync::watch::channel(0u64);
        let daemon = Arc::new(server::Daemon {
            core: Mutex::new(core),
            timer,
            shutdown: tokio::sync::Notify::new(),
            kick: tokio::sync::Notify::new(),
            clients: Default::default(),
            steps_changed: tokio::sync::Notify::new(),
        });
        tokio::spawn(daemon.clone().run_scheduler());
        daemon.apply(effects);
        tokio::spawn(daemon.clone().run_timer());
        tokio::spawn(daemon.clone().reload_on_hangup(config_path));

        let listener =
            tokio::net::UnixListener::bind(&socket).map_err(io(format!("cannot listen on {}", socket.display())))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o700))
            .map_err(io(format!("cannot set the mode of {}", socket.display())))?;
        tracing::info!(socket = %socket.display(), "slurmletd listening");

        let app = routes::router(daemon.clone());
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
        accept::serve(listener, app, shutdown).await;
        let _ = std::fs::remove_file(&socket);
        let core = daemon.core.lock().expect("core lock");
        tokio::task::block_in_place(|| core.flush());
        tracing::info!("slurmletd stopped");
        Ok(())
    })
}
