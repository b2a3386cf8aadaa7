//! The daemon's connection loop: HTTP/1.1 on the Unix socket (and on the TCP address of
//! [`super::tcp`]), with the caller's credentials attached to every request, and with
//! upgrades (a step's or an allocation's stream, see [`crate::api::stream`]) handed over as
//! the socket itself.
//!
//! hyper serves each connection directly (HTTP/1.1 only), so that an upgraded connection
//! can be taken back as the very [`UnixStream`] that was accepted: its descriptor is then
//! passed to the supervisor that runs the step, and the step's I/O no longer passes through
//! the daemon.

use crate::daemon::runtime::Peer;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::TokioIo;
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{UnixListener, UnixStream};
use tower::ServiceExt;

impl Peer {
    /// The credentials of the process at the other end of `stream` (nobody, who may only
    /// read, when they cannot be had).
    pub fn of(stream: &UnixStream) -> Peer {
        match stream.peer_cred() {
            Ok(c) => Peer { uid: c.uid(), gid: c.gid() },
            Err(_) => Peer { uid: u32::MAX - 1, gid: u32::MAX - 1 },
        }
    }
}

/// A listening socket whose connections are served: the Unix socket, or the TCP address of
/// [`super::tcp`].
pub trait Listen {
    /// An accepted connection.
    type Conn: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Waits for the next connection.
    fn next_conn(&self) -> impl Future<Output = std::io::Result<Self::Conn>>;
}

impl Listen for UnixListener {
    type Conn = UnixStream;
    async fn next_conn(&self) -> std::io::Result<UnixStream> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

impl Listen for tokio::net::TcpListener {
    type Conn = tokio::net::TcpStream;
    async fn next_conn(&self) -> std::io::Result<tokio::net::TcpStream> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

/// Serves `router` on the Unix socket `listener` until `shutdown` resolves, then waits for
/// requests in progress to be answered. Every request carries the peer credentials of its
/// connection.
pub async fn serve(listener: UnixListener, router: Router, shutdown: impl Future<Output = ()>) {
    let service_for = move |stream: &UnixStream| {
        let peer = Peer::of(stream);
        let router = router.clone();
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(req)
        })
    };
    serve_with(listener, hyper::server::conn::http1::Builder::new(), service_for, shutdown).await
}

/// Serves each connection of `listener` with the service `service_for` makes for it, over
/// HTTP/1.1 as `builder` sets it up, until `shutdown` resolves; then waits for requests in
/// progress to be answered.
pub async fn serve_with<L, S>(
    listener: L,
    builder: hyper::server::conn::http1::Builder,
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
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.next_conn() => match accepted {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let service = service_for(&stream);
        let conn = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
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
