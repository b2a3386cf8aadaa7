//! Choosing the data_parser version for one remote profile: from the cache when it has a fresh
//! entry (see [`super::parser_cache`]), else from the server's OpenAPI document, read once and
//! remembered. The choice itself is [`super::version::choose`]'s.

use super::client_error::ClientError;
use super::parser_cache::{self, Entry};
use super::version::{self, DataParser};
use std::collections::BTreeSet;
use std::path::Path;

/// What a profile's server is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The version.
    pub version: DataParser,
    /// Whether it came from the cache (a 404 on a versioned path then reads the document again).
    pub from_cache: bool,
}

/// What asking the server for its document gave.
#[derive(Debug)]
pub enum Fetched {
    /// A 200 reply's body.
    Document(Vec<u8>),
    /// Any other answer (slurmlet's daemon before it served one, a proxy): nothing is known.
    NoDocument,
}

/// The profile whose version is negotiated.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its URL.
    pub url: &'a str,
}

/// The version to speak to `target`: from the cache in `cache` (if any) unless `refresh`,
/// else from what `fetch` (`GET /openapi/v3`) gives, which is then cached. A server that does
/// not answer is assumed to speak [`version::SPOKEN`] (its requests will say what is wrong);
/// a refused or expired token is the caller's error.
pub fn negotiate(
    cache: Option<&Path>,
    target: Target<'_>,
    now: u64,
    refresh: bool,
    fetch: impl FnOnce() -> Result<Fetched, ClientError>,
) -> Result<Negotiated, ClientError> {
    let refuse = |source| ClientError::Version { profile: target.name.to_string(), source };
    if let Some(entry) = cache.filter(|_| !refresh).and_then(|d| parser_cache::load(d, target.name, target.url, now)) {
        // A refusal is not trusted to the cache: the server may have been upgraded since.
        if let Ok(version) = version::choose(&entry.versions()) {
            return Ok(Negotiated { version, from_cache: true });
        }
    }
    let offered = match fetch() {
        Ok(Fetched::Document(body)) => version::offered_in_openapi(&body).unwrap_or_default(),
        Ok(Fetched::NoDocument) => BTreeSet::new(),
        Err(e @ (ClientError::Auth { .. } | ClientError::Expired { .. })) => return Err(e),
        Err(_) => return Ok(Negotiated { version: version::SPOKEN, from_cache: false }),
    };
    if let Some(dir) = cache {
        parser_cache::store(dir, target.name, &Entry::new(target.url, &offered, now));
    }
    let version = version::choose(&offered).map_err(refuse)?;
    Ok(Negotiated { version, from_cache: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const T: Target<'static> = Target { name: "c", url: "https://h" };

    fn doc(patches: &[u32]) -> Result<Fetched, ClientError> {
        let paths: Vec<String> = patches.iter().map(|p| format!("\"/slurm/v0.0.{p}/jobs/\":{{}}")).collect();
        Ok(Fetched::Document(format!("{{\"paths\":{{{}}}}}", paths.join(",")).into_bytes()))
    }

    #[test]
    fn the_document_is_read_once_then_the_cache_answers_until_refreshed() {
        let dir = tempfile::tempdir().unwrap();
        let d = Some(dir.path());
        let asked = Cell::new(0);
        let fetch = |patches: &'static [u32]| {
            let asked = &asked;
            move || {
                asked.set(asked.get() + 1);
                doc(patches)
            }
        };
        let v44 = DataParser::v0_0(44);
        assert_eq!(
            negotiate(d, T, 100, false, fetch(&[44, 45])).unwrap(),
            Negotiated { version: v44, from_cache: false }
        );
        assert_eq!(negotiate(d, T, 200, false, fetch(&[43])).unwrap(), Negotiated { version: v44, from_cache: true });
        assert_eq!(asked.get(), 1);
        // After a 404 on a versioned path, the caller refreshes.
        assert_eq!(negotiate(d, T, 300, true, fetch(&[43])).unwrap().version, version::SPOKEN);
        assert_eq!(
            negotiate(d, T, 400, false, fetch(&[44])).unwrap(),
            Negotiated { version: version::SPOKEN, from_cache: true }
        );
        // A day later, or for another URL, the document is read again.
        assert_eq!(
            negotiate(d, T, 300 + parser_cache::MAX_AGE, false, fetch(&[42])).unwrap().version,
            DataParser::v0_0(42)
        );
        let moved = Target { url: "https://elsewhere", ..T };
        assert_eq!(negotiate(d, moved, 400, false, fetch(&[44])).unwrap().version, v44);
        assert_eq!(asked.get(), 4);
        // Without a cache directory, every negotiation reads the document.
        negotiate(None, T, 400, false, fetch(&[43])).unwrap();
        assert_eq!(asked.get(), 5);
    }

    #[test]
    fn a_refusal_names_the_profile_and_is_checked_again_before_it_is_believed() {
        let dir = tempfile::tempdir().unwrap();
        let d = Some(dir.path());
        let e = negotiate(d, T, 100, false, || doc(&[45])).unwrap_err();
        assert!(matches!(e, ClientError::Version { .. }));
        assert!(e.to_string().starts_with("profile 'c': the cluster's slurmrestd offers data_parser v0.0.45;"), "{e}");
        // The server was upgraded in between: the cached refusal does not stand.
        assert_eq!(negotiate(d, T, 101, false, || doc(&[43, 45])).unwrap().version, version::SPOKEN);
    }

    #[test]
    fn no_document_means_v0_0_43_and_a_refused_token_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let d = Some(dir.path());
        let n = negotiate(d, T, 100, false, || Ok(Fetched::NoDocument)).unwrap();
        assert_eq!(n, Negotiated { version: version::SPOKEN, from_cache: false });
        let cached = parser_cache::load(dir.path(), "c", "https://h", 100).unwrap();
        assert!(cached.offered.is_empty(), "remembered: no document to read");
        let n = negotiate(None, T, 100, false, || Ok(Fetched::Document(b"<html>".to_vec()))).unwrap();
        assert_eq!(n.version, version::SPOKEN);
        let unreachable = || Err(ClientError::Profile("connection refused".into()));
        assert_eq!(negotiate(None, T, 100, false, unreachable).unwrap().version, version::SPOKEN);
        let refused = || Err(ClientError::Auth { profile: "c".into(), status: 401 });
        assert!(matches!(negotiate(None, T, 100, false, refused), Err(ClientError::Auth { .. })));
    }
}
