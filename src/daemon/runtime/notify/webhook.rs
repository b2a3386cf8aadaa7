//! Webhooks: each notice posted as a small JSON object whose `text` is Slurm's subject line
//! (what Slack's and Matrix bridges' incoming webhooks show; ntfy shows it with a message
//! template, see docs/notifications.md), with the job's figures beside it. A refused
//! connection, a timeout or a server error is tried again, twice, after a pause.

use crate::daemon::model::notice::Notice;
use std::time::Duration;

/// How long one try may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The pauses before the second and third tries.
const PAUSES: [Duration; 2] = [Duration::from_secs(2), Duration::from_secs(10)];

/// The URL as the log shows it: without its query, which may hold a token.
pub fn shown(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or(url).to_string()
}

/// The body posted for `notice`.
pub fn body(notice: &Notice) -> serde_json::Value {
    let mut body = serde_json::json!({ "text": notice.subject, "event": notice.event });
    for (name, value) in &notice.env {
        let key = name.trim_start_matches("SLURM_").to_ascii_lowercase();
        let numeric = ["_id", "_uid", "_gid"].iter().any(|end| key.ends_with(end)) || key.contains("exit_code");
        let number = value.parse::<u64>().ok().filter(|_| numeric);
        body[key] = number.map_or_else(|| serde_json::Value::from(value.as_str()), serde_json::Value::from);
    }
    body
}

/// Posts `notice` to `url`, trying again after a failure that may pass.
pub fn post(url: &str, notice: &Notice) -> Result<(), String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::blocking::Client, String>> = std::sync::OnceLock::new();
    let client = CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::blocking::Client::builder()
                .timeout(TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("slurmlet/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| e.clone())?;
    let body = serde_json::to_vec(&body(notice)).map_err(|e| e.to_string())?;
    let mut last = String::new();
    for pause in std::iter::once(None).chain(PAUSES.into_iter().map(Some)) {
        if let Some(pause) = pause {
            std::thread::sleep(pause);
        }
        match client.post(url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body.clone()).send() {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) if r.status().is_server_error() || r.status().as_u16() == 429 => {
                last = format!("HTTP {}", r.status())
            }
            Ok(r) => return Err(format!("HTTP {}", r.status())),
            Err(e) => last = crate::api::remote::describe(&e),
        }
    }
    Err(format!("{last} (tried {} times)", PAUSES.len() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_carries_the_subject_and_the_jobs_figures() {
        let notice = Notice {
            job: 12,
            uid: 1000,
            gid: 1000,
            event: "END",
            subject: "Slurm Job_id=12 Name=t Ended, Run time 00:00:01, COMPLETED, ExitCode 0".into(),
            to: "alice".into(),
            env: vec![
                ("SLURM_JOB_ID", "12".into()),
                ("SLURM_JOB_NAME", "007".into()),
                ("SLURM_JOB_EXIT_CODE_MAX", "0".into()),
            ],
        };
        let b = body(&notice);
        assert_eq!(b["text"], notice.subject.as_str());
        assert_eq!(b["event"], "END");
        assert_eq!(b["job_id"], 12);
        assert_eq!(b["job_name"], "007");
        assert_eq!(b["job_exit_code_max"], 0);
        assert_eq!(shown("https://ntfy.sh/lab?auth=secret"), "https://ntfy.sh/lab");
    }
}
