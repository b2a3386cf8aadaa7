//! The destinations whose last delivery failed: a failure is logged when a destination
//! starts failing, not at every notice after, and its recovery when it works again.

use std::collections::HashSet;
use std::sync::Mutex;

/// The destinations failing now.
#[derive(Default)]
pub struct Failing(Mutex<HashSet<String>>);

impl Failing {
    /// Notes the outcome of one delivery to `destination`.
    pub fn note(&self, destination: &str, outcome: Result<(), String>) {
        let mut failing = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(()) => {
                if failing.remove(destination) {
                    tracing::info!("notices are delivered to {destination} again");
                }
            }
            Err(why) if failing.insert(destination.to_string()) => {
                tracing::warn!("a notice could not be delivered to {destination}: {why} (further failures there are not logged until one succeeds)");
            }
            Err(why) => tracing::debug!("a notice could not be delivered to {destination}: {why}"),
        }
    }

    /// Whether `destination` is failing now.
    #[cfg(test)]
    pub fn is_failing(&self, destination: &str) -> bool {
        self.0.lock().unwrap().contains(destination)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_fails_until_a_delivery_succeeds() {
        let f = Failing::default();
        f.note("http://x/", Err("refused".into()));
        f.note("http://x/", Err("refused".into()));
        assert!(f.is_failing("http://x/"));
        f.note("http://x/", Ok(()));
        assert!(!f.is_failing("http://x/"));
    }
}
