//! The tokens of Slurm's `auth/jwt`: HS256 JSON Web Tokens whose claims are `iat`, `exp`
//! and `sun` (the user name), signed with the key in `jwt_hs256.key` of the state directory.
//!
//! `scontrol token` asks the daemon for one over the Unix socket; a REST client then sends it
//! over TCP (`X-SLURM-USER-TOKEN`, or `Authorization: Bearer`), as to slurmrestd. The key
//! never leaves the state directory.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The key file's name in the state directory (the name Slurm's documentation uses).
pub const KEY_FILE: &str = "jwt_hs256.key";

/// How many random bytes a new key has; a shorter key file is refused.
pub const KEY_LEN: usize = 32;

/// Slurm's default token lifespan (`DEFAULT_AUTH_TOKEN_LIFESPAN`), in seconds.
pub const DEFAULT_LIFESPAN: u64 = 1800;

/// The signing key could not be had.
#[derive(Debug, Error)]
pub enum KeyError {
    /// Reading or writing the key file failed.
    #[error("JWT key {path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The key file is too short to be a key.
    #[error("JWT key {path} has {len} bytes; at least {KEY_LEN} are needed (remove it and a new one is made)")]
    TooShort {
        /// The key file.
        path: PathBuf,
        /// Its length.
        len: usize,
    },
    /// Others than its owner may read the key file: anyone who can could sign tokens.
    #[error("JWT key {path} may be read by others (mode {mode:o}); `chmod 600` it")]
    Exposed {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// Why a token is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TokenError {
    /// The request carries no token.
    #[error("no token given (X-SLURM-USER-TOKEN, or Authorization: Bearer)")]
    Missing,
    /// The text is not a JWT.
    #[error("the token is not a JWT")]
    Malformed,
    /// The token is signed with an algorithm other than HS256.
    #[error("token algorithm {0:?} is not supported (HS256 only)")]
    Algorithm(String),
    /// The signature does not match the key.
    #[error("the token's signature does not match")]
    Signature,
    /// The token's `exp` has passed.
    #[error("the token expired")]
    Expired,
    /// The token names no user.
    #[error("the token names no user")]
    NoUser,
    /// `X-SLURM-USER-NAME` names another user than the token, which is not root's.
    #[error("the token of user {token} cannot act as user {header}")]
    WrongUser {
        /// The token's user.
        token: String,
        /// The user the request names.
        header: String,
    },
    /// The user has no passwd entry on this machine.
    #[error("user {0} does not exist")]
    UnknownUser(String),
}

/// The claims of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Expiry, UNIX seconds.
    pub exp: i64,
    /// Issue time, UNIX seconds.
    #[serde(default)]
    pub iat: i64,
    /// The user name ("\[s\]lurm \[u\]ser\[n\]ame").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sun: Option<String>,
    /// The user name of tokens from other issuers that Slurm also reads, when `sun` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
}

impl Claims {
    /// The user the token is for.
    pub fn user(&self) -> Option<&str> {
        self.sun.as_deref().or(self.username.as_deref()).filter(|u| !u.is_empty())
    }
}

#[derive(Serialize, Deserialize)]
struct Header {
    alg: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    typ: Option<String>,
}

/// The HS256 signing key. Its bytes are never printed.
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// A key of these bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> Key {
        Key(bytes)
    }

    /// Loads `dir/jwt_hs256.key`, creating it (mode 0600, [`KEY_LEN`] bytes of
    /// `/dev/urandom`) when it does not exist. The caller holds the state directory's lock,
    /// so no other daemon creates it at the same time.
    pub fn load_or_create(dir: &Path) -> Result<Key, KeyError> {
        let path = dir.join(KEY_FILE);
        let io = |source| KeyError::Io { path: path.clone(), source };
        match std::fs::metadata(&path) {
            Ok(meta) => {
                use std::os::unix::fs::PermissionsExt;
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    return Err(KeyError::Exposed { path, mode });
                }
                let bytes = std::fs::read(&path).map_err(io)?;
                if bytes.len() < KEY_LEN {
                    return Err(KeyError::TooShort { path, len: bytes.len() });
                }
                Ok(Key(bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = vec![0u8; KEY_LEN];
                std::fs::File::open("/dev/urandom")
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
                    .map_err(io)?;
                write_private(&path, &bytes).map_err(io)?;
                tracing::info!(path = %path.display(), "created a new JWT signing key");
                Ok(Key(bytes))
            }
            Err(e) => Err(io(e)),
        }
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// A token for `user`, issued at `now`, valid for `lifespan` seconds.
    pub fn issue(&self, user: &str, now: i64, lifespan: i64) -> String {
        let header = Header { alg: "HS256".into(), typ: Some("JWT".into()) };
        let claims = Claims { exp: now.saturating_add(lifespan), iat: now, sun: Some(user.into()), username: None };
        let mut text = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).expect("headers serialize"));
        text.push('.');
        text.push_str(&URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).expect("claims serialize")));
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        text.push('.');
        text.push_str(&signature);
        text
    }

    /// Checks `token`'s algorithm, signature (in constant time) and expiry at `now`, and
    /// returns its claims.
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let mut parts = token.trim().split('.');
        let (Some(header), Some(claims), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::Malformed);
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::Malformed);
        let header: Header = serde_json::from_slice(&decode(header)?).map_err(|_| TokenError::Malformed)?;
        if !header.alg.eq_ignore_ascii_case("HS256") {
            return Err(TokenError::Algorithm(header.alg));
        }
        let signed_len = token.trim().len() - signature.len() - 1;
        let mut mac = self.mac();
        mac.update(&token.trim().as_bytes()[..signed_len]);
        mac.verify_slice(&decode(signature)?).map_err(|_| TokenError::Signature)?;
        let claims: Claims = serde_json::from_slice(&decode(claims)?).map_err(|_| TokenError::Malformed)?;
        if claims.exp < now {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

/// Writes `bytes` to `path` with mode 0600: into a temporary file that is synced and then
/// renamed, so that a crash never leaves a partial key behind.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Who a verified token lets a request act as: the token's user, or, for a token of root,
/// the user named by `X-SLURM-USER-NAME` (as Slurm lets root and SlurmUser act for others).
pub fn acting_user<'a>(claims: &'a Claims, header_user: Option<&'a str>) -> Result<&'a str, TokenError> {
    let user = claims.user().ok_or(TokenError::NoUser)?;
    match header_user.filter(|h| !h.is_empty()) {
        None => Ok(user),
        Some(h) if h == user => Ok(user),
        Some(h) if crate::identity::user_ids(user).is_some_and(|(uid, _)| uid == 0) => Ok(h),
        Some(h) => Err(TokenError::WrongUser { token: user.into(), header: h.into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::from_bytes(b"0123456789abcdef0123456789abcdef".to_vec())
    }

    #[test]
    fn an_issued_token_verifies_and_carries_slurms_claims() {
        let token = key().issue("alice", 1000, 1800);
        let claims = key().verify(&token, 1500).unwrap();
        assert_eq!(claims, Claims { exp: 2800, iat: 1000, sun: Some("alice".into()), username: None });
        let header = URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap();
        assert_eq!(header, br#"{"alg":"HS256","typ":"JWT"}"#);
    }

    #[test]
    fn a_token_signed_with_another_key_or_altered_is_refused() {
        let token = key().issue("alice", 1000, 1800);
        let other = Key::from_bytes(vec![7; 32]);
        assert_eq!(other.verify(&token, 1000), Err(TokenError::Signature));
        // The same signature over claims naming another user.
        let mut parts: Vec<String> = token.split('.').map(String::from).collect();
        parts[1] = URL_SAFE_NO_PAD.encode(br#"{"exp":9999,"iat":1000,"sun":"root"}"#);
        assert_eq!(key().verify(&parts.join("."), 1000), Err(TokenError::Signature));
        assert_eq!(key().verify("not.a.jwt", 1000), Err(TokenError::Malformed));
        assert_eq!(key().verify("abc", 1000), Err(TokenError::Malformed));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let token = key().issue("alice", 1000, 10);
        assert!(key().verify(&token, 1010).is_ok(), "valid up to exp");
        assert_eq!(key().verify(&token, 1011), Err(TokenError::Expired));
    }

    #[test]
    fn unsigned_tokens_are_refused() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let claims = URL_SAFE_NO_PAD.encode(br#"{"exp":9999,"iat":1000,"sun":"root"}"#);
        let token = format!("{header}.{claims}.");
        assert_eq!(key().verify(&token, 1000), Err(TokenError::Algorithm("none".into())));
    }

    #[test]
    fn only_roots_token_acts_for_another_user() {
        let alice = Claims { exp: 0, iat: 0, sun: Some("alice".into()), username: None };
        assert_eq!(acting_user(&alice, None), Ok("alice"));
        assert_eq!(acting_user(&alice, Some("alice")), Ok("alice"));
        assert_eq!(
            acting_user(&alice, Some("root")),
            Err(TokenError::WrongUser { token: "alice".into(), header: "root".into() })
        );
        let root = Claims { sun: Some("root".into()), ..alice.clone() };
        assert_eq!(acting_user(&root, Some("alice")), Ok("alice"));
        let nobody = Claims { sun: None, ..alice };
        assert_eq!(acting_user(&nobody, None), Err(TokenError::NoUser));
    }

    #[test]
    fn a_new_key_is_private_and_reloads_the_same() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let first = Key::load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).unwrap().len(), KEY_LEN);
        let again = Key::load_or_create(dir.path()).unwrap();
        assert_eq!(first.0, again.0);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(Key::load_or_create(dir.path()), Err(KeyError::Exposed { .. })));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, b"short").unwrap();
        assert!(matches!(Key::load_or_create(dir.path()), Err(KeyError::TooShort { len: 5, .. })));
    }

    #[test]
    fn the_daemons_own_tokens_carry_their_expiry() {
        let key = Key::from_bytes(vec![7; 32]);
        assert_eq!(crate::api::jwt::expiry(&key.issue("alice", 1000, 600)), Some(1600));
    }
}
