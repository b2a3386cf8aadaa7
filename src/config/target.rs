//! The daemon the commands talk to: the configuration they read, and the socket it names.

use super::mode::{default_socket, Mode};
use super::ConfigFile;
use crate::paths::{system_config, user_config};
use std::path::PathBuf;

/// The configuration the commands read: `SLURMLET_CONF`, else the system configuration when
/// it exists, else the per-user one. The flag says whether it is the system configuration.
pub fn client_config() -> (PathBuf, bool) {
    if let Some(p) = std::env::var_os("SLURMLET_CONF").filter(|p| !p.is_empty()) {
        return (PathBuf::from(p), false);
    }
    let system = system_config();
    if system.exists() {
        return (system, true);
    }
    (user_config(), false)
}

/// The daemon the commands talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTarget {
    /// The socket its requests go to.
    pub socket: PathBuf,
    /// Whether it is a system daemon, which the commands never start themselves.
    pub system: bool,
    /// The configuration file that said so.
    pub config: PathBuf,
}

/// The daemon the commands talk to: the socket is `SLURMLET_SOCKET`, else the `socket` key
/// of [`client_config`] (so that commands and daemon agree), else [`default_socket`].
pub fn client_target() -> ClientTarget {
    let (config, from_system) = client_config();
    let file = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| toml::from_str::<ConfigFile>(&text).ok())
        .unwrap_or_default();
    let mode = if from_system { Mode::System } else { file.mode.unwrap_or_default() };
    let socket = match std::env::var_os("SLURMLET_SOCKET").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => file.socket.unwrap_or_else(|| default_socket(mode)),
    };
    ClientTarget { socket, system: mode == Mode::System, config }
}

/// The socket the commands talk to (see [`client_target`]).
pub fn client_socket() -> PathBuf {
    client_target().socket
}
