//! HTTP(S) to a remote slurmrestd (or a slurmlet daemon's `listen` address), with the
//! profile's JWT in `X-SLURM-USER-NAME`/`X-SLURM-USER-TOKEN`, as slurmrestd's `rest_auth/jwt`
//! reads them.

use super::http::Response;
use std::time::Duration;
use thiserror::Error;

/// How long one request may take: a slurmrestd that answers nothing in this time is
/// reported rather than waited for.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Why a remote exchange failed.
#[derive(Debug, Error)]
pub enum RemoteError {
    /// The HTTP client could not be built.
    #[error("cannot set up HTTPS: {0}")]
    Setup(String),
    /// The request did not get an answer.
    #[error("{url}: {why}")]
    Request {
        /// The URL asked.
        url: String,
        /// Why.
        why: String,
    },
}

/// A connection pool to one remote endpoint, with its credentials.
pub struct RemoteHttp {
    base: String,
    user: String,
    token: String,
    /// When the token expires (its `exp`), if it says.
    expires: Option<i64>,
    http: reqwest::blocking::Client,
}

impl std::fmt::Debug for RemoteHttp {
    // The token stays out of every debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteHttp").field("base", &self.base).field("user", &self.user).finish_non_exhaustive()
    }
}

impl RemoteHttp {
    /// A transport to `base` (`http(s)://host[:port][/prefix]`) as `user` with `token`.
    pub fn new(base: &str, user: &str, token: String) -> Result<RemoteHttp, RemoteError> {
        // One process-wide TLS provider: ring (see Cargo.toml). A second install is refused,
        // which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::blocking::Client::builder()
            .timeout(TIMEOUT)
            .user_agent(concat!("slurmlet/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RemoteError::Setup(e.to_string()))?;
        let expires = super::jwt::expiry(&token);
        Ok(RemoteHttp { base: base.to_string(), user: user.to_string(), token, expires, http })
    }

    /// When the token expires (UNIX seconds), if it is a JWT with an `exp` claim.
    pub fn expires(&self) -> Option<i64> {
        self.expires
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends `method path` with an optional JSON body and reads the whole reply.
    pub fn request(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response, RemoteError> {
        let url = format!("{}{path}", self.base);
        let fail = |why: String| RemoteError::Request { url: url.clone(), why };
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| fail(e.to_string()))?;
        let mut req = self
            .http
            .request(method, &url)
            .header("X-SLURM-USER-NAME", &self.user)
            .header("X-SLURM-USER-TOKEN", &self.token)
            .header("Accept", "application/json");
        if let Some(body) = body {
            req = req.header("Content-Type", "application/json").body(body.to_vec());
        }
        let resp = req.send().map_err(|e| fail(describe(&e)))?;
        let status = resp.status().as_u16();
        let body = resp.bytes().map_err(|e| fail(describe(&e)))?.to_vec();
        Ok(Response { status, body })
    }
}

/// A reqwest error with its causes, which say what actually failed (refused, TLS, DNS).
pub fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
