//! Who may use the board: whoever has its access token, as `jupyter lab` does it. The URL
//! the board prints carries the token (`/?token=…`); that first visit sets it as a cookie
//! (`HttpOnly`, `SameSite=Strict`) and every later request must carry the cookie, or is
//! refused with 401. An action (a POST) must also carry the page's second token, the
//! anti-forgery one, in the [`CSRF_HEADER`] header, or is refused with 403: a page of another
//! site cannot read it, so cannot send it. Tokens are compared in constant time.

use std::io::Read;
use thiserror::Error;

/// The cookie that carries the access token.
pub const COOKIE: &str = "slurmlet_board";

/// The header an action carries the anti-forgery token in.
pub const CSRF_HEADER: &str = "x-board-csrf";

/// Why the tokens could not be made.
#[derive(Debug, Error)]
#[error("reading /dev/urandom: {0}")]
pub struct TokenError(#[from] std::io::Error);

/// The board's two secrets, made once when it starts.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The access token: in the printed URL, then in the cookie.
    pub access: String,
    /// The anti-forgery token: in the page, then in each action's header.
    pub csrf: String,
}

impl Tokens {
    /// Two fresh tokens of 32 random bytes each, as hex.
    pub fn new() -> Result<Tokens, TokenError> {
        Ok(Tokens { access: random_hex()?, csrf: random_hex()? })
    }
}

/// 32 bytes of `/dev/urandom`, as 64 hex digits.
fn random_hex() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `given` equals `secret`, in a time that does not depend on where they differ.
pub fn same(given: &str, secret: &str) -> bool {
    let (a, b) = (given.as_bytes(), secret.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The value of cookie `name` in a `Cookie` header (`a=1; b=2`).
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').map(str::trim).find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

/// The value of `token` in a query string (`token=…&x=y`).
pub fn query_token(query: &str) -> Option<&str> {
    query.split('&').find_map(|pair| pair.strip_prefix("token="))
}

/// The `Set-Cookie` value that keeps the access token for the board's pages.
pub fn set_cookie(access: &str) -> String {
    format!("{COOKIE}={access}; HttpOnly; SameSite=Strict; Path=/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let t = Tokens::new().unwrap();
        assert_eq!(t.access.len(), 64);
        assert!(t.access.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(t.access, t.csrf);
    }

    #[test]
    fn comparison_needs_the_whole_token() {
        assert!(same("abcd", "abcd"));
        assert!(!same("abce", "abcd"));
        assert!(!same("abc", "abcd"));
        assert!(!same("", "abcd"));
    }

    #[test]
    fn cookie_and_query_are_read_by_name() {
        assert_eq!(cookie("a=1; slurmlet_board=xyz; b=2", COOKIE), Some("xyz"));
        assert_eq!(cookie("slurmlet_boardx=1", COOKIE), None);
        assert_eq!(query_token("x=1&token=abc"), Some("abc"));
        assert_eq!(query_token("tokens=abc"), None);
    }
}
