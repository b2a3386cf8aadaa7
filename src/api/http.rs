//! HTTP/1.1 over the daemon's Unix socket: blocking, on the calling thread, over one
//! keep-alive connection.
//!
//! Every command makes one or a few requests to a daemon on the same machine, so the cost that
//! matters is the command's own start-up: this transport needs no runtime and no helper thread,
//! and it reuses the connection that found the daemon. It reads what the daemon's HTTP/1.1
//! server writes: a status line, headers, and a body with a `Content-Length` or chunked.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use thiserror::Error;

/// Why an exchange with the daemon failed.
#[derive(Debug, Error)]
pub enum HttpError {
    /// The socket failed while sending the request or reading the reply.
    #[error("{context} {socket}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The socket.
        socket: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The reply is not HTTP/1.1 as this client reads it.
    #[error("malformed reply from {socket}: {why}")]
    Malformed {
        /// The socket.
        socket: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The process listening on the socket is another user's: neither this user's own
    /// daemon nor the system daemon. Nothing is sent to it.
    #[error("{socket} is served by a process of uid {uid}, neither yours nor root's; nothing was sent to it")]
    Impostor {
        /// The socket.
        socket: PathBuf,
        /// Its listener's uid.
        uid: u32,
    },
}

/// Connects to `socket`, and only to a daemon of this user's or root's: in a directory
/// others may write (`/tmp`), another user could listen where the daemon should, and would
/// be sent the jobs' scripts and environments.
pub fn connect(socket: &Path) -> Result<UnixStream, HttpError> {
    let stream = UnixStream::connect(socket).map_err(|source| HttpError::Io {
        context: "cannot connect to",
        socket: socket.to_path_buf(),
        source,
    })?;
    let uid = peer_uid(&stream).map_err(|source| HttpError::Io {
        context: "cannot tell who serves",
        socket: socket.to_path_buf(),
        source,
    })?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if uid != me && uid != 0 {
        return Err(HttpError::Impostor { socket: socket.to_path_buf(), uid });
    }
    Ok(stream)
}

/// The uid of the process at the other end of `stream` (`SO_PEERCRED`).
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is writable and `len` is its size.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// A reply: its status and its whole body.
#[derive(Debug)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The body, with any chunked framing removed.
    pub body: Vec<u8>,
}

/// The outcome of [`UnixHttp::upgrade`].
#[derive(Debug)]
pub enum Upgrade {
    /// The connection now carries the stream.
    Switched(UnixStream),
    /// The daemon answered instead (an error).
    Refused(Response),
}

/// One keep-alive connection to a Unix socket, opened on first use and reopened when the
/// daemon has closed it.
#[derive(Debug)]
pub struct UnixHttp {
    socket: PathBuf,
    conn: Mutex<Option<BufReader<UnixStream>>>,
}

/// The largest response head accepted, in bytes.
const MAX_HEAD: usize = 64 * 1024;

/// How long in all a request waits for a daemon that turns its connection away for now (a
/// `503` with `Retry-After`: the user holds as many connections as the daemon lets one user
/// hold), trying again as the reply says, before the refusal is returned as the reply.
pub const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The pause before a request turned away with `Retry-After` is sent again, when there is
/// time left for it within [`BUSY_WAIT`] since `started`.
fn pause_before_retry(
    status: u16,
    retry_after: Option<u64>,
    started: std::time::Instant,
) -> Option<std::time::Duration> {
    let pause = std::time::Duration::from_secs(retry_after.filter(|_| status == 503)?.clamp(1, 5));
    (started.elapsed() + pause <= BUSY_WAIT).then_some(pause)
}

impl UnixHttp {
    /// A transport for `socket`, starting from `stream` when one is already connected.
    pub fn new(socket: &Path, stream: Option<UnixStream>) -> UnixHttp {
        UnixHttp { socket: socket.to_path_buf(), conn: Mutex::new(stream.map(BufReader::new)) }
    }

    /// The socket this transport talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends `method path` with an optional JSON body and reads the whole reply.
    ///
    /// A connection that was already open may have been closed by the daemon in the meantime;
    /// when it fails before any byte of the reply arrives, the request is sent once more on a
    /// fresh connection.
    ///
    /// A request the daemon turns away for now (`503` with `Retry-After`) is sent again as
    /// the reply says, for up to [`BUSY_WAIT`] in all.
    pub fn request(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response, HttpError> {
        let request = encode_request(method, path, body);
        let started = std::time::Instant::now();
        loop {
            let (response, retry_after) = self.exchange_once(&request)?;
            match pause_before_retry(response.status, retry_after, started) {
                Some(pause) => std::thread::sleep(pause),
                None => return Ok(response),
            }
        }
    }

    /// Sends `request` once (on the kept connection, or on a new one if that one was closed)
    /// and reads the reply; also returns its `Retry-After`.
    fn exchange_once(&self, request: &[u8]) -> Result<(Response, Option<u64>), HttpError> {
        let mut guard = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(conn) = guard.as_mut() {
            match exchange(conn, request) {
                Ok((response, head)) => {
                    if !head.keep_alive {
                        *guard = None;
                    }
                    return Ok((response, head.retry_after));
                }
                Err(Failure::BeforeReply(_)) => *guard = None,
                Err(failure) => {
                    *guard = None;
                    return Err(self.error(failure));
                }
            }
        }
        let stream = connect(&self.socket)?;
        let mut conn = BufReader::new(stream);
        let (response, head) = exchange(&mut conn, request).map_err(|failure| self.error(failure))?;
        if head.keep_alive {
            *guard = Some(conn);
        }
        Ok((response, head.retry_after))
    }

    /// Sends `POST path` with a JSON body, asking to switch the connection to
    /// [`super::stream`]'s framed stream. The daemon either switches (the connection is
    /// returned, nothing of the stream read yet) or answers as usual (a refusal).
    /// A request the daemon turns away for now is sent again as [`UnixHttp::request`] does.
    pub fn upgrade(&self, path: &str, body: &[u8]) -> Result<Upgrade, HttpError> {
        let mut request = encode_request("POST", path, Some(body));
        let head_end = request.len() - body.len() - 2;
        let extra = format!("connection: Upgrade\r\nupgrade: {}\r\n", super::stream::PROTOCOL);
        request.splice(head_end..head_end, extra.into_bytes());
        let started = std::time::Instant::now();
        loop {
            match self.upgrade_once(&request)? {
                (Upgrade::Refused(response), retry_after) => {
                    match pause_before_retry(response.status, retry_after, started) {
                        Some(pause) => std::thread::sleep(pause),
                        None => return Ok(Upgrade::Refused(response)),
                    }
                }
                (switched, _) => return Ok(switched),
            }
        }
    }

    /// Sends the upgrade `request` once on a new connection; also returns a refusal's
    /// `Retry-After`.
    fn upgrade_once(&self, request: &[u8]) -> Result<(Upgrade, Option<u64>), HttpError> {
        let stream = connect(&self.socket)?;
        // One byte at a time: what follows the head belongs to the stream, and must not be
        // read ahead into a buffer.
        let mut conn = BufReader::with_capacity(1, stream);
        conn.get_mut().write_all(request).map_err(|e| self.error(Failure::BeforeReply(e)))?;
        let head = read_head(&mut conn).map_err(|f| self.error(f))?;
        if head.status == 101 {
            return Ok((Upgrade::Switched(conn.into_inner()), None));
        }
        let body = match head.framing {
            Framing::Length(n) => {
                let mut body = vec![0; n];
                conn.read_exact(&mut body).map_err(|e| self.error(Failure::Io(e)))?;
                body
            }
            Framing::Chunked => read_chunked(&mut conn).map_err(|f| self.error(f))?,
            Framing::UntilClose => {
                let mut body = Vec::new();
                conn.read_to_end(&mut body).map_err(|e| self.error(Failure::Io(e)))?;
                body
            }
        };
        Ok((Upgrade::Refused(Response { status: head.status, body }), head.retry_after))
    }

    fn error(&self, failure: Failure) -> HttpError {
        let socket = self.socket.clone();
        match failure {
            Failure::BeforeReply(source) => HttpError::Io { context: "no reply from", socket, source },
            Failure::Io(source) => HttpError::Io { context: "the reply broke off from", socket, source },
            Failure::Malformed(why) => HttpError::Malformed { socket, why },
        }
    }
}

/// How one exchange failed.
enum Failure {
    /// Sending failed, or the connection closed before the reply's first byte.
    BeforeReply(io::Error),
    /// Reading the reply failed part way.
    Io(io::Error),
    /// The reply cannot be read as HTTP/1.1.
    Malformed(String),
}

fn encode_request(method: &str, path: &str, body: Option<&[u8]>) -> Vec<u8> {
    let body = body.unwrap_or_default();
    let mut out = Vec::with_capacity(128 + body.len());
    out.extend_from_slice(format!("{method} {path} HTTP/1.1\r\nhost: slurmlet\r\n").as_bytes());
    if !body.is_empty() || method == "POST" {
        out.extend_from_slice(
            format!("content-type: application/json\r\ncontent-length: {}\r\n", body.len()).as_bytes(),
        );
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// Sends `request` and reads one reply; also returns its head, which says whether the
/// connection may be reused.
fn exchange(conn: &mut BufReader<UnixStream>, request: &[u8]) -> Result<(Response, Head), Failure> {
    if let Err(e) = conn.get_mut().write_all(request) {
        // The daemon may have answered and closed before it read the request (a `503`
        // turning the connection away at once): that reply is still there to read.
        if !conn.fill_buf().is_ok_and(|waiting| !waiting.is_empty()) {
            return Err(Failure::BeforeReply(e));
        }
    }
    let first = conn.fill_buf().map_err(Failure::BeforeReply)?;
    if first.is_empty() {
        return Err(Failure::BeforeReply(io::ErrorKind::UnexpectedEof.into()));
    }
    let head = read_head(conn)?;
    let body = match head.framing {
        Framing::Length(n) => {
            let mut body = vec![0; n];
            conn.read_exact(&mut body).map_err(Failure::Io)?;
            body
        }
        Framing::Chunked => read_chunked(conn)?,
        Framing::UntilClose => {
            let mut body = Vec::new();
            conn.read_to_end(&mut body).map_err(Failure::Io)?;
            body
        }
    };
    let keep_alive = head.keep_alive && !matches!(head.framing, Framing::UntilClose);
    Ok((Response { status: head.status, body }, Head { keep_alive, ..head }))
}

/// How the body of a reply is delimited.
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

struct Head {
    status: u16,
    framing: Framing,
    keep_alive: bool,
    /// `Retry-After`, in seconds.
    retry_after: Option<u64>,
}

/// Reads the status line and the headers, up to the blank line that ends the head.
fn read_head(conn: &mut BufReader<UnixStream>) -> Result<Head, Failure> {
    let mut line = String::with_capacity(128);
    let mut total = 0;
    let mut next_line = |line: &mut String| -> Result<(), Failure> {
        line.clear();
        let n = conn.read_line(line).map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => Failure::Malformed("response head is not UTF-8".into()),
            _ => Failure::Io(e),
        })?;
        if n == 0 {
            return Err(Failure::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        total += n;
        if total > MAX_HEAD {
            return Err(Failure::Malformed(format!("response head longer than {MAX_HEAD} bytes")));
        }
        Ok(())
    };
    next_line(&mut line)?;
    let mut words = line.split_ascii_whitespace();
    let version = words.next().unwrap_or("");
    let status = words.next().and_then(|w| w.parse::<u16>().ok());
    let status = match (version, status) {
        ("HTTP/1.1" | "HTTP/1.0", Some(code)) if (100..1000).contains(&code) => code,
        _ => return Err(Failure::Malformed(format!("status line {:?}", line.trim_end()))),
    };
    let mut keep_alive = version == "HTTP/1.1";
    let mut framing = Framing::UntilClose;
    let mut retry_after = None;
    loop {
        next_line(&mut line)?;
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(Failure::Malformed(format!("header line {header:?}")));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let n = value.parse().map_err(|_| Failure::Malformed(format!("content-length {value:?}")))?;
            framing = Framing::Length(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            framing = Framing::Chunked;
        } else if name.eq_ignore_ascii_case("connection") {
            keep_alive = !value.eq_ignore_ascii_case("close");
        } else if name.eq_ignore_ascii_case("retry-after") {
            retry_after = value.parse().ok();
        }
    }
    Ok(Head { status, framing, keep_alive, retry_after })
}

/// Reads a chunked body up to its last chunk and trailers.
fn read_chunked(conn: &mut BufReader<UnixStream>) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        conn.read_line(&mut line).map_err(Failure::Io)?;
        let size_text = line.trim_end().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| Failure::Malformed(format!("chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if conn.read_line(&mut line).map_err(Failure::Io)? == 0 || line.trim_end().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        conn.read_exact(&mut body[start..]).map_err(Failure::Io)?;
        line.clear();
        conn.read_line(&mut line).map_err(Failure::Io)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    /// Serves each accepted connection's requests with the canned replies in turn, then closes.
    fn serve(replies: Vec<Vec<&'static [u8]>>) -> (tempfile::TempDir, PathBuf, std::thread::JoinHandle<Vec<String>>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for conn_replies in replies {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream);
                for reply in conn_replies {
                    let mut head = Vec::new();
                    while !head.ends_with(b"\r\n\r\n") {
                        if reader.read_until(b'\n', &mut head).unwrap() == 0 {
                            break;
                        }
                    }
                    let text = String::from_utf8(head).unwrap();
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .map(|v| v.parse::<usize>().unwrap())
                        .unwrap_or(0);
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    seen.push(format!("{}{}", text, String::from_utf8(body).unwrap()));
                    reader.get_mut().write_all(reply).unwrap();
                }
            }
            seen
        });
        (dir, path, handle)
    }

    #[test]
    fn reads_length_and_chunked_bodies_over_one_connection() {
        let (_dir, path, server) = serve(vec![vec![
            b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"a\":1}",
            b"HTTP/1.1 422 Unprocessable\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\n{\"b\r\n4\r\n\":2}\r\n0\r\n\r\n",
        ]]);
        let http = UnixHttp::new(&path, None);
        let first = http.request("POST", "/submit", Some(b"{\"job\":{}}")).unwrap();
        assert_eq!((first.status, first.body.as_slice()), (200, &b"{\"a\":1}"[..]));
        let second = http.request("GET", "/jobs", None).unwrap();
        assert_eq!((second.status, second.body.as_slice()), (422, &b"{\"b\":2}"[..]));
        let seen = server.join().unwrap();
        assert!(seen[0].starts_with("POST /submit HTTP/1.1\r\n"), "{}", seen[0]);
        assert!(seen[0].contains("content-type: application/json\r\n"), "{}", seen[0]);
        assert!(seen[0].ends_with("\r\n\r\n{\"job\":{}}"), "{}", seen[0]);
        assert!(seen[1].starts_with("GET /jobs HTTP/1.1\r\n"), "{}", seen[1]);
    }

    #[test]
    fn a_connection_the_server_closed_is_replaced() {
        // The first connection answers once and closes; the second request must arrive on a
        // new connection and still get its reply.
        let (_dir, path, server) = serve(vec![
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"],
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nnull"],
        ]);
        let http = UnixHttp::new(&path, None);
        assert_eq!(http.request("GET", "/a", None).unwrap().body, b"{}");
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(http.request("GET", "/b", None).unwrap().body, b"null");
        assert_eq!(server.join().unwrap().len(), 2);
    }

    #[test]
    fn a_request_turned_away_for_now_is_sent_again_and_one_without_retry_after_is_the_reply() {
        const BUSY: &[u8] =
            b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}";
        let (_dir, path, server) = serve(vec![
            vec![BUSY],
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nnull"],
            vec![b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 2\r\n\r\n{}"],
        ]);
        let http = UnixHttp::new(&path, None);
        let reply = http.request("POST", "/submit", Some(b"{}")).unwrap();
        assert_eq!((reply.status, reply.body.as_slice()), (200, &b"null"[..]));
        assert_eq!(http.request("GET", "/a", None).unwrap().status, 503, "no Retry-After: no retry");
        let seen = server.join().unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[0], seen[1], "the same request, sent again");
    }

    #[test]
    fn a_reply_cut_short_is_an_error_naming_the_socket() {
        let (_dir, path, server) = serve(vec![vec![b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}"]]);
        let http = UnixHttp::new(&path, None);
        let err = http.request("GET", "/a", None).unwrap_err().to_string();
        server.join().unwrap();
        assert!(err.contains("the reply broke off from") && err.contains("s.sock"), "{err}");
    }

    #[test]
    fn a_reply_that_is_not_http_is_malformed() {
        for reply in [&b"SSH-2.0-OpenSSH\r\n\r\n"[..], b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"] {
            let (_dir, path, server) = serve(vec![vec![reply]]);
            let http = UnixHttp::new(&path, None);
            let err = http.request("GET", "/a", None).unwrap_err().to_string();
            server.join().unwrap();
            assert!(err.starts_with("malformed reply from"), "{err}");
        }
    }

    #[test]
    fn no_daemon_is_a_connect_error() {
        let dir = tempfile::tempdir().unwrap();
        let http = UnixHttp::new(&dir.path().join("none.sock"), None);
        let err = http.request("GET", "/a", None).unwrap_err().to_string();
        assert!(err.starts_with("cannot connect to") && err.contains("none.sock"), "{err}");
    }
}
