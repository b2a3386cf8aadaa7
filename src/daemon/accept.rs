//! The daemon's connection loop: HTTP/1.1 on the Unix socket, with the caller's peer
//! credentials attached to every request, and with upgrades (a step's or an allocation's
//! stream, see [`crate::api::stream`]) handed over as the socket itself.
//!
//! hyper serves each connection directly (HTTP/1.1 only), so that an upgraded connection
//! can be taken back as the very [`UnixStream`] that was accepted: its descriptor is then
//! passed to the supervisor that runs the step, and the step's I/O no longer passes through
//! the daemon.

use super::server::Peer;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::TokioIo;
use std::future::Future;
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

/// Serves `router` on `listener` until `shutdown` resolves, then waits for requests in
/// progress to be answered.
pub async fn serve(listener: UnixListener, router: Router, shutdown: impl Future<Output = ()>) {
    // Each connection holds a receiver: told to stop, it finishes the request in progress;
    // the loop's end waits until every receiver is gone.
    let (stop, stopping) = tokio::sync::watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let peer = Peer::of(&stream);
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(req)
        });
        let conn =
            hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).with_upgrades();
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
