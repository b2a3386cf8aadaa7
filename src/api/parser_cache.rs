//! What each remote profile's slurmrestd offers (see [`super::version`]), remembered between
//! commands so that the OpenAPI document is read once a day, not once a command.
//!
//! One small JSON file per profile, `<cache dir>/slurmlet/data_parser/<profile>.json`
//! (`~/.cache` or `$XDG_CACHE_HOME`), with the URL it was read from: a profile pointed
//! elsewhere reads the new server's document again.

use super::version::DataParser;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How long an entry is trusted, in seconds.
pub const MAX_AGE: u64 = 24 * 3600;

/// One profile's entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The profile's URL when the document was read.
    pub url: String,
    /// The versions offered (written as `v0.0.43`); empty when the server has no document.
    pub offered: Vec<String>,
    /// When the document was read (UNIX seconds).
    pub checked: u64,
}

impl Entry {
    /// An entry for `url` read at `now`.
    pub fn new(url: &str, offered: &BTreeSet<DataParser>, now: u64) -> Entry {
        Entry { url: url.to_string(), offered: offered.iter().map(ToString::to_string).collect(), checked: now }
    }

    /// The versions offered, as the choice reads them.
    pub fn versions(&self) -> BTreeSet<DataParser> {
        self.offered.iter().filter_map(|v| DataParser::parse(v)).collect()
    }
}

/// The directory the entries are in, if the user has a cache directory.
pub fn dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("slurmlet").join("data_parser"))
}

/// The file of profile `name` in `dir`: the name percent-encoded (a leading `.` too), so that
/// any profile name is one file name that is not hidden.
pub fn file(dir: &Path, name: &str) -> PathBuf {
    let safe = super::url::percent_encode(name);
    let safe = match safe.strip_prefix('.') {
        Some(rest) => format!("%2E{rest}"),
        None => safe,
    };
    dir.join(format!("{safe}.json"))
}

/// Profile `name`'s entry in `dir`, if there is one for `url` no older than [`MAX_AGE`] at `now`.
pub fn load(dir: &Path, name: &str, url: &str, now: u64) -> Option<Entry> {
    let text = std::fs::read(file(dir, name)).ok()?;
    let entry: Entry = serde_json::from_slice(&text).ok()?;
    let fresh = entry.checked <= now + 60 && now.saturating_sub(entry.checked) < MAX_AGE;
    (entry.url == url && fresh).then_some(entry)
}

/// Writes profile `name`'s entry in `dir` (a whole file at once: a command reading it at the
/// same time sees the old entry or the new). A cache that cannot be written is only slower.
pub fn store(dir: &Path, name: &str, entry: &Entry) {
    let path = file(dir, name);
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    let written = crate::sys::create_private_dir(dir)
        .and_then(|()| std::fs::write(&tmp, serde_json::to_vec(entry).expect("entries serialize")))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_kept_for_its_url_and_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("sub");
        let offered: BTreeSet<_> = [DataParser::v0_0(42), DataParser::v0_0(44)].into();
        assert_eq!(load(&d, "c", "https://h", 1000), None);
        store(&d, "c", &Entry::new("https://h", &offered, 1000));
        let e = load(&d, "c", "https://h", 1000 + MAX_AGE - 1).unwrap();
        assert_eq!(e.versions(), offered);
        assert_eq!(e.offered, ["v0.0.42", "v0.0.44"]);
        assert_eq!(load(&d, "c", "https://h", 1000 + MAX_AGE), None, "a day old");
        assert_eq!(load(&d, "c", "https://other", 1000), None, "another server");
        assert_eq!(load(&d, "other", "https://h", 1000), None);
        assert_eq!(load(&d, "c", "https://h", 500), None, "written in the future: the clock moved");
        std::fs::write(file(&d, "c"), "garbage").unwrap();
        assert_eq!(load(&d, "c", "https://h", 1000), None);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "no temporary file left behind");
    }

    #[test]
    fn any_profile_name_is_one_file_in_the_directory() {
        let d = Path::new("/c");
        assert_eq!(file(d, "tcp"), Path::new("/c/tcp.json"));
        assert_eq!(file(d, "my.cluster_2-a"), Path::new("/c/my.cluster_2-a.json"));
        assert_eq!(file(d, "../x"), Path::new("/c/%2E.%2Fx.json"));
        assert_eq!(file(d, "a/b c"), Path::new("/c/a%2Fb%20c.json"));
    }
}
