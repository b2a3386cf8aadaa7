//! `slurmlet board`: a small web page of the machine, served as the calling user on
//! `127.0.0.1:8765` (`--bind`, `--port`): who holds each GPU and what is reserved on it, the
//! queue, each user's use, the caller's jobs, and cancel, hold and release for the caller's
//! own. Like `jupyter lab`, it prints one URL with a random token; the page keeps the token
//! to its own origin and sends it with each call, and every request without it is refused
//! (see [`auth`], [`guard`]).
//!
//! The board reads from the daemon as the caller, through the same client and the same
//! checks as the commands: what `private_data` hides from the caller stays hidden, and an
//! action on another user's job is refused by the daemon as scancel's would be. With `-M` (or
//! `slurmlet --profile NAME board`) it shows a cluster's slurmrestd as far as that has the
//! data. It asks the daemon for nothing while no browser has the page open (see [`updates`]).
//!
//! The page is plain HTML, CSS and JavaScript with charts drawn as SVG, embedded in the
//! binary (see [`assets`]): it needs no network beyond the board itself.

pub mod assets;
pub mod auth;
pub mod guard;
pub mod hosts;
pub mod job_page;
pub mod output_tail;
pub mod reservations;
pub mod server;
pub mod state;
pub mod updates;

use clap::Parser;
use std::ffi::OsString;
use std::future::IntoFuture;
use std::net::{IpAddr, SocketAddr};

/// The command's name in messages.
const CMD: &str = "slurmlet board";

/// `slurmlet board`'s options.
#[derive(Debug, Parser)]
#[command(about = "serve a web page of the GPUs, the queue and the caller's jobs")]
pub struct BoardArgs {
    /// the port to listen on (0: any free one; the URL printed names it)
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// the address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// show the cluster of this profile (see `slurmlet profiles`) instead of this machine
    #[arg(short = 'M', long = "clusters", visible_alias = "profile", value_name = "PROFILE")]
    pub clusters: Option<String>,
}

/// Runs the board until interrupted; returns the exit code.
pub fn run(args: Vec<OsString>) -> i32 {
    let args: BoardArgs = match super::parse_args(CMD, args, 1) {
        Ok(a) => a,
        Err(code) => return code,
    };
    super::choose_cluster(args.clusters.as_deref());
    // Connect once now, so that a daemon that cannot be reached is said at once.
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let profile = client.profile().map(str::to_string);
    drop(client);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            super::error(CMD, &format!("cannot start: {e}"));
            return 1;
        }
    };
    let code = runtime.block_on(serve(SocketAddr::new(args.bind, args.port), profile));
    // A wait on the daemon's change counter may be under way: it is not waited for.
    runtime.shutdown_background();
    code
}

/// Listens on `addr`, prints the URL, and serves until SIGINT or SIGTERM.
async fn serve(addr: SocketAddr, profile: Option<String>) -> i32 {
    let token = match auth::AccessToken::new() {
        Ok(t) => t,
        Err(e) => {
            super::error(CMD, &format!("cannot make the access token: {e}"));
            return 1;
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            super::error(CMD, &format!("cannot listen on {addr}: {e}"));
            return 1;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    let board = server::Board::new(token, bound, profile);
    let url = board.url(bound);
    println!("The board of {}:", board.source_name());
    println!("    {url}");
    let forward =
        format!("ssh -L {port}:{to}:{port} HOST", port = bound.port(), to = hosts::forward_target(bound.ip()));
    if bound.ip().is_loopback() {
        println!("From another machine: {forward}, then open the URL there.");
    } else {
        println!(
            "From another machine: open the URL there, or {forward} and open it with 127.0.0.1:{} for its address.",
            bound.port()
        );
        super::warning(
            CMD,
            &format!(
                "listening on {bound}, not on a loopback address: whoever has the URL can act as you, over plain HTTP"
            ),
        );
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let app = server::router(board);
    // Not a graceful shutdown: an open page holds its event stream for as long as it is open.
    tokio::select! {
        served = axum::serve(listener, app).into_future() => match served {
            Ok(()) => 0,
            Err(e) => {
                super::error(CMD, &e.to_string());
                1
            }
        },
        () = stop_signal() => 0,
    }
}

/// Resolves at SIGINT or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}
