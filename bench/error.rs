//! Why a measurement could not be taken.

use slurmlet::api::client_error::ClientError;
use thiserror::Error;

/// A failure of the harness itself (not a slow figure: slow figures are reported, not errors).
#[derive(Debug, Error)]
pub enum BenchError {
    /// A file, directory or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The daemon did not answer a request.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A command or the daemon did something the harness did not expect.
    #[error("{0}")]
    Failed(String),
}

/// The harness's result type.
pub type Result<T> = std::result::Result<T, BenchError>;

/// Wraps an I/O error with what was being done.
pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |source| BenchError::Io { what, source }
}

/// A [`BenchError::Failed`] with a message.
pub fn failed(message: impl Into<String>) -> BenchError {
    BenchError::Failed(message.into())
}

/// An error with its chain of causes (`a: b: c`), so that a transport error says what the
/// connection did.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}
