//! `slurmletd` and `slurmlet daemon [run|start|stop|status]`.

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// slurmletd's options.
#[derive(Debug, Parser)]
#[command(about = "the slurmlet scheduler daemon", disable_version_flag = true)]
pub struct DaemonArgs {
    /// Configuration file (default: $SLURMLET_CONF or ~/.config/slurmlet/slurmlet.toml)
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Socket to listen on (overrides the configuration)
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,
    /// Run as the system daemon shared by every user (as root; configuration
    /// /etc/slurmlet/slurmlet.toml, state /var/lib/slurmlet, socket /run/slurmlet/slurmlet.sock)
    #[arg(long, global = true)]
    pub system: bool,
    /// Also serve the REST API to token holders on this TCP address, e.g. 127.0.0.1:6820
    /// (overrides the configuration's `listen`)
    #[arg(long, value_name = "ADDR", global = true)]
    pub listen: Option<std::net::SocketAddr>,
    /// What to do (default: run in the foreground)
    #[command(subcommand)]
    pub action: Option<Action>,
}

/// `slurmlet daemon` actions.
#[derive(Debug, Subcommand, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Run in the foreground
    Run,
    /// Start in the background unless one is running
    Start,
    /// Stop the running daemon (jobs keep running and are re-adopted on the next start)
    Stop,
    /// Say whether a daemon answers, and where
    Status,
}

/// `slurmletd [--config F] [--socket S] [--listen ADDR]`: runs the daemon in the foreground.
pub fn run_daemon(args: Vec<OsString>) -> i32 {
    match super::parse_args::<DaemonArgs>("slurmletd", args, 1) {
        Ok(a) => foreground(&a),
        Err(code) => code,
    }
}

fn foreground(args: &DaemonArgs) -> i32 {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("SLURMLET_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .try_init();
    let path = args.config.clone().unwrap_or_else(|| match args.system {
        true => crate::paths::system_config(),
        false => crate::paths::user_config(),
    });
    let loaded = match args.system {
        true => crate::config::Config::load_as(&path, crate::config::Mode::System),
        false => crate::config::Config::load(&path),
    };
    let mut config = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("slurmletd: error: {e}");
            return 1;
        }
    };
    if let Some(s) = &args.socket {
        config.socket = s.clone();
    }
    if let Some(addr) = args.listen {
        config.listen = Some(addr);
    }
    match crate::daemon::run(config, path) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("slurmletd: error: {e}");
            1
        }
    }
}

/// The status line that says where the daemon's GPUs came from.
fn gpu_source_line(source: &str) -> String {
    if source.is_empty() {
        "GPUs: none found".to_string()
    } else {
        format!("GPUs: found by {source}")
    }
}

/// `slurmlet daemon …`.
pub fn run(args: Vec<OsString>) -> i32 {
    let args = match super::parse_args::<DaemonArgs>("slurmlet daemon", args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let socket = args.socket.clone().unwrap_or_else(crate::config::target::client_socket);
    match args.action.unwrap_or(Action::Run) {
        Action::Run => foreground(&args),
        Action::Start => match crate::api::client::Client::local() {
            Ok(c) => {
                println!("slurmletd is running on {}", c.endpoint());
                0
            }
            Err(e) => {
                eprintln!("slurmlet: error: {e}");
                1
            }
        },
        Action::Status => {
            let client = crate::api::client::Client::at(&socket).ok();
            let ok = client.as_ref().and_then(|c| c.ping().ok());
            match ok {
                Some(p) => {
                    println!("slurmletd is running on {} (cluster {})", socket.display(), p.meta.slurm.cluster);
                    if let Some(config) = client.and_then(|c| c.config().ok()) {
                        println!("{}", gpu_source_line(&config.config.gpu_source));
                    }
                    0
                }
                None => {
                    println!("slurmletd is not running (no answer on {})", socket.display());
                    3
                }
            }
        }
        Action::Stop => {
            let Ok(client) = crate::api::client::Client::at(&socket) else { return 1 };
            match client.post::<_, crate::api::types::Envelope>("/slurmlet/v1/shutdown", &serde_json::json!({})) {
                Ok(env) if env.errors.is_empty() => {
                    // Wait until the socket stops answering.
                    for _ in 0..500 {
                        if std::os::unix::net::UnixStream::connect(&socket).is_err() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    println!("slurmletd stopped");
                    0
                }
                Ok(env) => {
                    for e in env.errors {
                        eprintln!("slurmlet: error: {}", e.description);
                    }
                    1
                }
                Err(_) => {
                    println!("slurmletd is not running (no answer on {})", socket.display());
                    0
                }
            }
        }
    }
}
