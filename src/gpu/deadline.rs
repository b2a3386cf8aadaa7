//! Calls into a GPU library (NVML) with a deadline. A driver that hangs holds the calling
//! thread in the kernel, and no thread can be killed: so the call runs on a thread of its
//! own, and a caller that waited [`LIBRARY_DEADLINE`] gives up on it, says so, and leaves
//! the thread to finish (or not) by itself. Nothing of the daemon waits on it.

use super::GpuError;
use std::time::Duration;

/// How long a call into the library may take: NVML answers in milliseconds, and its
/// initialisation in a second or two on a machine whose driver is not yet loaded.
pub const LIBRARY_DEADLINE: Duration = Duration::from_secs(10);

/// Runs `call` on a thread of its own and returns what it returns, or [`GpuError::Hung`]
/// naming `what` once `deadline` has passed.
pub fn within<T: Send + 'static>(
    what: &str,
    deadline: Duration,
    call: impl FnOnce() -> Result<T, GpuError> + Send + 'static,
) -> Result<T, GpuError> {
    let (tell, told) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new().name("gpu-call".into()).spawn(move || {
        let _ = tell.send(call());
    });
    if let Err(e) = spawned {
        return Err(GpuError::Hung { what: format!("{what} (no thread for it: {e})"), after: Duration::ZERO });
    }
    told.recv_timeout(deadline).unwrap_or(Err(GpuError::Hung { what: what.to_string(), after: deadline }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_call_that_answers_is_answered_and_one_that_hangs_is_given_up() {
        assert_eq!(within("quick", LIBRARY_DEADLINE, || Ok(7)).unwrap(), 7);
        let begun = Instant::now();
        let hung = within("nvmlInit", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(30));
            Ok(())
        });
        assert!(matches!(hung, Err(GpuError::Hung { .. })), "{hung:?}");
        assert!(begun.elapsed() < Duration::from_secs(2));
        assert_eq!(hung.unwrap_err().to_string(), "nvmlInit did not answer within 0.1 s; the call is abandoned");
    }
}
