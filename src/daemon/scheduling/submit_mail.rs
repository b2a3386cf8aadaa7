//! A job's `--mail-type` and `--mail-user`: the events it is to be told of, and where. The
//! address is the user's own text and reaches the mail program's command line, so one that
//! could be read as an option, or that holds blanks or control characters, is refused.

use super::submit::MAX_FIELD;
use super::submit_refusals::explained;
use crate::api::types::{errno, JobDescMsg};
use crate::config::Config;
use crate::daemon::model::refusal::Refusal;
use crate::daemon::model::text::Text;
use crate::options::mail::MailTypes;

/// What a job submitted with nothing to send its notices through is told.
pub const NOTHING_SENT: &str = "--mail-type has no effect here: no mail is sent from this cluster";

/// The events `desc` asks to be told of and its `--mail-user` (empty: the owner), for a
/// job of `uid`; a notice for the submitter when nothing would be sent.
pub fn read_mail(
    desc: &JobDescMsg,
    uid: u32,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Result<(MailTypes, Text), Refusal> {
    let flags = desc.mail_type.as_deref().unwrap_or_default();
    let types = MailTypes::from_flags(flags).map_err(|flag| {
        explained(
            errno::DATA_FLAGS_INVALID,
            "Data parser unable to parse invalid flag",
            format!("Unknown mail type \"{flag}\" in mail_type"),
        )
    })?;
    let user = desc.mail_user.as_deref().unwrap_or_default();
    if let Some(why) = bad_address(user) {
        return Err(explained(errno::ERROR, "Unspecified error", format!("--mail-user={user}: {why}")));
    }
    if !types.is_none() && !config.notify.sends_for(uid) {
        warnings.push(NOTHING_SENT.into());
    }
    Ok((types, user.into()))
}

/// Why `user` cannot be a `--mail-user`, if it cannot.
fn bad_address(user: &str) -> Option<String> {
    if user.len() > MAX_FIELD {
        Some(format!("longer than {MAX_FIELD} bytes"))
    } else if user.starts_with('-') {
        Some("an address may not begin with '-' (the mail program would take it for an option)".into())
    } else if user.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("an address may not hold blanks or control characters".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_read_as_an_option_or_holding_blanks_is_refused() {
        assert!(bad_address("-oQ/tmp/x").is_some_and(|w| w.contains("begin with '-'")));
        assert!(bad_address("a b").is_some() && bad_address("a\nb").is_some());
        assert!(bad_address(&"a".repeat(MAX_FIELD + 1)).is_some());
        assert_eq!(bad_address("alice@lab.example.org"), None);
        assert_eq!(bad_address(""), None);
    }
}
