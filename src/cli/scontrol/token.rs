//! `scontrol token [lifespan=SECONDS] [username=NAME]`: prints `SLURM_JWT=<token>`, a token
//! for the REST API on the daemon's TCP address (`listen`), as Slurm's prints one for
//! slurmrestd. The daemon decides who asks from the socket's peer credentials.

use crate::api::types::{TokenRequest, MAX_TOKEN_LIFESPAN};

/// The value of `lifespan=`: seconds, or `infinite`/`unlimited`; Slurm's error text if not.
fn lifespan(value: &str) -> Result<u64, String> {
    if value.eq_ignore_ascii_case("infinite") || value.eq_ignore_ascii_case("unlimited") {
        return Ok(MAX_TOKEN_LIFESPAN);
    }
    match value.parse::<i64>() {
        Ok(n) if n > 0 && n < i32::MAX as i64 => Ok(n as u64),
        Ok(n) if n >= i32::MAX as i64 => Err(format!("Numeric argument ({n}) too large for lifespan.")),
        _ => Err(format!("Invalid numeric value \"{value}\" for lifespan.")),
    }
}

/// A wrong argument, with what scontrol prints for it (then it exits 1).
#[derive(Debug, PartialEq, Eq)]
enum BadArgument {
    /// A plain line, as Slurm prints an unknown option.
    Line(String),
    /// An `scontrol: error: …` line.
    Error(String),
}

/// Reads the arguments.
fn request(words: &[String]) -> Result<TokenRequest, BadArgument> {
    let mut req = TokenRequest::default();
    for word in words {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        if key.eq_ignore_ascii_case("lifespan") && word.contains('=') {
            req.lifespan = Some(lifespan(value).map_err(BadArgument::Error)?);
        } else if key.eq_ignore_ascii_case("username") && word.contains('=') {
            req.username = Some(value.to_string());
        } else {
            return Err(BadArgument::Line(format!("Invalid option: `{word}`")));
        }
    }
    Ok(req)
}

/// Runs `scontrol token WORDS…`.
pub fn run(words: &[String]) -> i32 {
    let req = match request(words) {
        Ok(r) => r,
        Err(BadArgument::Line(line)) => {
            eprintln!("{line}");
            return 1;
        }
        Err(BadArgument::Error(error)) => {
            crate::cli::error("scontrol", &error);
            return 1;
        }
    };
    // A token for this machine's daemon: a cluster's come from its own scontrol token.
    let client = match crate::api::client::Client::local() {
        Ok(c) => c,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
    };
    match client.token(&req) {
        Ok(resp) if resp.errors.is_empty() && !resp.token.is_empty() => {
            println!("SLURM_JWT={}", resp.token);
            0
        }
        Ok(resp) => {
            for e in &resp.errors {
                crate::cli::error("scontrol", &format!("slurm_fetch_token: error with request: {}", e.error));
            }
            1
        }
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lifespan_and_username_as_slurm_reads_them() {
        let req = request(&words(&["lifespan=60", "username=alice"])).unwrap();
        assert_eq!(req, TokenRequest { lifespan: Some(60), username: Some("alice".into()) });
        let req = request(&words(&["LIFESPAN=infinite"])).unwrap();
        assert_eq!(req.lifespan, Some(MAX_TOKEN_LIFESPAN));
        assert_eq!(request(&[]).unwrap(), TokenRequest::default());
        let bad = |w: &str| request(&words(&[w])).unwrap_err();
        assert_eq!(bad("bogus"), BadArgument::Line("Invalid option: `bogus`".into()));
        assert_eq!(bad("lifespan=abc"), BadArgument::Error("Invalid numeric value \"abc\" for lifespan.".into()));
        assert_eq!(bad("lifespan=0"), BadArgument::Error("Invalid numeric value \"0\" for lifespan.".into()));
        assert_eq!(
            bad("lifespan=3000000000"),
            BadArgument::Error("Numeric argument (3000000000) too large for lifespan.".into())
        );
    }
}
