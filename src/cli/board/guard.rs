//! What each request of the board must bring, checked before any route sees it:
//!
//! - every request: a `Host` the board answers to, and an `Origin`, when it has one, of the
//!   board's own page ([`super::hosts`]); else `403`;
//! - the page, its script and its style: nothing more, as they hold no secret;
//! - `/events`: a one-time ticket (`?ticket=…`, from `POST /api/ticket`), as an
//!   `EventSource` cannot send a header; else `401`;
//! - everything else (the JSON the page reads, the actions, the tickets): the access token in
//!   `Authorization: Bearer …` ([`super::auth`]); else `401`.

use super::auth::{self, AccessToken, Tickets, TICKET_LIFETIME};
use super::hosts::{self, Names};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use thiserror::Error;

/// What a path needs beyond a right `Host` and `Origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Nothing: the page's own files.
    Nothing,
    /// A ticket in the query.
    Ticket,
    /// The access token in `Authorization`.
    Token,
}

/// What `path` needs.
fn needs(path: &str) -> Needs {
    match path {
        "/" | "/board.js" | "/reservations.js" | "/board.css" => Needs::Nothing,
        "/events" => Needs::Ticket,
        _ => Needs::Token,
    }
}

/// Why a request is refused; the refusal's text is said as written here.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum Refusal {
    /// Its `Host` names something else (or nothing).
    #[error(
        "slurmlet board: this board does not answer to the host {0:?}; open the URL that `slurmlet board` printed"
    )]
    Host(String),
    /// Its `Origin` is another site's.
    #[error("slurmlet board: a request from a page of {0}, not of this board")]
    Origin(String),
    /// It lacks the access token.
    #[error(
        "slurmlet board: the request lacks the board's token; open the URL that `slurmlet board` printed (its page sends the token)"
    )]
    Token,
    /// It lacks a ticket still to be used.
    #[error("slurmlet board: the event stream needs a ticket from POST /api/ticket, used once within {}s", TICKET_LIFETIME.as_secs())]
    Ticket,
}

impl Refusal {
    /// The status it is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Host(_) | Refusal::Origin(_) => StatusCode::FORBIDDEN,
            Refusal::Token | Refusal::Ticket => StatusCode::UNAUTHORIZED,
        }
    }
}

/// The board's secrets and names: what the guard checks requests against.
#[derive(Debug)]
pub struct Gate {
    /// The access token.
    pub token: AccessToken,
    /// The event stream's tickets.
    pub tickets: Tickets,
    /// The names the board answers to.
    names: Names,
}

impl Gate {
    /// The gate of a board with `token` answering to `names`.
    pub fn new(token: AccessToken, names: Names) -> Gate {
        Gate { token, tickets: Tickets::default(), names }
    }

    /// Whether a request for `uri` with `headers` may go on; a ticket it brings is used up.
    pub fn admit(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or("?"));
        let authority = uri.authority().map(|a| a.as_str());
        let Some(named) = authority.or(host) else { return Err(Refusal::Host(String::new())) };
        for given in [host, authority].into_iter().flatten() {
            if !self.names.answers_to(given) {
                return Err(Refusal::Host(given.to_string()));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("?");
            if !hosts::same_origin(origin, named) {
                return Err(Refusal::Origin(origin.to_string()));
            }
        }
        match needs(uri.path()) {
            Needs::Nothing => Ok(()),
            Needs::Ticket => {
                let ticket = uri.query().and_then(|q| auth::query_value(q, "ticket")).unwrap_or("");
                if self.tickets.redeem(ticket) {
                    Ok(())
                } else {
                    Err(Refusal::Ticket)
                }
            }
            Needs::Token => {
                let given = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
                if self.token.admits(given) {
                    Ok(())
                } else {
                    Err(Refusal::Token)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn gate() -> Gate {
        Gate::new(AccessToken::new().unwrap(), Names::of("127.0.0.1".parse().unwrap()))
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn the_page_needs_only_a_right_host() {
        let g = gate();
        assert_eq!(g.admit(&uri("/"), &headers(&[(header::HOST, "127.0.0.1:8765")])), Ok(()));
        assert_eq!(g.admit(&uri("/board.js"), &headers(&[(header::HOST, "localhost:9000")])), Ok(()));
        assert_eq!(g.admit(&uri("/reservations.js"), &headers(&[(header::HOST, "localhost:9000")])), Ok(()));
        assert_eq!(
            g.admit(&uri("/"), &headers(&[(header::HOST, "evil.example:8765")])),
            Err(Refusal::Host("evil.example:8765".into()))
        );
        assert_eq!(g.admit(&uri("/"), &HeaderMap::new()), Err(Refusal::Host(String::new())));
        // An absolute URI names the host too.
        assert!(g.admit(&uri("http://evil.example:8765/"), &headers(&[(header::HOST, "127.0.0.1:8765")])).is_err());
    }

    #[test]
    fn the_api_needs_the_token_in_the_header() {
        let g = gate();
        let bearer = format!("Bearer {}", g.token.as_str());
        let host = (header::HOST, "127.0.0.1:8765");
        assert_eq!(g.admit(&uri("/api/live"), &headers(std::slice::from_ref(&host))), Err(Refusal::Token));
        assert_eq!(g.admit(&uri("/api/live"), &headers(&[host.clone(), (header::AUTHORIZATION, &bearer)])), Ok(()));
        let cookie = format!("slurmlet_board={}", g.token.as_str());
        assert_eq!(
            g.admit(&uri("/api/live"), &headers(&[host.clone(), (header::COOKIE, &cookie)])),
            Err(Refusal::Token)
        );
        let query = format!("/api/live?token={}", g.token.as_str());
        assert_eq!(g.admit(&uri(&query), &headers(std::slice::from_ref(&host))), Err(Refusal::Token));
        // Even with the token: not from another site's page, nor through another name.
        assert_eq!(
            g.admit(
                &uri("/api/job/1/cancel"),
                &headers(&[host.clone(), (header::AUTHORIZATION, &bearer), (header::ORIGIN, "http://127.0.0.1:9999")])
            ),
            Err(Refusal::Origin("http://127.0.0.1:9999".into()))
        );
        assert_eq!(
            g.admit(
                &uri("/api/job/1/cancel"),
                &headers(&[host, (header::AUTHORIZATION, &bearer), (header::ORIGIN, "http://127.0.0.1:8765")])
            ),
            Ok(())
        );
    }

    #[test]
    fn the_event_stream_needs_a_fresh_ticket() {
        let g = gate();
        let host = headers(&[(header::HOST, "127.0.0.1:8765")]);
        assert_eq!(g.admit(&uri("/events"), &host), Err(Refusal::Ticket));
        let ticket = g.tickets.issue().unwrap();
        let with = uri(&format!("/events?ticket={ticket}"));
        assert_eq!(g.admit(&with, &host), Ok(()));
        assert_eq!(g.admit(&with, &host), Err(Refusal::Ticket), "a ticket opened the stream twice");
        let bearer = format!("Bearer {}", g.token.as_str());
        assert_eq!(
            g.admit(&uri("/events"), &headers(&[(header::HOST, "127.0.0.1:8765"), (header::AUTHORIZATION, &bearer)])),
            Err(Refusal::Ticket),
            "the stream takes tickets only"
        );
    }
}
