//! Limits of the mesh against exhaustion: libp2p connection limits (in total, per peer, being set
//! up), and a gate on inbound messages per peer (each envelope of a batch counts as one): at
//! most [`MAX_INBOUND_IN_FLIGHT_PER_PEER`] waiting for the application's answer and
//! [`MAX_INBOUND_PER_PEER_PER_SEC`] a second (a token bucket), or what the operator set
//! ([`InboundLimits`]). A message past either is shed: left unanswered, so its sender (our
//! outbox) tries again later, and counted (`mobiwf_inbound_shed_total`). One peer's flood thus
//! takes at most its share of the application's queue, and the others' messages go on.

use std::collections::HashMap;
use std::time::Instant;

use libp2p::PeerId;
use libp2p::connection_limits::{self, ConnectionLimits};
use prometheus_client::metrics::counter::Counter;

/// The most established connections (all peers).
pub const MAX_CONNECTIONS: u32 = 1024;
/// The most established connections with one peer (a dial each way, a relayed one...).
pub const MAX_CONNECTIONS_PER_PEER: u32 = 8;
/// The most inbound connections being set up (TCP accepted, Noise and Yamux not done); how
/// many of them one source address, and strangers together, may hold is `guard`'s.
pub const MAX_PENDING_INCOMING: u32 = 128;
/// The most outbound connections being set up.
pub const MAX_PENDING_OUTGOING: u32 = 256;
/// The most messages of one peer waiting for the application's answer.
pub const MAX_INBOUND_IN_FLIGHT_PER_PEER: u32 = 64;
/// The most messages a second from one peer (sustained; a burst of as many is allowed).
pub const MAX_INBOUND_PER_PEER_PER_SEC: u32 = 2000;
/// How many peers' rates are remembered before idle ones are forgotten.
const MAX_TRACKED_PEERS: usize = 4096;

/// The per-peer limits of the inbound gate; the defaults are the constants above (a daemon's
/// `--inbound-in-flight-per-peer` and `--inbound-per-peer-per-sec` set others, e.g. lower on
/// a small device).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboundLimits {
    /// The most requests of one peer waiting for the application's answer (at least 1).
    pub in_flight_per_peer: u32,
    /// The most requests a second from one peer, sustained (at least 1).
    pub per_peer_per_sec: u32,
}

impl Default for InboundLimits {
    fn default() -> Self {
        InboundLimits {
            in_flight_per_peer: MAX_INBOUND_IN_FLIGHT_PER_PEER,
            per_peer_per_sec: MAX_INBOUND_PER_PEER_PER_SEC,
        }
    }
}

/// libp2p's connection limits, as the constants above say.
pub(super) fn connections() -> connection_limits::Behaviour {
    connection_limits::Behaviour::new(
        ConnectionLimits::default()
            .with_max_established(Some(MAX_CONNECTIONS))
            .with_max_established_per_peer(Some(MAX_CONNECTIONS_PER_PEER))
            .with_max_pending_incoming(Some(MAX_PENDING_INCOMING))
            .with_max_pending_outgoing(Some(MAX_PENDING_OUTGOING)),
    )
}

/// One peer's token bucket.
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Which inbound requests go to the application.
pub(super) struct InboundGate {
    in_flight: HashMap<PeerId, usize>,
    buckets: HashMap<PeerId, Bucket>,
    per_sec: f64,
    most_in_flight: usize,
    shed: Counter,
}

impl InboundGate {
    /// The gate of `limits`, counting what it sheds in `shed`.
    pub(super) fn new(limits: InboundLimits, shed: Counter) -> InboundGate {
        InboundGate::with(
            usize::try_from(limits.in_flight_per_peer).unwrap_or(usize::MAX),
            limits.per_peer_per_sec,
            shed,
        )
    }

    fn with(most_in_flight: usize, per_sec: u32, shed: Counter) -> InboundGate {
        InboundGate {
            in_flight: HashMap::new(),
            buckets: HashMap::new(),
            per_sec: f64::from(per_sec.max(1)),
            most_in_flight: most_in_flight.max(1),
            shed,
        }
    }

    /// Whether a request from `peer` at `now` goes on (then [`InboundGate::done`] must follow
    /// its answer), or why it is shed.
    pub(super) fn admit(&mut self, peer: PeerId, now: Instant) -> Result<(), &'static str> {
        let waiting = self.in_flight.get(&peer).copied().unwrap_or(0);
        if waiting >= self.most_in_flight {
            self.shed.inc();
            return Err("too many of its requests wait for an answer");
        }
        if self.buckets.len() >= MAX_TRACKED_PEERS && !self.buckets.contains_key(&peer) {
            let per_sec = self.per_sec;
            self.buckets
                .retain(|_, b| now.duration_since(b.at).as_secs_f64() * per_sec < per_sec);
        }
        let per_sec = self.per_sec;
        let bucket = self.buckets.entry(peer).or_insert(Bucket {
            tokens: per_sec,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * per_sec;
        bucket.tokens = (bucket.tokens + refill).min(per_sec);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            self.shed.inc();
            return Err("over its rate of requests a second");
        }
        bucket.tokens -= 1.0;
        *self.in_flight.entry(peer).or_default() += 1;
        Ok(())
    }

    /// A request of `peer` that was let in has been answered (or given up on).
    pub(super) fn done(&mut self, peer: PeerId) {
        if let Some(n) = self.in_flight.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.in_flight.remove(&peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: std::time::Duration = std::time::Duration::from_secs(1);

    #[test]
    fn a_peer_past_its_in_flight_share_is_shed_and_the_others_are_not() {
        let shed = Counter::default();
        let mut gate = InboundGate::with(2, 1000, shed.clone());
        let (flood, other) = (PeerId::random(), PeerId::random());
        let now = Instant::now();
        assert!(gate.admit(flood, now).is_ok());
        assert!(gate.admit(flood, now).is_ok());
        assert!(gate.admit(flood, now).is_err());
        assert!(gate.admit(other, now).is_ok());
        gate.done(flood);
        assert!(gate.admit(flood, now).is_ok());
        assert_eq!(shed.get(), 1);
    }

    #[test]
    fn a_peer_over_its_rate_is_shed_until_its_bucket_fills_again() {
        let mut gate = InboundGate::with(usize::MAX, 10, Counter::default());
        let peer = PeerId::random();
        let now = Instant::now();
        for _ in 0..10 {
            assert!(gate.admit(peer, now).is_ok());
        }
        assert_eq!(
            gate.admit(peer, now),
            Err("over its rate of requests a second")
        );
        assert!(gate.admit(peer, now + SECOND / 5).is_ok());
        assert!(gate.admit(peer, now + SECOND / 5).is_ok());
        assert!(gate.admit(peer, now + SECOND / 5).is_err());
    }
}
