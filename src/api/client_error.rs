//! Why a request to the local daemon or a remote profile did not produce a reply: the client's
//! error, in a file of its own so that what the client is built from (the version negotiation,
//! the remote transport's errors) can return or carry it without naming the client.

use super::http::HttpError;
use super::remote::RemoteError;
use super::version::VersionError;
use std::path::PathBuf;
use thiserror::Error;

/// Why a request did not produce a reply.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No daemon answers and none could be started.
    #[error("Unable to contact slurm controller (connect failure): {socket}: {why}")]
    Connect {
        /// The socket tried.
        socket: PathBuf,
        /// What failed: the connection (another user's daemon on the socket, a system daemon
        /// that does not answer), the start lock, or the daemon's start (its last error, read
        /// from its log).
        why: String,
    },
    /// The HTTP exchange failed.
    #[error("request to the daemon failed: {0}")]
    Http(#[from] HttpError),
    /// The reply is not what the API describes.
    #[error("unexpected reply from the daemon ({status}): {body}")]
    Decode {
        /// HTTP status.
        status: u16,
        /// Start of the body.
        body: String,
    },
    /// The profile asked for cannot be used.
    #[error("{0}")]
    Profile(String),
    /// A remote endpoint did not answer.
    #[error("request to the cluster failed: {0}")]
    Remote(#[from] RemoteError),
    /// A remote endpoint refused the profile's token.
    #[error(
        "the cluster refused the token of profile '{profile}' (HTTP {status}); it may have expired: get a new one (scontrol token on the cluster) and try again"
    )]
    Auth {
        /// The profile whose token was refused, so that the user knows which file to renew.
        profile: String,
        /// 401 or 511.
        status: u16,
    },
    /// The profile's token expired: it is not sent.
    #[error("the token of profile '{profile}' expired at {at}; {renew}")]
    Expired {
        /// The profile whose token expired.
        profile: String,
        /// When, in local time as Slurm prints times.
        at: String,
        /// How to get a new one.
        renew: String,
    },
    /// The cluster offers no data_parser version slurmlet can speak.
    #[error("profile '{profile}': {source}")]
    Version {
        /// The profile whose cluster speaks no version of ours.
        profile: String,
        /// What it offers and what slurmlet speaks.
        source: VersionError,
    },
    /// What the endpoint cannot do (slurmrestd has no step launch).
    #[error("{0}")]
    Unsupported(String),
}
