//! A thin blocking client for the REST API: the local daemon's over its Unix socket (see
//! [`super::http`]), or a remote profile's (a slurmrestd, see [`super::profile`] and
//! [`super::remote`]).
//!
//! When no daemon answers on the per-user socket, [`Client::connect`] starts one in the
//! background (guarded by a lock file so two racing commands start only one) and waits for it.

mod reservations;
use super::client_error::ClientError;
use super::http::{Response, UnixHttp};
use super::negotiate::{Fetched, Negotiated};
use super::profile::Remote;
use super::remote::RemoteHttp;
use super::step_info::StepsResponse;
use super::types::*;
use super::version::{self, DataParser};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// What a remote profile's requests need besides; `None` for the local daemon.
    remote: Option<RemoteState>,
}

/// A remote profile's data_parser version and token expiry.
struct RemoteState {
    /// The profile's URL, which keys its cached version.
    url: String,
    /// Who the profile is on its cluster.
    user: String,
    /// The version its requests are written in.
    parser: Mutex<Negotiated>,
    /// Whether a 404 already had the version negotiated again (once per command is enough).
    renegotiated: AtomicBool,
    /// When the token expires, and how to renew it.
    expiry: Option<(i64, String)>,
}

/// The transport a remote profile names, its token read now.
fn remote_http(remote: &Remote, base: &str) -> Result<RemoteHttp, ClientError> {
    let token = remote.token().map_err(|e| ClientError::Profile(e.to_string()))?;
    RemoteHttp::new(base, &remote.user, token).map_err(|e| ClientError::Profile(e.to_string()))
}

/// Whether a remote reply refuses the token: 401 or 511 (slurmrestd's answer to a bad or
/// expired token), or an error reply carrying `SLURM_PROTOCOL_AUTHENTICATION_ERROR`.
fn auth_refused(resp: &Response) -> bool {
    #[derive(Deserialize)]
    struct Errors {
        #[serde(default)]
        errors: Vec<ApiError>,
    }
    match resp.status {
        401 | 511 => true,
        400.. => serde_json::from_slice::<Errors>(&resp.body)
            .is_ok_and(|e| e.errors.iter().any(|e| e.error_number == errno::AUTHENTICATION)),
        _ => false,
    }
}

/// Whether a 404 says the path is not served at all (slurmrestd's text for a version it does
/// not serve), rather than that a job is unknown.
fn path_not_served(resp: &Response) -> bool {
    resp.status == 404 && String::from_utf8_lossy(&resp.body).contains("Unable to find requested URL endpoint")
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

    /// A client for a remote profile's endpoint, speaking the data_parser version it offers
    /// (see [`super::version`]; cached per profile, else read from its `/openapi/v3`).
    pub fn remote(remote: &Remote) -> Result<Client, ClientError> {
        let (transport, expiry) = match &remote.address {
            super::profile::Address::Unix(socket) => (Transport::Unix(UnixHttp::new(socket, None)), None),
            super::profile::Address::Http(base) => {
                let http = remote_http(remote, base)?;
                let expiry = http.expires().map(|at| (at, remote.renewal()));
                (Transport::Remote(http), expiry)
            }
        };
        let state = RemoteState {
            url: remote.profile.url.clone(),
            user: remote.user.clone(),
            parser: Mutex::new(Negotiated { version: version::SPOKEN, from_cache: false }),
            renegotiated: AtomicBool::new(false),
            expiry,
        };
        let client = Client { transport, profile: Some(remote.name.clone()), remote: Some(state) };
        client.negotiate(false)?;
        Ok(client)
    }

    /// Chooses (again, if `refresh`) the version a remote profile's requests are written in.
    fn negotiate(&self, refresh: bool) -> Result<DataParser, ClientError> {
        let (Some(state), Some(name)) = (&self.remote, &self.profile) else { return Ok(version::SPOKEN) };
        let fetch = || {
            let resp = self.send("GET", "/openapi/v3", None)?;
            Ok(if resp.status == 200 { Fetched::Document(resp.body) } else { Fetched::NoDocument })
        };
        let target = super::negotiate::Target { name, url: &state.url };
        let cache = super::parser_cache::dir();
        let chosen = super::negotiate::negotiate(cache.as_deref(), target, crate::sys::now(), refresh, fetch)?;
        *state.parser.lock().unwrap_or_else(|e| e.into_inner()) = chosen;
        Ok(chosen.version)
    }

    /// The data_parser version this client's requests are written in.
    pub fn data_parser(&self) -> DataParser {
        match &self.remote {
            Some(state) => state.parser.lock().unwrap_or_else(|e| e.into_inner()).version,
            None => version::SPOKEN,
        }
    }

    /// For a remote profile that is spoken to in another version than slurmlet's own, the
    /// line saying so (printed by verbose commands).
    pub fn data_parser_note(&self) -> Option<String> {
        let used = self.data_parser();
        let profile = self.profile.as_deref()?;
        (used != version::SPOKEN)
            .then(|| format!("{profile}: the cluster speaks data_parser {used}, not {}; using {used}", version::SPOKEN))
    }

    /// The remote profile this client talks to; `None`: the local daemon.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Who the remote profile is on its cluster; `None`: the local daemon.
    pub fn remote_user(&self) -> Option<&str> {
        self.remote.as_ref().map(|r| r.user.as_str())
    }

    /// Connects to the local daemon (see [`crate::config::target::client_target`]); a
    /// per-user daemon is started when none answers, the system daemon never is.
    pub fn local() -> Result<Client, ClientError> {
        let target = crate::config::target::client_target();
        let socket = target.socket;
        // The connection that finds the daemon is the one the requests go over.
        let stream = match super::http::connect(&socket) {
            Ok(stream) => Some(stream),
            // Nothing is started in another user's way: they would serve it.
            Err(e @ super::http::HttpError::Impostor { .. }) => {
                return Err(ClientError::Connect { why: e.to_string(), socket })
            }
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
        Ok(Client { transport: Transport::Unix(UnixHttp::new(&socket, stream)), profile: None, remote: None })
    }

    /// A client for the daemon listening on `socket` (no auto-start).
    pub fn at(socket: &Path) -> Result<Client, ClientError> {
        Ok(Client { transport: Transport::Unix(UnixHttp::new(socket, None)), profile: None, remote: None })
    }

    /// Where this client's requests go: a socket path or a URL.
    pub fn endpoint(&self) -> String {
        match &self.transport {
            Transport::Unix(http) => http.socket().display().to_string(),
            Transport::Remote(http) => http.base().to_string(),
        }
    }

    /// Sends `method path` (written in v0.0.43) with an optional JSON body, in the version
    /// the remote profile speaks; a 404 saying a versioned path is not served has the version
    /// chosen again (once) and the request sent again if it changed.
    fn request(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response, ClientError> {
        let Some(state) = &self.remote else { return self.send(method, path, body) };
        if path.starts_with("/slurmlet/") {
            return Err(ClientError::Unsupported(format!(
                "this needs {method} {}, which is slurmlet's own, not part of slurmrestd's API: \
                 not available on cluster profile '{}'; use the cluster's own command on its login node",
                path.split('?').next().unwrap_or(path),
                self.profile.as_deref().unwrap_or_default()
            )));
        }
        let used = self.data_parser();
        let resp = self.send(method, &version::rewrite(path, used), body)?;
        if version::is_versioned(path) && path_not_served(&resp) && !state.renegotiated.swap(true, Ordering::Relaxed) {
            let now_used = self.negotiate(true)?;
            if now_used != used {
                return self.send(method, &version::rewrite(path, now_used), body);
            }
        }
        Ok(resp)
    }

    /// Sends `method path` as it is. For a remote profile, a token known to have expired is
    /// not sent ([`ClientError::Expired`]) and a refusal of it is [`ClientError::Auth`].
    fn send(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response, ClientError> {
        let profile = || self.profile.clone().unwrap_or_default();
        if let Some((at, renew)) = self.remote.as_ref().and_then(|s| s.expiry.as_ref()) {
            if crate::sys::now() as i64 >= *at {
                let at = crate::sys::format_local_time((*at).max(0) as u64);
                return Err(ClientError::Expired { profile: profile(), at, renew: renew.clone() });
            }
        }
        let resp = match &self.transport {
            Transport::Unix(http) => http.request(method, path, body)?,
            Transport::Remote(http) => http.request(method, path, body)?,
        };
        if self.profile.is_some() && auth_refused(&resp) {
            return Err(ClientError::Auth { profile: profile(), status: resp.status });
        }
        Ok(resp)
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
    pub fn cancel(&self, id: &str, signal: Option<&str>, scope: SignalScope) -> Result<CancelResponse, ClientError> {
        let mut q = Vec::new();
        if let Some(s) = signal {
            q.push(format!("signal={s}"));
        }
        if let Some(flag) = scope.flag() {
            q.push(format!("flags={flag}"));
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
        self.slurmlet_only(&format!("scontrol {action}"))?;
        self.post(&format!("/slurmlet/v1/job/{id}/{action}"), &serde_json::json!({}))
    }

    /// `GET /slurmlet/v1/job/{id}/script`: the job's batch script (`scontrol write
    /// batch_script`, which slurmrestd has no path for).
    pub fn batch_script(&self, id: &str) -> Result<BatchScriptResponse, ClientError> {
        self.slurmlet_only("scontrol write batch_script")?;
        self.get(&format!("/slurmlet/v1/job/{id}/script"))
    }

    /// `POST /slurmlet/v1/token`: a REST token for the caller (or, for root, another user).
    pub fn token(&self, req: &TokenRequest) -> Result<TokenResponse, ClientError> {
        self.post("/slurmlet/v1/token", req)
    }

    /// `GET /slurmlet/v1/config`: what `scontrol show config` prints.
    pub fn config(&self) -> Result<ConfigResponse, ClientError> {
        self.slurmlet_only("scontrol show config")?;
        self.get("/slurmlet/v1/config")
    }

    /// `GET /slurmlet/v1/steps`: the steps of the running jobs, for `what` (`squeue -s`,
    /// `scontrol show step`).
    pub fn steps(&self, what: &str) -> Result<StepsResponse, ClientError> {
        self.slurmlet_only(what)?;
        self.get("/slurmlet/v1/steps")
    }

    /// `GET /slurmlet/v1/steps?stats=true`: the steps of the running jobs with what their
    /// processes use now (`sstat`).
    pub fn step_stats(&self) -> Result<StepsResponse, ClientError> {
        self.slurmlet_only("sstat")?;
        self.get("/slurmlet/v1/steps?stats=true")
    }

    /// `GET /slurmlet/v1/gpus`: the node's GPUs and who holds them (`slurmlet gpus`).
    pub fn gpus(&self) -> Result<crate::api::gpus::GpusResponse, ClientError> {
        self.slurmlet_only("slurmlet gpus")?;
        self.get("/slurmlet/v1/gpus")
    }

    /// `POST /slurmlet/v1/gpus/{which}/resume`: failed GPUs put back in service (`which`: a
    /// GPU's index, or `all`).
    pub fn resume_gpus(&self, which: &str) -> Result<crate::api::gpus::GpuResumeResponse, ClientError> {
        self.slurmlet_only("slurmlet gpus --resume")?;
        self.post(&format!("/slurmlet/v1/gpus/{which}/resume"), &serde_json::json!({}))
    }

    /// `GET /slurmlet/v1/gpus/samples?since=T`: the node's GPU samples since `since`.
    pub fn gpu_samples(&self, since: Option<i64>) -> Result<crate::api::activity::GpuSamplesResponse, ClientError> {
        self.slurmlet_only("slurmlet board")?;
        match since {
            Some(t) => self.get(&format!("/slurmlet/v1/gpus/samples?since={t}")),
            None => self.get("/slurmlet/v1/gpus/samples"),
        }
    }

    /// `GET /slurmlet/v1/job/{job_id}/gpu_samples`: one job's GPU use over its life.
    pub fn job_gpu_samples(&self, id: u32) -> Result<crate::api::activity::JobGpuSamplesResponse, ClientError> {
        self.slurmlet_only("slurmlet board")?;
        self.get(&format!("/slurmlet/v1/job/{id}/gpu_samples"))
    }

    /// `GET /slurmlet/v1/queue?pending=N`: the running jobs and the first `pending` pending
    /// ones in scheduling order.
    pub fn queue(&self, pending: u32) -> Result<crate::api::activity::QueueResponse, ClientError> {
        self.slurmlet_only("slurmlet board")?;
        self.get(&format!("/slurmlet/v1/queue?pending={pending}"))
    }

    /// `GET /slurmlet/v1/usage?days=N`: each user's use over the last `days` days.
    pub fn usage(&self, days: u32) -> Result<crate::api::activity::UsageResponse, ClientError> {
        self.slurmlet_only("slurmlet board")?;
        self.get(&format!("/slurmlet/v1/usage?days={days}"))
    }

    /// `GET /slurmlet/v1/changes?after=G&wait=S`: waits up to `wait` seconds for the change
    /// counter to move past `after`. Any reply but 200 is an error: the counter has no
    /// envelope, and an older daemon's 404 would otherwise read as generation 0.
    pub fn changes(&self, after: u64, wait: u32) -> Result<crate::api::activity::ChangesResponse, ClientError> {
        self.slurmlet_only("slurmlet board")?;
        let resp = self.request("GET", &format!("/slurmlet/v1/changes?after={after}&wait={wait}"), None)?;
        if resp.status != 200 {
            return Err(ClientError::Decode {
                status: resp.status,
                body: String::from_utf8_lossy(&resp.body[..resp.body.len().min(300)]).into_owned(),
            });
        }
        Self::decode(&resp)
    }

    /// For a remote profile, the refusal of `what` (a command line: `scontrol show config`),
    /// which slurmrestd has no endpoint for.
    pub(crate) fn slurmlet_only(&self, what: &str) -> Result<(), ClientError> {
        let command = what.split(' ').next().unwrap_or(what);
        // slurmlet's own commands have no counterpart on a Slurm cluster.
        let instead = match command {
            "slurmlet" => "it speaks only to a slurmlet daemon".to_string(),
            _ => format!("use the cluster's own {command} on its login node"),
        };
        match &self.profile {
            Some(profile) => Err(ClientError::Unsupported(format!(
                "{what}: slurmrestd's data_parser {} has no endpoint for it (profile '{profile}'); {instead}",
                self.data_parser()
            ))),
            None => Ok(()),
        }
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
    crate::sys::create_private_dir(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let lock_path = dir.join("start.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| fail(format!("cannot open {}: {e}", lock_path.display())))?;
    let _guard = crate::lock::FileLock::acquire(&lock).map_err(|e| fail(e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::profile::{Address, Profile, Remote};

    fn reply(status: u16, body: &str) -> Response {
        Response { status, body: body.as_bytes().to_vec() }
    }

    /// The shape of slurmrestd 26.05's reply to an expired token (HTTP 511).
    const EXPIRED: &str = r#"{"jobs":[],"meta":{"plugin":{"data_parser":"data_parser/v0.0.43"}},
        "errors":[{"description":"Unable to query jobs","error_number":1007,
        "error":"Protocol authentication error","source":"slurm_load_jobs()"}],"warnings":[]}"#;

    #[test]
    fn a_refused_or_expired_token_is_an_auth_error_whatever_the_status() {
        assert!(auth_refused(&reply(511, EXPIRED)));
        assert!(auth_refused(&reply(401, "Authentication failure")));
        assert!(auth_refused(&reply(502, EXPIRED)), "the error number says it");
        assert!(!auth_refused(&reply(200, EXPIRED)), "a reply that succeeded is the caller's to read");
        let db_down = r#"{"errors":[{"error_number":7000,"error":"Unable to connect to database"}]}"#;
        assert!(!auth_refused(&reply(502, db_down)));
        assert!(!auth_refused(&reply(404, "Unable to find requested URL endpoint.")));
    }

    #[test]
    fn only_a_404_naming_no_endpoint_says_a_path_is_not_served() {
        let not_served = "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint";
        assert!(path_not_served(&reply(404, not_served)));
        let no_job = r#"{"jobs":[],"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}"#;
        assert!(!path_not_served(&reply(404, no_job)));
        assert!(!path_not_served(&reply(200, not_served)));
    }

    #[test]
    fn an_expired_token_is_never_sent() {
        use base64::Engine;
        let part = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!("{}.{}.{}", part(r#"{"alg":"HS256"}"#), part(r#"{"exp":1000000000,"sun":"u"}"#), part("s"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("jwt");
        std::fs::write(&file, format!("SLURM_JWT={token}\n")).unwrap();
        // Nothing listens on port 9 here: had a request been made, it would fail otherwise.
        let profile =
            Profile { url: "http://127.0.0.1:9".into(), token_file: Some(file.clone()), ..Default::default() };
        let remote = Remote {
            name: "old".into(),
            address: Address::Http("http://127.0.0.1:9".into()),
            user: "u".into(),
            profile,
        };
        // Refused when the client is made (its version is negotiated then), or else at its
        // first request, had a cached version spared it that.
        let e = Client::remote(&remote).and_then(|c| c.ping()).expect_err("refused");
        assert!(matches!(e, ClientError::Expired { .. }), "{e}");
        let text = e.to_string();
        assert_eq!(
            text,
            format!(
                "the token of profile 'old' expired at {}; write a new one into {} \
                 (`scontrol token` on the cluster's login node prints one)",
                crate::sys::format_local_time(1_000_000_000),
                file.display()
            )
        );
        assert!(!text.contains(&token) && !text.contains(token.split('.').nth(1).unwrap()));
    }
}
