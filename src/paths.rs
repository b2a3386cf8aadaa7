//! Where the per-user daemon keeps its socket, state and configuration.

use std::path::PathBuf;

use crate::config::Mode;

/// The system daemon's configuration file, whose presence tells the commands to use the
/// system daemon: `SLURMLET_SYSTEM_CONF`, else `/etc/slurmlet/slurmlet.toml`.
pub fn system_config() -> PathBuf {
    match std::env::var_os("SLURMLET_SYSTEM_CONF").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from("/etc/slurmlet/slurmlet.toml"),
    }
}

/// The daemon's socket when the configuration names none: `SLURMLET_SOCKET`, else
/// `/run/slurmlet/slurmlet.sock` for the system daemon, else
/// `$XDG_RUNTIME_DIR/slurmlet/slurmlet.sock`, else `/tmp/slurmlet-$UID/slurmlet.sock`.
pub fn default_socket(mode: Mode) -> PathBuf {
    if let Some(p) = std::env::var_os("SLURMLET_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    match mode {
        Mode::System => PathBuf::from("/run/slurmlet/slurmlet.sock"),
        Mode::User => runtime_dir().join("slurmlet.sock"),
    }
}

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
    /// Its socket.
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
        .and_then(|text| toml::from_str::<crate::config::ConfigFile>(&text).ok())
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

/// The per-user runtime directory holding the socket and the start lock.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("slurmlet"),
        None => PathBuf::from(format!("/tmp/slurmlet-{}", crate::identity::uid())),
    }
}

/// The state directory when the configuration names none: `/var/lib/slurmlet` for the
/// system daemon, else `~/.local/share/slurmlet`.
pub fn default_state_dir(mode: Mode) -> PathBuf {
    match mode {
        Mode::System => PathBuf::from("/var/lib/slurmlet"),
        Mode::User => dirs::data_dir()
            .unwrap_or_else(|| std::env::temp_dir().join(format!("slurmlet-{}-data", crate::identity::uid())))
            .join("slurmlet"),
    }
}

/// The per-user daemon's configuration file: `SLURMLET_CONF`, else
/// `~/.config/slurmlet/slurmlet.toml`.
pub fn user_config() -> PathBuf {
    if let Some(p) = std::env::var_os("SLURMLET_CONF").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    dirs::config_dir().unwrap_or_else(|| PathBuf::from("/etc")).join("slurmlet").join("slurmlet.toml")
}

/// This machine's short host name.
pub fn hostname() -> String {
    match kernel_hostname() {
        Some(name) => name.split('.').next().unwrap_or_default().to_string(),
        None => "localhost".into(),
    }
}

/// This machine's host name as the kernel holds it (`gethostname`): short or full, as the
/// machine was set up; `None` when it cannot be read.
pub fn kernel_hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}
