//! Profiles: the endpoints the commands may talk to, named in the client's profiles file
//! (`~/.config/slurmlet/config.toml`, or `SLURMLET_PROFILES`).
//!
//! ```toml
//! default = "cluster"            # optional; without it, the local daemon
//!
//! [profiles.cluster]
//! url = "https://login.example.org:6820"   # slurmrestd; or unix:///run/slurmrestd.sock
//! user = "alice"                           # X-SLURM-USER-NAME (default: your user name)
//! token_command = "ssh login scontrol token lifespan=3600"
//! # or: token_file = "~/.slurm-token", or token_env = "MY_JWT" (default SLURM_JWT)
//! ```
//!
//! A profile is chosen by `-M/--clusters NAME` (not sacct's, which selects jobs), else
//! `slurmlet --profile NAME`, else `SLURMLET_PROFILE`, else the file's `default`; `local` (or
//! no profile) is the local daemon. Tokens are read when a command needs one, and never
//! printed or logged.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The name that always means the local daemon.
pub const LOCAL: &str = "local";

/// A profile that cannot be used.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// The profiles file cannot be read or parsed.
    #[error("profiles file {path}: {why}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// No profile of that name.
    #[error("no profile named '{name}' in {path} (profiles there: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The file.
        path: PathBuf,
        /// The names it has.
        known: String,
    },
    /// The profile's URL is not one the client speaks.
    #[error("profile '{name}': url '{url}' is not http://, https:// or unix:///PATH")]
    BadUrl {
        /// The profile.
        name: String,
        /// Its URL.
        url: String,
    },
    /// No token could be had.
    #[error("profile '{name}': {why}")]
    Token {
        /// The profile.
        name: String,
        /// Why, and how to get one.
        why: String,
    },
}

/// One profile as the file writes it.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// `http(s)://host[:port][/prefix]` of a slurmrestd (or a slurmlet daemon's `listen`),
    /// or `unix:///path` of its socket.
    pub url: String,
    /// The user the token is for (`X-SLURM-USER-NAME`); default: the local user name.
    pub user: Option<String>,
    /// The environment variable holding the token (default `SLURM_JWT`).
    pub token_env: Option<String>,
    /// A file holding the token (or `SLURM_JWT=token`, as `scontrol token` prints it).
    pub token_file: Option<PathBuf>,
    /// A command that prints the token (or `SLURM_JWT=token`), run with `sh -c`.
    pub token_command: Option<String>,
}

/// The profiles file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfilesFile {
    /// The profile used when none is named.
    pub default: Option<String>,
    /// The profiles, by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// Where the profiles file is: `SLURMLET_PROFILES`, else `config.toml` in the user's
/// slurmlet configuration directory.
pub fn profiles_path() -> PathBuf {
    match std::env::var_os("SLURMLET_PROFILES").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => dirs::config_dir().unwrap_or_else(|| PathBuf::from("/etc")).join("slurmlet").join("config.toml"),
    }
}

/// Reads the profiles file at `path`; a file that does not exist has no profiles.
pub fn read(path: &Path) -> Result<ProfilesFile, ProfileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ProfilesFile::default()),
        Err(e) => return Err(ProfileError::File { path: path.into(), why: e.to_string() }),
    };
    toml::from_str(&text).map_err(|e| ProfileError::File { path: path.into(), why: e.to_string() })
}

/// Where a remote profile's API is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// `http(s)://…`: the base URL, without a trailing `/`.
    Http(String),
    /// `unix:///path`: a socket; slurmrestd authenticates its callers by their uid there.
    Unix(PathBuf),
}

/// A remote endpoint, ready to use.
#[derive(Debug, Clone)]
pub struct Remote {
    /// The profile's name.
    pub name: String,
    /// Where its API is.
    pub address: Address,
    /// The user the token is for.
    pub user: String,
    /// The profile, for its token sources.
    pub profile: Profile,
}

impl Remote {
    /// The token for this endpoint, from the profile's source (`token_command`,
    /// `token_file`, else the environment variable `token_env`, default `SLURM_JWT`).
    pub fn token(&self) -> Result<String, ProfileError> {
        let fail = |why: String| ProfileError::Token { name: self.name.clone(), why };
        let p = &self.profile;
        let raw = if let Some(cmd) = &p.token_command {
            let out = std::process::Command::new("sh")
                .args(["-c", cmd])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| fail(format!("cannot run token_command: {e}")))?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(fail(format!(
                    "token_command failed ({}): {}",
                    out.status,
                    err.lines().next().unwrap_or("")
                )));
            }
            String::from_utf8_lossy(&out.stdout).into_owned()
        } else if let Some(file) = &p.token_file {
            let path = expand_home(file);
            std::fs::read_to_string(&path)
                .map_err(|e| fail(format!("cannot read token_file {}: {e}", path.display())))?
        } else {
            let var = p.token_env.as_deref().unwrap_or("SLURM_JWT");
            std::env::var(var).map_err(|_| {
                fail(format!(
                    "no token: set {var} (on the cluster's login node, `scontrol token` prints one: \
                     export $(ssh LOGIN scontrol token)), or give the profile a token_file or token_command"
                ))
            })?
        };
        parse_token(&raw).ok_or_else(|| fail("the token source gave no token".into()))
    }
}

impl Remote {
    /// How to replace this profile's token, as its source says (printed when it expired).
    pub fn renewal(&self) -> String {
        const PRINTS: &str = "`scontrol token` on the cluster's login node prints one";
        let p = &self.profile;
        if p.token_command.is_some() {
            // The command is not repeated: it may hold a token itself.
            format!("its token_command gave an expired one: make it print a new one ({PRINTS})")
        } else if let Some(file) = &p.token_file {
            format!("write a new one into {} ({PRINTS})", expand_home(file).display())
        } else {
            format!("set {} to a new one ({PRINTS})", p.token_env.as_deref().unwrap_or("SLURM_JWT"))
        }
    }
}

/// The token in what a source gave: the value of a `SLURM_JWT=…` line, else the first
/// non-empty line.
fn parse_token(raw: &str) -> Option<String> {
    let lines = || raw.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find_map(|l| l.strip_prefix("SLURM_JWT="))
        .or_else(|| lines().next())
        .map(|t| t.trim_matches('"').to_string())
        .filter(|t| !t.is_empty())
}

/// `~/x` with the home directory.
fn expand_home(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => p.to_path_buf(),
    }
}

/// Reads a profile's URL.
fn address(name: &str, url: &str) -> Result<Address, ProfileError> {
    let bad = || ProfileError::BadUrl { name: name.into(), url: url.into() };
    if let Some(path) = url.strip_prefix("unix://") {
        return if path.starts_with('/') { Ok(Address::Unix(PathBuf::from(path))) } else { Err(bad()) };
    }
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")).ok_or_else(bad)?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(bad());
    }
    Ok(Address::Http(url.trim_end_matches('/').to_string()))
}

/// What [`install`] did with a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// The file had no profile of that name: it was appended.
    Added,
    /// The file has the same profile already.
    Same,
    /// The file has another profile of that name, which was left as it is.
    Differs,
}

/// Adds `profile` as `name` to the profiles file at `path` (made, with its directory, when
/// missing). The file's text is appended to, never rewritten, so that what a person wrote
/// there (comments, order) stays; a profile of that name already there is kept.
pub fn install(path: &Path, name: &str, profile: &Profile, comment: &str) -> Result<Installed, ProfileError> {
    let fail = |e: std::io::Error| ProfileError::File { path: path.into(), why: e.to_string() };
    match read(path)?.profiles.get(name) {
        Some(there) if there == profile => return Ok(Installed::Same),
        Some(_) => return Ok(Installed::Differs),
        None => {}
    }
    let quote = |s: &str| toml::Value::String(s.into()).to_string();
    let bare = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let mut table = format!(
        "\n# {comment}\n[profiles.{}]\nurl = {}\n",
        if bare { name.into() } else { quote(name) },
        quote(&profile.url)
    );
    let fields = [
        ("user", profile.user.clone()),
        ("token_env", profile.token_env.clone()),
        ("token_file", profile.token_file.as_ref().map(|f| f.display().to_string())),
        ("token_command", profile.token_command.clone()),
    ];
    for (key, value) in fields {
        if let Some(v) = value {
            table += &format!("{key} = {}\n", quote(&v));
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(fail)?;
    file.write_all(table.as_bytes()).map_err(fail)?;
    Ok(Installed::Added)
}

/// The profile `slurmlet --profile NAME` selected for this process, if any.
static FLAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Selects profile `name` for this process, as `slurmlet --profile NAME` does (before
/// `SLURMLET_PROFILE` and the file's `default`, after a command's `-M/--clusters`).
pub fn select_by_flag(name: &str) {
    let _ = FLAG.set(name.to_string());
}

/// The remote endpoint the commands talk to, if any: the profile `explicit` names (from
/// `-M/--clusters`), else `slurmlet --profile`'s, else `SLURMLET_PROFILE`, else the file's
/// `default`. `None`: the local daemon.
pub fn selected(explicit: Option<&str>) -> Result<Option<Remote>, ProfileError> {
    let env = std::env::var("SLURMLET_PROFILE").ok().filter(|p| !p.is_empty());
    let path = profiles_path();
    let file = read(&path)?;
    let flag = FLAG.get().cloned();
    let Some(name) = explicit.map(str::to_string).or(flag).or(env).or(file.default.clone()) else { return Ok(None) };
    remote(&file, &path, &name)
}

/// The endpoint of profile `name` in `file` (read from `path`); `None` for `local`.
pub fn remote(file: &ProfilesFile, path: &Path, name: &str) -> Result<Option<Remote>, ProfileError> {
    if name == LOCAL {
        return Ok(None);
    }
    let profile = file.profiles.get(name).ok_or_else(|| ProfileError::Unknown {
        name: name.into(),
        path: path.into(),
        known: std::iter::once(LOCAL).chain(file.profiles.keys().map(String::as_str)).collect::<Vec<_>>().join(", "),
    })?;
    Ok(Some(Remote {
        name: name.into(),
        address: address(name, &profile.url)?,
        user: profile.user.clone().unwrap_or_else(|| crate::identity::user_name(crate::identity::uid())),
        profile: profile.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profiles_file_names_endpoints_and_their_token_sources() {
        let file: ProfilesFile = toml::from_str(
            "default = \"c\"\n[profiles.c]\nurl = \"https://login:6820/\"\nuser = \"alice\"\ntoken_command = \"echo SLURM_JWT=abc\"\n\
             [profiles.s]\nurl = \"unix:///run/rest.sock\"\n",
        )
        .unwrap();
        let c = remote(&file, Path::new("f"), "c").unwrap().unwrap();
        assert_eq!(c.address, Address::Http("https://login:6820".into()));
        assert_eq!(c.user, "alice");
        assert_eq!(c.token().unwrap(), "abc");
        let s = remote(&file, Path::new("f"), "s").unwrap().unwrap();
        assert_eq!(s.address, Address::Unix("/run/rest.sock".into()));
        assert!(remote(&file, Path::new("f"), "local").unwrap().is_none());
        let e = remote(&file, Path::new("f"), "x").unwrap_err().to_string();
        assert_eq!(e, "no profile named 'x' in f (profiles there: local, c, s)");
        assert!(toml::from_str::<ProfilesFile>("[profiles.c]\nurl = \"x\"\nbogus = 1\n").is_err());
    }

    #[test]
    fn urls_and_tokens_are_read_strictly() {
        for bad in ["ftp://x", "http://", "unix://rel", "login:6820", "https:///x"] {
            assert!(address("p", bad).is_err(), "{bad}");
        }
        assert_eq!(parse_token("SLURM_JWT=eyJ.x.y\n"), Some("eyJ.x.y".into()));
        assert_eq!(parse_token("\n  eyJ.a.b  \n"), Some("eyJ.a.b".into()));
        assert_eq!(parse_token("\n\n"), None);
        let p = Profile {
            url: "http://h".into(),
            token_env: Some("SLURMLET_TEST_NO_SUCH_VAR".into()),
            ..Default::default()
        };
        let r = Remote { name: "p".into(), address: Address::Http("http://h".into()), user: "u".into(), profile: p };
        assert!(r.token().unwrap_err().to_string().contains("set SLURMLET_TEST_NO_SUCH_VAR"));
    }

    #[test]
    fn the_renewal_advice_follows_the_token_source_and_never_repeats_a_command() {
        let remote = |profile: Profile| Remote {
            name: "p".into(),
            address: Address::Http("http://h".into()),
            user: "u".into(),
            profile,
        };
        let cmd = remote(Profile { token_command: Some("echo SLURM_JWT=secret".into()), ..Default::default() });
        assert_eq!(
            cmd.renewal(),
            "its token_command gave an expired one: make it print a new one \
             (`scontrol token` on the cluster's login node prints one)"
        );
        assert!(!cmd.renewal().contains("secret"));
        let file = remote(Profile { token_file: Some("/t/jwt".into()), ..Default::default() });
        assert!(file.renewal().starts_with("write a new one into /t/jwt (`scontrol token`"), "{}", file.renewal());
        let env = remote(Profile { token_env: Some("MY_JWT".into()), ..Default::default() });
        assert!(env.renewal().starts_with("set MY_JWT to a new one"), "{}", env.renewal());
        assert!(remote(Profile::default()).renewal().starts_with("set SLURM_JWT to a new one"));
    }

    #[test]
    fn a_profile_is_appended_once_and_a_different_one_of_that_name_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmlet/config.toml");
        let mut profile = Profile {
            url: "http://ctl:6820".into(),
            token_command: Some("ssh ctl scontrol token 'lifespan=7200'".into()),
            ..Profile::default()
        };
        assert_eq!(install(&path, "lab", &profile, "the lab").unwrap(), Installed::Added);
        assert_eq!(install(&path, "lab", &profile, "the lab").unwrap(), Installed::Same);
        assert_eq!(read(&path).unwrap().profiles["lab"], profile);
        std::fs::write(&path, format!("# mine\ndefault = \"lab\"\n{}", std::fs::read_to_string(&path).unwrap()))
            .unwrap();
        profile.url = "http://other:6820".into();
        assert_eq!(install(&path, "lab", &profile, "the lab").unwrap(), Installed::Differs);
        assert_eq!(install(&path, "two words", &profile, "quoted").unwrap(), Installed::Added);
        let file = read(&path).unwrap();
        assert_eq!(
            (file.default.as_deref(), file.profiles["two words"].url.as_str()),
            (Some("lab"), "http://other:6820")
        );
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("# mine\n"));
    }
}
