//! The REST API on TCP (`listen`): requests carry a token from `scontrol token`, as to
//! slurmrestd, and act as its user; without a valid one they get a 401 and change nothing.

use crate::common;
use common::http::{http, Reply};
use common::T;
use common::*;
use slurmlet::daemon::auth::{Claims, Key, KEY_FILE};

/// A cluster whose daemon also listens on a free TCP port of 127.0.0.1: (cluster, address).
fn tcp_cluster() -> (Cluster, String) {
    Cluster::start_on_tcp("0", "")
}

/// `scontrol token ARGS`, asserting success: the token.
fn token(c: &Cluster, args: &[&str]) -> String {
    let out = c.run("scontrol", &[&["token"], args].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "scontrol token failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("SLURM_JWT=") && stdout.ends_with('\n') && stdout.lines().count() == 1, "{stdout}");
    stdout.trim_end().trim_start_matches("SLURM_JWT=").to_string()
}

/// The daemon's signing key, read from its state directory.
fn key(c: &Cluster) -> Key {
    Key::from_bytes(std::fs::read(c.dir.path().join("state").join(KEY_FILE)).expect("the key file"))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Asserts a 401 with slurmrestd's error envelope.
fn assert_refused(reply: &Reply, why: &str) {
    assert_eq!(reply.status, 401, "{why}: {}", reply.body);
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"), "{why}");
    let body = reply.json();
    let error = &body["errors"][0];
    assert_eq!(error["error_number"], 1007, "{why}: {body}");
    assert_eq!(error["error"], "Protocol authentication error", "{why}: {body}");
    assert!(error["description"].as_str().unwrap().contains(why), "{why}: {body}");
    assert_eq!(body["meta"]["slurm"]["cluster"], "testcluster", "{body}");
}

fn me() -> String {
    slurmlet::identity::user_name(slurmlet::identity::uid())
}

#[test]
fn scontrol_token_prints_a_token_of_slurms_form() {
    let (c, _) = tcp_cluster();
    let before = now();
    let t = token(&c, &["lifespan=300"]);
    let claims: Claims = key(&c).verify(&t, now()).expect("signed with the state directory's key");
    assert_eq!(claims.sun.as_deref(), Some(me().as_str()));
    assert_eq!(claims.exp - claims.iat, 300);
    assert!(claims.iat >= before && claims.iat <= now());
    // Slurm's default lifespan.
    let claims = key(&c).verify(&token(&c, &[]), now()).unwrap();
    assert_eq!(claims.exp - claims.iat, 1800);

    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(c.dir.path().join("state").join(KEY_FILE)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the key is its owner's only");

    let bad = c.run("scontrol", &["token", "lifespan=soon"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "scontrol: error: Invalid numeric value \"soon\" for lifespan.\n");
    let bad = c.run("scontrol", &["token", "forever"]);
    assert_eq!(
        (bad.status.code(), String::from_utf8_lossy(&bad.stderr).as_ref()),
        (Some(1), "Invalid option: `forever`\n")
    );
}

#[test]
fn tcp_requests_without_a_valid_token_are_refused() {
    let (c, addr) = tcp_cluster();
    let ping = "/slurm/v0.0.43/ping";
    assert_refused(&http(&addr, "GET", ping, &[], None), "no token given");
    assert_refused(&http(&addr, "GET", ping, &[("X-SLURM-USER-NAME", &me())], None), "no token given");
    let garbage = [("X-SLURM-USER-NAME", me()), ("X-SLURM-USER-TOKEN", "not.a.jwt".to_string())];
    let garbage: Vec<(&str, &str)> = garbage.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_refused(&http(&addr, "GET", "/slurm/v0.0.43/jobs", &garbage, None), "not a JWT");

    // Signed with another key.
    let forged = Key::from_bytes(vec![7; 32]).issue(&me(), now(), 300);
    let bearer = format!("Bearer {forged}");
    assert_refused(&http(&addr, "GET", ping, &[("Authorization", &bearer)], None), "signature does not match");

    // Signed with the daemon's own key, but expired.
    let expired = key(&c).issue(&me(), now() - 600, 60);
    assert_refused(&http(&addr, "GET", ping, &[("X-SLURM-USER-TOKEN", &expired)], None), "expired");

    // A refused submit queues nothing.
    let body = submit_body(&c, "true", false);
    let reply = http(&addr, "POST", "/slurm/v0.0.43/job/submit", &[("X-SLURM-USER-TOKEN", &expired)], Some(&body));
    assert_refused(&reply, "expired");
    assert!(c.client().jobs().unwrap().jobs.is_empty(), "a refused request queued a job");

    // Another user's name with a token that is not root's.
    if slurmlet::identity::uid() == 0 {
        let nobodys = token(&c, &["username=nobody"]);
        let reply = http(&addr, "GET", ping, &[("X-SLURM-USER-NAME", "root"), ("X-SLURM-USER-TOKEN", &nobodys)], None);
        assert_refused(&reply, "the token of user nobody cannot act as user root");
    } else {
        let out = c.run("scontrol", &["token", "username=root"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "scontrol: error: slurm_fetch_token: error with request: Invalid user id\n"
        );
    }

    let log = c.log();
    assert!(log.contains("REST request refused: the token expired"), "refusals are logged:\n{log}");

    // slurmlet's own paths are not served on TCP, whatever the token.
    let valid = token(&c, &[]);
    let reply = http(&addr, "POST", "/slurmlet/v1/token", &[("X-SLURM-USER-TOKEN", &valid)], Some("{}"));
    assert_eq!(reply.status, 404, "{}", reply.body);
}

/// A `job_submit_req` body running `script`, held or not.
fn submit_body(c: &Cluster, script: &str, hold: bool) -> String {
    serde_json::json!({
        "job": {
            "script": format!("#!/bin/sh\n{script}\n"),
            "current_working_directory": c.work.to_str().unwrap(),
            "environment": ["PATH=/usr/bin:/bin"],
            "standard_output": "tcp-%j.out",
            "name": "over-tcp",
            "hold": hold,
        }
    })
    .to_string()
}

#[test]
fn a_token_lets_a_tcp_client_act_as_its_user() {
    let (c, addr) = tcp_cluster();
    let t = token(&c, &["lifespan=600"]);
    let user = me();
    let auth = [("X-SLURM-USER-NAME", user.as_str()), ("X-SLURM-USER-TOKEN", t.as_str())];

    let ping = http(&addr, "GET", "/slurm/v0.0.43/ping", &auth, None);
    assert_eq!(ping.status, 200, "{}", ping.body);
    assert_eq!(ping.json()["pings"][0]["pinged"], "UP");
    // `Authorization: Bearer` alone does as well, as with slurmrestd.
    let bearer = format!("Bearer {t}");
    let jobs = http(&addr, "GET", "/slurm/v0.0.43/jobs", &[("Authorization", &bearer)], None);
    assert_eq!(jobs.status, 200, "{}", jobs.body);

    let reply = http(&addr, "POST", "/slurm/v0.0.43/job/submit", &auth, Some(&submit_body(&c, "echo over tcp", true)));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.json()["job_id"].as_u64().expect("a job id") as u32;
    let job = c.job(id);
    assert_eq!(
        (job.user_id, job.user_name.as_str()),
        (slurmlet::identity::uid(), user.as_str()),
        "owned by the token's user"
    );
    assert_eq!(job.state_reason, "JobHeldUser");

    let release = http(&addr, "POST", &format!("/slurm/v0.0.43/job/{id}"), &auth, Some(r#"{"hold": false}"#));
    assert_eq!(release.status, 200, "{}", release.body);
    assert_eq!(release.json()["errors"], serde_json::json!([]));
    c.wait_state(id, &["COMPLETED"], T);
    assert_eq!(read(&c.path(&format!("tcp-{id}.out"))), "over tcp\n");
}
