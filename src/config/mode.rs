//! How the daemon is shared ([`Mode`]), and where each kind keeps its socket and its state
//! when the configuration names none.

use serde::Deserialize;
use std::path::PathBuf;

/// How the daemon is shared.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One daemon per user, started on demand, with its socket and state in the user's
    /// directories.
    #[default]
    User,
    /// One daemon run by root for all users: jobs run as their owners, and callers are
    /// known by their socket's peer credentials.
    System,
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
        Mode::User => crate::paths::runtime_dir().join("slurmlet.sock"),
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
