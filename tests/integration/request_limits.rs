//! What one client may ask of the daemon: request bodies up to 16 MiB (413 past that, with
//! the limit named), batch scripts up to Slurm's 4 MiB, and a bounded number of pending and
//! running jobs per user, by default 10,000.

use crate::common;
use common::T;
use common::*;
use slurmlet::api::types::{JobDescMsg, JobSubmitReq, DATA_PARSER};
use std::io::{Read, Write};

const MIB: usize = 1 << 20;

/// Sends `head` then `body` on a new connection and returns the reply's status and its
/// JSON body. The body is written from another thread, as a client that writes its whole
/// request before reading does.
fn raw_request(c: &Cluster, head: String, body: Vec<u8>) -> (u16, serde_json::Value) {
    let mut s = std::os::unix::net::UnixStream::connect(&c.socket).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(head.as_bytes()).and_then(|()| w.write_all(&body));
    });
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    writer.join().unwrap();
    let text = String::from_utf8_lossy(&reply);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status in {text:?}"));
    let json = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(json).unwrap_or_else(|e| panic!("reply body is not JSON ({e}): {json:?}")))
}

fn submit_path() -> String {
    format!("/slurm/{DATA_PARSER}/job/submit")
}

#[test]
fn a_body_over_sixteen_mib_is_answered_413_naming_the_limit() {
    let c = Cluster::start("0", "");
    let body = vec![b' '; 17 * MIB];
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        submit_path(),
        body.len()
    );
    let (status, json) = raw_request(&c, head, body);
    assert_eq!(status, 413, "{json}");
    let e = &json["errors"][0];
    let text = e["description"].as_str().unwrap();
    assert!(text.contains("16777216 bytes (16 MiB)") && text.contains("17825792 bytes"), "{json}");
    assert_eq!(e["source"], "body");

    // The same without a length announced: the body is cut off at the limit while read.
    let mut chunked = Vec::new();
    for _ in 0..17 {
        chunked.extend_from_slice(format!("{:x}\r\n", MIB).as_bytes());
        chunked.extend(std::iter::repeat_n(b' ', MIB));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        submit_path()
    );
    let (status, json) = raw_request(&c, head, chunked);
    assert_eq!(status, 413, "{json}");
    assert!(json["errors"][0]["description"].as_str().unwrap().contains("16 MiB"), "{json}");

    // Nothing was queued, and the daemon serves on.
    assert!(c.client().jobs().unwrap().jobs.is_empty());
    c.sbatch(&["--hold", "--wrap", "true"]);
}

/// A script of `size` bytes: a shebang, `true`, then comment lines.
fn script_of(size: usize) -> String {
    let mut s = String::from("#!/bin/sh\ntrue\n");
    let line = format!("# {}\n", "x".repeat(77));
    while s.len() + line.len() <= size {
        s.push_str(&line);
    }
    s
}

#[test]
fn scripts_over_four_mib_are_refused_as_slurm_refuses_them() {
    let c = Cluster::start("0", "");
    std::fs::write(c.path("big.sh"), script_of(5 * MIB)).unwrap();
    let out = c.run("sbatch", &["--hold", "big.sh"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the limit is 4194304")
            && err.contains("Batch job submission failed: Pathname of a file, directory or other parameter too long"),
        "{err}"
    );
    // One over the body limit never gets that far.
    std::fs::write(c.path("huge.sh"), script_of(20 * MIB)).unwrap();
    let out = c.run("sbatch", &["--hold", "huge.sh"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("larger than the daemon's limit of 16777216 bytes"), "{err}");
    assert!(c.client().jobs().unwrap().jobs.is_empty());
    // Just under the limit is fine, and the whole script is kept.
    std::fs::write(c.path("ok.sh"), script_of(4 * MIB)).unwrap();
    let id = c.sbatch(&["--hold", "ok.sh"]);
    assert_eq!(c.state(id), "PENDING");
}

fn held(c: &Cluster) -> JobSubmitReq {
    let env = vec![format!("PATH={}", std::env::var("PATH").unwrap_or_default())];
    JobSubmitReq {
        script: None,
        job: Some(JobDescMsg {
            script: Some("#!/bin/sh\ntrue\n".into()),
            environment: Some(env),
            current_working_directory: Some(c.work.display().to_string()),
            hold: Some(true),
            ..Default::default()
        }),
    }
}

#[test]
fn the_submit_limit_counts_jobs_as_they_end_and_across_a_restart() {
    let mut c = Cluster::start("0", "[limits]\nmax_submitted_jobs_per_user = 2");
    let refused = |c: &Cluster| {
        let out = c.run("sbatch", &["--hold", "--wrap", "true"]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success() && err.contains("QOSMaxSubmitJobPerUserLimit"), "{err}");
        assert!(err.contains("you have 2 jobs pending or running; the limit is 2"), "{err}");
    };
    let runs = c.sbatch(&["--wrap", "sleep 0.3"]);
    let pending = c.sbatch(&["--hold", "--wrap", "true"]);
    refused(&c);
    // A job that ends leaves room.
    c.wait_state(runs, &["COMPLETED"], T);
    let third = c.sbatch(&["--hold", "--wrap", "true"]);
    refused(&c);
    // So does a cancelled pending one.
    assert!(c.run("scancel", &[&pending.to_string()]).status.success());
    c.sbatch(&["--hold", "--wrap", "true"]);
    refused(&c);
    // A restarted daemon counts the jobs in its store.
    c.kill_daemon();
    c.start_daemon();
    refused(&c);
    assert!(c.run("scancel", &[&third.to_string()]).status.success());
    c.sbatch(&["--hold", "--wrap", "true"]);
}

#[test]
fn by_default_one_user_may_have_ten_thousand_jobs_queued() {
    let mut c = Cluster::start("0", "");
    let req = held(&c);
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                let client = c.client();
                for _ in 0..625 {
                    let r = client.submit(&req).unwrap();
                    assert!(r.errors.is_empty(), "{:?}", r.errors);
                }
            });
        }
    });
    let r = c.client().submit(&req).unwrap();
    let e = r.errors.first().expect("the 10,001st job is refused");
    assert!(e.description.contains("you have 10000 jobs pending or running; the limit is 10000"), "{e:?}");
    // A cancelled job makes room for one more.
    // (The first job of a new store is job 1.)
    assert_eq!(c.state(1), "PENDING");
    assert!(c.run("scancel", &["1"]).status.success());
    let r = c.client().submit(&req).unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // The jobs are held, so no process is left behind; cancelling 10,000 of them one by one
    // on the way out would take far longer than the test.
    c.kill_daemon();
}
