//! Connections held open as a hostile client holds them, and how the daemon ends them.

use std::io::{ErrorKind, Read};
use std::time::{Duration, Instant};

/// Generous slack over a deadline of the daemon's, for a loaded machine.
pub const SLACK: Duration = Duration::from_secs(25);

/// The head of a request, cut before its end.
pub const HALF_A_HEAD: &[u8] = b"GET /slurm/v0.0.43/jobs HTTP/1.1\r\nhost: x\r\nx-slow: ";

/// How a connection ended, if it has.
#[derive(Debug, PartialEq)]
pub enum End {
    /// Still open when last looked at.
    Open,
    /// Closed by the daemon, after what it wrote (nothing, or a reply).
    Closed(Vec<u8>),
}

/// How `conn` (non-blocking) stands now: open, or closed by the daemon after what it wrote.
pub fn look(conn: &mut impl Read) -> End {
    let mut got = Vec::new();
    if read_now(conn, &mut got) {
        End::Closed(got)
    } else {
        End::Open
    }
}

/// Reads what `conn` (non-blocking) has into `got`; whether the daemon has closed it.
fn read_now(conn: &mut impl Read, got: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(e) => panic!("reading a connection: {e}"),
        }
    }
}

/// How `conn` (non-blocking) ends, if the daemon closes it before `until`.
pub fn wait_end(conn: &mut impl Read, until: Instant) -> End {
    let mut got = Vec::new();
    loop {
        if read_now(conn, &mut got) {
            return End::Closed(got);
        }
        if Instant::now() >= until {
            return End::Open;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lets this process, and the daemons it starts next (they inherit it), have `n`
/// descriptors open, raising its soft limit towards its hard one if need be; whether it may.
/// A daemon lets in at most half its limit of connections.
///
/// The limit is the whole test process's, shared by the tests running at once: each call
/// asks for its `n` on top of what earlier calls asked (as far as the hard limit goes), under
/// one lock, so that one test never lowers the limit another raised, nor takes the room it
/// counted on.
pub fn room_for(n: u64) -> bool {
    static ASKED: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
    let mut asked = ASKED.lock().unwrap_or_else(|e| e.into_inner());
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the struct on this stack.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return false;
        }
        if n > limit.rlim_max {
            return limit.rlim_cur >= n;
        }
        *asked += n;
        let wanted = (*asked).min(limit.rlim_max);
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return false;
            }
        }
    }
    limit.rlim_cur >= n
}
