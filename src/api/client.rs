//! A thin blocking client for the REST API: the local daemon's over its Unix socket (see
//! [`super::http`]), or a remote profile's (a slurmrestd, see [`super::profile`] and
//! [`super::remote`]).
//!
//! When no daemon answers on the per-user socket, [`Client::connect`] starts one in the
//! background (guarded by a lock file so two racing commands start only one) and waits for it.

use super::http::{HttpError, Response, UnixHttp};
use super::remote::RemoteHttp;
use super::types::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a request did not produce a reply.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No daemon answers and none could be started.
    #[error("Unable to contact slurm controller (connect failure): {socket}: {why}")]
    Connect {
        /// The socket tried.
        socket: PathBuf,
        /// Why.
        why: String,
    },
    /// The HTTP exchange failed.
    #[error("request to the daemon failed: {0}")]
    Http(#[from] HttpError),
    /// The reply is not what the API describes.
    #[error("unexpected reply from the daemon ({status}): {body}")]
    Decode {
        /// HTTP status.
        status: u16,
        /// Start of the body.
        body: String,
    },
    /// The profile asked for cannot be used.
    #[error("{0}")]
    Profile(String),
    /// A remote endpoint did not answer.
    #[error("request to the cluster failed: {0}")]
    Remote(#[from] super::remote::RemoteError),
    /// A remote endpoint refused the profile's token.
    #[error(
        "the cluster refused the token of profile '{profile}' (HTTP {status}); it may have expired: get a new one (scontrol token on the cluster) and try again"
    )]
    Auth {
        /// The profile.
        profile: String,
        /// 401 or 511.
        status: u16,
    },
    /// What the endpoint cannot do (slurmrestd has no step launch).
    #[error("{0}")]
    Unsupported(String),
}

/// How requests travel.
enum Transport {
    /// The local daemon's socket, or a remote profile's `unix://` one.
    Unix(UnixHttp),
    /// A remote profile's `http(s)://` endpoint.
    Remote(RemoteHttp),
}

/// A connection to one daemon, or to a remote profile's endpoint.
pub struct Client {
    transport: Transport,
    /// The remote profile's name; `None` for the local daemon.
    profile: Option<String>,
    /// Who the remote profile is on its cluster.
    remote_user: Option<String>,
}

impl Client {
    /// Connects to the selected profile's endpoint (see [`super::profile::selected`]), else
    /// to the local daemon.
    pub fn connect() -> Result<Client, ClientError> {
        Client::connect_to(None)
    }

    /// Connects to profile `explicit` (from `-M/--clusters`), or as [`Client::connect`].
    pub fn connect_to(explicit: Option<&str>) -> Result<Client, ClientError> {
        match super::profile::selected(explicit).map_err(|e| ClientError::Profile(e.to_string()))? {
            Some(remote) => Client::remote(&remote),
            None => Client::local(),
        }
    }

    /// A client for a remote profile's endpoint.
    pub fn remote(remote: &super::profile::Remote) -> Result<Client, ClientError> {
        let transport = match &remote.address {
            super::profile::Address::Unix(socket) => Transport::Unix(UnixHttp::new(socket, None)),
            super::profile::Address::Http(base) => Transport::Remote(RemoteHttp::for_profile(remote, base)?),
        };
        Ok(Client { transport, profile: Some(remote.name.clone()), remote_user: Some(remote.user.clone()) })
    }

    /// The remote profile this client talks to; `None`: the local daemon.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Who the remote profile is on its cluster; `None`: the local daemon.
    pub fn remote_user(&self) -> Option<&str> {
        self.remote_user.as_deref()
    }

    /// Connects to the local daemon (see [`crate::paths::client_target`]); a per-user daemon
    /// is started when none answers, the system daemon never is.
    pub fn local() -> Result<Client, ClientError> {
        let target = crate::paths::client_target();
        let socket = target.socket;
        // The connection that finds the daemon is the one the requests go over.
        let stream = match std::os::unix::net::UnixStream::connect(&socket) {
            Ok(stream) => Some(stream),
            Err(e) if target.system => {
                return Err(ClientError::Connect {
                    why: format!(
                        "the system daemon does not answer ({e}; configured by {}); is slurmletd running (systemctl status slurmlet)?",
                        target.config.display()
                    ),
                    socket,
                })
            }
            Err(_) => {
                autostart(&socket)?;
                None
            }
        };
        Ok(Client { transport: Transport::Unix(UnixHttp::new(&socket, stream)), profile: None, remote_user: None })
    }

    /// A client for the daemon listening on `socket` (no auto-start).
    pub fn at(socket: &Path) -> Result<Client, ClientError> {
        Ok(Client { transport: Transport::Unix(UnixHttp::new(socket, None)), profile: None, remote_user: None })
    }

    /// Where this client's requests go: a socket path or a URL.
    pub fn endpoint(&self) -> String {
        match &self.transport {
            Transport::Unix(http) => http.socket().display().to_string(),
            Transport::Remote(http) => http.base().to_string(),
        }
    }

    /// Sends `method path` with an optional JSON body; a remote endpoint's refusal of the
    /// token is [`ClientError::Auth`].
    fn request(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response, ClientError> {
        if let (Some(profile), true) = (&self.profile, path.starts_with("/slurmlet/")) {
            return Err(ClientError::Unsupported(format!(
                "this needs {method} {}, which is slurmlet's own, not part of slurmrestd's API: \
                 not available on cluster profile '{profile}'; use the cluster's own command on its login node",
                path.split('?').next().unwrap_or(path)
            )));
        }
        let resp = match &self.transport {
            Transport::Unix(http) => http.request(method, path, body)?,
            Transport::Remote(http) => http.request(method, path, body)?,
        };
        match (&self.profile, resp.status) {
            (Some(profile), status @ (401 | 511)) => Err(ClientError::Auth { profile: profile.clone(), status }),
            _ => Ok(resp),
        }
    }

    /// Decodes a reply's JSON body as `T`, which may borrow from it.
    pub fn decode<'a, T: Deserialize<'a>>(resp: &'a Response) -> Result<T, ClientError> {
        serde_json::from_slice(&resp.body).map_err(|_| ClientError::Decode {
            status: resp.status,
            body: String::from_utf8_lossy(&resp.body[..resp.body.len().min(300)]).into_owned(),
        })
    }

    /// `GET path` decoded as `T`.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        Self::decode(&self.request("GET", path, None)?)
    }

    /// `GET path`; the reply undecoded.
    pub fn get_bytes(&self, path: &str) -> Result<Response, ClientError> {
        self.request("GET", path, None)
    }

    /// `GET path`: the reply's HTTP status and its body decoded as `T`.
    pub fn get_with_status<T: DeserializeOwned>(&self, path: &str) -> Result<(u16, T), ClientError> {
        let resp = self.request("GET", path, None)?;
        Ok((resp.status, Self::decode(&resp)?))
    }

    /// `POST path` with a JSON body, decoded as `T`.
    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T, ClientError> {
        Self::decode(&self.post_for_bytes(path, body)?)
    }

    /// `POST path` with a JSON body; the reply undecoded, for a caller that decodes it into
    /// values borrowed from its bytes (see [`Client::decode`]).
    pub fn post_for_bytes<B: Serialize>(&self, path: &str, body: &B) -> Result<Response, ClientError> {
        let body = serde_json::to_vec(body).expect("request bodies serialize");
        self.request("POST", path, Some(&body))
    }

    /// `POST path` with a JSON body, switched to a stream (see [`UnixHttp::upgrade`]).
    pub fn open_stream<B: Serialize>(&self, path: &str, body: &B) -> Result<super::http::Upgrade, ClientError> {
        let body = serde_json::to_vec(body).expect("request bodies serialize");
        match &self.transport {
            Transport::Unix(http) if self.profile.is_none() => Ok(http.upgrade(path, &body)?),
            _ => Err(ClientError::Unsupported(format!(
                "a cluster's REST API cannot run steps or interactive allocations (profile '{}'); \
                 use the cluster's own srun or salloc on its login node",
                self.profile.as_deref().unwrap_or_default()
            ))),
        }
    }

    /// `DELETE path` decoded as `T`.
    pub fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        Self::decode(&self.request("DELETE", path, None)?)
    }

    /// `GET /slurm/v0.0.43/ping`.
    pub fn ping(&self) -> Result<PingResponse, ClientError> {
        self.get(&format!("/slurm/{DATA_PARSER}/ping"))
    }

    /// `POST /slurm/v0.0.43/job/submit`.
    pub fn submit(&self, req: &JobSubmitReq) -> Result<JobSubmitResponse, ClientError> {
        self.post(&format!("/slurm/{DATA_PARSER}/job/submit"), req)
    }

    /// `GET /slurm/v0.0.43/jobs` (`all=true` adds finished jobs of any age still in the store).
    pub fn jobs(&self) -> Result<JobsResponse, ClientError> {
        self.get(&format!("/slurm/{DATA_PARSER}/jobs"))
    }

    /// `GET /slurm/v0.0.43/job/{id}`.
    pub fn job(&self, id: &str) -> Result<JobsResponse, ClientError> {
        self.get(&format!("/slurm/{DATA_PARSER}/job/{id}"))
    }

    /// `DELETE /slurm/v0.0.43/job/{id}?signal=…&flags=…`.
    pub fn cancel(&self, id: &str, signal: Option<&str>, batch_only: bool) -> Result<CancelResponse, ClientError> {
        let mut q = Vec::new();
        if let Some(s) = signal {
            q.push(format!("signal={s}"));
        }
        if batch_only {
            q.push("flags=BATCH_JOB".to_string());
        }
        let query = if q.is_empty() { String::new() } else { format!("?{}", q.join("&")) };
        self.delete(&format!("/slurm/{DATA_PARSER}/job/{id}{query}"))
    }

    /// `POST /slurm/v0.0.43/job/{id}`: updates a job with the `job_desc_msg` fields of `body`.
    pub fn update_job(&self, id: &str, body: &serde_json::Value) -> Result<JobPostResponse, ClientError> {
        self.post(&format!("/slurm/{DATA_PARSER}/job/{id}"), body)
    }

    /// `POST /slurmlet/v1/job/{id}/{action}`: `action` is `requeue`, `suspend` or `resume`
    /// (scontrol's, which slurmrestd has no path for).
    pub fn job_action(&self, id: &str, action: &str) -> Result<JobPostResponse, ClientError> {
        self.post(&format!("/slurmlet/v1/job/{id}/{action}"), &serde_json::json!({}))
    }

    /// `POST /slurmlet/v1/token`: a REST token for the caller (or, for root, another user).
    pub fn token(&self, req: &TokenRequest) -> Result<TokenResponse, ClientError> {
        self.post("/slurmlet/v1/token", req)
    }

    /// `GET /slurmlet/v1/config`: what `scontrol show config` prints.
    pub fn config(&self) -> Result<ConfigResponse, ClientError> {
        self.get("/slurmlet/v1/config")
    }

    /// `GET /slurm/v0.0.43/nodes`.
    pub fn nodes(&self) -> Result<NodesResponse, ClientError> {
        self.get(&format!("/slurm/{DATA_PARSER}/nodes"))
    }

    /// `GET /slurm/v0.0.43/partitions`.
    pub fn partitions(&self) -> Result<PartitionsResponse, ClientError> {
        self.get(&format!("/slurm/{DATA_PARSER}/partitions"))
    }
}

/// Starts a background daemon for `socket` unless another command is already doing so,
/// then waits until it accepts connections.
fn autostart(socket: &Path) -> Result<(), ClientError> {
    let fail = |why: String| ClientError::Connect { socket: socket.to_path_buf(), why };
    let dir = socket.parent().unwrap_or(Path::new("/tmp"));
    create_private_dir(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let lock_path = dir.join("start.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| fail(format!("cannot open {}: {e}", lock_path.display())))?;
    let _guard = crate::daemon::lock::FileLock::acquire(&lock).map_err(|e| fail(e.to_string()))?;
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Ok(());
    }
    let exe = std::env::current_exe().map_err(|e| fail(format!("cannot find own executable: {e}")))?;
    let log = dir.join("slurmletd.log");
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| fail(format!("cannot open {}: {e}", log.display())))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg0("slurmletd")
        .arg("--socket")
        .arg(socket)
        .stdin(std::process::Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| fail(e.to_string()))?)
        .stderr(log_file);
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe; the daemon leaves the caller's session so that it
    // survives the terminal closing.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| fail(format!("cannot start the daemon: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            // The daemon's last error, which may span several lines (TOML errors do).
            let last = text.rfind("slurmletd: error: ").map(|i| text[i + 18..].trim_end()).unwrap_or("");
            return Err(fail(format!("the daemon could not start ({status}): {last}\n(log: {})", log.display())));
        }
        if Instant::now() > deadline {
            return Err(fail(format!("the daemon did not answer within 15 s; see {}", log.display())));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Creates `dir` (and parents) with mode 0700 if it does not exist.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
