//! Who may use the board: whoever has its access token, as `jupyter lab` does it. The URL the
//! board prints carries the token in its fragment (`/#token=…`), which the browser never
//! sends to any server; the page keeps it in its `sessionStorage`, which only pages of the
//! board's own origin (scheme, address *and port*) can read, and sends it with each call in
//! `Authorization: Bearer …`. No cookie is ever set: a browser sends a cookie of
//! `127.0.0.1` to every port of it (RFC 6265 §8.5), so another user's server on another
//! port would receive it. A page of another site cannot send the header, so the token is
//! also what stops forged actions; the `Origin` check of [`super::hosts`] backs it.
//!
//! The event stream cannot carry a header (`EventSource` sets none): it is opened with a
//! one-time [`Tickets`] ticket that the page fetches with the token just before.

use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a secret could not be made.
#[derive(Debug, Error)]
#[error("reading /dev/urandom: {0}")]
pub struct TokenError(#[from] std::io::Error);

/// The board's access token, made once when it starts.
#[derive(Debug, Clone)]
pub struct AccessToken(String);

impl AccessToken {
    /// A fresh token of 32 random bytes, as hex.
    pub fn new() -> Result<AccessToken, TokenError> {
        Ok(AccessToken(random_hex()?))
    }

    /// The token, for the printed URL.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether an `Authorization` header's value carries this token (`Bearer TOKEN`).
    pub fn admits(&self, authorization: &str) -> bool {
        bearer(authorization).is_some_and(|given| same(given, &self.0))
    }
}

/// How long a ticket may wait to be used: the page uses it at once.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(10);

/// At most this many tickets wait at once; a new one beyond them pushes out the oldest.
const TICKETS_WAITING: usize = 32;

/// The one-time tickets that open the event stream (`GET /events?ticket=…`): each is given
/// to a caller with the access token, admits one request, and expires after
/// [`TICKET_LIFETIME`], so that a ticket seen later (in a log, a history) opens nothing.
#[derive(Debug)]
pub struct Tickets {
    /// How long each waits.
    lifetime: Duration,
    /// Those issued and not used, with when each expires, the oldest first.
    waiting: Mutex<Vec<(String, Instant)>>,
}

impl Default for Tickets {
    fn default() -> Tickets {
        Tickets::lasting(TICKET_LIFETIME)
    }
}

impl Tickets {
    /// Tickets that expire `lifetime` after they are issued.
    pub fn lasting(lifetime: Duration) -> Tickets {
        Tickets { lifetime, waiting: Mutex::new(Vec::new()) }
    }

    /// A new ticket.
    pub fn issue(&self) -> Result<String, TokenError> {
        let ticket = random_hex()?;
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        waiting.retain(|(_, expires)| *expires > now);
        if waiting.len() >= TICKETS_WAITING {
            waiting.remove(0);
        }
        waiting.push((ticket.clone(), now + self.lifetime));
        Ok(ticket)
    }

    /// Whether `given` is a ticket issued and neither used nor expired; it is used up.
    pub fn redeem(&self, given: &str) -> bool {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        waiting.retain(|(_, expires)| *expires > now);
        match waiting.iter().position(|(ticket, _)| same(given, ticket)) {
            Some(at) => {
                waiting.remove(at);
                true
            }
            None => false,
        }
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

/// The credentials of an `Authorization: Bearer …` header's value.
fn bearer(header: &str) -> Option<&str> {
    let (scheme, credentials) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| credentials.trim())
}

/// The value of `name` in a query string (`ticket=…&x=y`).
pub fn query_value<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let (a, b) = (AccessToken::new().unwrap(), AccessToken::new().unwrap());
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
    }

    #[test]
    fn comparison_needs_the_whole_token() {
        assert!(same("abcd", "abcd"));
        assert!(!same("abce", "abcd"));
        assert!(!same("abc", "abcd"));
        assert!(!same("", "abcd"));
    }

    #[test]
    fn only_a_bearer_header_with_the_token_admits() {
        let token = AccessToken::new().unwrap();
        assert!(token.admits(&format!("Bearer {}", token.as_str())));
        assert!(token.admits(&format!("bearer  {}", token.as_str())));
        assert!(!token.admits(token.as_str()));
        assert!(!token.admits(&format!("Basic {}", token.as_str())));
        assert!(!token.admits(&format!("Bearer {}", &token.as_str()[1..])));
        assert!(!token.admits("Bearer "));
    }

    #[test]
    fn a_ticket_admits_once() {
        let tickets = Tickets::default();
        let ticket = tickets.issue().unwrap();
        assert!(!tickets.redeem("0123"));
        assert!(tickets.redeem(&ticket));
        assert!(!tickets.redeem(&ticket), "a ticket used twice");
    }

    #[test]
    fn an_expired_ticket_admits_nothing() {
        let tickets = Tickets::lasting(Duration::ZERO);
        let ticket = tickets.issue().unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(!tickets.redeem(&ticket));
    }

    #[test]
    fn only_so_many_tickets_wait() {
        let tickets = Tickets::default();
        let first = tickets.issue().unwrap();
        let rest: Vec<String> = (0..TICKETS_WAITING).map(|_| tickets.issue().unwrap()).collect();
        assert!(!tickets.redeem(&first), "the oldest ticket was pushed out");
        assert!(rest.iter().all(|t| tickets.redeem(t)));
    }

    #[test]
    fn query_values_are_read_by_name() {
        assert_eq!(query_value("x=1&ticket=abc", "ticket"), Some("abc"));
        assert_eq!(query_value("tickets=abc", "ticket"), None);
        assert_eq!(query_value("", "ticket"), None);
    }
}
