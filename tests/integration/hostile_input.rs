//! Hostile and malformed requests, sent as raw HTTP to a real daemon: every one is refused
//! with a 4xx and slurmrestd's error envelope (`meta`, `errors[]` saying why), never a 5xx
//! or a dropped connection, and the daemon goes on serving.

use crate::common;

use common::Cluster;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// One reply, read whole.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("reply {} is not JSON ({e}): {}", self.status, String::from_utf8_lossy(&self.body))
        })
    }

    /// Asserts a refusal: `status`, JSON, slurmrestd's envelope with an error whose
    /// description contains `says`; returns the errors.
    fn refused(&self, status: u16, says: &str) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.body);
        assert_eq!(self.status, status, "{text}");
        assert!(self.header("content-type").is_some_and(|t| t.starts_with("application/json")), "{:?}", self.headers);
        let v = self.json();
        assert_eq!(v["meta"]["plugin"]["data_parser"], "data_parser/v0.0.43", "{text}");
        assert!(v["warnings"].is_array(), "{text}");
        let errors = v["errors"].as_array().unwrap_or_else(|| panic!("no errors[]: {text}")).clone();
        assert!(!errors.is_empty(), "{text}");
        for e in &errors {
            assert!(e["error_number"].as_i64().is_some_and(|n| n != 0), "{e}");
            assert!(e["error"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
            assert!(e["source"].is_string(), "{e}");
        }
        assert!(
            errors.iter().any(|e| e["description"].as_str().is_some_and(|d| d.contains(says))),
            "no error says {says:?}: {text}"
        );
        errors
    }
}

/// Sends `raw` (a whole request) on a new connection and reads the reply to its end.
fn send_raw(c: &Cluster, raw: &[u8]) -> Reply {
    let mut s = UnixStream::connect(&c.socket).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(raw).expect("send the request");
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap_or_else(|e| panic!("the reply was cut ({e}) after {} bytes", out.len()));
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no reply head (connection dropped?): {:?}", String::from_utf8_lossy(&out)));
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_string(), v.trim().to_string())).collect();
    let mut body = out[split + 4..].to_vec();
    if let Some(n) = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-length")) {
        let n: usize = n.1.parse().unwrap();
        assert!(body.len() >= n, "the body was cut: {} of {n} bytes", body.len());
        body.truncate(n);
    }
    Reply { status, headers, body }
}

/// `METHOD path` with `body` as `content_type` (none: no Content-Type header).
fn request(c: &Cluster, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n");
    if let Some(t) = content_type {
        raw.push_str(&format!("content-type: {t}\r\n"));
    }
    raw.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut raw = raw.into_bytes();
    raw.extend_from_slice(body);
    send_raw(c, &raw)
}

const SUBMIT: &str = "/slurm/v0.0.43/job/submit";

fn submit(c: &Cluster, body: &Value) -> Reply {
    request(c, "POST", SUBMIT, Some("application/json"), body.to_string().as_bytes())
}

/// A job description that is accepted as it is.
fn job(c: &Cluster) -> Value {
    json!({
        "name": "ok",
        "current_working_directory": c.work.to_str().unwrap(),
        "environment": ["PATH=/usr/bin:/bin"],
        "script": "#!/bin/sh\ntrue\n",
        "hold": true,
    })
}

/// `job` with `field` set to `value`.
fn with(c: &Cluster, field: &str, value: Value) -> Value {
    let mut j = job(c);
    j[field] = value;
    json!({ "job": j })
}

fn assert_alive(c: &Cluster) {
    let r = request(c, "GET", "/slurm/v0.0.43/ping", None, b"");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["pings"][0]["responding"], true);
    // The command-line client as well.
    let o = c.run("squeue", &["-h", "-o", "%i"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bodies_that_are_not_a_job_description_are_refused_with_the_envelope() {
    let c = Cluster::start("1", "");
    let ok = submit(&c, &json!({ "job": job(&c) }));
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));

    let json_type = Some("application/json");
    request(&c, "POST", SUBMIT, json_type, b"this is not json").refused(400, "Failure during parsing");
    request(&c, "POST", SUBMIT, json_type, br##"{"job": {"name": "x", "script": "#!/bin/sh\ntrue\n""##)
        .refused(400, "EOF while parsing");
    request(&c, "POST", SUBMIT, json_type, b"").refused(400, "Failure during parsing");
    request(&c, "POST", SUBMIT, json_type, b"{} trailing").refused(400, "trailing characters");
    request(&c, "POST", SUBMIT, json_type, b"\xff\xfe{}").refused(400, "Failure during parsing");
    request(&c, "POST", SUBMIT, json_type, b"[1, 2]").refused(422, "must be a JSON object");
    request(&c, "POST", SUBMIT, json_type, b"null").refused(422, "must be a JSON object");
    request(&c, "POST", SUBMIT, json_type, br#"{"job": "sleep 1"}"#).refused(422, "invalid job description");
    // serde would read a struct from an array by position, past the unknown-field check.
    request(&c, "POST", SUBMIT, json_type, br#"{"job": ["acct", ["argv"]]}"#).refused(422, "must be a JSON object");
    request(&c, "POST", SUBMIT, json_type, br#"{"job": {"name": "x"}, "job": {}}"#).refused(422, "duplicate field");
    // Nesting deep enough to exhaust a recursive parser's stack, in a known and an unknown
    // field and in a value whose type is wrong from the start.
    let deep = format!("{{\"job\": {{\"argv\": [{}{}]}}}}", "[".repeat(100_000), "]".repeat(100_000));
    request(&c, "POST", SUBMIT, json_type, deep.as_bytes()).refused(422, "invalid type: sequence, expected a string");
    let deep = format!("{{\"bogus\": {}1{}}}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
    request(&c, "POST", SUBMIT, json_type, deep.as_bytes()).refused(422, "Unknown field \"bogus\"");
    let deep = format!("{{\"job\": {{\"name\": {}1{}}}}}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
    request(&c, "POST", SUBMIT, json_type, deep.as_bytes()).refused(422, "invalid type: map, expected a string");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    request(&c, "POST", SUBMIT, json_type, deep.as_bytes()).refused(422, "must be a JSON object");
    assert_alive(&c);

    // Unknown and unsupported fields: refused, never dropped.
    let e = submit(&c, &with(&c, "bogus_field", json!(1))).refused(422, "Unknown field \"bogus_field\"");
    assert_eq!(e[0]["source"], "#/job/bogus_field/");
    submit(&c, &with(&c, "gres", json!("gpu:1"))).refused(422, "Unknown field \"gres\"");
    submit(&c, &json!({ "job": job(&c), "extra": true })).refused(422, "Unknown field \"extra\"");
    submit(&c, &json!({ "jobs": [job(&c)] })).refused(422, "heterogeneous jobs");
    submit(&c, &with(&c, "array", json!("3-0"))).refused(422, "runs backwards");
    submit(&c, &with(&c, "array", json!("0-5000"))).refused(422, "MaxArraySize=1001");
    submit(&c, &with(&c, "dependency", json!("afterok:999999"))).refused(422, "job 999999 does not exist");
    submit(&c, &with(&c, "dependency", json!("afterwards:1"))).refused(422, "unknown dependency type");
    submit(&c, &with(&c, "flags", json!(["SPREAD_JOB"]))).refused(422, "flag \"SPREAD_JOB\"");

    // Wrong types.
    submit(&c, &with(&c, "time_limit", json!("abc"))).refused(422, "expected a number, got \"abc\"");
    submit(&c, &with(&c, "name", json!(5))).refused(422, "invalid type: integer `5`, expected a string");
    submit(&c, &with(&c, "environment", json!({"A": "1"}))).refused(422, "expected a sequence");
    submit(&c, &with(&c, "hold", json!("yes"))).refused(422, "expected a boolean");
    submit(&c, &with(&c, "open_mode", json!(["append"]))).refused(422, "Unknown or unsupported flag \"append\"");
    submit(&c, &with(&c, "kill_warning_flags", json!(["HURRY"]))).refused(422, "flag \"HURRY\"");
    assert_alive(&c);
}

#[test]
fn numbers_out_of_range_are_refused_never_wrapped() {
    let c = Cluster::start("2", "");
    let refused = |field: &str, value: Value, says: &str| {
        submit(&c, &with(&c, field, value.clone())).refused(422, says);
    };
    for (field, value) in [
        ("time_limit", json!(-1)),
        ("time_limit", json!(4_294_967_296u64)),
        ("time_limit", json!(1e300)),
        ("time_limit", json!({"set": true, "number": -5})),
        ("time_limit", json!([true, false, 5])),
        ("memory_per_node", json!([])),
        ("time_limit", json!("99999999999999999999")),
        ("cpus_per_task", json!(-1)),
        ("cpus_per_task", json!(4_294_967_296u64)),
        ("cpus_per_task", json!(2.5)),
        ("tasks", json!(-2)),
        ("minimum_cpus", json!(u64::MAX)),
        ("memory_per_node", json!("18446744073709551616")),
        ("memory_per_cpu", json!(-1)),
        ("nice", json!(2_147_483_648u64)),
        ("kill_warning_delay", json!(70_000)),
        ("begin_time", json!(-1)),
    ] {
        refused(field, value, "invalid job description");
    }
    // Big numbers that parse are checked against the node, with their products saturated:
    // 2^63 MB per CPU times 2 CPUs must not wrap around to nothing.
    let mut j = job(&c);
    j["memory_per_cpu"] = json!(1u64 << 63);
    j["tasks"] = json!(2);
    submit(&c, &json!({ "job": j })).refused(422, "Memory specification can not be satisfied");
    let mut j = job(&c);
    j["tres_per_job"] = json!("gres/gpu:1");
    j["cpus_per_tres"] = json!("gres/gpu:4294967297");
    submit(&c, &json!({ "job": j })).refused(422, "CPUs");
    refused("tasks", json!(4_294_967_295u64), "CPUs");
    refused("cpus_per_task", json!(100_000), "CPUs");
    refused("memory_per_node", json!(u64::MAX), "Memory specification can not be satisfied");
    refused("tres_per_job", json!("gres/gpu:99999999999"), "specification: gres/gpu:99999999999");
    refused("tres_per_node", json!("gres/gpu:4294967295"), "GPUs");
    refused("minimum_nodes", json!(4_294_967_295u64), "nodes can never run here");
    refused("nodes", json!("99999999999999999999-3"), "invalid node count");
    refused("nodes", json!("2-3"), "nodes can never run here");
    // A begin time past any date (found by schemathesis: on the test-only endpoint, its end
    // time overflowed while the daemon's lock was held, and every later request failed).
    for path in [SUBMIT, "/slurmlet/v1/job/test"] {
        let body = with(&c, "begin_time", json!(18_446_744_073_709_551_614u64)).to_string();
        request(&c, "POST", path, Some("application/json"), body.as_bytes())
            .refused(422, "past the end of the year 9999");
        assert_alive(&c);
    }
    let mut j = job(&c);
    j["begin_time"] = json!(253_402_300_799u64);
    j["time_limit"] = json!(4_294_967_295u64);
    let r = request(
        &c,
        "POST",
        "/slurmlet/v1/job/test",
        Some("application/json"),
        json!({ "job": j }).to_string().as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["jobs"][0]["start_time"]["number"], 253_402_300_799u64);
    // A time limit of u32::MAX minutes is a (very long) limit, not an error.
    let ok = submit(&c, &with(&c, "time_limit", json!(4_294_967_295u64)));
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    assert_alive(&c);
}

#[test]
fn text_that_would_reach_a_terminal_is_refused_and_output_paths_are_the_users() {
    let c = Cluster::start("1", "");
    for (field, value) in [
        ("name", "evil\u{1b}]0;pwned\u{7}"),
        ("comment", "a\u{1b}[2Jb"),
        ("account", "x\ny"),
        ("qos", "\u{9b}31m"),
        ("wckey", "w\u{7f}"),
        ("standard_output", "out\r.txt"),
        ("standard_error", "err\u{1b}.txt"),
        ("standard_input", "in\u{0}"),
        ("tres_per_node", "gres/gpu:1\n"),
        ("tres_per_job", "gres/gpu:1\t"),
        ("tres_per_task", "gres/gpu:1\r"),
    ] {
        submit(&c, &with(&c, field, json!(value))).refused(422, "contains a control character");
    }
    submit(&c, &with(&c, "argv", json!(["cmd\u{1b}[31m", "arg"]))).refused(422, "argv[0]");
    submit(&c, &with(&c, "environment", json!(["PATH=/bin", "HOSTNAME=h\u{1b}[1m"]))).refused(422, "HOSTNAME");
    // Refused for its text, before any look at the path (made as the user, without the lock).
    submit(&c, &with(&c, "current_working_directory", json!(format!("{}\u{1b}", c.work.display()))))
        .refused(422, "--chdir contains a control character");
    // A relative working directory would be the daemon's, not the submitter's.
    for relative in [".", "work", "../work"] {
        submit(&c, &with(&c, "current_working_directory", json!(relative))).refused(422, "not an absolute path");
    }

    // Output paths are the user's own, opened with the user's rights: `..` is allowed and the
    // directories are created as Slurm creates them; a directory that cannot be created is
    // refused at submit time.
    let r = submit(&c, &with(&c, "standard_output", json!("../elsewhere/../up/%j.out")));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(c.dir.path().join("up").is_dir(), "the output directory was not created");
    submit(&c, &with(&c, "standard_output", json!("/proc/self/x/y.out"))).refused(422, "cannot create directory");
    submit(&c, &with(&c, "standard_input", json!("../../no/such/input"))).refused(422, "does not exist");

    // Printable names of any script make it through, and squeue prints them as they are.
    let name = "naïve 名前 ✓";
    let r = submit(&c, &with(&c, "name", json!(name)));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let o = c.run("squeue", &["-h", "-o", "%j|%k"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l == format!("{name}|(null)")), "{out}");
    assert!(!o.stdout.iter().any(|&b| b == 0x1b || b == b'\r' || b == 0x07), "raw control bytes: {out:?}");
    assert_alive(&c);
}

#[test]
fn text_fields_longer_than_slurm_takes_them_are_refused_naming_the_field_and_its_limit() {
    let c = Cluster::start("1", "");
    let long = |n: usize| "n".repeat(n);
    for (field, option, limit) in [
        ("name", "--job-name", 1024),
        ("comment", "--comment", 1024),
        ("account", "--account", 1024),
        ("qos", "--qos", 1024),
        ("wckey", "--wckey", 1024),
        ("standard_output", "--output", 4096),
        ("standard_error", "--error", 4096),
    ] {
        let errors = submit(&c, &with(&c, field, json!(long(limit + 1))))
            .refused(422, &format!("{option} has {} bytes; the limit is {limit}, as in Slurm", limit + 1));
        assert_eq!(errors[0]["error_number"], 2012, "Slurm's ESLURM_PATHNAME_TOO_LONG: {errors:?}");
    }
    let host = format!("HOSTNAME={}", long(1025));
    submit(&c, &with(&c, "environment", json!(["PATH=/bin", host])))
        .refused(422, "HOSTNAME (the submit host) has 1025");
    // At the limit, it is taken; a renaming past it is refused.
    let r = submit(&c, &with(&c, "name", json!(long(1024))));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["job_id"].as_u64().unwrap().to_string();
    let o = c.run("scontrol", &["update", &format!("JobId={id}"), &format!("JobName={}", long(1025))]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("too long"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_alive(&c);
}

#[test]
fn bad_job_ids_unknown_paths_methods_and_media_types_get_4xx_envelopes() {
    let c = Cluster::start("1", "");
    let ok = submit(&c, &json!({ "job": job(&c) }));
    let id = ok.json()["job_id"].as_u64().expect("job id");

    for bad in ["abc", "-1", "0", "99999999999999", "4294967296", "1.x", "1_x", "1_", "%00", "..%2F..%2Fetc", "+1"] {
        let get = request(&c, "GET", &format!("/slurm/v0.0.43/job/{bad}"), None, b"");
        get.refused(422, "Unable to parse JobId");
        let del = request(&c, "DELETE", &format!("/slurm/v0.0.43/job/{bad}"), None, b"");
        del.refused(422, "Unable to parse JobId");
        let wait = request(&c, "GET", &format!("/slurmlet/v1/job/{bad}/wait"), None, b"");
        wait.refused(422, "Unable to parse JobId");
    }
    // A wait is bounded: a job that has not ended by the timeout is answered with 202 and
    // the job as it is (found by schemathesis: a wait on a held job never answered).
    let started = std::time::Instant::now();
    let r = request(&c, "GET", &format!("/slurmlet/v1/job/{id}/wait?timeout=1"), None, b"");
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["jobs"][0]["job_state"][0], "PENDING");
    assert!(started.elapsed() >= Duration::from_secs(1) && started.elapsed() < Duration::from_secs(10));
    for bad in ["0", "-1", "3601", "x"] {
        request(&c, "GET", &format!("/slurmlet/v1/job/{id}/wait?timeout={bad}"), None, b"")
            .refused(422, "a number of seconds from 1 to 3600");
    }
    // A job id that is well formed but unknown.
    request(&c, "GET", "/slurm/v0.0.43/job/4294967295", None, b"").refused(404, "Unable to query JobId=4294967295");
    request(&c, "GET", "/slurmlet/v1/job/4294967295/wait", None, b"").refused(404, "Unable to query JobId=4294967295");
    // Cancel queries: an unknown signal or flag is refused, the job is left alone.
    let cancel = format!("/slurm/v0.0.43/job/{id}");
    request(&c, "DELETE", &format!("{cancel}?signal=NOTASIGNAL"), None, b"").refused(422, "Invalid signal");
    request(&c, "DELETE", &format!("{cancel}?flags=HURRY"), None, b"").refused(422, "flag \"HURRY\"");
    request(&c, "DELETE", &format!("{cancel}?signal=%ff%fe"), None, b"").refused(422, "Invalid signal");
    assert_eq!(c.state(id as u32), "PENDING");
    assert_alive(&c);

    // Unknown paths and versions, and methods a path does not take.
    for path in ["/slurm/v0.0.43/nosuch", "/slurm/v0.0.99/ping", "/", "/slurm/v0.0.43/job/1/2/3", "/../../etc/passwd"] {
        request(&c, "GET", path, None, b"").refused(404, "Unable to find requested URL endpoint");
    }
    let put = request(&c, "PUT", "/slurm/v0.0.43/jobs", Some("application/json"), b"{}");
    put.refused(405, "does not take PUT");
    assert_eq!(put.header("allow"), Some("GET,HEAD"));
    request(&c, "PATCH", SUBMIT, None, b"").refused(405, "does not take PATCH");
    request(&c, "GET", SUBMIT, None, b"").refused(405, "does not take GET");

    // Media types: only JSON bodies are read.
    let body = json!({ "job": job(&c) }).to_string();
    request(&c, "POST", SUBMIT, Some("text/plain"), body.as_bytes()).refused(415, "application/json only");
    request(&c, "POST", SUBMIT, Some("application/x-www-form-urlencoded"), b"a=1")
        .refused(415, "application/json only");
    let r = request(&c, "POST", SUBMIT, Some("application/json; charset=utf-8"), body.as_bytes());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r = request(&c, "POST", SUBMIT, None, body.as_bytes());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    // A body of a few MiB is read (a long script); one over 16 MiB is refused before it is
    // read whole.
    let long = with(&c, "script", json!("x".repeat(3 << 20)));
    let r = request(&c, "POST", SUBMIT, Some("application/json"), long.to_string().as_bytes());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let r =
        send_raw(&c, b"POST /slurm/v0.0.43/job/submit HTTP/1.1\r\nhost: x\r\ncontent-length: 999999999999\r\n\r\n{}");
    r.refused(413, "at most 16777216 are read");
    // A listing that asks for more codes than it may.
    let codes = json!({ "codes": "i".repeat(5000) }).to_string();
    request(&c, "POST", "/slurmlet/v1/jobs/query", Some("application/json"), codes.as_bytes())
        .refused(400, "at most 1024");
    request(&c, "POST", "/slurmlet/v1/jobs/query", Some("application/json"), br#"{"bogus": 1}"#)
        .refused(400, "unknown field `bogus`");
    request(&c, "POST", "/slurmlet/v1/jobs/query", Some("application/json"), b"[]")
        .refused(400, "must be a JSON object");
    assert_alive(&c);
}

#[test]
fn a_connection_stays_usable_after_each_refusal() {
    let c = Cluster::start("1", "");
    let mut s = UnixStream::connect(&c.socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Each request's head and body are written separately, as HTTP clients do, and no
    // handler reads the body: the daemon still must, for the next request to be read.
    let requests: [(&str, &str, &[u8]); 5] = [
        ("PUT", "/slurm/v0.0.43/job/1", br#"{"time_limit": 5}"#),
        ("POST", "/slurm/v0.0.43/nosuch", b"{}"),
        ("DELETE", "/slurm/v0.0.43/job/abc", b"{}"),
        ("GET", "/slurm/v0.0.43/ping", b"{\"x\": 1}"),
        ("POST", SUBMIT, b"not json"),
    ];
    let mut statuses = Vec::new();
    let mut reader = std::io::BufReader::new(s.try_clone().unwrap());
    for (method, path, body) in requests {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(body).unwrap();
        statuses.push(read_reply(&mut reader));
    }
    assert_eq!(statuses, [405, 404, 422, 200, 400]);
    assert_alive(&c);
}

/// Reads one reply with a Content-Length from a kept-alive connection; returns its status.
fn read_reply(r: &mut impl std::io::BufRead) -> u16 {
    let mut line = String::new();
    r.read_line(&mut line).expect("a status line");
    assert!(!line.is_empty(), "the connection was closed");
    let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let mut length = 0;
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            if n.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).unwrap();
    status
}
