//! The REST API on a TCP address (`listen` in the configuration), for clients written for
//! slurmrestd: every request carries a token of [`crate::daemon::auth`], and the user it names
//! becomes the caller the handlers see, as the peer credentials do on the Unix socket.
//!
//! Only slurmrestd's paths (`/slurm/…`, `/slurmdb/…`, and `/openapi/v3`, which clients read to
//! choose a data_parser version) are served here; slurmlet's own (`/slurmlet/…`: tokens,
//! allocations, steps, shutdown) stay on the Unix socket.

use super::admission::{Gate, MAX_PER_PEER};
use crate::api::types::{errno, ApiError, Envelope};
use crate::daemon::auth::{self, TokenError};
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::info;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, Request, Response, StatusCode};
use axum::Router;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

/// slurmrestd's text for a path it does not serve.
const NOT_FOUND: &str = "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit 'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a list of all possible slurmrestd endpoints.";

/// The token and the user name a request carries: `X-SLURM-USER-TOKEN` (else
/// `Authorization: Bearer …`) and `X-SLURM-USER-NAME`.
pub fn credentials(headers: &HeaderMap) -> Result<(&str, Option<&str>), TokenError> {
    let text = |name: &str| headers.get(name).map(|v| v.to_str().map_err(|_| TokenError::Malformed)).transpose();
    let user = text("x-slurm-user-name")?;
    let token = match text("x-slurm-user-token")? {
        Some(t) => t,
        None => match text(header::AUTHORIZATION.as_str())? {
            Some(v) => match v.split_once(' ') {
                Some((scheme, t)) if scheme.eq_ignore_ascii_case("bearer") => t.trim(),
                _ => return Err(TokenError::Malformed),
            },
            None => return Err(TokenError::Missing),
        },
    };
    if token.is_empty() {
        return Err(TokenError::Missing);
    }
    Ok((token, user))
}

/// The caller a request's token stands for, checked with `key` at `now`.
pub fn authenticate(headers: &HeaderMap, key: &auth::Key, now: i64) -> Result<(Caller, String), TokenError> {
    let (token, header_user) = credentials(headers)?;
    let claims = key.verify(token, now)?;
    let user = auth::acting_user(&claims, header_user)?;
    let (uid, gid) = crate::identity::user_ids(user).ok_or_else(|| TokenError::UnknownUser(user.into()))?;
    Ok((Caller { uid, gid }, user.to_string()))
}

/// The 401 reply to a request whose token is refused: slurmrestd's envelope, with the error
/// slurmrestd reports (`Protocol authentication error`) and why in its description.
fn unauthorized(daemon: &Daemon, why: &TokenError) -> Response<Body> {
    let meta = info::meta(&daemon.core.lock().config);
    let body = Envelope {
        meta,
        errors: vec![ApiError {
            description: format!("Authentication failure: {why}"),
            error_number: errno::AUTHENTICATION,
            error: "Protocol authentication error".into(),
            source: "rest_auth/jwt".into(),
        }],
        warnings: Vec::new(),
    };
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::WWW_AUTHENTICATE, "Bearer")
        .body(Body::from(serde_json::to_vec(&body).expect("envelopes serialize")))
        .expect("a valid response")
}

/// Whether a path is one of slurmrestd's (its two APIs, and the OpenAPI document that lists
/// their versions, which clients read to choose one); slurmlet's own stay on the Unix socket.
fn served_over_tcp(path: &str) -> bool {
    path.starts_with("/slurm/")
        || path.starts_with("/slurmdb/")
        || matches!(path.trim_end_matches('/'), "/openapi/v3" | "/openapi" | "/openapi.json")
}

fn not_found() -> Response<Body> {
    Response::builder()
        .status(StatusCode::NOT_FOUND)
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from(NOT_FOUND))
        .expect("a valid response")
}

/// Serves `router` on `listener` until `shutdown` resolves, each request as the user its
/// token names; requests without a valid token get a 401 and reach no handler. Each address
/// holds at most [`MAX_PER_PEER`] connections (a token is known only once a request is
/// read), within `gate`'s limit.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    daemon: Arc<Daemon>,
    gate: &Gate,
    shutdown: impl Future<Output = ()>,
) {
    let service_for = move |stream: &TcpStream| {
        let remote = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
        let (router, daemon) = (router.clone(), daemon.clone());
        hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
            let (router, daemon, remote) = (router.clone(), daemon.clone(), remote.clone());
            async move {
                let path = req.uri().path();
                if !served_over_tcp(path) {
                    return Ok::<_, Infallible>(not_found());
                }
                let now = crate::sys::now() as i64;
                match authenticate(req.headers(), &daemon.jwt_key, now) {
                    Ok((peer, user)) => {
                        tracing::debug!(%remote, user, uid = peer.uid, path = req.uri().path(), "REST request");
                        req.extensions_mut().insert(ConnectInfo(peer));
                        router.oneshot(req).await
                    }
                    Err(why) => {
                        tracing::warn!(%remote, method = %req.method(), path = req.uri().path(), "REST request refused: {why}");
                        Ok(unauthorized(&daemon, &why))
                    }
                }
            }
        })
    };
    super::accept::serve_with(listener, gate, gate.door(MAX_PER_PEER), service_for, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_token_comes_from_slurms_header_or_a_bearer_authorization() {
        let h = headers(&[("x-slurm-user-name", "alice"), ("x-slurm-user-token", "t1")]);
        assert_eq!(credentials(&h), Ok(("t1", Some("alice"))));
        assert_eq!(credentials(&headers(&[("authorization", "Bearer t2")])), Ok(("t2", None)));
        assert_eq!(credentials(&headers(&[("x-slurm-user-name", "alice")])), Err(TokenError::Missing));
        assert_eq!(credentials(&HeaderMap::new()), Err(TokenError::Missing));
        assert_eq!(credentials(&headers(&[("authorization", "Basic YTpi")])), Err(TokenError::Malformed));
    }

    #[test]
    fn a_valid_token_of_a_real_user_gives_that_users_ids() {
        let key = auth::Key::from_bytes(vec![1; 32]);
        let name = crate::identity::user_name(crate::identity::uid());
        let token = key.issue(&name, 100, 60);
        let (peer, user) = authenticate(&headers(&[("x-slurm-user-token", &token)]), &key, 100).unwrap();
        assert_eq!(Some((peer.uid, peer.gid)), crate::identity::user_ids(&name));
        assert_eq!((peer.uid, user.as_str()), (crate::identity::uid(), name.as_str()));
        let ghost = key.issue("no-such-user-slurmlet", 100, 60);
        assert_eq!(
            authenticate(&headers(&[("x-slurm-user-token", &ghost)]), &key, 100).unwrap_err(),
            TokenError::UnknownUser("no-such-user-slurmlet".into())
        );
    }

    #[test]
    fn slurmrestds_paths_and_its_openapi_document_are_served_over_tcp_slurmlets_own_are_not() {
        for path in ["/slurm/v0.0.43/jobs", "/slurmdb/v0.0.43/jobs", "/openapi/v3", "/openapi/v3/", "/openapi.json"] {
            assert!(served_over_tcp(path), "{path}");
        }
        for path in ["/slurmlet/v1/token", "/slurmlet/v1/config", "/", "/openapi/v2", "/slurmx/v0.0.43/jobs"] {
            assert!(!served_over_tcp(path), "{path}");
        }
    }
}
