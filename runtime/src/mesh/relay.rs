//! Circuit relay v2, so that a daemon nobody can dial (behind NAT, a firewall, listening only
//! on its own loopback) is still reached: it keeps a **reservation** on a relay and listens on
//! the relay's circuit (`/…/p2p/<relay>/p2p-circuit`); a peer dials it at
//! `/…/p2p/<relay>/p2p-circuit/p2p/<it>` and the relay joins the two connections (a
//! **circuit**). The controller serves as a relay by default, a node with `--relay-server`.
//!
//! What is ours here: the relay's limits (named below), the circuit address a daemon
//! registers, reading a circuit address's relay, listening on the relay again (with backoff)
//! whenever the listener closes (the relay restarted, the link went away), and the counters.
//! libp2p renews a reservation before it ends.

use std::num::NonZeroU32;
use std::time::Duration;

use libp2p::core::transport::ListenerId;
use libp2p::multiaddr::Protocol;
use libp2p::{Multiaddr, PeerId, relay};
use prometheus_client::metrics::counter::Counter;
use tokio::time::Instant;

use super::task::Task;

/// Most reservations a relay holds at once (about one per node behind it).
pub const RELAY_MAX_RESERVATIONS: usize = 1024;
/// Most reservations one peer holds on a relay at once.
pub const RELAY_MAX_RESERVATIONS_PER_PEER: usize = 4;
/// How long a reservation lasts; its node renews it at three quarters of that.
pub const RELAY_RESERVATION_DURATION: Duration = Duration::from_secs(60 * 60);
/// Reservations one peer may make in a burst (a node whose link comes and goes makes one each
/// time it comes back); then one more per [`RELAY_RESERVATION_REFILL`].
pub const RELAY_RESERVATION_BURST: u32 = 30;
/// See [`RELAY_RESERVATION_BURST`].
pub const RELAY_RESERVATION_REFILL: Duration = Duration::from_secs(10);
/// Most circuits through a relay at once.
pub const RELAY_MAX_CIRCUITS: usize = 4096;
/// Most circuits at once from or to one peer (a node behind the relay has one per partner
/// connected to it).
pub const RELAY_MAX_CIRCUITS_PER_PEER: usize = 256;
/// How long one circuit lasts; then the relay closes it and the next message opens another.
pub const RELAY_MAX_CIRCUIT_DURATION: Duration = Duration::from_secs(60 * 60);
/// Most bytes one circuit carries each way; then it is closed like an old one (files go
/// through in chunks, each request on the circuit open at the time).
pub const RELAY_MAX_CIRCUIT_BYTES: u64 = 1 << 30;
/// Circuits one source peer may open in a burst; then one more per [`RELAY_CIRCUIT_REFILL`].
pub const RELAY_CIRCUIT_BURST: u32 = 120;
/// See [`RELAY_CIRCUIT_BURST`].
pub const RELAY_CIRCUIT_REFILL: Duration = Duration::from_millis(500);
/// The first wait before listening on the relay again once the listener closed; it doubles
/// up to [`RELAY_RETRY_MAX`] while the relay cannot be reached, and is back to this once a
/// reservation is made.
pub const RELAY_RETRY_FIRST: Duration = Duration::from_millis(500);
/// See [`RELAY_RETRY_FIRST`].
pub const RELAY_RETRY_MAX: Duration = Duration::from_secs(10);
/// How long `mesh::start` waits for the first reservation; without it by then the daemon goes
/// on (its circuit address is known in advance) and the reservation is tried again.
pub const RELAY_STARTUP_WAIT: Duration = Duration::from_secs(10);

/// The relay's configuration from the limits above.
pub(super) fn server_config() -> relay::Config {
    let burst = |n: u32| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
    relay::Config {
        max_reservations: RELAY_MAX_RESERVATIONS,
        max_reservations_per_peer: RELAY_MAX_RESERVATIONS_PER_PEER,
        reservation_duration: RELAY_RESERVATION_DURATION,
        reservation_rate_limiters: Vec::new(),
        max_circuits: RELAY_MAX_CIRCUITS,
        max_circuits_per_peer: RELAY_MAX_CIRCUITS_PER_PEER,
        max_circuit_duration: RELAY_MAX_CIRCUIT_DURATION,
        max_circuit_bytes: RELAY_MAX_CIRCUIT_BYTES,
        circuit_src_rate_limiters: Vec::new(),
    }
    // Per peer only: the nodes behind one NAT share an IP address.
    .reservation_rate_per_peer(burst(RELAY_RESERVATION_BURST), RELAY_RESERVATION_REFILL)
    .circuit_src_per_peer(burst(RELAY_CIRCUIT_BURST), RELAY_CIRCUIT_REFILL)
}

/// The relay a circuit address goes through (the `/p2p/<relay>` just before `/p2p-circuit`),
/// or `None` for a direct address.
pub fn relay_of(addr: &Multiaddr) -> Option<PeerId> {
    let mut previous = None;
    for p in addr.iter() {
        match p {
            Protocol::P2pCircuit => return previous,
            Protocol::P2p(peer) => previous = Some(peer),
            _ => previous = None,
        }
    }
    None
}

/// Whether `addr` goes through a relay.
pub fn is_circuit(addr: &Multiaddr) -> bool {
    addr.iter().any(|p| p == Protocol::P2pCircuit)
}

/// Checks a relay's address as `--via-relay` gives it: a transport address ending in
/// `/p2p/<relay>`, not a circuit itself, not this daemon's. Returns the relay's peer id.
pub fn check_relay_address(relay: &Multiaddr, me: PeerId) -> Result<PeerId, String> {
    if is_circuit(relay) {
        return Err(format!(
            "{relay} is a circuit address; give the relay's own address (ending in /p2p/<relay>)"
        ));
    }
    let Some(Protocol::P2p(peer)) = relay.iter().last() else {
        return Err(format!(
            "{relay} does not end in /p2p/<peer id>; give the relay's full libp2p address"
        ));
    };
    if relay.iter().count() < 2 {
        return Err(format!(
            "{relay} names the relay but not where it listens (/ip4/.../tcp/.../p2p/<relay>)"
        ));
    }
    if peer == me {
        return Err(format!(
            "{relay} is this daemon itself: it cannot be its own relay"
        ));
    }
    Ok(peer)
}

/// The address peers reach `me` at through `relay` (`relay` ends in `/p2p/<relay>`).
pub fn circuit_address(relay: &Multiaddr, me: PeerId) -> Multiaddr {
    relay
        .clone()
        .with(Protocol::P2pCircuit)
        .with(Protocol::P2p(me))
}

/// What a relay and a daemon behind one count, shown with the daemon's metrics.
#[derive(Debug, Clone, Default)]
pub struct RelayCounters {
    /// Reservations this relay accepted (renewals left out).
    pub reservations: Counter,
    /// Circuits this relay accepted (one per connection it joined).
    pub circuits: Counter,
    /// Connections of this daemon that go through a relay (either way).
    pub relayed_connections: Counter,
}

/// The listener on a relay's circuit, and when to listen again after it closed.
#[derive(Debug)]
pub(super) struct RelayListen {
    /// The relay's address (ending in `/p2p/<relay>`).
    pub(super) relay: Multiaddr,
    /// The listener now, if any.
    pub(super) listener: Option<ListenerId>,
    /// When to listen again (the listener closed).
    pub(super) retry_at: Option<Instant>,
    /// The wait after the next close.
    pub(super) backoff: Duration,
}

impl RelayListen {
    pub(super) fn new(relay: Multiaddr) -> Self {
        Self {
            relay,
            listener: None,
            retry_at: None,
            backoff: RELAY_RETRY_FIRST,
        }
    }

    /// What to listen on.
    pub(super) fn circuit(&self) -> Multiaddr {
        self.relay.clone().with(Protocol::P2pCircuit)
    }

    /// The listener `id` closed: when it is ours, listen again after the backoff, which grows.
    /// Returns the wait when it was ours.
    pub(super) fn closed(&mut self, id: ListenerId, now: Instant) -> Option<Duration> {
        if self.listener != Some(id) {
            return None;
        }
        self.listener = None;
        let wait = self.backoff;
        self.retry_at = Some(now + wait);
        self.backoff = (self.backoff * 2).min(RELAY_RETRY_MAX);
        Some(wait)
    }

    /// A reservation was made: the next loss is retried quickly again.
    pub(super) fn reserved(&mut self) {
        self.backoff = RELAY_RETRY_FIRST;
    }

    /// A connection with `peer` was established: when it is the relay and the listener waits
    /// for its next try, the link is back: true (try now), with the backoff reset.
    pub(super) fn relay_is_back(&mut self, peer: PeerId) -> bool {
        let is_relay = self.relay.iter().any(|p| p == Protocol::P2p(peer));
        if !is_relay || self.retry_at.is_none() {
            return false;
        }
        self.backoff = RELAY_RETRY_FIRST;
        true
    }
}

impl Task {
    /// Listens on the relay's circuit (again), if this daemon listens on a relay.
    pub(super) fn listen_on_relay(&mut self) {
        let Some(relay) = &mut self.relay else {
            return;
        };
        relay.retry_at = None;
        let circuit = relay.circuit();
        match self.swarm.listen_on(circuit.clone()) {
            Ok(id) => {
                tracing::debug!(%circuit, "asking the relay for a reservation");
                relay.listener = Some(id);
            }
            Err(e) => {
                // Only a malformed address is refused here, and `start` checked it.
                tracing::warn!(%circuit, "cannot listen on the relay: {e}");
            }
        }
    }

    /// When to listen on the relay again (far away when not waiting to).
    pub(super) fn relay_retry_at(&self) -> Instant {
        self.relay
            .as_ref()
            .and_then(|r| r.retry_at)
            .unwrap_or_else(|| Instant::now() + RELAY_RETRY_MAX)
    }

    /// Whether this daemon waits to listen on its relay again.
    pub(super) fn relay_retry_due(&self) -> bool {
        self.relay.as_ref().is_some_and(|r| r.retry_at.is_some())
    }

    /// A listener has an address: a relay serves its own addresses to the daemons behind it;
    /// the circuit's first address tells `start` that the reservation is made.
    pub(super) fn on_relay_listen_addr(&mut self, listener: ListenerId, address: &Multiaddr) {
        if self.relay_server && !is_circuit(address) {
            self.swarm.add_external_address(address.clone());
        }
        if let Some(relay) = &mut self.relay
            && relay.listener == Some(listener)
        {
            relay.reserved();
            if let Some(reserved) = self.reserved.take() {
                let _ = reserved.send(());
            }
        }
    }

    /// A listener closed: when it was the relay's circuit (the relay restarted, the link went
    /// away, the reservation was refused), listen there again after the backoff.
    pub(super) fn on_relay_listener_closed(&mut self, listener: ListenerId) {
        let Some(relay) = &mut self.relay else {
            return;
        };
        if let Some(wait) = relay.closed(listener, Instant::now()) {
            tracing::warn!(relay = %relay.relay, "the relay's circuit closed; listening there again in {wait:?}");
        }
    }

    /// What the relay client says: reservations made or renewed, circuits joined.
    pub(super) fn on_relay_client(&mut self, event: relay::client::Event) {
        match event {
            relay::client::Event::ReservationReqAccepted {
                relay_peer_id,
                renewal,
                ..
            } => {
                if renewal {
                    tracing::debug!(relay = %relay_peer_id, "reservation renewed");
                } else {
                    tracing::info!(relay = %relay_peer_id, "reservation made on the relay");
                }
            }
            relay::client::Event::OutboundCircuitEstablished { relay_peer_id, .. } => {
                tracing::debug!(relay = %relay_peer_id, "connected through the relay");
            }
            relay::client::Event::InboundCircuitEstablished { src_peer_id, .. } => {
                tracing::debug!(from = %src_peer_id, "a peer connected through the relay");
            }
        }
    }

    /// What the relay server did, counted and logged.
    pub(super) fn on_relay_server(&mut self, event: relay::Event) {
        match event {
            relay::Event::ReservationReqAccepted {
                src_peer_id,
                renewed,
            } => {
                if !renewed {
                    self.counters.reservations.inc();
                    tracing::info!(peer = %src_peer_id, "relay: reservation accepted");
                }
            }
            relay::Event::CircuitReqAccepted {
                src_peer_id,
                dst_peer_id,
            } => {
                self.counters.circuits.inc();
                tracing::debug!(from = %src_peer_id, to = %dst_peer_id, "relay: circuit accepted");
            }
            relay::Event::ReservationReqDenied { src_peer_id, .. } => {
                tracing::warn!(peer = %src_peer_id, "relay: reservation denied (over a limit)");
            }
            relay::Event::CircuitReqDenied {
                src_peer_id,
                dst_peer_id,
                ..
            } => {
                tracing::warn!(
                    from = %src_peer_id, to = %dst_peer_id,
                    "relay: circuit denied (over a limit, or no reservation of the destination)"
                );
            }
            other => tracing::debug!("relay: {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay_addr(relay: PeerId) -> Multiaddr {
        format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}")
            .parse()
            .unwrap()
    }

    #[test]
    fn a_circuit_address_names_its_relay() {
        let (relay, me) = (PeerId::random(), PeerId::random());
        let circuit = circuit_address(&relay_addr(relay), me);
        assert_eq!(
            circuit.to_string(),
            format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{me}")
        );
        assert_eq!(relay_of(&circuit), Some(relay));
        assert!(is_circuit(&circuit));
        assert_eq!(relay_of(&relay_addr(relay)), None);
        let bare: Multiaddr = "/ip4/10.0.0.1/tcp/4001/p2p-circuit".parse().unwrap();
        assert_eq!(relay_of(&bare), None, "no relay named");
    }

    #[test]
    fn a_relay_address_must_name_the_relay_and_where_it_listens() {
        let (relay, me) = (PeerId::random(), PeerId::random());
        assert_eq!(check_relay_address(&relay_addr(relay), me), Ok(relay));
        let no_peer: Multiaddr = "/ip4/10.0.0.1/tcp/4001".parse().unwrap();
        assert!(
            check_relay_address(&no_peer, me)
                .unwrap_err()
                .contains("/p2p/")
        );
        let only_peer = Multiaddr::empty().with(Protocol::P2p(relay));
        assert!(
            check_relay_address(&only_peer, me)
                .unwrap_err()
                .contains("not where it listens")
        );
        let circuit = circuit_address(&relay_addr(relay), me);
        assert!(
            check_relay_address(&circuit, me)
                .unwrap_err()
                .contains("circuit")
        );
        assert!(
            check_relay_address(&relay_addr(me), me)
                .unwrap_err()
                .contains("its own relay")
        );
    }

    #[test]
    fn listening_again_backs_off_and_a_reservation_resets_it() {
        let mut listen = RelayListen::new(relay_addr(PeerId::random()));
        let now = Instant::now();
        let other = ListenerId::next();
        assert_eq!(listen.closed(other, now), None, "not ours");
        let mut waits = Vec::new();
        for _ in 0..7 {
            let id = ListenerId::next();
            listen.listener = Some(id);
            waits.push(listen.closed(id, now).unwrap());
        }
        assert_eq!(waits[0], RELAY_RETRY_FIRST);
        assert_eq!(waits[1], RELAY_RETRY_FIRST * 2);
        assert_eq!(*waits.last().unwrap(), RELAY_RETRY_MAX);
        assert_eq!(listen.retry_at, Some(now + RELAY_RETRY_MAX));
        listen.reserved();
        let id = ListenerId::next();
        listen.listener = Some(id);
        assert_eq!(listen.closed(id, now), Some(RELAY_RETRY_FIRST));
    }

    #[test]
    fn a_connection_with_the_relay_while_waiting_to_listen_again_says_try_now() {
        let relay = PeerId::random();
        let mut listen = RelayListen::new(relay_addr(relay));
        assert!(!listen.relay_is_back(relay), "not waiting: nothing to do");
        let now = Instant::now();
        for _ in 0..5 {
            let id = ListenerId::next();
            listen.listener = Some(id);
            listen.closed(id, now);
        }
        assert!(!listen.relay_is_back(PeerId::random()), "another peer");
        assert!(listen.relay_is_back(relay));
        let id = ListenerId::next();
        listen.listener = Some(id);
        assert_eq!(
            listen.closed(id, now),
            Some(RELAY_RETRY_FIRST),
            "backoff reset"
        );
    }
}
