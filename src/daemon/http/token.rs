//! `POST /slurmlet/v1/token`: a REST token for the caller (`scontrol token`), on the Unix
//! socket only, where the peer credentials say who asks. Root may ask for any user's token;
//! others only for their own, as Slurm's controller decides.

use crate::api::types::{errno, ApiError, TokenRequest, TokenResponse, MAX_TOKEN_LIFESPAN};
use crate::daemon::auth::DEFAULT_LIFESPAN;
use crate::daemon::model::caller::Caller;
use crate::daemon::runtime::Daemon;
use crate::daemon::views::info;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// Slurm's text for `ESLURM_INVALID_TIME_LIMIT`.
const TIME_LIMIT_TEXT: &str = "Requested time limit is invalid (missing or exceeds some limit)";

fn refused(code: i32, error: &str, description: String) -> ApiError {
    ApiError { description, error_number: code, error: error.into(), source: "slurm_fetch_token()".into() }
}

/// The user a token is for: `requested`, or the caller's own name.
fn token_user(caller: Caller, requested: Option<String>) -> Result<String, ApiError> {
    let own = crate::identity::user_name_of(caller.uid);
    let user = match (requested, own) {
        (Some(u), Some(me)) if u == me => u,
        // Only root mints tokens for others: an operator acts on jobs, not as their owners.
        (Some(u), _) if caller.uid == 0 => u,
        (Some(u), _) => {
            tracing::warn!(uid = caller.uid, user = u, "token for another user denied");
            return Err(refused(
                errno::USER_ID_MISSING,
                "Invalid user id",
                format!("only root may ask for a token of user {u}"),
            ));
        }
        (None, Some(me)) => me,
        (None, None) => {
            return Err(refused(
                errno::USER_ID_MISSING,
                "Invalid user id",
                format!("uid {} has no user name", caller.uid),
            ))
        }
    };
    if crate::identity::user_ids(&user).is_none() {
        return Err(refused(errno::USER_ID_MISSING, "Invalid user id", format!("user {user} does not exist")));
    }
    Ok(user)
}

/// The handler.
pub async fn token(
    State(d): State<Arc<Daemon>>,
    ConnectInfo(caller): ConnectInfo<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let meta = info::meta(&d.core.lock().config);
    let fail = |status: StatusCode, error: ApiError| {
        (status, Json(TokenResponse { meta: meta.clone(), errors: vec![error], ..Default::default() })).into_response()
    };
    let req: TokenRequest = if body.is_empty() {
        TokenRequest::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(r) => r,
            Err(e) => {
                let error =
                    refused(errno::BAD_REQUEST, "Unable to parse query", format!("Failure during parsing: {e}"));
                return fail(StatusCode::BAD_REQUEST, error);
            }
        }
    };
    let user = match token_user(caller, req.username) {
        Ok(u) => u,
        Err(e) => return fail(StatusCode::FORBIDDEN, e),
    };
    let lifespan = req.lifespan.unwrap_or(DEFAULT_LIFESPAN);
    if lifespan == 0 || lifespan > MAX_TOKEN_LIFESPAN {
        let why = format!("requested lifespan {lifespan}s not supported");
        return fail(StatusCode::UNPROCESSABLE_ENTITY, refused(errno::INVALID_TIME_LIMIT, TIME_LIMIT_TEXT, why));
    }
    let token = d.jwt_key.issue(&user, crate::sys::now() as i64, lifespan as i64);
    tracing::info!(uid = caller.uid, "created token for {user} for {lifespan} seconds");
    (StatusCode::OK, Json(TokenResponse { token, meta, ..Default::default() })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_gets_its_own_token_and_root_anyones() {
        let me = Caller { uid: crate::identity::uid(), gid: crate::identity::gid() };
        let name = crate::identity::user_name(me.uid);
        assert_eq!(token_user(me, None), Ok(name.clone()));
        assert_eq!(token_user(me, Some(name.clone())), Ok(name));
        let root = Caller { uid: 0, gid: 0 };
        assert_eq!(token_user(root, Some("root".into())), Ok("root".into()));
        assert_eq!(token_user(root, Some("no-such-user-slurmlet".into())).unwrap_err().error_number, 2010);
        // Someone who is not root, asking for root's token.
        let user = Caller { uid: 4_000_000, gid: 4_000_000 };
        let denied = token_user(user, Some("root".into())).unwrap_err();
        assert_eq!((denied.error_number, denied.error.as_str()), (2010, "Invalid user id"));
    }
}
