//! How many connections the daemon holds at once, and for whom.
//!
//! Each connection is a descriptor. Before these limits, one user could open connections
//! and never finish a request, hundreds at a time, and with enough processes use up the
//! daemon's descriptors (`LimitNOFILE`): nobody else could then reach it. Now a connection
//! must send its request's head within [`super::accept::HEADER_TIMEOUT`] and its body within
//! [`super::body::BODY_TIMEOUT`]; one peer (a uid on the Unix socket, an address on TCP) may
//! hold at most [`MAX_PER_PEER`] connections at once, and all of them together at most
//! [`Gate::limit`]. A connection past either limit is answered at once with a `503` and
//! closed without a byte of it read ([`Gate::refusal`]): waiting for its request would hold the
//! very descriptor the limit is there to save. The project's commands wait and try again
//! when told so (`Retry-After`), for a while, so a burst of one user's commands past the
//! limit is slowed, not failed.
//!
//! A stream handed over to a step's supervisor (srun, salloc) leaves the count when the
//! daemon lets it go: those are long-lived on purpose, and the daemon no longer holds them.

use crate::api::types::{errno, ApiError, Envelope, Meta};
use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most connections one peer may hold at once: as many as slurmctld works on at once
/// in all (`conmgr_max_connections`, 512 by default). Idle connections close within seconds,
/// and a step's or an allocation's stream leaves the count once handed over, so what one
/// user holds is its commands' requests in progress and their long polls (`sbatch --wait`,
/// the board): 512 of them at once is a busy workflow.
pub const MAX_PER_PEER: usize = 512;

/// The most connections the daemon holds at once, all peers together, unless half of its
/// descriptor limit is lower (see [`Gate::limit`]): 16 users at their limit. With the
/// shipped unit's `LimitNOFILE=65536`, seven eighths of the descriptors stay for the store,
/// the jobs' files and the supervisors.
pub const MAX_CONNECTIONS: usize = 8192;

/// How often at most a refused connection is logged: one line then says how many were
/// refused since, so that a flood of them cannot flood the log.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// A Unix socket's peer, by its uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Uid(pub u32);

impl Display for Uid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "uid {}", self.0)
    }
}

/// A TCP peer, by its address (its port aside: each connection has its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address(pub std::net::IpAddr);

impl Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "address {}", self.0)
    }
}

/// Why a connection is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Its peer holds as many as one peer may.
    PeerFull {
        /// The peer, as [`Uid`] or [`Address`] writes it.
        peer: String,
        /// The limit.
        limit: usize,
    },
    /// The daemon holds as many as it may.
    DaemonFull {
        /// The limit.
        limit: usize,
    },
}

impl Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::PeerFull { peer, limit } => write!(
                f,
                "{peer} holds {limit} connections to the daemon, the most one user may hold at once; try again when some have closed"
            ),
            Refused::DaemonFull { limit } => write!(
                f,
                "the daemon holds {limit} connections, the most it holds at once; try again when some have closed"
            ),
        }
    }
}

/// What the listeners share: the connections held in all and their limit, the log of
/// refusals, and the `meta` of the refusals' envelope.
#[derive(Clone)]
pub struct Gate {
    shared: Arc<Shared>,
}

struct Shared {
    limit: usize,
    held: Mutex<usize>,
    log: Mutex<RefusalLog>,
    meta: Meta,
}

/// When a refusal was last logged, and how many were refused since.
#[derive(Default)]
struct RefusalLog {
    at: Option<Instant>,
    unlogged: usize,
}

impl Gate {
    /// A gate for a daemon whose replies carry `meta`, letting in at most [`Gate::limit`]
    /// connections at once.
    pub fn new(meta: Meta) -> Gate {
        Gate::with_limit(meta, Gate::limit_for(crate::sys::open_files_limit()))
    }

    /// A gate letting in at most `limit` connections at once.
    pub fn with_limit(meta: Meta, limit: usize) -> Gate {
        Gate { shared: Arc::new(Shared { limit, held: Mutex::new(0), log: Default::default(), meta }) }
    }

    /// The most connections held at once with a descriptor limit of `open_files` (`None`:
    /// unlimited): [`MAX_CONNECTIONS`], or half the limit if that is lower.
    pub fn limit_for(open_files: Option<u64>) -> usize {
        let half = open_files.map_or(usize::MAX, |n| usize::try_from(n / 2).unwrap_or(usize::MAX));
        MAX_CONNECTIONS.min(half).max(1)
    }

    /// The most connections this gate lets in at once.
    pub fn limit(&self) -> usize {
        self.shared.limit
    }

    /// The door of one listener, whose peers are told apart by `K`.
    pub fn door<K: Eq + Hash + Clone + Display>(&self, per_peer: usize) -> Door<K> {
        Door { inner: Arc::new(DoorInner { gate: self.clone(), per_peer, peers: Mutex::new(HashMap::new()) }) }
    }

    /// The whole reply to a refused connection: a `503` with `Retry-After`, slurmrestd's
    /// envelope saying `why`, and `Connection: close`.
    pub fn refusal(&self, why: &Refused) -> Vec<u8> {
        let envelope = Envelope {
            meta: self.shared.meta.clone(),
            errors: vec![ApiError {
                description: why.to_string(),
                error_number: errno::BACKOFF,
                error: "Rate limit exceeded, please retry momentarily".into(),
                source: "connection".into(),
            }],
            warnings: Vec::new(),
        };
        let body = serde_json::to_vec(&envelope).expect("envelopes serialize");
        let mut reply = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        reply.extend_from_slice(&body);
        reply
    }

    /// Logs a refusal, at most once every [`LOG_EVERY`], with the count since the last line.
    fn log(&self, why: &Refused) {
        let mut log = self.shared.log.lock().expect("refusal log");
        log.unlogged += 1;
        if log.at.is_some_and(|at| at.elapsed() < LOG_EVERY) {
            return;
        }
        tracing::warn!(refused = log.unlogged, "connection refused: {why}");
        *log = RefusalLog { at: Some(Instant::now()), unlogged: 0 };
    }
}

/// Where one listener's connections come in: counts them per peer, and against the
/// [`Gate`]'s limit.
pub struct Door<K> {
    inner: Arc<DoorInner<K>>,
}

struct DoorInner<K> {
    gate: Gate,
    per_peer: usize,
    peers: Mutex<HashMap<K, usize>>,
}

impl<K: Eq + Hash + Clone + Display> Door<K> {
    /// Lets a connection of `peer` in, while its [`Ticket`] lives; or says why not (and logs
    /// it).
    pub fn admit(&self, peer: K) -> Result<Ticket<K>, Refused> {
        let admitted = self.count_in(&peer);
        if let Err(why) = &admitted {
            self.inner.gate.log(why);
        }
        admitted.map(|()| Ticket { door: self.inner.clone(), peer })
    }

    fn count_in(&self, peer: &K) -> Result<(), Refused> {
        let mut peers = self.inner.peers.lock().expect("door counts");
        let mine = peers.get(peer).copied().unwrap_or(0);
        if mine >= self.inner.per_peer {
            return Err(Refused::PeerFull { peer: peer.to_string(), limit: self.inner.per_peer });
        }
        let shared = &self.inner.gate.shared;
        let mut held = shared.held.lock().expect("gate count");
        if *held >= shared.limit {
            return Err(Refused::DaemonFull { limit: shared.limit });
        }
        *held += 1;
        peers.insert(peer.clone(), mine + 1);
        Ok(())
    }

    /// The connections `peer` holds now.
    pub fn held_by(&self, peer: &K) -> usize {
        self.inner.peers.lock().expect("door counts").get(peer).copied().unwrap_or(0)
    }
}

/// One connection let in: counted until it is dropped.
pub struct Ticket<K: Eq + Hash> {
    door: Arc<DoorInner<K>>,
    peer: K,
}

impl<K: Eq + Hash> Drop for Ticket<K> {
    fn drop(&mut self) {
        let mut peers = self.door.peers.lock().expect("door counts");
        if let Some(n) = peers.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                peers.remove(&self.peer);
            }
        }
        *self.door.gate.shared.held.lock().expect("gate count") -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(limit: usize) -> Gate {
        Gate::with_limit(Meta::default(), limit)
    }

    #[test]
    fn one_peer_at_its_limit_is_refused_and_others_come_in() {
        let gate = gate(100);
        let door = gate.door::<Uid>(3);
        let mine: Vec<_> = (0..3).map(|_| door.admit(Uid(1001)).unwrap()).collect();
        let refused = door.admit(Uid(1001)).err().unwrap();
        assert_eq!(refused, Refused::PeerFull { peer: "uid 1001".into(), limit: 3 });
        assert!(refused.to_string().starts_with("uid 1001 holds 3 connections to the daemon"), "{refused}");
        let theirs = door.admit(Uid(1002)).unwrap();
        assert_eq!((door.held_by(&Uid(1001)), door.held_by(&Uid(1002))), (3, 1));
        drop(mine);
        assert_eq!(door.held_by(&Uid(1001)), 0);
        assert!(door.admit(Uid(1001)).is_ok(), "a closed connection makes room");
        drop(theirs);
    }

    #[test]
    fn the_gate_counts_every_listener_together() {
        let gate = gate(2);
        let unix = gate.door::<Uid>(10);
        let tcp = gate.door::<Address>(10);
        let a = unix.admit(Uid(1)).unwrap();
        let _b = tcp.admit(Address([127, 0, 0, 1].into())).unwrap();
        assert_eq!(unix.admit(Uid(2)).err(), Some(Refused::DaemonFull { limit: 2 }));
        assert_eq!(unix.held_by(&Uid(2)), 0, "a refused connection is not counted");
        drop(a);
        assert!(unix.admit(Uid(2)).is_ok());
    }

    #[test]
    fn the_limit_is_half_the_descriptors_when_they_are_few() {
        assert_eq!(Gate::limit_for(Some(65_536)), MAX_CONNECTIONS);
        assert_eq!(Gate::limit_for(Some(1024)), 512);
        assert_eq!(Gate::limit_for(None), MAX_CONNECTIONS);
        assert_eq!(Gate::limit_for(Some(1)), 1);
    }

    #[test]
    fn a_refusal_is_a_whole_503_with_the_envelope() {
        let reply = gate(1).refusal(&Refused::DaemonFull { limit: 1 });
        let text = String::from_utf8(reply).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{head}");
        assert!(head.contains("retry-after: 1") && head.contains("connection: close"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["errors"][0]["error_number"], errno::BACKOFF);
    }
}
