//! Where the notices of `--mail-type` go: slurm.conf's `MailProg` and `MailDomain`
//! (`mail_program`, `mail_domain`), and webhooks, one for the cluster (`webhook`) and one per
//! user (`[users.NAME] webhook`). With none of them, nothing is sent and `--mail-type` says
//! so at submit.
//!
//! On a shared machine the daemon is root: the mail program must be one only root can
//! change, so it is resolved to its real path once, here, and that path and every directory
//! above it must be root's and written by nobody else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The resolved settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notify {
    /// The program run for each notice, Slurm's way: `PROGRAM -s SUBJECT ADDRESS`. Its real
    /// path (links resolved).
    pub mail_program: Option<PathBuf>,
    /// Appended (`@domain`) to a job's owner's name when the job names no `--mail-user`.
    pub mail_domain: Option<String>,
    /// Where every notice is posted as JSON.
    pub webhook: Option<String>,
    /// Where each user's notices are posted (by uid), besides `webhook`.
    pub user_webhooks: BTreeMap<u32, String>,
}

/// The longest webhook URL taken.
const MAX_URL: usize = 2048;

impl Notify {
    /// Whether a notice of a job of `uid` goes anywhere.
    pub fn sends_for(&self, uid: u32) -> bool {
        self.mail_program.is_some() || self.webhook.is_some() || self.user_webhooks.contains_key(&uid)
    }

    /// The webhooks a notice of a job of `uid` is posted to.
    pub fn webhooks_for(&self, uid: u32) -> Vec<String> {
        self.user_webhooks.get(&uid).into_iter().chain(self.webhook.as_ref()).cloned().collect()
    }

    /// The address of a job of user `name` that named none: the name, with `mail_domain`.
    pub fn default_address(&self, name: &str) -> String {
        match &self.mail_domain {
            Some(domain) => format!("{name}@{domain}"),
            None => name.to_string(),
        }
    }
}

/// Reads the keys: `mail_program` (an absolute path; on a shared machine one only root may
/// change), `mail_domain`, `webhook`, and each user's `webhook` (`(name, url)`).
pub fn read(
    mail_program: Option<PathBuf>,
    mail_domain: Option<String>,
    webhook: Option<String>,
    user_webhooks: Vec<(String, String)>,
    system: bool,
) -> Result<Notify, String> {
    let mail_program = mail_program.map(|p| read_program(&p, system)).transpose()?;
    if let Some(domain) = &mail_domain {
        let fine = !domain.is_empty()
            && domain.len() <= 253
            && domain.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !domain.starts_with(['-', '.']);
        if !fine {
            return Err(format!("mail_domain: '{domain}' is no domain name"));
        }
    }
    let webhook = webhook.map(|u| check_url("webhook", u)).transpose()?;
    let mut by_uid = BTreeMap::new();
    for (name, url) in user_webhooks {
        let key = format!("users.{name}.webhook");
        let url = check_url(&key, url)?;
        let uid = crate::identity::user_uid(&name).ok_or_else(|| format!("{key}: no user '{name}' on this machine"))?;
        by_uid.insert(uid, url);
    }
    Ok(Notify { mail_program, mail_domain, webhook, user_webhooks: by_uid })
}

/// A webhook URL: `http://` or `https://`, of a bounded length, that parses.
fn check_url(key: &str, url: String) -> Result<String, String> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || url.len() > MAX_URL || reqwest::Url::parse(&url).is_err() {
        return Err(format!("{key}: '{url}' is no http:// or https:// URL (of at most {MAX_URL} bytes)"));
    }
    Ok(url)
}

/// The mail program's real path, once it is known to be a file that runs; on a shared
/// machine (`system`), one that only root may change.
fn read_program(path: &Path, system: bool) -> Result<PathBuf, String> {
    let say = |why: String| format!("mail_program: {why}");
    if !path.is_absolute() {
        return Err(say(format!("{} is not an absolute path", path.display())));
    }
    let real = std::fs::canonicalize(path).map_err(|e| say(format!("{}: {e}", path.display())))?;
    let meta = std::fs::metadata(&real).map_err(|e| say(format!("{}: {e}", real.display())))?;
    use std::os::unix::fs::PermissionsExt;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(say(format!("{} is not a program (an executable file)", real.display())));
    }
    if system {
        only_root_may_change(&real).map_err(say)?;
    }
    Ok(real)
}

/// Refuses `path` (real, links resolved) when it or a directory above it belongs to
/// someone other than root or may be written by others: the root daemon would run what
/// they put there. A sticky directory of root's (`/tmp`) may be above: there, nobody may
/// rename or remove what root owns.
pub fn only_root_may_change(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    for (n, at) in path.ancestors().enumerate() {
        let meta = std::fs::symlink_metadata(at).map_err(|e| format!("{}: {e}", at.display()))?;
        if n > 0 && meta.uid() == 0 && meta.mode() & 0o1000 != 0 {
            continue;
        }
        if meta.uid() != 0 {
            let owner = crate::identity::user_name(meta.uid());
            return Err(format!(
                "{} belongs to {owner}, not to root: only root may own what the root daemon runs",
                at.display()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{} may be written by others (mode {:04o}): only root may change what the root daemon runs",
                at.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_or_missing_program_and_a_bad_url_or_domain_are_refused() {
        let read1 = |p: &str| read(Some(p.into()), None, None, Vec::new(), false);
        assert!(read1("mail").unwrap_err().contains("not an absolute path"));
        assert!(read1("/nonexistent/mail").unwrap_err().starts_with("mail_program: /nonexistent/mail:"));
        let plain = tempfile::NamedTempFile::new().unwrap();
        let plain = plain.path().to_str().unwrap().to_string();
        assert!(read1(&plain).unwrap_err().contains("is not a program"));
        assert_eq!(read1("/bin/sh").unwrap().mail_program, Some(std::fs::canonicalize("/bin/sh").unwrap()));
        let hook = |u: &str| read(None, None, Some(u.into()), Vec::new(), false);
        assert!(hook("ftp://x").unwrap_err().starts_with("webhook: 'ftp://x' is no http"));
        assert!(hook("http://127.0.0.1:9/x").is_ok());
        let domain = |d: &str| read(None, Some(d.into()), None, Vec::new(), false);
        assert!(domain("-x").is_err() && domain("a b").is_err() && domain("lab.example.org").is_ok());
        let user = read(None, None, None, vec![("no-such-user-here".into(), "http://h/".into())], false);
        assert_eq!(user.unwrap_err(), "users.no-such-user-here.webhook: no user 'no-such-user-here' on this machine");
    }

    #[test]
    fn on_a_shared_machine_a_program_others_may_change_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("mail");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o757)).unwrap();
        let err = read(Some(program.clone()), None, None, Vec::new(), true).unwrap_err();
        assert!(err.contains("may be written by others") || err.contains("not to root"), "{err}");
        // A directory others may write, above it, is refused too.
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = read(Some(program.clone()), None, None, Vec::new(), true).unwrap_err();
        let own = crate::identity::uid() == 0;
        assert!(err.contains(if own { "may be written by others (mode 0777)" } else { "not to root" }), "{err}");
        // A link to a program only root may change runs that program, wherever the link is.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(std::fs::canonicalize("/bin/sh").unwrap(), &link).unwrap();
        let got = read(Some(link), None, None, Vec::new(), true);
        let root_owned = only_root_may_change(&std::fs::canonicalize("/bin/sh").unwrap()).is_ok();
        assert_eq!(got.is_ok(), root_owned, "{got:?}");
    }

    #[test]
    fn a_users_webhook_comes_before_the_clusters() {
        let n = Notify {
            webhook: Some("http://lab/".into()),
            user_webhooks: [(7, "http://alice/".to_string())].into(),
            mail_domain: Some("lab.org".into()),
            ..Default::default()
        };
        assert_eq!(n.webhooks_for(7), ["http://alice/", "http://lab/"]);
        assert_eq!(n.webhooks_for(8), ["http://lab/"]);
        assert!(n.sends_for(8) && !Notify::default().sends_for(7));
        assert_eq!(n.default_address("bob"), "bob@lab.org");
    }
}
