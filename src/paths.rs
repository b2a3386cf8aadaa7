//! Where the configuration files and the per-user runtime directory are, and this machine's
//! host name: what every process finds without reading a configuration (the defaults that
//! depend on the daemon's mode are the configuration's, in `config::mode`).

use std::path::PathBuf;

/// The system daemon's configuration file, whose presence tells the commands to use the
/// system daemon: `SLURMLET_SYSTEM_CONF`, else `/etc/slurmlet/slurmlet.toml`.
pub fn system_config() -> PathBuf {
    match std::env::var_os("SLURMLET_SYSTEM_CONF").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from("/etc/slurmlet/slurmlet.toml"),
    }
}

/// The per-user runtime directory holding the socket and the start lock.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("slurmlet"),
        None => PathBuf::from(format!("/tmp/slurmlet-{}", crate::identity::uid())),
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
