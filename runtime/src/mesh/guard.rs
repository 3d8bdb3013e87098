//! The door of the mesh's port against strangers. Anyone who can reach the port can open TCP
//! connections to it and never finish the handshake; each one held a slot among the
//! connections being set up (`limits::MAX_PENDING_INCOMING`) until the dial timeout, so a few
//! hundred of them made every member's new connection be refused for seconds. Here, by the
//! source address of each inbound connection being set up (an IPv4 address, an IPv6 /64: the
//! smallest block a stranger cannot easily hop out of, though a whole LAN may share it, as
//! hosts behind one NAT share an IPv4 address):
//!
//! - one source holds at most [`MAX_PENDING_INCOMING_PER_SOURCE`] connections being set up;
//! - sources that never completed a handshake (strangers) hold at most
//!   `MAX_PENDING_INCOMING - PENDING_INCOMING_KEPT_FOR_KNOWN` together, so the rest stays for
//!   the sources that did (a member's address, once it connected; with a swarm key, only a
//!   holder of the key completes a handshake);
//! - an inbound handshake (pnet, Noise, Yamux) must be done within
//!   [`INBOUND_HANDSHAKE_TIMEOUT`] (`private::transport`), so a slot held by silence is given
//!   back soon.
//!
//! A connection past a limit is closed at once, counted (`mobiwf_connections_refused_total`)
//! and logged at most once per [`REFUSAL_LOG_INTERVAL`] per source, with how many were
//! refused meanwhile: a flood fills neither the slots nor the log. Relayed connections carry
//! no address of their source: the relay's own limits (`relay`) bound them.
//!
//! Streams a peer opens and never uses are bounded by request-response itself: at most
//! `MAX_CONCURRENT_STREAMS` per connection, each dropped after the request timeout when no
//! request came; connections per peer are `limits::MAX_CONNECTIONS_PER_PEER`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use libp2p::PeerId;
use libp2p::core::transport::PortUse;
use libp2p::core::{Endpoint, Multiaddr};
use libp2p::multiaddr::Protocol;
use libp2p::swarm::{
    ConnectionDenied, ConnectionId, FromSwarm, ListenFailure, NetworkBehaviour, THandler,
    THandlerInEvent, THandlerOutEvent, ToSwarm, dummy,
};
use prometheus_client::metrics::counter::Counter;

use super::limits::MAX_PENDING_INCOMING;

/// The most inbound connections one source may have being set up at once. A handshake takes
/// milliseconds, but many peers behind one NAT (or on one host) may dial in the same instant,
/// e.g. all reconnecting when this daemon restarts, each up to `DIAL_CONCURRENCY` (8) of our
/// addresses at a time: 32 leaves room for such a burst, while one source still holds at
/// most a quarter of `MAX_PENDING_INCOMING`.
pub const MAX_PENDING_INCOMING_PER_SOURCE: usize = 32;
/// How many of the `MAX_PENDING_INCOMING` slots for connections being set up only sources
/// that completed a handshake before may take: strangers from many addresses together never
/// hold them all.
pub const PENDING_INCOMING_KEPT_FOR_KNOWN: usize = 32;
/// How long an inbound connection may take from its TCP accept to the end of its handshake
/// (pnet, Noise, Yamux): about four round trips, so two seconds serve links of up to half a
/// second's round trip; a silent connection is closed then. Shorter than the dial timeout a
/// dialling peer waits (`DEFAULT_DIAL_TIMEOUT`, 3 s), which also counts its TCP connect.
pub const INBOUND_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// A source whose connections are refused is logged at most once in this interval (with how
/// many were refused since the last line).
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(60);
/// How many sources that completed a handshake are remembered (the oldest forgotten first).
const MAX_KNOWN_SOURCES: usize = 4096;
/// How many refused sources' log times are remembered; past it, refusals from new sources are
/// logged together, once per interval.
const MAX_LOGGED_SOURCES: usize = 1024;

/// Where an inbound connection comes from, as far as the limits are concerned: an IPv4
/// address, or the /64 block of an IPv6 address (one network, as a NAT's address is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Source {
    V4(Ipv4Addr),
    V6Block(u64),
}

impl Source {
    /// The source of a connection from `addr`: none for one without an IP address (relayed).
    pub(super) fn of(addr: &Multiaddr) -> Option<Source> {
        addr.iter().find_map(|p| match p {
            Protocol::Ip4(ip) => Some(Source::from(IpAddr::V4(ip))),
            Protocol::Ip6(ip) => Some(Source::from(IpAddr::V6(ip))),
            _ => None,
        })
    }
}

impl From<IpAddr> for Source {
    fn from(ip: IpAddr) -> Source {
        match ip {
            IpAddr::V4(ip) => Source::V4(ip),
            IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
                Some(v4) => Source::V4(v4),
                None => Source::V6Block((ip.to_bits() >> 64) as u64),
            },
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::V4(ip) => write!(f, "{ip}"),
            Source::V6Block(block) => {
                let ip = std::net::Ipv6Addr::from_bits(u128::from(*block) << 64);
                write!(f, "{ip}/64")
            }
        }
    }
}

/// Why a connection being set up was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Refusal {
    #[error(
        "its source has {MAX_PENDING_INCOMING_PER_SOURCE} connections being set up \
         (MAX_PENDING_INCOMING_PER_SOURCE)"
    )]
    Source,
    #[error(
        "sources never seen before hold all the slots for connections being set up that are \
         not kept for known ones (PENDING_INCOMING_KEPT_FOR_KNOWN)"
    )]
    Strangers,
}

/// The limits' bookkeeping: which connections are being set up, from where, and which
/// sources completed a handshake.
pub(super) struct Door {
    pending: HashMap<ConnectionId, (Source, bool)>,
    per_source: HashMap<Source, usize>,
    strangers: usize,
    most_strangers: usize,
    /// Known sources, with when each was last seen (a sequence number).
    known: HashMap<Source, u64>,
    known_seq: u64,
}

impl Door {
    pub(super) fn new() -> Door {
        let total = usize::try_from(MAX_PENDING_INCOMING).unwrap_or(usize::MAX);
        Door {
            pending: HashMap::new(),
            per_source: HashMap::new(),
            strangers: 0,
            most_strangers: total.saturating_sub(PENDING_INCOMING_KEPT_FOR_KNOWN).max(1),
            known: HashMap::new(),
            known_seq: 0,
        }
    }

    /// Whether connection `id` from `source` may be set up (then [`Door::settled`] must follow
    /// when it is established or fails).
    pub(super) fn admit(&mut self, id: ConnectionId, source: Source) -> Result<(), Refusal> {
        let from_source = self.per_source.get(&source).copied().unwrap_or(0);
        if from_source >= MAX_PENDING_INCOMING_PER_SOURCE {
            return Err(Refusal::Source);
        }
        let stranger = !self.known.contains_key(&source);
        if stranger && self.strangers >= self.most_strangers {
            return Err(Refusal::Strangers);
        }
        self.strangers += usize::from(stranger);
        *self.per_source.entry(source).or_default() += 1;
        self.pending.insert(id, (source, stranger));
        Ok(())
    }

    /// Connection `id` is no longer being set up (established, failed or refused elsewhere).
    pub(super) fn settled(&mut self, id: ConnectionId) {
        let Some((source, stranger)) = self.pending.remove(&id) else {
            return;
        };
        self.strangers -= usize::from(stranger);
        if let Some(n) = self.per_source.get_mut(&source) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&source);
            }
        }
    }

    /// `source` completed a handshake: from now on its connections may take the slots kept
    /// for known sources.
    pub(super) fn known(&mut self, source: Source) {
        self.known_seq += 1;
        if self.known.len() >= MAX_KNOWN_SOURCES && !self.known.contains_key(&source) {
            let oldest = self
                .known
                .iter()
                .min_by_key(|(_, seq)| **seq)
                .map(|(s, _)| *s);
            if let Some(oldest) = oldest {
                self.known.remove(&oldest);
            }
        }
        self.known.insert(source, self.known_seq);
    }
}

/// When each refused source was last logged, and how many were refused since.
#[derive(Default)]
pub(super) struct RefusalLog {
    sources: HashMap<Source, (Instant, u64)>,
    /// Refusals of sources past [`MAX_LOGGED_SOURCES`]: when they were last logged together,
    /// and how many since.
    others: Option<(Instant, u64)>,
}

/// What to log about one refusal: nothing, or the line's count of refusals it stands for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Say {
    Nothing,
    Source(u64),
    Others(u64),
}

impl RefusalLog {
    /// A connection of `source` was refused at `now`: whether to log it, and for how many.
    pub(super) fn refused(&mut self, source: Source, now: Instant) -> Say {
        let due = |at: Instant| now.duration_since(at) >= REFUSAL_LOG_INTERVAL;
        if !self.sources.contains_key(&source) && self.sources.len() >= MAX_LOGGED_SOURCES {
            self.sources.retain(|_, (at, _)| !due(*at));
        }
        if let Some((at, count)) = self.sources.get_mut(&source) {
            *count += 1;
            if !due(*at) {
                return Say::Nothing;
            }
            let said = std::mem::take(count);
            *at = now;
            return Say::Source(said);
        }
        if self.sources.len() < MAX_LOGGED_SOURCES {
            self.sources.insert(source, (now, 0));
            return Say::Source(1);
        }
        let Some((at, count)) = self.others.as_mut() else {
            self.others = Some((now, 0));
            return Say::Others(1);
        };
        *count += 1;
        if !due(*at) {
            return Say::Nothing;
        }
        let said = std::mem::take(count);
        *at = now;
        Say::Others(said)
    }
}

/// The behaviour that applies the [`Door`] to the swarm's inbound connections.
pub(super) struct Guard {
    door: Door,
    log: RefusalLog,
    refused: Counter,
}

impl Guard {
    /// A guard counting the connections it refuses in `refused`.
    pub(super) fn new(refused: Counter) -> Guard {
        Guard {
            door: Door::new(),
            log: RefusalLog::default(),
            refused,
        }
    }

    fn refuse(&mut self, source: Source, refusal: Refusal) -> ConnectionDenied {
        self.refused.inc();
        match self.log.refused(source, Instant::now()) {
            Say::Nothing => {}
            Say::Source(n) => tracing::warn!(
                %source,
                refused = n,
                "refusing inbound connections: {refusal} (said at most once every {:?})",
                REFUSAL_LOG_INTERVAL
            ),
            Say::Others(n) => tracing::warn!(
                refused = n,
                "refusing inbound connections from many sources: {refusal} (said at most \
                 once every {:?})",
                REFUSAL_LOG_INTERVAL
            ),
        }
        ConnectionDenied::new(refusal)
    }
}

impl NetworkBehaviour for Guard {
    type ConnectionHandler = dummy::ConnectionHandler;
    type ToSwarm = Infallible;

    fn handle_pending_inbound_connection(
        &mut self,
        id: ConnectionId,
        _local: &Multiaddr,
        remote: &Multiaddr,
    ) -> Result<(), ConnectionDenied> {
        let Some(source) = Source::of(remote) else {
            return Ok(());
        };
        self.door
            .admit(id, source)
            .map_err(|refusal| self.refuse(source, refusal))
    }

    fn handle_established_inbound_connection(
        &mut self,
        id: ConnectionId,
        _peer: PeerId,
        _local: &Multiaddr,
        remote: &Multiaddr,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        self.door.settled(id);
        if let Some(source) = Source::of(remote) {
            self.door.known(source);
        }
        Ok(dummy::ConnectionHandler)
    }

    fn handle_established_outbound_connection(
        &mut self,
        _id: ConnectionId,
        _peer: PeerId,
        addr: &Multiaddr,
        _role: Endpoint,
        _port_use: PortUse,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        // A peer we dialled may dial us from the same address (a relayed connection's
        // address is the relay's).
        let relayed = addr.iter().any(|p| p == Protocol::P2pCircuit);
        if let Some(source) = Source::of(addr).filter(|_| !relayed) {
            self.door.known(source);
        }
        Ok(dummy::ConnectionHandler)
    }

    fn on_swarm_event(&mut self, event: FromSwarm) {
        if let FromSwarm::ListenFailure(ListenFailure { connection_id, .. }) = event {
            self.door.settled(connection_id);
        }
    }

    fn on_connection_handler_event(
        &mut self,
        _peer: PeerId,
        _id: ConnectionId,
        event: THandlerOutEvent<Self>,
    ) {
        match event {}
    }

    fn poll(&mut self, _: &mut Context<'_>) -> Poll<ToSwarm<Self::ToSwarm, THandlerInEvent<Self>>> {
        Poll::Pending
    }
}

#[cfg(test)]
mod tests;
