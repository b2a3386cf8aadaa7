//! The daemon's connection loop: HTTP/1.1 on the Unix socket (and on the TCP address of
//! [`super::tcp`]), with the caller's credentials attached to every request, and with
//! upgrades (a step's or an allocation's stream, see [`crate::api::stream`]) handed over as
//! the socket itself.
//!
//! hyper serves each connection directly (HTTP/1.1 only), so that an upgraded connection
//! can be taken back as the very [`UnixStream`] that was accepted: its descriptor is then
//! passed to the supervisor that runs the step, and the step's I/O no longer passes through
//! the daemon.
//!
//! A connection is let in only within the limits of [`super::admission`], and must send each
//! request's head within [`HEADER_TIMEOUT`], the first as every next one: a connection that
//! sends half a head, or sits idle between requests, is closed then.

use super::admission::{Door, Gate, Refused, Uid, MAX_PER_PEER};
use crate::daemon::model::caller::Caller;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::TokioIo;
use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{UnixListener, UnixStream};
use tower::ServiceExt;

/// How long a connection may take to send a request's head, counted from its accept or from
/// the reply before: the project's commands send theirs at once, in one write. An idle
/// keep-alive connection is closed after as long (a command that comes back to it later
/// connects again).
pub const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long the daemon waits after a failed accept (no descriptor left, most likely) before
/// it tries again, rather than spin on the error.
const ACCEPT_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// The credentials of the process at the other end of `stream` (nobody, who may only read,
/// when they cannot be had).
pub fn caller_of(stream: &UnixStream) -> Caller {
    match stream.peer_cred() {
        Ok(c) => Caller { uid: c.uid(), gid: c.gid() },
        Err(_) => Caller { uid: u32::MAX - 1, gid: u32::MAX - 1 },
    }
}

/// A listening socket whose connections are served: the Unix socket, or the TCP address of
/// [`super::tcp`].
pub trait Listen {
    /// An accepted connection.
    type Conn: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Who is at the other end of a connection, as the limits of [`super::admission`]
    /// count them.
    type Peer: Eq + Hash + Clone + Display + Send + 'static;
    /// Waits for the next connection.
    fn next_conn(&self) -> impl Future<Output = std::io::Result<Self::Conn>>;
    /// The peer of `conn`.
    fn peer(conn: &Self::Conn) -> Self::Peer;
    /// Writes what it can of `bytes` to `conn` without waiting (a refusal, on a connection
    /// just accepted, whose buffer takes it whole).
    fn write_now(conn: &Self::Conn, bytes: &[u8]);
}

impl Listen for UnixListener {
    type Conn = UnixStream;
    type Peer = Uid;
    async fn next_conn(&self) -> std::io::Result<UnixStream> {
        self.accept().await.map(|(stream, _)| stream)
    }
    fn peer(conn: &UnixStream) -> Uid {
        Uid(caller_of(conn).uid)
    }
    fn write_now(conn: &UnixStream, bytes: &[u8]) {
        let _ = conn.try_write(bytes);
    }
}

impl Listen for tokio::net::TcpListener {
    type Conn = tokio::net::TcpStream;
    type Peer = super::admission::Address;
    async fn next_conn(&self) -> std::io::Result<tokio::net::TcpStream> {
        self.accept().await.map(|(stream, _)| stream)
    }
    fn peer(conn: &tokio::net::TcpStream) -> super::admission::Address {
        super::admission::Address(conn.peer_addr().map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |a| a.ip()))
    }
    fn write_now(conn: &tokio::net::TcpStream, bytes: &[u8]) {
        let _ = conn.try_write(bytes);
    }
}

/// The HTTP/1.1 settings every connection is served with: [`HEADER_TIMEOUT`], on tokio's
/// clock.
pub fn http1() -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
    builder
}

/// Serves `router` on the Unix socket `listener` until `shutdown` resolves, then waits for
/// requests in progress to be answered. Every request carries the peer credentials of its
/// connection; each uid holds at most [`MAX_PER_PEER`] connections, within `gate`'s limit.
pub async fn serve(listener: UnixListener, router: Router, gate: &Gate, shutdown: impl Future<Output = ()>) {
    let service_for = move |stream: &UnixStream| {
        let peer = caller_of(stream);
        let router = router.clone();
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(req)
        })
    };
    serve_with(listener, gate, gate.door(MAX_PER_PEER), service_for, shutdown).await
}

/// Serves each connection of `listener` that `door` lets in with the service `service_for`
/// makes for it, over HTTP/1.1 as [`http1`] sets it up, until `shutdown` resolves; then waits
/// for requests in progress to be answered. A connection `door` turns away is answered
/// `gate`'s refusal at once, and closed.
pub async fn serve_with<L, S>(
    listener: L,
    gate: &Gate,
    door: Door<L::Peer>,
    mut service_for: impl FnMut(&L::Conn) -> S,
    shutdown: impl Future<Output = ()>,
) where
    L: Listen,
    S: hyper::service::Service<
            hyper::Request<hyper::body::Incoming>,
            Response = hyper::Response<axum::body::Body>,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    // Each connection holds a receiver: told to stop, it finishes the request in progress;
    // the loop's end waits until every receiver is gone.
    let (stop, stopping) = tokio::sync::watch::channel(());
    let builder = http1();
    let mut accept_failing = false;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.next_conn() => match accepted {
                Ok(stream) => stream,
                Err(e) => {
                    // Once per run of failures: out of descriptors, each try fails at once.
                    if !std::mem::replace(&mut accept_failing, true) {
                        tracing::warn!("accept failed: {e}");
                    }
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        accept_failing = false;
        let ticket = match door.admit(L::peer(&stream)) {
            Ok(ticket) => ticket,
            Err(why) => {
                refuse::<L>(&stream, gate, &why);
                continue;
            }
        };
        let service = service_for(&stream);
        let conn = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            // Counted until the connection ends, or is handed over upgraded.
            let _ticket = ticket;
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
                ended = conn.as_mut() => ended,
                _ = stopping.changed() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    drop(listener);
    drop(stopping);
    let _ = stop.send(());
    stop.closed().await;
}

/// Answers a connection turned away for `why` with `gate`'s refusal, without reading it;
/// the caller drops it (closes it) next.
fn refuse<L: Listen>(conn: &L::Conn, gate: &Gate, why: &Refused) {
    L::write_now(conn, &gate.refusal(why));
}

/// Takes the connection of an upgraded request back as the accepted socket, in blocking
/// mode, ready to be handed to a supervisor. `None` if the upgrade failed (the client went
/// away) or the connection is not a Unix socket.
pub async fn upgraded_socket(on_upgrade: hyper::upgrade::OnUpgrade) -> Option<std::os::unix::net::UnixStream> {
    let upgraded = match on_upgrade.await {
        Ok(u) => u,
        Err(e) => {
            tracing::debug!("upgrade failed: {e}");
            return None;
        }
    };
    let parts = upgraded.downcast::<TokioIo<UnixStream>>().ok()?;
    if !parts.read_buf.is_empty() {
        // The client sends nothing before it has read the 101 reply.
        tracing::warn!("a client wrote before its upgrade was answered; dropping it");
        return None;
    }
    let std = parts.io.into_inner().into_std().ok()?;
    std.set_nonblocking(false).ok()?;
    Some(std)
}
