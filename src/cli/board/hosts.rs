//! Which names the board answers to, and how it names itself in the URL it prints.
//!
//! A request's `Host` must name the board, or it is refused: this is what stops DNS
//! rebinding, where a page of `evil.example`, its name then turned to 127.0.0.1, reaches the
//! board as a page of its own origin, with `Host: evil.example:8765`. An address cannot be
//! rebound, a name can; so the names let through are `localhost` and, when the board listens
//! beyond loopback, the machine's own host name, and the addresses are those of loopback
//! (any address when it listens beyond loopback). The port is not compared: `ssh -L
//! 9000:127.0.0.1:8765 HOST` reaches the board as `localhost:9000`, and no page can choose
//! the port its request names other than by being served from it.
//!
//! A request that carries `Origin` (a browser sends it with every POST, and with any request
//! one site's page makes to another) must come from the board's own page: `http://` and the
//! `Host` the request names. A request without it (curl, a script) passes this check: it
//! still needs the token.

use std::net::IpAddr;

/// The names and addresses a board answers to.
#[derive(Debug, Clone)]
pub struct Names {
    /// Whether it listens beyond loopback: then any address, and the machine's names.
    beyond_loopback: bool,
    /// The machine's host names, lower-case: as the kernel holds it, and its short form.
    machine: Vec<String>,
}

impl Names {
    /// The names of a board listening on `bound`.
    pub fn of(bound: IpAddr) -> Names {
        let beyond_loopback = !bound.is_loopback();
        let mut machine = Vec::new();
        if beyond_loopback {
            machine.extend(crate::paths::kernel_hostname().map(|n| n.to_ascii_lowercase()));
            machine.push(crate::paths::hostname().to_ascii_lowercase());
            machine.retain(|n| !n.is_empty());
            machine.dedup();
        }
        Names { beyond_loopback, machine }
    }

    /// Whether a request whose `Host` (or absolute URI's authority) is `authority` may be
    /// answered.
    pub fn answers_to(&self, authority: &str) -> bool {
        let Some(host) = host_of(authority) else { return false };
        match host.parse::<IpAddr>() {
            Ok(address) => self.beyond_loopback || address.is_loopback(),
            Err(_) => {
                let name = host.to_ascii_lowercase();
                name == "localhost" || self.machine.contains(&name)
            }
        }
    }
}

/// Whether `origin`, a request's `Origin`, is the board's own page reached as `authority`
/// (the request's `Host`).
pub fn same_origin(origin: &str, authority: &str) -> bool {
    origin.strip_prefix("http://").is_some_and(|o| o.eq_ignore_ascii_case(authority))
}

/// The host of `authority` (`host`, `host:port`, `[v6]`, `[v6]:port`), without brackets;
/// `None` when it is not one of those.
fn host_of(authority: &str) -> Option<&str> {
    let port_ok = |port: &str| !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<std::net::Ipv6Addr>().ok()?;
        return match after.strip_prefix(':') {
            None if after.is_empty() => Some(host),
            Some(port) if port_ok(port) => Some(host),
            _ => None,
        };
    }
    let host = match authority.split_once(':') {
        None => authority,
        Some((host, port)) if port_ok(port) => host,
        Some(_) => return None,
    };
    (!host.is_empty()).then_some(host)
}

/// How the printed URL names a board listening on `bound`: its address, or, for a wildcard
/// address (`0.0.0.0`, `::`), which no browser can open, the machine's host name.
pub fn url_host(bound: IpAddr) -> String {
    if bound.is_unspecified() {
        if let Some(name) = crate::paths::kernel_hostname().filter(|n| !n.is_empty()) {
            return name;
        }
    }
    bracketed(forward_target_address(bound))
}

/// The address `ssh -L PORT:ADDRESS:PORT HOST` forwards to, as ssh takes it: the board's, or
/// loopback's for a wildcard address.
pub fn forward_target(bound: IpAddr) -> String {
    bracketed(forward_target_address(bound))
}

/// `bound`, or the loopback address of its family when it is a wildcard one.
fn forward_target_address(bound: IpAddr) -> IpAddr {
    match bound {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        other => other,
    }
}

/// An address as a URL (and ssh) writes it: an IPv6 one in brackets.
fn bracketed(address: IpAddr) -> String {
    match address {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Names {
        Names::of("127.0.0.1".parse().unwrap())
    }

    #[test]
    fn a_loopback_board_answers_to_loopback_only() {
        let names = loopback();
        for host in ["127.0.0.1:8765", "127.0.0.1", "localhost:9000", "LOCALHOST:8765", "[::1]:8765", "127.0.0.2:1"] {
            assert!(names.answers_to(host), "{host}");
        }
        for host in [
            "evil.example:8765",
            "evil.example",
            "localhost.evil.example:8765",
            "10.1.2.3:8765",
            "",
            ":8765",
            "127.0.0.1:",
            "127.0.0.1:80:80",
            "[::1",
            "[evil]:8765",
            "::1",
        ] {
            assert!(!names.answers_to(host), "{host}");
        }
    }

    #[test]
    fn a_wide_board_answers_to_any_address_and_the_machines_names() {
        let names = Names::of("0.0.0.0".parse().unwrap());
        let short = crate::paths::hostname();
        for host in ["10.1.2.3:8765", "[fe80::1]:8765", "localhost:8765", &format!("{short}:8765"), short.as_str()] {
            assert!(names.answers_to(host), "{host}");
        }
        assert!(!names.answers_to("evil.example:8765"));
        assert!(!names.answers_to(&format!("{short}.evil.example:8765")));
    }

    #[test]
    fn an_origin_must_be_the_hosts_own() {
        assert!(same_origin("http://127.0.0.1:8765", "127.0.0.1:8765"));
        assert!(same_origin("http://LOCALHOST:9000", "localhost:9000"));
        assert!(!same_origin("http://127.0.0.1:9999", "127.0.0.1:8765"));
        assert!(!same_origin("https://127.0.0.1:8765", "127.0.0.1:8765"));
        assert!(!same_origin("null", "127.0.0.1:8765"));
    }

    #[test]
    fn a_wildcard_address_is_printed_as_something_to_open() {
        let v4: IpAddr = "0.0.0.0".parse().unwrap();
        let v6: IpAddr = "::".parse().unwrap();
        assert_eq!(url_host("127.0.0.1".parse().unwrap()), "127.0.0.1");
        assert_eq!(url_host("::1".parse().unwrap()), "[::1]");
        let name = crate::paths::kernel_hostname().unwrap();
        assert_eq!(url_host(v4), name);
        assert_eq!(url_host(v6), name);
        assert_eq!(forward_target(v4), "127.0.0.1");
        assert_eq!(forward_target(v6), "[::1]");
        assert_eq!(forward_target("10.1.2.3".parse().unwrap()), "10.1.2.3");
    }
}
