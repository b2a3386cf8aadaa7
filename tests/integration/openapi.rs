//! The OpenAPI document a real daemon serves, and the endpoints it lists: each is routed.

use crate::common;

use common::Cluster;
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// `METHOD path` with a JSON body; the status and the body.
fn call(c: &Cluster, method: &str, path: &str, body: &str) -> (u16, Vec<u8>) {
    let mut s = UnixStream::connect(&c.socket).expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").expect("a reply head");
    let status = String::from_utf8_lossy(&out[..split]).split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    (status, out[split + 4..].to_vec())
}

#[test]
fn the_served_document_lists_what_the_daemon_routes() {
    let c = Cluster::start("1", "");
    let (status, body) = call(&c, "GET", "/openapi/v3", "");
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_slice(&body).expect("the document is JSON");
    assert_eq!(doc["openapi"], "3.0.3");
    assert!(doc["components"]["schemas"]["v0.0.43_openapi_job_submit_response"].is_object());
    for other in ["/openapi", "/openapi.json", "/openapi/v3/"] {
        assert_eq!(call(&c, "GET", other, "").1, body, "{other}");
    }

    // Every documented operation, and every one left out of the document (but the one that
    // stops the daemon), reaches a handler: no "no such endpoint" 404 and no 405.
    let mut operations = Vec::new();
    for section in ["paths", "x-slurmlet-undocumented"] {
        for (path, item) in doc[section].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                operations.push((method.to_ascii_uppercase(), path.replace("{job_id}", "4294967295")));
            }
        }
    }
    assert!(operations.len() >= 16, "{operations:?}");
    for (method, path) in &operations {
        if path == "/slurmlet/v1/shutdown" {
            continue;
        }
        let (status, body) = call(&c, method, path, "{}");
        let text = String::from_utf8_lossy(&body);
        assert_ne!(status, 405, "{method} {path}: {text}");
        assert!(!text.contains("Unable to find requested URL endpoint"), "{method} {path}: {text}");
        assert!(status < 500, "{method} {path}: {status} {text}");
    }
    // And what is not in the document is not served.
    let (status, body) = call(&c, "GET", "/slurm/v0.0.43/diag", "");
    assert_eq!(status, 404);
    assert!(String::from_utf8_lossy(&body).contains("Unable to find requested URL endpoint"));
}
