//! Which data_parser version to speak to a remote slurmrestd.
//!
//! slurmlet's requests and replies are data_parser v0.0.43's. A slurmrestd serves one or more
//! data_parser versions side by side (26.05 serves v0.0.42 to v0.0.45), each under its own
//! path prefix (`/slurm/v0.0.43/…`); its OpenAPI document (`GET /openapi/v3`) lists them.
//!
//! v0.0.43 is used whenever it is offered. Otherwise the nearest offered version whose job
//! shapes agree with v0.0.43 for what slurmlet reads and sends (slurmrestd 26.05's own
//! comparison of the versions):
//!
//! - **v0.0.44** only adds: fields (`step_id`, `submit_line`), enum values (`EXPEDITING`,
//!   `BLOCKED`…, which slurmlet passes through as text) and endpoints. Same shapes.
//! - **v0.0.42** has the same JSON shapes (its flag and state sets are named schemas, but
//!   still lists of strings) and lacks only fields v0.0.43 added: `stdout_expanded` and its
//!   kin (slurmlet then prints the path the job asked for), `licenses_allocated`,
//!   `segment_size` and the nodes' `topology`/`cert_flags`, none of which slurmlet prints.
//! - **v0.0.45** does not agree: its ping has `status` in place of `pinged`/`mode`, a
//!   partition's `cpus.task_binding` is a list rather than a number, and jobs lose `shared`.
//!   Older versions than v0.0.42 were not compared and are refused as well.
//!
//! Between v0.0.42 and v0.0.44, equally near, v0.0.44 is preferred: it lacks nothing.

use std::collections::BTreeSet;
use std::fmt;
use thiserror::Error;

/// A data_parser version, `vMAJOR.MINOR.PATCH` (all of Slurm's are `v0.0.N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataParser {
    /// The first number.
    pub major: u32,
    /// The second number.
    pub minor: u32,
    /// The third number.
    pub patch: u32,
}

impl DataParser {
    /// `v0.0.{patch}`.
    pub const fn v0_0(patch: u32) -> DataParser {
        DataParser { major: 0, minor: 0, patch }
    }

    /// Reads `v0.0.43` (also `data_parser/v0.0.43`, as replies' `meta` write it).
    pub fn parse(text: &str) -> Option<DataParser> {
        let text = text.strip_prefix("data_parser/").unwrap_or(text);
        let mut parts = text.strip_prefix('v')?.split('.');
        let mut next = || -> Option<u32> {
            let part = parts.next()?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let version = DataParser { major: next()?, minor: next()?, patch: next()? };
        parts.next().is_none().then_some(version)
    }

    /// How far `other` is from this version; `None` when they differ before the last number.
    fn distance(self, other: DataParser) -> Option<u32> {
        (self.major == other.major && self.minor == other.minor).then(|| self.patch.abs_diff(other.patch))
    }
}

impl fmt::Display for DataParser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version slurmlet's requests are written in ([`super::types::DATA_PARSER`]).
pub const SPOKEN: DataParser = DataParser::v0_0(43);

/// The versions whose job shapes agree with [`SPOKEN`]'s for what slurmlet uses, most
/// preferred first among equally near ones (see the module's documentation).
pub const AGREEING: &[DataParser] = &[DataParser::v0_0(44), DataParser::v0_0(42)];

/// No offered version can be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "the cluster's slurmrestd offers data_parser {offered}; slurmlet speaks {SPOKEN} (and can use {} instead), \
     so none of them will do",
    agreeing()
)]
pub struct VersionError {
    /// What the server offers, listed.
    pub offered: String,
}

/// `v0.0.44 or v0.0.42`.
fn agreeing() -> String {
    AGREEING.iter().map(ToString::to_string).collect::<Vec<_>>().join(" or ")
}

/// The version to speak to a server offering `offered`: [`SPOKEN`] if offered (or if nothing
/// is known of what the server offers), else the nearest of [`AGREEING`] offered.
pub fn choose(offered: &BTreeSet<DataParser>) -> Result<DataParser, VersionError> {
    if offered.is_empty() || offered.contains(&SPOKEN) {
        return Ok(SPOKEN);
    }
    AGREEING
        .iter()
        .enumerate()
        .filter(|(_, v)| offered.contains(v))
        .filter_map(|(rank, v)| Some((SPOKEN.distance(*v)?, rank, *v)))
        .min()
        .map(|(_, _, v)| v)
        .ok_or_else(|| VersionError { offered: offered.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ") })
}

/// The data_parser versions an OpenAPI document's paths are served in (`/slurm/v0.0.44/jobs/`,
/// `/slurmdb/v0.0.42/job/{job_id}`); `None` when `doc` is not such a document.
pub fn offered_in_openapi(doc: &[u8]) -> Option<BTreeSet<DataParser>> {
    #[derive(serde::Deserialize)]
    struct Document {
        paths: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
    }
    let doc: Document = serde_json::from_slice(doc).ok()?;
    Some(doc.paths.keys().filter_map(|p| version_of_path(p)).collect())
}

/// The version in a `/slurm/vX.Y.Z/…` or `/slurmdb/vX.Y.Z/…` path.
fn version_of_path(path: &str) -> Option<DataParser> {
    let rest = path.strip_prefix("/slurm/").or_else(|| path.strip_prefix("/slurmdb/"))?;
    DataParser::parse(rest.split('/').next()?)
}

/// `path` as version `to` serves it: a `/slurm/v0.0.43/` or `/slurmdb/v0.0.43/` prefix
/// rewritten; any other path as it is.
pub fn rewrite(path: &str, to: DataParser) -> std::borrow::Cow<'_, str> {
    if to == SPOKEN {
        return path.into();
    }
    for api in ["/slurm/", "/slurmdb/"] {
        let prefix = format!("{api}{SPOKEN}/");
        if let Some(rest) = path.strip_prefix(&prefix) {
            return format!("{api}{to}/{rest}").into();
        }
    }
    path.into()
}

/// Whether `path` is one of the versioned APIs' (whose prefix [`rewrite`] changes).
pub fn is_versioned(path: &str) -> bool {
    version_of_path(path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(patches: &[u32]) -> BTreeSet<DataParser> {
        patches.iter().map(|&p| DataParser::v0_0(p)).collect()
    }

    #[test]
    fn v0_0_43_is_spoken_when_offered_else_the_nearest_agreeing_version() {
        assert_eq!(choose(&set(&[43])), Ok(SPOKEN));
        assert_eq!(choose(&set(&[42, 43, 44, 45])), Ok(SPOKEN));
        assert_eq!(choose(&set(&[42])), Ok(DataParser::v0_0(42)));
        assert_eq!(choose(&set(&[44])), Ok(DataParser::v0_0(44)));
        assert_eq!(choose(&set(&[42, 44])), Ok(DataParser::v0_0(44)), "v0.0.44 lacks nothing v0.0.43 has");
        assert_eq!(choose(&set(&[40, 41, 42])), Ok(DataParser::v0_0(42)));
        assert_eq!(choose(&set(&[44, 45, 46])), Ok(DataParser::v0_0(44)));
        // Nothing known of the server (no OpenAPI document, or one without versioned paths).
        assert_eq!(choose(&set(&[])), Ok(SPOKEN));
    }

    #[test]
    fn versions_whose_shapes_differ_are_refused_naming_both_sides() {
        let e = choose(&set(&[41])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the cluster's slurmrestd offers data_parser v0.0.41; slurmlet speaks v0.0.43 \
             (and can use v0.0.44 or v0.0.42 instead), so none of them will do"
        );
        assert_eq!(choose(&set(&[45])).unwrap_err().offered, "v0.0.45");
        assert_eq!(
            choose(&set(&[39, 40, 41, 45, 46])).unwrap_err().offered,
            "v0.0.39, v0.0.40, v0.0.41, v0.0.45, v0.0.46"
        );
        let odd: BTreeSet<_> = [DataParser { major: 1, minor: 0, patch: 43 }].into();
        assert!(choose(&odd).is_err(), "a v1 is not v0.0.43's neighbour");
    }

    #[test]
    fn versions_are_read_from_an_openapi_documents_paths() {
        let doc = br#"{"openapi":"3.0.3","paths":{
            "/slurm/v0.0.44/jobs/":{},"/slurm/v0.0.42/job/{job_id}":{},"/slurmdb/v0.0.44/jobs/":{},
            "/slurm/v0.0.45/ping/":{},"/slurmlet/v1/config":{},"/openapi/v3":{},"/slurm/vX/ping":{}}}"#;
        assert_eq!(offered_in_openapi(doc), Some(set(&[42, 44, 45])));
        assert_eq!(offered_in_openapi(br#"{"paths":{}}"#), Some(set(&[])));
        assert_eq!(offered_in_openapi(b"Authentication failure"), None);
        assert_eq!(offered_in_openapi(br#"{"openapi":"3.0.3"}"#), None);
    }

    #[test]
    fn versions_parse_strictly_and_print_as_slurm_writes_them() {
        assert_eq!(DataParser::parse("v0.0.43"), Some(SPOKEN));
        assert_eq!(DataParser::parse("data_parser/v0.0.44"), Some(DataParser::v0_0(44)));
        for bad in ["0.0.43", "v0.0", "v0.0.43.1", "v0.0.x", "v0..43", "v0.0.+4", ""] {
            assert_eq!(DataParser::parse(bad), None, "{bad}");
        }
        assert_eq!(SPOKEN.to_string(), crate::api::types::DATA_PARSER);
    }

    #[test]
    fn only_the_versioned_prefixes_are_rewritten() {
        let v44 = DataParser::v0_0(44);
        assert_eq!(rewrite("/slurm/v0.0.43/jobs", v44), "/slurm/v0.0.44/jobs");
        assert_eq!(rewrite("/slurmdb/v0.0.43/job/5?x=v0.0.43", v44), "/slurmdb/v0.0.44/job/5?x=v0.0.43");
        assert_eq!(rewrite("/slurmlet/v1/config", v44), "/slurmlet/v1/config");
        assert_eq!(rewrite("/slurm/v0.0.43/jobs", SPOKEN), "/slurm/v0.0.43/jobs");
        assert!(is_versioned("/slurm/v0.0.43/ping") && is_versioned("/slurmdb/v0.0.43/jobs"));
        assert!(!is_versioned("/slurmlet/v1/config") && !is_versioned("/openapi/v3"));
    }
}
