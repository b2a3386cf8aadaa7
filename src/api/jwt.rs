//! What a client may read of a Slurm token without its key: the `exp` claim of a JSON Web
//! Token (`HEADER.PAYLOAD.SIGNATURE`, each base64url), so that an expired token is reported
//! before it is sent. The signature is the server's to check, not the client's.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// When `token` expires (UNIX seconds), read from its payload's `exp`; `None` when it is not
/// a JWT or carries no `exp`, which the server then judges.
pub fn expiry(token: &str) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Claims {
        exp: Option<serde_json::Number>,
    }
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let exp = serde_json::from_slice::<Claims>(&bytes).ok()?.exp?;
    exp.as_i64().or_else(|| exp.as_f64().map(|f| f as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(payload: &str) -> String {
        let part = |s: &str| URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.{}", part(r#"{"alg":"HS256","typ":"JWT"}"#), part(payload), part("not checked"))
    }

    #[test]
    fn the_expiry_is_read_from_the_payload() {
        assert_eq!(expiry(&jwt(r#"{"exp":1795314652,"iat":1795312852,"sun":"alice"}"#)), Some(1_795_314_652));
        assert_eq!(expiry(&jwt(r#"{"exp":1795314652.0}"#)), Some(1_795_314_652));
        // Padded base64 as some issuers write it.
        let padded = format!("h.{}==.s", URL_SAFE_NO_PAD.encode(r#"{"exp":12}"#));
        assert_eq!(expiry(&padded), Some(12));
    }

    #[test]
    fn what_is_not_a_jwt_with_an_expiry_has_none() {
        assert_eq!(expiry(&jwt(r#"{"sun":"alice"}"#)), None);
        assert_eq!(expiry(&jwt(r#"{"exp":"soon"}"#)), None);
        assert_eq!(expiry(&jwt("not json")), None);
        for token in ["not.a.token", "abc", "a.b", "", "a.b.c.d", "h.!!!.s"] {
            assert_eq!(expiry(token), None, "{token}");
        }
    }
}
