//! Connections a hostile or broken client holds open: half a request's head, a body that
//! never ends, an idle keep-alive connection, more connections than one user may hold. The
//! daemon closes each within its deadline, turns away what is past the limit at once with a
//! `503`, and answers the other requests meanwhile. (Two users, one holding the most
//! connections a user may, are in `system_mode.rs`.)

use crate::common;

use common::connections::{look, room_for, wait_end, End, HALF_A_HEAD, SLACK};
use common::*;
use slurmlet::daemon::http::{accept::HEADER_TIMEOUT, admission::MAX_PER_PEER, body::BODY_TIMEOUT};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// `n` connections to the Unix socket, each having sent half a head, non-blocking.
fn half_open(c: &Cluster, n: usize) -> Vec<UnixStream> {
    (0..n)
        .map(|_| {
            let mut s = UnixStream::connect(&c.socket).expect("connect");
            s.write_all(HALF_A_HEAD).unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect()
}

/// Whether this process may hold one user's most connections and `past` more, and the
/// daemon it starts let them in (it lets in half its descriptor limit); says so when not.
fn enough_descriptors(test: &str, past: usize) -> bool {
    let enough = room_for(2 * (MAX_PER_PEER + past) as u64 + 256);
    if !enough {
        skip(test, "the descriptor limit (RLIMIT_NOFILE) is too low for one user's most connections");
    }
    enough
}

/// Asserts that the daemon answers `squeue` and runs a job.
fn serves(c: &Cluster) {
    let o = c.run("squeue", &["-h"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = c.sbatch(&["--wrap", "true"]);
    c.wait_state(id, &["COMPLETED"], SLACK);
}

#[test]
fn half_open_connections_are_closed_within_the_header_timeout_and_the_daemon_answers_meanwhile() {
    let c = Cluster::start("0", "");
    let opened = Instant::now();
    let mut conns = half_open(&c, 200);
    serves(&c);
    // Answered while the half-open connections were still held, not after they were closed.
    if opened.elapsed() < HEADER_TIMEOUT {
        assert_eq!(look(&mut conns[0]), End::Open, "the first connection was closed early");
    }
    let until = opened + HEADER_TIMEOUT + SLACK;
    for (i, conn) in conns.iter_mut().enumerate() {
        assert_eq!(wait_end(conn, until), End::Closed(Vec::new()), "connection {i} after {:?}", opened.elapsed());
    }
    serves(&c);
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let c = Cluster::start("0", "");
    let mut s = UnixStream::connect(&c.socket).unwrap();
    s.write_all(b"GET /slurm/v0.0.43/ping HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    s.set_nonblocking(true).unwrap();
    let answered = Instant::now();
    let reply = match wait_end(&mut s, answered + HEADER_TIMEOUT + SLACK) {
        End::Closed(reply) => reply,
        End::Open => panic!("the idle connection is still open"),
    };
    assert!(reply.starts_with(b"HTTP/1.1 200 OK\r\n"), "{}", String::from_utf8_lossy(&reply));
}

#[test]
fn a_body_that_never_ends_is_answered_408_and_its_connection_closed() {
    let c = Cluster::start("0", "");
    let mut s = UnixStream::connect(&c.socket).unwrap();
    let sent = Instant::now();
    s.write_all(
        b"POST /slurm/v0.0.43/job/submit HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"job\":",
    )
    .unwrap();
    s.set_nonblocking(true).unwrap();
    let reply = match wait_end(&mut s, sent + BODY_TIMEOUT + SLACK) {
        End::Closed(reply) => String::from_utf8_lossy(&reply).into_owned(),
        End::Open => panic!("the connection is still open"),
    };
    assert!(reply.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{reply}");
    assert!(reply.contains("did not arrive whole within 10 s (7 bytes of it did)"), "{reply}");
    serves(&c);
}

#[test]
fn connections_past_one_users_limit_are_turned_away_at_once_and_its_commands_wait_their_turn() {
    let past = 40;
    if !enough_descriptors(
        "connections_past_one_users_limit_are_turned_away_at_once_and_its_commands_wait_their_turn",
        past,
    ) {
        return;
    }
    let c = Cluster::start("0", "");
    let mut conns = half_open(&c, MAX_PER_PEER + past);
    // The daemon answers those past the limit at once; a second is plenty (and far below
    // the header timeout, after which the others are closed too).
    std::thread::sleep(Duration::from_secs(1));
    let ends: Vec<End> = conns.iter_mut().map(look).collect();
    let refused: Vec<String> = ends
        .iter()
        .filter_map(|e| match e {
            End::Closed(reply) => Some(String::from_utf8_lossy(reply).into_owned()),
            End::Open => None,
        })
        .collect();
    assert_eq!(refused.len(), past, "{:?}", refused.first());
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for reply in &refused {
        assert!(reply.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{reply}");
        assert!(reply.contains("retry-after: 1\r\n"), "{reply}");
        assert!(
            reply.contains(&format!(
                "uid {uid} holds {MAX_PER_PEER} connections to the daemon, the most one user may hold at once"
            )),
            "{reply}"
        );
    }
    // The same user's command is turned away too while they are held, waits, and is served
    // once they are closed.
    serves(&c);
    assert!(c.log().contains("connection refused: uid"), "{}", c.log());
}

#[test]
fn a_tcp_address_past_its_limit_is_turned_away_and_half_open_connections_are_closed() {
    let past = 40;
    if !enough_descriptors("a_tcp_address_past_its_limit_is_turned_away_and_half_open_connections_are_closed", past) {
        return;
    }
    let (c, addr) = Cluster::start_on_tcp("0", "");
    let opened = Instant::now();
    let mut conns: Vec<std::net::TcpStream> = (0..MAX_PER_PEER + past)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).expect("connect");
            // A write to a connection the daemon has already refused and closed may fail.
            let _ = s.write_all(HALF_A_HEAD);
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    // A refusal is written and the connection closed at once; the client may read the 503,
    // or the reset that closing a connection with its request unread sends.
    let ended = conns.iter_mut().map(look).filter(|end| matches!(end, End::Closed(_))).count();
    assert_eq!(ended, past);
    let until = opened + HEADER_TIMEOUT + SLACK;
    for (i, conn) in conns.iter_mut().enumerate() {
        assert!(matches!(wait_end(conn, until), End::Closed(_)), "connection {i} still open");
    }
    serves(&c);
}
