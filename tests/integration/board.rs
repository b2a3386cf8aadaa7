//! `slurmlet board`: a real headless Chromium (Debian's `chromium`) drives the page against a
//! real daemon on a fake machine of two GPUs (the stand-in NVML of `tests/fake_nvml/`): the
//! GPU cards name the job and user holding each GPU, jobs submitted and cancelled with the
//! commands come and go without a reload, a job cancelled from the page is gone for squeue
//! too, and reservations show on the cards of the GPUs they hold and on the timeline; the
//! board gives nothing to a request without its token in the header, to a name it is not
//! (DNS rebinding), to another site's page, nor to a page on another port of the same
//! browser; and a job's output replaced by a link or a FIFO is neither followed nor waited on.
//!
//! The browser is spoken to through the DevTools protocol over `--remote-debugging-pipe`: it
//! reads NUL-terminated JSON commands on its fd 3 and writes replies and events on its fd 4.

use crate::common;
use common::fake_nvml::{self, me};
use common::http::{http, Reply};
use common::T;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod reservations;

/// How soon a change must show on the page.
const UPDATE: Duration = Duration::from_secs(2);

/// Debian's Chromium: the program itself, else its wrapper script; `None` when not installed.
fn chromium() -> Option<PathBuf> {
    ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].iter().map(PathBuf::from).find(|p| p.exists())
}

/// A headless Chromium and one page of it, driven over the DevTools pipe.
struct Browser {
    child: Child,
    commands: std::fs::File,
    replies: mpsc::Receiver<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

/// A pipe, both ends close-on-exec: `(read, write)`.
fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
    // SAFETY: pipe2 just opened both, and nothing else owns them.
    unsafe { (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    /// Starts the browser with one blank page attached.
    fn start(program: &PathBuf) -> Browser {
        use std::os::fd::AsRawFd;
        let profile = tempfile::tempdir().unwrap();
        let (to_browser_read, to_browser_write) = pipe();
        let (from_browser_read, from_browser_write) = pipe();
        let (child_in, child_out) = (to_browser_read.as_raw_fd(), from_browser_write.as_raw_fd());
        let mut command = std::process::Command::new(program);
        command
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Copied above 10 first, so that neither end sits on 3 or 4 when moved there.
                let input = libc::fcntl(child_in, libc::F_DUPFD, 10);
                let output = libc::fcntl(child_out, libc::F_DUPFD, 10);
                if input < 0 || output < 0 || libc::dup2(input, 3) < 0 || libc::dup2(output, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        drop((to_browser_read, from_browser_write));
        let (send, replies) = mpsc::channel();
        let mut reader = std::fs::File::from(from_browser_read);
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&message[..end]) {
                        if send.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands: std::fs::File::from(to_browser_write),
            replies,
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().expect("a target id").to_string();
        let attached = browser.call(None, "Target.attachToTarget", json!({ "targetId": target_id, "flatten": true }));
        browser.session = attached["sessionId"].as_str().expect("a session id").to_string();
        browser.page("Page.enable", json!({}));
        browser.page("Runtime.enable", json!({}));
        browser
    }

    /// Sends `method` (to the page's session, if given) and waits for its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.try_call(session, method, params).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// The same; `Err` holds the browser's error.
    fn try_call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = s.into();
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium");
        let deadline = Instant::now() + T;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self.replies.recv_timeout(left).unwrap_or_else(|_| panic!("chromium did not answer {method}"));
            if reply["id"] == id {
                return match reply.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(reply["result"].clone()),
                };
            }
        }
    }

    /// Sends `method` to the page.
    fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.call(Some(&session), method, params)
    }

    /// Opens `url` in the page.
    fn open(&mut self, url: &str) {
        self.page("Page.navigate", json!({ "url": url }));
    }

    /// The value of JavaScript `expression` in the page (a promise is waited for).
    fn eval(&mut self, expression: &str) -> Value {
        self.try_eval(expression).unwrap_or_else(|e| panic!("{expression}: {e}"))
    }

    /// The same; `Err` when it threw or the page had no context (while it loads).
    fn try_eval(&mut self, expression: &str) -> Result<Value, Value> {
        let session = self.session.clone();
        let params = json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
        let r = self.try_call(Some(&session), "Runtime.evaluate", params)?;
        match r.get("exceptionDetails") {
            Some(e) => Err(e.clone()),
            None => Ok(r["result"]["value"].clone()),
        }
    }

    /// Waits up to `within` for `expression` to be true in the page.
    fn wait_for(&mut self, what: &str, within: Duration, expression: &str) {
        let deadline = Instant::now() + within;
        loop {
            if self.try_eval(expression) == Ok(json!(true)) {
                return;
            }
            if Instant::now() >= deadline {
                let body = self.try_eval("document.body ? document.body.innerText : ''").unwrap_or_default();
                panic!("{what}: not within {within:?}; the page reads:\n{}", body.as_str().unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `slurmlet board --port 0` of cluster `c`, killed when dropped; the URL it printed, and the
/// line after it, which says how to reach it from another machine.
struct Board {
    child: Child,
    url: String,
    from_elsewhere: String,
}

impl Board {
    fn start(c: &Cluster) -> Board {
        Board::start_with(c, &[], &[])
    }

    /// The same, with `env` added to its environment and `args` to its options.
    fn start_with(c: &Cluster, env: &[(&str, &std::path::Path)], args: &[&str]) -> Board {
        let mut child = c
            .cmd("slurmlet")
            .envs(env.iter().copied())
            .args(["board", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start slurmlet board");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("slurmlet board printed its URL").expect("its output");
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        let from_elsewhere = lines.next().expect("slurmlet board said how to reach it").expect("its output");
        // Its later lines, if any, are read and dropped.
        std::thread::spawn(move || lines.for_each(drop));
        Board { child, url, from_elsewhere }
    }

    /// `127.0.0.1:PORT`.
    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").split('/').next().unwrap().to_string()
    }

    /// The access token.
    fn token(&self) -> String {
        self.url.split("/#token=").nth(1).expect("a token in the URL's fragment").to_string()
    }

    /// The header that carries the token, as the page sends it.
    fn authorization(&self) -> String {
        format!("Bearer {}", self.token())
    }

    /// `method path` with the token.
    fn call(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        http(&self.addr(), method, path, &[("Authorization", &self.authorization())], body)
    }

    /// A ticket for the event stream.
    fn ticket(&self) -> String {
        let r = self.call("POST", "/api/ticket", None);
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["ticket"].as_str().expect("a ticket").to_string()
    }

    /// The event stream opened with `ticket`, read until its first state, and what was read.
    fn events(&self, ticket: &str) -> (std::net::TcpStream, String) {
        let mut events = std::net::TcpStream::connect(self.addr()).unwrap();
        events.set_read_timeout(Some(T)).unwrap();
        write!(events, "GET /events?ticket={ticket} HTTP/1.1\r\nHost: {}\r\n\r\n", self.addr()).unwrap();
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        while !seen.contains("event: live") {
            let n = events.read(&mut buf).expect("the event stream");
            assert!(n > 0, "the event stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        (events, seen)
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Held by the tests that time the page, so that the one that loads the machine with 10,000
/// jobs does not run beside another one.
fn timing_alone() -> std::sync::MutexGuard<'static, ()> {
    static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The job ids `squeue` lists.
fn squeue_ids(c: &Cluster) -> Vec<String> {
    let out = c.run("squeue", &["-h", "-o", "%i"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).split_whitespace().map(String::from).collect()
}

#[test]
fn the_board_answers_only_its_token_in_a_header_to_its_own_names_and_sets_no_cookie() {
    let c = Cluster::start("1", "");
    let job = c.sbatch(&["-o", "/dev/null", "--wrap", "sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    let board = Board::start(&c);
    let (addr, token) = (board.addr(), board.token());
    assert!(board.url.starts_with("http://127.0.0.1:") && token.len() == 64, "{}", board.url);
    let mut replies = Vec::new();

    // The page and its files hold no secret: anyone may have them.
    for path in ["/", "/board.js", "/reservations.js", "/board.css", &format!("/?token={token}")] {
        let r = http(&addr, "GET", path, &[], None);
        assert_eq!(r.status, 200, "GET {path}: {}", r.body);
        assert!(!r.body.contains(&token), "GET {path} gave the token away");
        replies.push(r);
    }
    // Everything else needs the token in the header: not in the query, not in a cookie.
    let wrong = format!("Bearer {}", "0".repeat(64));
    let (cookie, bare) = (format!("slurmlet_board={token}"), token.clone());
    let cancel = format!("/api/job/{job}/cancel");
    for (method, path) in [
        ("GET", "/api/live"),
        ("GET", "/api/samples"),
        ("GET", "/api/usage"),
        ("GET", &format!("/api/job/{job}")),
        ("GET", &format!("/api/live?token={token}")),
        ("POST", "/api/ticket"),
        ("POST", &cancel),
    ] {
        for headers in [
            vec![],
            vec![("Cookie", cookie.as_str())],
            vec![("Authorization", bare.as_str())],
            vec![("Authorization", wrong.as_str())],
        ] {
            let r = http(&addr, method, path, &headers, (method == "POST").then_some("{}"));
            assert_eq!(r.status, 401, "{method} {path} with {headers:?}: {}", r.body);
            replies.push(r);
        }
    }
    let live = board.call("GET", "/api/live", None);
    assert_eq!(live.status, 200, "{}", live.body);
    assert_eq!(live.json()["live"]["queue"]["running"][0]["job_id"], job, "{}", live.body);
    replies.push(live);

    // The event stream opens with a ticket, once; without one, or with the token, it does not.
    for path in ["/events".to_string(), format!("/events?token={token}"), format!("/events?ticket={token}")] {
        let r = http(&addr, "GET", &path, &[("Authorization", &board.authorization())], None);
        assert_eq!(r.status, 401, "GET {path}: {}", r.body);
    }
    let ticket = board.ticket();
    let (stream, seen) = board.events(&ticket);
    assert!(seen.starts_with("HTTP/1.1 200") && seen.contains("text/event-stream"), "{seen}");
    assert!(!seen.to_ascii_lowercase().contains("set-cookie"), "{seen}");
    drop(stream);
    let again = http(&addr, "GET", &format!("/events?ticket={ticket}"), &[], None);
    assert_eq!(again.status, 401, "a ticket opened the stream twice: {}", again.body);

    // DNS rebinding: a page of another name turned to 127.0.0.1 gets nothing, even the page.
    let port = addr.rsplit(':').next().unwrap().to_string();
    let rebound = format!("evil.example:{port}");
    for path in ["/", "/api/live"] {
        let r = http(&addr, "GET", path, &[("Host", &rebound), ("Authorization", &board.authorization())], None);
        assert_eq!(r.status, 403, "GET {path} as {rebound}: {}", r.body);
        assert!(r.body.contains("does not answer to the host"), "{}", r.body);
    }
    let r = http(
        &addr,
        "GET",
        "/api/live",
        &[("Host", &format!("localhost:{port}")), ("Authorization", &board.authorization())],
        None,
    );
    assert_eq!(r.status, 200, "as localhost: {}", r.body);

    // An action from another site's page is refused even with the token; the board's own
    // page's is done.
    let auth = board.authorization();
    let r = http(&addr, "POST", &cancel, &[("Authorization", &auth), ("Origin", "http://127.0.0.1:1")], Some("{}"));
    assert_eq!(r.status, 403, "{}", r.body);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.state(job), "RUNNING");
    let own = format!("http://{addr}");
    let r = http(&addr, "POST", &cancel, &[("Authorization", &auth), ("Origin", &own)], Some("{}"));
    assert_eq!(r.status, 200, "{}", r.body);
    replies.push(r);
    c.wait_state(job, &["CANCELLED"], T);

    for r in &replies {
        assert_eq!(r.header("set-cookie"), None, "a cookie was set: {}", r.body);
    }
}

#[test]
fn a_board_on_every_address_prints_a_url_a_browser_can_open() {
    let c = Cluster::start("1", "");
    let board = Board::start_with(&c, &[], &["--bind", "0.0.0.0"]);
    let named = board.addr();
    let port = named.rsplit(':').next().unwrap().to_string();
    let name = slurmlet::paths::kernel_hostname().expect("a host name");
    assert_eq!(named, format!("{name}:{port}"), "{}", board.url);
    assert!(board.from_elsewhere.contains(&format!("ssh -L {port}:127.0.0.1:{port} HOST")), "{}", board.from_elsewhere);
    // The board answers to the name it printed, to loopback and to any address; not to
    // another name.
    let loopback = format!("127.0.0.1:{port}");
    for host in [named.as_str(), &format!("localhost:{port}"), &loopback, &format!("10.11.12.13:{port}")] {
        let r = http(&loopback, "GET", "/api/live", &[("Host", host), ("Authorization", &board.authorization())], None);
        assert_eq!(r.status, 200, "as {host}: {}", r.body);
    }
    let r = http(&loopback, "GET", "/", &[("Host", &format!("evil.example:{port}"))], None);
    assert_eq!(r.status, 403, "{}", r.body);
}

/// A server on another loopback port, as another user of the machine may run one: it keeps
/// each request's head as it came, and answers `GET /` with `page`, anything else with 204.
struct Recorder {
    addr: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Recorder {
    fn start(page: String) -> Recorder {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the recorder");
        let addr = listener.local_addr().unwrap().to_string();
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(n @ 1..) => head.extend_from_slice(&buf[..n]),
                        _ => break,
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let reply = if head.starts_with("GET / ") {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                        page.len()
                    )
                } else {
                    "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_string()
                };
                kept.lock().unwrap().push(head);
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        Recorder { addr, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// The hostile second user: a page served on another port of 127.0.0.1, opened in the browser
/// that has the board open, receives nothing of the board's, and cannot read it nor act on it.
#[test]
fn a_page_on_another_port_gets_nothing_from_the_board_open_in_the_same_browser() {
    let test = "a_page_on_another_port_gets_nothing_from_the_board_open_in_the_same_browser";
    let Some(program) = chromium() else {
        skip(test, "chromium is not installed (apt-get install chromium)");
        return;
    };
    let c = Cluster::start("1", "");
    let job = c.sbatch(&["-o", "job.out", "--wrap", "echo the output of the owner; sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    let board = Board::start(&c);
    let mut browser = Browser::start(&program);
    let connected = "document.getElementById('connection').dataset.connected === 'true'";

    // The board's address without the token: the page says what to open, and reads nothing.
    browser.open(&format!("http://{}/", board.addr()));
    browser.wait_for(
        "the page to ask for the printed URL",
        T,
        "document.getElementById('message').textContent.includes('open the URL that `slurmlet board` printed')",
    );
    browser.open(&board.url);
    browser.wait_for("the page to connect", T, connected);
    browser.wait_for(
        "the job in the queue",
        T,
        &format!("!!document.querySelector('#running tr[data-job=\"{job}\"]')"),
    );

    // The same tab goes to the other user's page, which tries the board.
    let page = format!(
        r#"<!doctype html><title>elsewhere</title><script>
(async () => {{
  const board = "http://{addr}";
  const tried = {{}};
  for (const [what, path, init] of [
    ["live", "/api/live", {{}}],
    ["job", "/api/job/{job}", {{}}],
    ["ticket", "/api/ticket", {{ method: "POST" }}],
  ]) {{
    try {{
      const r = await fetch(board + path, Object.assign({{ credentials: "include" }}, init));
      tried[what] = "read " + r.status + ": " + (await r.text()).slice(0, 100);
    }} catch (e) {{
      tried[what] = "failed";
    }}
  }}
  try {{
    await fetch(board + "/api/job/{job}/cancel", {{ method: "POST", mode: "no-cors", credentials: "include", body: "{{}}" }});
    tried.cancel = "sent";
  }} catch (e) {{
    tried.cancel = "failed";
  }}
  tried.storage = sessionStorage.length + localStorage.length;
  tried.cookie = document.cookie;
  await fetch("/report", {{ method: "POST", credentials: "include", body: JSON.stringify(tried) }});
  window.__tried = tried;
}})();
</script>"#,
        addr = board.addr()
    );
    let hostile = Recorder::start(page);
    browser.open(&format!("http://{}/", hostile.addr));
    browser.wait_for("the other page's tries", T, "!!window.__tried");
    let tried = browser.eval("window.__tried");
    for what in ["live", "job", "ticket"] {
        assert_eq!(tried[what], "failed", "the other page read the board's {what}: {tried}");
    }
    assert_eq!((&tried["storage"], &tried["cookie"]), (&json!(0), &json!("")), "{tried}");
    // Not the token, not a cookie: nothing of the board's reached the other port.
    let heads = hostile.heads();
    assert!(heads.iter().any(|h| h.starts_with("POST /report")), "{heads:?}");
    for head in &heads {
        assert!(!head.contains(&board.token()), "the token reached the other port: {head}");
        assert!(!head.to_ascii_lowercase().contains("\r\ncookie:"), "a cookie reached the other port: {head}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.state(job), "RUNNING", "the other page cancelled the job");
    // Knowing only the board's address, the other user reads nothing and cancels nothing.
    for (method, path) in [("GET", format!("/api/job/{job}")), ("POST", format!("/api/job/{job}/cancel"))] {
        let r = http(&board.addr(), method, &path, &[], Some("{}"));
        assert_eq!(r.status, 401, "{method} {path}: {}", r.body);
        assert!(!r.body.contains("the output of the owner"), "{}", r.body);
    }
    assert_eq!(c.state(job), "RUNNING");

    // Back in the tab, the board's page still has its token, and works.
    browser.open(&format!("http://{}/", board.addr()));
    browser.wait_for("the page to connect again", T, connected);
}

/// The job's page through the board, how long it took, and why its output is not shown.
fn job_page(board: &Board, job: u32) -> (Value, Duration, String) {
    let t = Instant::now();
    let r = board.call("GET", &format!("/api/job/{job}"), None);
    let took = t.elapsed();
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    let why = v["missing"].as_array().unwrap().iter().find(|m| m["part"] == "output").map(|m| m["why"].to_string());
    (v, took, why.unwrap_or_default())
}

#[test]
fn a_jobs_output_replaced_by_a_link_or_a_fifo_is_neither_followed_nor_waited_on() {
    let c = Cluster::start("1", "");
    let job = c.sbatch(&["-o", "job.out", "--wrap", "echo the output of the job itself; sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    c.wait_file("job.out", T);
    let board = Board::start(&c);
    let (v, _, _) = job_page(&board, job);
    assert!(v["output_tail"].as_str().is_some_and(|t| t.contains("the output of the job itself")), "{v}");

    // A link to another file of the user's, or to /etc/passwd, is not followed.
    let output = c.path("job.out");
    let notes = c.path("notes.txt");
    std::fs::write(&notes, "a file of the user's, not the job's output\n").unwrap();
    for (target, inside) in
        [(notes.as_path(), "not the job's output"), (std::path::Path::new("/etc/passwd"), "root:x:0")]
    {
        replace_by(&output, |at| std::os::unix::fs::symlink(target, at).unwrap());
        let (v, _, why) = job_page(&board, job);
        assert_eq!(v["output_tail"], Value::Null, "{v}");
        assert!(why.contains("a symbolic link, which the board does not follow"), "{v}");
        assert!(!v.to_string().contains(inside), "the link to {} was followed: {v}", target.display());
    }

    // A FIFO: each view answers at once, saying why, and holds nothing of the board's.
    replace_by(&output, mkfifo);
    for _ in 0..5 {
        let (v, took, why) = job_page(&board, job);
        assert!(took < Duration::from_secs(2), "the page took {took:?}");
        assert!(v["output_tail"].is_null() && why.contains("not a regular file"), "{v}");
    }
    let t = Instant::now();
    let live = board.call("GET", "/api/live", None);
    assert!(live.status == 200 && t.elapsed() < Duration::from_secs(2), "{:?}: {}", t.elapsed(), live.body);
    let next = c.sbatch(&["-o", "/dev/null", "--wrap", "true"]);
    c.wait_state(next, &["COMPLETED"], T);
    assert_eq!(c.state(job), "RUNNING");
}

#[test]
fn the_page_shows_the_gpus_and_the_queue_and_cancels_a_job() {
    let Some(program) = chromium() else {
        skip(
            "the_page_shows_the_gpus_and_the_queue_and_cancels_a_job",
            "chromium is not installed (apt-get install chromium)",
        );
        return;
    };
    let _alone = timing_alone();
    let (c, _machine) = fake_nvml::start_watching("");
    let first =
        c.sbatch(&["--gres=gpu:1", "-J", "first", "-o", "first.out", "--wrap", "echo hello from the first; sleep 300"]);
    c.wait_state(first, &["RUNNING"], T);
    let held_gpu = wait_for("the daemon to say which GPU the job holds", T, || {
        let gpus = c.client().gpus().map_err(|e| e.to_string())?;
        gpus.gpus
            .iter()
            .find(|g| g.jobs.iter().any(|j| j.job_id == Some(first)))
            .map(|g| g.index)
            .ok_or_else(|| format!("{:?}", gpus.gpus))
    });
    let free_gpu = 1 - held_gpu;
    let board = Board::start(&c);
    let mut browser = Browser::start(&program);
    browser.open(&board.url);
    page_shows_the_gpu_cards(&mut browser, &board, first, held_gpu, free_gpu);
    let waiting = jobs_come_and_go(&c, &mut browser, first, free_gpu);
    holds_and_releases_from_the_page(&c, &mut browser);
    job_pages_show_fields_and_output(&mut browser, first, waiting);
    charts_draw_or_say_why_not(&mut browser);
}

/// The cards of both GPUs, the one held naming job `first` and its user; the token kept to
/// the tab; everything loaded from the board. Marks the page, so that a reload would show.
fn page_shows_the_gpu_cards(browser: &mut Browser, board: &Board, first: u32, held_gpu: u32, free_gpu: u32) {
    browser.wait_for(
        "the GPU cards",
        T,
        &format!(r#"!!document.querySelector('[data-gpu="{held_gpu}"]') && !!document.querySelector('[data-gpu="{free_gpu}"]')"#),
    );
    // The page keeps the URL's token to its tab and origin; the address bar lost it, and no
    // cookie holds it.
    assert_eq!(browser.eval("location.hash + location.search"), json!(""));
    assert_eq!(browser.eval("document.cookie"), json!(""));
    assert_eq!(browser.eval("sessionStorage.getItem('slurmlet-board-token')"), json!(board.token()));
    browser.wait_for(
        "the card of the GPU held to name the job and its user",
        T,
        &format!(
            r#"(() => {{ const h = document.querySelector('[data-gpu="{held_gpu}"] .holder[data-job]');
                 return !!h && h.dataset.job === "{first}" && h.dataset.user === "{}"; }})()"#,
            me()
        ),
    );
    assert_eq!(
        browser.eval(&format!(r#"document.querySelectorAll('[data-gpu="{free_gpu}"] .holder[data-job]').length"#)),
        json!(0),
        "the other GPU is free"
    );
    // Each card has its sparkline of the last hour, or says why not.
    browser.wait_for(
        "a sparkline (or why there is none) on each card",
        T,
        r#"document.querySelectorAll('[data-gpu] svg.spark, [data-gpu] [data-missing="samples"]').length === 2"#,
    );
    // Everything the page loaded came from the board itself.
    assert_eq!(
        browser.eval("performance.getEntriesByType('resource').every((e) => e.name.startsWith(location.origin))"),
        json!(true),
        "{}",
        browser.eval("JSON.stringify(performance.getEntriesByType('resource').map((e) => e.name))")
    );
    // Marks this page: a reload would lose the mark.
    browser.eval("window.__notReloaded = true; window.confirm = () => true; true");
}

/// Jobs submitted with sbatch appear (a pending one in the pending list), one cancelled with
/// scancel leaves, and `first` cancelled from the page is gone for squeue too; the job left
/// waiting.
fn jobs_come_and_go(c: &Cluster, browser: &mut Browser, first: u32, free_gpu: u32) -> u32 {
    // A job submitted with sbatch appears, a pending one in the pending list.
    let second = c.sbatch(&["--gres=gpu:1", "-J", "second", "-o", "/dev/null", "--wrap", "sleep 300"]);
    let waiting = c.sbatch(&["--gres=gpu:2", "-J", "waiting", "-o", "/dev/null", "--wrap", "sleep 300"]);
    browser.wait_for(
        "the new jobs to appear",
        UPDATE,
        &format!(
            r#"!!document.querySelector('#running tr[data-job="{second}"], #pending tr[data-job="{second}"]')
               && !!document.querySelector('#pending tr[data-job="{waiting}"]')"#
        ),
    );
    c.wait_state(second, &["RUNNING"], T);
    browser.wait_for(
        "the second job on the free GPU's card",
        T,
        &format!(r#"!!document.querySelector('[data-gpu="{free_gpu}"] .holder[data-job="{second}"]')"#),
    );

    // One cancelled with scancel leaves.
    let out = c.run("scancel", &[&second.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    browser.wait_for(
        "the cancelled job to leave",
        UPDATE,
        &format!(r#"!document.querySelector('#running tr[data-job="{second}"], #pending tr[data-job="{second}"]')"#),
    );

    // One cancelled from the page is gone for squeue too.
    browser.wait_for(
        "the cancel button of the first job",
        T,
        &format!(r#"!!document.querySelector('#running button[data-action="cancel"][data-job="{first}"]')"#),
    );
    browser.eval(&format!(
        r#"document.querySelector('#running button[data-action="cancel"][data-job="{first}"]').click(); true"#
    ));
    wait_for("squeue to lose the job cancelled from the page", T, || {
        let ids = squeue_ids(c);
        until(!ids.contains(&first.to_string()), || format!("{ids:?}"))
    });
    browser.wait_for(
        "the job cancelled from the page to leave it",
        UPDATE,
        &format!(r#"!document.querySelector('#running tr[data-job="{first}"]')"#),
    );
    assert_eq!(c.wait_state(first, &["CANCELLED"], T).job_state[0], "CANCELLED");
    assert_eq!(browser.eval("window.__notReloaded === true"), json!(true), "the page was not reloaded");
    waiting
}

/// A job held from the page, then released.
fn holds_and_releases_from_the_page(c: &Cluster, browser: &mut Browser) {
    // A job that stays pending, not to start before an hour from now.
    let later = c.sbatch(&["--begin=now+1hour", "-J", "later", "-o", "/dev/null", "--wrap", "sleep 300"]);
    let click = |browser: &mut Browser, action: &str| {
        let button = format!(r#"#pending button[data-action="{action}"][data-job="{later}"]"#);
        browser.wait_for(
            &format!("the {action} button of the later job"),
            UPDATE,
            &format!("!!document.querySelector('{button}')"),
        );
        browser.eval(&format!("document.querySelector('{button}').click(); true"));
    };
    click(browser, "hold");
    wait_for("the later job to be held", T, || {
        let j = c.job(later);
        until(j.state_reason.contains("Held"), || j.state_reason.clone())
    });
    click(browser, "release");
    wait_for("the later job to be released", T, || {
        let j = c.job(later);
        until(!j.state_reason.contains("Held") && j.job_state[0] == "PENDING", || j.state_reason.clone())
    });
}

/// A job's own page: its fields, and to its owner the end of its output (`first`'s) and the
/// chart of its GPU use.
fn job_pages_show_fields_and_output(browser: &mut Browser, first: u32, waiting: u32) {
    // The job's own page: its fields and the end of its output.
    browser.eval(&format!("location.hash = '#/job/{waiting}'; true"));
    browser.wait_for(
        "the job's page",
        T,
        r#"document.querySelector('#job-fields tr[data-field="JobName"] td:last-child')?.textContent === "waiting""#,
    );

    // To its owner, a job's page shows the end of its output.
    browser.eval(&format!("location.hash = '#/job/{first}'; true"));
    browser.wait_for(
        "the first job's output on its page",
        T,
        r#"document.getElementById("job-output").textContent.includes("hello from the first")"#,
    );
    browser.wait_for(
        "the chart of its GPU use (or why there is none)",
        T,
        r#"!!document.querySelector('#job-chart [data-chart="job"], #job-chart [data-missing="samples"]')"#,
    );
}

/// The parts the daemon has no data for say so; the charts draw data of the activity calls'
/// shapes quickly.
fn charts_draw_or_say_why_not(browser: &mut Browser) {
    // The parts the daemon has no data for say so, rather than stay empty.
    browser.eval("location.hash = '#/'; true");
    browser.wait_for(
        "the usage section",
        T,
        r#"!!document.querySelector('#usage-chart [data-chart="usage"], #usage-chart [data-missing="usage"]')"#,
    );

    // The page's charts draw data of the activity calls' shapes (src/api/activity.rs),
    // whether or not this daemon serves them: a week of a job's samples every 10 s draws
    // at once, each user's bar is there.
    let week = r#"(() => {
        const samples = [];
        for (let t = 0; t < 7 * 86400; t += 10) samples.push([t, (t % 977) * 1e6, t % 101]);
        const started = performance.now();
        const chart = lifeChart(samples, 10);
        const took = performance.now() - started;
        return { took, points: chart.querySelector("path.mem").getAttribute("d").split("L").length };
    })()"#;
    let drawn = browser.eval(week);
    assert!(drawn["took"].as_f64().is_some_and(|ms| ms < 500.0), "a week of samples took {drawn}");
    assert!(drawn["points"].as_u64().is_some_and(|n| (100..=1000).contains(&n)), "{drawn}");
    let bars = r#"(() => {
        board.usage = { users: [{ user_name: "alice", gpu_seconds: 7200, jobs: 3 },
                                { user_name: "bob", gpu_seconds: 3600, jobs: 1 }],
                        recent: [], missing: [] };
        renderUsage();
        return [...document.querySelectorAll('#usage-chart [data-user]')].map((g) => g.textContent);
    })()"#;
    assert_eq!(browser.eval(bars), json!(["alice2.0 GPU-h, 3 jobs", "bob1.0 GPU-h, 1 jobs"]));
    let spark = r#"sparkline({ index: 0, total_memory: 100, samples: [[0, 10, 5], [10, 50, 80], [20, 40, 60]] }, 100)
        .querySelectorAll("path").length"#;
    assert_eq!(browser.eval(spark), json!(2));
}

/// Submits `n` held jobs through the REST API, over four connections at once.
fn submit_held(c: &Cluster, n: usize) {
    use slurmlet::api::types::{JobDescMsg, JobSubmitReq};
    let env: Vec<String> =
        ["PATH", "HOME", "USER"].iter().filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}"))).collect();
    let desc = JobDescMsg {
        script: Some("#!/bin/sh\ntrue\n".into()),
        environment: Some(env),
        current_working_directory: Some(c.work.display().to_string()),
        name: Some("many".into()),
        standard_output: Some("/dev/null".into()),
        hold: Some(true),
        ..Default::default()
    };
    std::thread::scope(|scope| {
        for part in 0..4 {
            let desc = &desc;
            scope.spawn(move || {
                let client = c.client();
                for _ in (part..n).step_by(4) {
                    let r = client.submit(&JobSubmitReq { script: None, job: Some(desc.clone()) }).expect("submit");
                    assert!(r.errors.is_empty(), "{:?}", r.errors);
                }
            });
        }
    });
}

#[test]
fn the_board_stays_small_and_quick_with_10000_jobs_queued() {
    const JOBS: usize = 10_000;
    let _alone = timing_alone();
    let c = Cluster::start("2", "[limits]\nmax_submitted_jobs_per_user = 20000\n");
    let t = Instant::now();
    submit_held(&c, JOBS);
    eprintln!("{JOBS} jobs submitted in {:?}", t.elapsed());
    let board = Board::start(&c);

    let t = Instant::now();
    let live = board.call("GET", "/api/live", None);
    let took = t.elapsed();
    assert_eq!(live.status, 200, "{}", live.body);
    eprintln!("/api/live: {} bytes in {took:?}", live.body.len());
    let v = live.json();
    assert_eq!(v["live"]["queue"]["pending_total"], JOBS as u64);
    assert_eq!(v["live"]["queue"]["pending"].as_array().map(Vec::len), Some(200), "at most 200 pending jobs are sent");
    assert!(live.body.len() < 256 << 10, "the state sent on each change is {} bytes", live.body.len());
    // The time bounds hold where the daemon gives the queue itself (`/slurmlet/v1/queue`); a
    // board made from the whole job list reads all 10,000 jobs on each change.
    let ordered = v["live"]["queue"]["from"] == "queue";
    if ordered {
        assert!(took < Duration::from_secs(1), "/api/live took {took:?}");
    } else {
        skip(
            "the_board_stays_small_and_quick_with_10000_jobs_queued (its time bounds)",
            "the daemon has no /slurmlet/v1/queue: the board reads the whole job list",
        );
    }

    let Some(program) = chromium() else {
        skip("the_board_stays_small_and_quick_with_10000_jobs_queued (its browser part)", "chromium is not installed");
        return;
    };
    let mut browser = Browser::start(&program);
    browser.open(&board.url);
    let more = JOBS - 200;
    browser.wait_for(
        "the pending list and how many more there are",
        T,
        &format!(r#"document.getElementById("pending-more")?.textContent === "and {more} more pending""#),
    );
    assert_eq!(browser.eval("document.querySelectorAll('#pending tbody tr').length"), json!(200));
    // The figures of the closing notes: when the page first painted and when it had drawn the
    // queue, from the start of its loading.
    let paint = browser.eval(
        r#"(() => { const p = performance.getEntriesByName("first-contentful-paint")[0];
             const done = performance.getEntriesByName("board-queue-drawn")[0];
             return [p ? p.startTime : -1, done ? done.startTime : -1]; })()"#,
    );
    eprintln!("with {JOBS} jobs queued: first contentful paint {} ms, queue drawn {} ms", paint[0], paint[1]);
    // The page answers at once while the states keep coming.
    for _ in 0..5 {
        let t = Instant::now();
        browser.eval("document.querySelectorAll('[data-job]').length");
        assert!(t.elapsed() < Duration::from_millis(500), "the page took {:?} to answer", t.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    // A job cancelled at the head of the queue leaves the page within the time a change takes.
    let head = browser.eval("document.querySelector('#pending tbody tr').dataset.job");
    let head = head.as_str().expect("a job id").to_string();
    let t = Instant::now();
    let out = c.run("scancel", &[&head]);
    assert!(out.status.success(), "{}", stderr(&out));
    browser.wait_for(
        "the cancelled job to leave",
        if ordered { UPDATE } else { T },
        &format!(r#"!document.querySelector('#pending tr[data-job="{head}"]')"#),
    );
    eprintln!("the cancelled job left the page after {:?}", t.elapsed());
}

/// A Unix socket in front of the daemon's that counts the connections made through it.
struct CountingProxy {
    path: PathBuf,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl CountingProxy {
    fn start(c: &Cluster) -> CountingProxy {
        use std::os::unix::net::{UnixListener, UnixStream};
        let path = c.dir.path().join("counting.sock");
        let listener = UnixListener::bind(&path).expect("bind the proxy's socket");
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (count, daemon) = (connections.clone(), c.socket.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Ok(server) = UnixStream::connect(&daemon) else { continue };
                let (mut client_in, mut server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut client_in, &mut server_out);
                    let _ = server_out.shutdown(std::net::Shutdown::Write);
                });
                let (mut server_in, mut client_out) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server_in, &mut client_out);
                    let _ = client_out.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        CountingProxy { path, connections }
    }

    fn count(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until no connection is made for `quiet`, at most `within`; whether it was.
    fn wait_quiet(&self, quiet: Duration, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            let before = self.count();
            std::thread::sleep(quiet);
            if self.count() == before {
                return true;
            }
        }
        false
    }
}

#[test]
fn the_board_asks_the_daemon_nothing_while_no_page_is_open() {
    let c = Cluster::start("1", "");
    let proxy = CountingProxy::start(&c);
    let board = Board::start_with(&c, &[("SLURMLET_SOCKET", &proxy.path)], &[]);
    // It reads the daemon once as it starts, maybe after printing its URL.
    common::wait_for("the board to reach the daemon through the proxy", Duration::from_secs(10), || {
        common::until(proxy.count() >= 1, || "no connection yet".into())
    });
    let idle = proxy.count();
    std::thread::sleep(Duration::from_secs(3));
    let ticket = board.ticket();
    assert_eq!(proxy.count(), idle, "the board called the daemon with no page open");

    // A page listens: the board reads the daemon and sends the state.
    let (events, seen) = board.events(&ticket);
    assert!(seen.starts_with("HTTP/1.1 200") && seen.contains("text/event-stream"), "{seen}");
    assert!(proxy.count() > idle, "the board sent a state without reading the daemon");

    // The page goes: the board stops asking (once it notices, and its last wait ends).
    drop(events);
    assert!(
        proxy.wait_quiet(Duration::from_secs(3), Duration::from_secs(45)),
        "the board kept calling the daemon after the page went"
    );
}

#[test]
fn the_board_of_a_profile_shows_its_queue_from_the_job_list() {
    let (c, addr) = Cluster::start_on_tcp("2", "");
    let token = c.run("scontrol", &["token", "lifespan=600"]);
    assert!(token.status.success(), "{}", stderr(&token));
    let token_file = c.dir.path().join("token");
    std::fs::write(&token_file, &token.stdout).unwrap();
    let profiles = c.dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        format!("[profiles.tcp]\nurl = \"http://{addr}/\"\ntoken_file = \"{}\"\n", token_file.display()),
    )
    .unwrap();
    let job = c.sbatch(&["--gres=gpu:1", "-o", "/dev/null", "--wrap", "sleep 300"]);
    c.wait_state(job, &["RUNNING"], T);
    let cache = c.dir.path().join("cache");
    let board =
        Board::start_with(&c, &[("SLURMLET_PROFILES", &profiles), ("XDG_CACHE_HOME", &cache)], &["--profile", "tcp"]);
    let live = board.call("GET", "/api/live", None);
    assert_eq!(live.status, 200, "{}", live.body);
    let v = live.json();
    assert_eq!(v["live"]["source"], "profile tcp");
    assert_eq!(v["live"]["caller"]["name"], me());
    // slurmrestd has no call for the GPUs' holders: the page says so; the queue comes from
    // the v0.0.43 job list.
    assert_eq!(v["live"]["gpus"], Value::Null, "{v}");
    let missing: Vec<&str> =
        v["live"]["missing"].as_array().unwrap().iter().filter_map(|m| m["part"].as_str()).collect();
    assert!(missing.contains(&"gpus") && missing.contains(&"queue_order"), "{v}");
    assert_eq!(v["live"]["queue"]["from"], "jobs");
    assert_eq!(v["live"]["queue"]["running"][0]["job_id"], job, "{v}");

    // The page's cancel goes to the cluster.
    let r = board.call("POST", &format!("/api/job/{job}/cancel"), Some("{}"));
    assert_eq!(r.status, 200, "{}", r.body);
    c.wait_state(job, &["CANCELLED"], T);
}

/// What the fake machine says of one GPU: bytes used, utilisation, and its compute processes
/// as `(pid, bytes)`.
type Reading = (u64, u32, Vec<(u32, u64)>);

/// Four A100s of the fake machine, each with a UUID of its own.
fn four_gpus() -> Vec<Value> {
    (0..4u32)
        .map(|i| fake_nvml::gpu(i, fake_nvml::A100_MODEL, &format!("GPU-00000000-0000-4000-8000-00000000000{i}")))
        .collect()
}

/// The pid a job's script wrote to `NAME.pid` in the work directory.
fn job_pid(c: &Cluster, name: &str) -> u32 {
    let file = c.work.join(format!("{name}.pid"));
    wait_for(&format!("{} to be written", file.display()), T, || {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        text.trim().parse::<u32>().map_err(|e| format!("{text:?}: {e}"))
    })
}

/// The jobs of the busy machine: four running (two on a GPU each, two shard jobs sharing
/// one), three waiting behind them, the last held.
struct BusyJobs {
    train: u32,
    eval: u32,
    notebook: u32,
    sweep: u32,
    big: u32,
    next: u32,
    held: u32,
}

/// Submits the busy machine's jobs, after two that run and end (for the usage chart and the
/// caller's recent jobs), and waits until the four that run are running. Each of those
/// writes its pid to `NAME.pid` in the work directory (see [`job_pid`]).
fn submit_busy_jobs(c: &Cluster) -> BusyJobs {
    for name in ["prepare", "tokenize"] {
        let done = c.sbatch(&["--gres=gpu:1", "-J", name, "-o", "/dev/null", "--wrap", "sleep 1"]);
        c.wait_state(done, &["COMPLETED"], T);
    }
    let script = |name: &str| format!("echo $$ > {name}.pid; exec sleep 600");
    let train =
        c.sbatch(&["--gres=gpu:1", "-t", "8:00:00", "-J", "train-llm", "-o", "/dev/null", "--wrap", &script("train")]);
    let eval = c.sbatch(&["--gres=gpu:1", "-t", "45", "-J", "eval", "-o", "/dev/null", "--wrap", &script("eval")]);
    let notebook = c.sbatch(&["--gres=shard:2", "-J", "notebook", "-o", "/dev/null", "--wrap", &script("notebook")]);
    let sweep = c.sbatch(&["--gres=shard:1", "-t", "20", "-J", "sweep", "-o", "/dev/null", "--wrap", &script("sweep")]);
    for id in [train, eval, notebook, sweep] {
        c.wait_state(id, &["RUNNING"], T);
    }
    let big = c.sbatch(&["--gres=gpu:2", "-t", "4:00:00", "-J", "pretrain", "-o", "/dev/null", "--wrap", "true"]);
    let next = c.sbatch(&["--gres=gpu:1", "-t", "1:00:00", "-J", "finetune", "-o", "/dev/null", "--wrap", "true"]);
    let held = c.sbatch(&["-H", "--gres=gpu:1", "-J", "ablation", "-o", "/dev/null", "--wrap", "true"]);
    BusyJobs { train, eval, notebook, sweep, big, next, held }
}

/// Writes the whole page, as Chromium draws it, to `path` as PNG, once it has settled (the
/// elapsed times tick every second).
fn write_screenshot(browser: &mut Browser, path: &std::path::Path) {
    std::thread::sleep(Duration::from_millis(500));
    let height = browser.eval("document.documentElement.scrollHeight").as_u64().unwrap_or(900);
    browser.page(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1280, "height": height.min(2400), "deviceScaleFactor": 1, "mobile": false }),
    );
    let shot = browser.page("Page.captureScreenshot", json!({ "format": "png" }));
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().expect("png data")).unwrap();
    std::fs::write(path, png).unwrap();
    eprintln!("the page was written to {}", path.display());
}

/// A busy machine as the README shows it: four GPUs, two held whole, one shared by two shard
/// jobs, one used by a process outside the queue; jobs waiting behind them; and jobs that ran.
/// With `SLURMLET_BOARD_SCREENSHOT=PATH` it also writes the page, as Chromium draws it, to
/// PATH (`docs/board.png` is made so).
#[test]
fn a_busy_machine_shows_each_gpus_holders_shards_and_outsider() {
    let Some(program) = chromium() else {
        skip(
            "a_busy_machine_shows_each_gpus_holders_shards_and_outsider",
            "chromium is not installed (apt-get install chromium)",
        );
        return;
    };
    let _alone = timing_alone();
    let (mut c, machine) = fake_nvml::configure("shards_per_gpu = 4\ngpu_history_resolution = 1", four_gpus());
    let outsider = fake_nvml::Outsider::start("600");
    // GPU 3 is used by a process of no job from the start: the queue keeps off it.
    let describe = |readings: &[Reading]| {
        let gpus: Vec<Value> = four_gpus()
            .into_iter()
            .zip(readings)
            .map(|(mut gpu, (used, util, processes))| {
                gpu["memory_used"] = (*used).into();
                gpu["utilization"] = (*util).into();
                gpu["processes"] = processes
                    .iter()
                    .map(|(pid, bytes)| json!({ "pid": pid, "used_memory": bytes, "sm_util": util / 2 }))
                    .collect();
                gpu
            })
            .collect();
        fake_nvml::write_machine(&machine, json!({ "gpus": gpus }));
    };
    const GIB: u64 = 1 << 30;
    let idle = |i: usize| if i == 3 { (22 * GIB, 97, vec![(outsider.pid(), 22 * GIB)]) } else { (0, 0, vec![]) };
    describe(&[idle(0), idle(1), idle(2), idle(3)]);
    c.start_daemon_with(&[(fake_nvml::MACHINE_VARIABLE, machine.to_str().unwrap())]);

    let BusyJobs { train, eval, notebook, sweep, big, next, held } = submit_busy_jobs(&c);

    let holder_of = |gpus: &slurmlet::api::gpus::GpusResponse, id: u32| {
        gpus.gpus.iter().find(|g| g.jobs.iter().any(|j| j.job_id == Some(id))).map(|g| g.index as usize)
    };
    let gpus = c.client().gpus().unwrap();
    let (train_gpu, eval_gpu) = (holder_of(&gpus, train).unwrap(), holder_of(&gpus, eval).unwrap());
    let shared = holder_of(&gpus, notebook).unwrap();
    assert_eq!(holder_of(&gpus, sweep), Some(shared), "shard jobs share the GPU most used");
    assert!(![train_gpu, eval_gpu, shared].contains(&3), "the GPU used outside the queue was given out: {gpus:?}");
    let pids: Vec<u32> = ["train", "eval", "notebook", "sweep"].iter().map(|n| job_pid(&c, n)).collect();

    // A few seconds of figures that move, for the sparklines.
    for step in 0..8u64 {
        let wave = |base: u64, swing: u64| base + (step * 7919 % 5) * swing;
        let mut readings: Vec<Reading> = (0..4).map(idle).collect();
        readings[train_gpu] = (wave(31, 1) * GIB, 88 + (step % 3) as u32 * 4, vec![(pids[0], wave(31, 1) * GIB)]);
        readings[eval_gpu] = (wave(9, 2) * GIB, 40 + (step % 4) as u32 * 10, vec![(pids[1], wave(9, 2) * GIB)]);
        readings[shared] = (wave(14, 1) * GIB, 63, vec![(pids[2], wave(11, 1) * GIB), (pids[3], 3 * GIB)]);
        describe(&[readings[0].clone(), readings[1].clone(), readings[2].clone(), readings[3].clone()]);
        std::thread::sleep(Duration::from_millis(1100));
    }

    let board = Board::start(&c);
    let mut browser = Browser::start(&program);
    browser.page(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
    );
    browser.open(&board.url);
    let card = |gpu: usize, inner: &str| format!(r#"document.querySelector('[data-gpu="{gpu}"] {inner}')"#);
    browser.wait_for(
        "each GPU card with its holders",
        T,
        &format!(
            "!!{} && !!{} && !!{} && !!{} && !!{}",
            card(train_gpu, &format!(r#".holder[data-job="{train}"]"#)),
            card(eval_gpu, &format!(r#".holder[data-job="{eval}"]"#)),
            card(shared, &format!(r#".holder[data-job="{notebook}"]"#)),
            card(shared, &format!(r#".holder[data-job="{sweep}"]"#)),
            card(3, &format!(r#".holder.outsider[data-pid="{}"]"#, outsider.pid())),
        ),
    );
    assert_eq!(
        browser.eval(r#"document.querySelectorAll('[data-gpu="3"] .holder[data-job]').length"#),
        json!(0),
        "nobody of the queue is on the GPU used outside it"
    );
    browser.wait_for(
        "the pending jobs in scheduling order, the held one last",
        T,
        &format!(
            r#"(() => {{ const ids = [...document.querySelectorAll('#pending tr[data-job]')].map((r) => r.dataset.job);
                 return ids.join(",") === "{big},{next},{held}"; }})()"#
        ),
    );
    browser.wait_for(
        "a sparkline on each card and the usage chart",
        T,
        r#"document.querySelectorAll('[data-gpu] svg.spark').length === 4
           && !!document.querySelector('svg[data-chart="usage"]')"#,
    );
    let shown = browser.eval(r#"document.querySelector('#pending').innerText"#);
    assert!(shown.as_str().unwrap_or_default().contains("Resources"), "{shown}");

    if let Some(path) = std::env::var_os("SLURMLET_BOARD_SCREENSHOT") {
        write_screenshot(&mut browser, std::path::Path::new(&path));
    }
    for id in [train, eval, notebook, sweep, big, next, held] {
        let _ = c.run("scancel", &[&id.to_string()]);
    }
}

#[test]
fn a_job_whose_gpus_stay_idle_is_marked_on_its_card() {
    let Some(program) = chromium() else {
        skip(
            "a_job_whose_gpus_stay_idle_is_marked_on_its_card",
            "chromium is not installed (apt-get install chromium)",
        );
        return;
    };
    let _alone = timing_alone();
    let (c, _machine) = fake_nvml::start_watching("[idle_gpus]\nafter = \"1h\"\naction = \"warn\"\n");
    let id = c.sbatch(&["--gres=gpu:1", "-o", "/dev/null", "--wrap", "sleep 300"]);
    c.wait_state(id, &["RUNNING"], T);
    let board = Board::start(&c);
    let mut browser = Browser::start(&program);
    browser.open(&board.url);
    // Its GPU reads 0% from the first look: marked long before the policy would act.
    browser.wait_for(
        "the idle mark on the job's line of its GPU's card",
        T,
        &format!(
            r#"(() => {{ const h = document.querySelector('[data-gpu] .holder[data-job="{id}"]');
                 const mark = h && h.querySelector('.idle');
                 return !!mark && h.dataset.idleSince !== "" && mark.textContent.startsWith("idle since "); }})()"#
        ),
    );
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
}
