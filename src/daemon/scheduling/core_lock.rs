//! The one lock around the daemon's state ([`Core`]). A panic while it is held would leave
//! the state half changed and the lock poisoned, and a daemon that stays up but fails every
//! request: the process aborts instead. Everything the state holds is in the job store and
//! the supervisors' files, so the next command (per-user) or the service manager (system
//! mode) starts a daemon that recovers from them and adopts the running jobs again.

use super::core::Core;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

/// The daemon's state behind its lock.
pub struct CoreLock(Mutex<Core>);

impl CoreLock {
    /// Puts `core` behind the lock.
    pub fn new(core: Core) -> CoreLock {
        CoreLock(Mutex::new(core))
    }

    /// Takes the lock. A lock poisoned by a panic (which [`CoreGuard`] turns into an abort
    /// before anyone could see it) aborts too.
    pub fn lock(&self) -> CoreGuard<'_> {
        match self.0.lock() {
            Ok(guard) => CoreGuard(guard),
            Err(_) => abort("the daemon's state lock is poisoned"),
        }
    }
}

/// The daemon's state, locked; a panic while it is held aborts the process.
pub struct CoreGuard<'a>(MutexGuard<'a, Core>);

impl Deref for CoreGuard<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.0
    }
}

impl DerefMut for CoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.0
    }
}

impl Drop for CoreGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            abort("a panic while the daemon's state was locked");
        }
    }
}

/// Says why in the daemon's log (the panic itself is already there) and aborts.
fn abort(why: &str) -> ! {
    eprintln!(
        "slurmletd: {why}: aborting, so that the next daemon recovers the jobs from the store and adopts the running ones"
    );
    std::process::abort()
}
