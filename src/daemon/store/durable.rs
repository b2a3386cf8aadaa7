//! What waits on the store's writer: a change's [`Durable`], which resolves once the change
//! is committed, or with why it was not ([`WriteFailed`]).

use tokio::sync::oneshot;

/// Why a queued change is not durable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteFailed {
    /// The writer thread is gone (the daemon is stopping, or the thread died).
    #[error("the store writer has stopped")]
    Stopped,
    /// SQLite refused the transaction the change was in: what it said, with the store's path.
    #[error("{0}")]
    Refused(String),
}

/// Resolves once a queued change is committed, or with why it was not.
#[derive(Debug)]
pub struct Durable(pub(super) oneshot::Receiver<Result<(), WriteFailed>>);

impl Durable {
    /// Waits on this thread (never on one of the runtime's) until the change is durable.
    pub fn wait(self) -> Result<(), WriteFailed> {
        self.0.blocking_recv().unwrap_or(Err(WriteFailed::Stopped))
    }
}

impl std::future::Future for Durable {
    type Output = Result<(), WriteFailed>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|r| r.unwrap_or(Err(WriteFailed::Stopped)))
    }
}
