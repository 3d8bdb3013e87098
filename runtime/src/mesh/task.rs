//! The task that owns the libp2p `Swarm`: it takes the handles' commands, polls the swarm
//! (the request-response exchanges themselves are `requests`), keeps the listen addresses,
//! and keeps the address book (what identify and the dials that worked say of each peer).

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use libp2p::core::ConnectedPoint;
use libp2p::core::transport::ListenerId;
use libp2p::request_response::{self, OutboundRequestId};
use libp2p::swarm::behaviour::toggle::Toggle;
use libp2p::swarm::{DialError, NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, PeerId, Swarm, identify, relay};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::addresses::{AddressBook, Freshness};
use super::relay::{RelayCounters, RelayListen};
use super::requests::{Answer, PendingRequest};
use super::{Command, Inbound, SendError};
use crate::codec::WireCodec;

/// The most peers whose last dial error is kept (to explain their failed requests); past it,
/// the errors kept are forgotten.
pub const MAX_DIAL_ERRORS_KEPT: usize = 4096;

/// What the swarm runs: the request-response protocol of the wire messages, identify, ping
/// (a silent connection is closed), the limits per source address and on connections, the
/// relay client (dialing circuits, listening on one) and,
/// when serving, the relay.
#[derive(NetworkBehaviour)]
#[behaviour(prelude = "libp2p::swarm::derive_prelude")]
pub(super) struct Behaviour {
    pub(super) rpc: request_response::Behaviour<WireCodec>,
    pub(super) identify: identify::Behaviour,
    pub(super) ping: libp2p::ping::Behaviour,
    /// Before `limits`: a stranger's connection past its share takes no slot there.
    pub(super) guard: super::guard::Guard,
    pub(super) limits: libp2p::connection_limits::Behaviour,
    pub(super) relay_client: relay::client::Behaviour,
    pub(super) relay: Toggle<relay::Behaviour>,
}

/// The swarm task's state.
pub(super) struct Task {
    pub(super) swarm: Swarm<Behaviour>,
    pub(super) peer_id: PeerId,
    pub(super) commands: mpsc::Receiver<Command>,
    pub(super) inbound: mpsc::Sender<Inbound>,
    /// Inbound envelopes that did not fit in the channel (at most one batch's); while any is
    /// here the swarm is not polled.
    pub(super) blocked: VecDeque<Inbound>,
    pub(super) outbound: HashMap<OutboundRequestId, PendingRequest>,
    /// The envelopes waiting to go, per peer.
    pub(super) queues: super::batches::Queues,
    pub(super) replies: FuturesUnordered<BoxFuture<'static, Answer>>,
    pub(super) listen_addrs: watch::Sender<Vec<Multiaddr>>,
    /// Every listener, to close them on shutdown.
    pub(super) listeners: Vec<ListenerId>,
    /// Listeners that have not reported an address yet, while starting.
    pub(super) awaiting: HashSet<ListenerId>,
    /// Tells [`start`] that every listener has an address (or why not).
    pub(super) ready: Option<oneshot::Sender<Result<(), String>>>,
    /// The last dial error per peer, to say why an `OutboundFailure::DialFailure` happened.
    pub(super) dial_errors: HashMap<PeerId, String>,
    pub(super) request_timeout: Duration,
    /// Where each peer was last heard to be.
    pub(super) book: AddressBook,
    /// Announces every connection established.
    pub(super) seen: broadcast::Sender<PeerId>,
    /// Which inbound requests go to the application (per-peer limits).
    pub(super) gate: super::limits::InboundGate,
    /// The relay this daemon listens on, if any.
    pub(super) relay: Option<RelayListen>,
    /// Tells [`start`] of the first reservation on the relay.
    pub(super) reserved: Option<oneshot::Sender<()>>,
    /// Whether this daemon serves as a relay (its listen addresses are then the ones it
    /// gives the daemons behind it).
    pub(super) relay_server: bool,
    pub(super) counters: RelayCounters,
}

impl Task {
    pub(super) async fn run(mut self) {
        let done = loop {
            let (retry_at, retry_due) = (self.relay_retry_at(), self.relay_retry_due());
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(Command::Request { to, addrs, outgoing }) => {
                        self.send_request(to, addrs, outgoing);
                    }
                    Some(Command::Learn { peer, addrs, freshness }) => {
                        if self.book.learn(peer, &addrs, freshness) {
                            tracing::debug!(%peer, addrs = ?self.book.addresses(&peer), "addresses learnt");
                        }
                    }
                    Some(Command::Addresses { peer, reply }) => {
                        let _ = reply.send(self.book.addresses(&peer));
                    }
                    Some(Command::Shutdown { done }) => break Some(done),
                    None => break None,
                },
                // An owned permit, so that the branches below can borrow `self`.
                permit = self.inbound.clone().reserve_owned(), if !self.blocked.is_empty() => {
                    if let Some(inbound) = self.blocked.pop_front() {
                        match permit {
                            Ok(permit) => {
                                if self.blocked.is_empty() {
                                    tracing::debug!("inbound channel has room again; resuming");
                                }
                                permit.send(inbound);
                            }
                            // The application is gone: dropping the request fails it.
                            Err(_) => drop(inbound),
                        }
                    }
                },
                Some(answer) = self.replies.next(), if !self.replies.is_empty() => {
                    self.answer(answer);
                },
                event = self.swarm.select_next_some(), if self.blocked.is_empty() => {
                    self.on_swarm_event(event);
                },
                () = tokio::time::sleep_until(retry_at), if retry_due => {
                    self.listen_on_relay();
                },
            }
        };
        self.stop();
        // Drop the swarm (closing listeners and connections) before saying it is done.
        drop(self);
        if let Some(done) = done {
            let _ = done.send(());
        }
    }

    fn stop(&mut self) {
        for id in std::mem::take(&mut self.listeners) {
            self.swarm.remove_listener(id);
        }
        if let Some(id) = self.relay.as_mut().and_then(|r| r.listener.take()) {
            self.swarm.remove_listener(id);
        }
        self.listen_addrs.send_replace(Vec::new());
        let pending = self.outbound.len() + self.queues.waiting();
        for (_, request) in self.outbound.drain() {
            for reply in request.replies {
                let _ = reply.send(Err(SendError::Stopped { peer: request.to }));
            }
        }
        for (peer, waiting) in self.queues.drain() {
            let _ = waiting.reply.send(Err(SendError::Stopped { peer }));
        }
        tracing::info!(
            peer = %self.peer_id,
            pending,
            unanswered = self.replies.len(),
            "mesh stopped"
        );
        // Dropping the task then closes the connections, and (with `inbound`) the
        // application's receiver.
    }

    /// A connection whose ping went unanswered is closed: the requests on it fail now, not
    /// at their timeout, and the outbox dials afresh (a peer that does not speak ping is
    /// left alone).
    fn on_ping(&mut self, event: libp2p::ping::Event) {
        use libp2p::ping::Failure;
        match event.result {
            Ok(_) | Err(Failure::Unsupported) => {}
            Err(failure) => {
                tracing::debug!(peer = %event.peer, %failure, "ping failed: closing the connection");
                self.swarm.close_connection(event.connection);
            }
        }
    }

    /// A dial failed: its addresses count as failed, and its error explains the requests that
    /// fail for it.
    fn on_dial_failed(&mut self, peer_id: Option<PeerId>, error: &DialError) {
        tracing::debug!(peer = ?peer_id, "dial failed: {error}");
        if let (Some(peer), DialError::Transport(failed)) = (peer_id, error) {
            for (addr, _) in failed {
                self.book.failed(&peer, addr);
            }
        }
        if let Some(peer) = peer_id {
            // Kept until the peer connects; peers that never come back must not make it grow
            // without bound.
            if self.dial_errors.len() >= MAX_DIAL_ERRORS_KEPT
                && !self.dial_errors.contains_key(&peer)
            {
                self.dial_errors.clear();
            }
            self.dial_errors.insert(peer, error.to_string());
        }
    }

    fn on_swarm_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::Behaviour(BehaviourEvent::Rpc(event)) => self.on_rpc(event),
            SwarmEvent::Behaviour(BehaviourEvent::Identify(event)) => self.on_identify(event),
            SwarmEvent::Behaviour(BehaviourEvent::Ping(event)) => self.on_ping(event),
            SwarmEvent::Behaviour(BehaviourEvent::RelayClient(event)) => {
                self.on_relay_client(event)
            }
            SwarmEvent::Behaviour(BehaviourEvent::Relay(event)) => self.on_relay_server(event),
            SwarmEvent::NewListenAddr {
                listener_id,
                address,
            } => self.on_new_listen_addr(listener_id, address),
            SwarmEvent::ExpiredListenAddr { address, .. } => self.on_expired_listen_addr(address),
            SwarmEvent::ListenerClosed {
                listener_id,
                addresses,
                reason,
            } => self.on_listener_closed(listener_id, addresses, reason),
            SwarmEvent::ListenerError { listener_id, error } => {
                self.on_listener_error(listener_id, &error);
            }
            SwarmEvent::ConnectionEstablished {
                peer_id, endpoint, ..
            } => self.on_connected(peer_id, &endpoint),
            SwarmEvent::ConnectionClosed { peer_id, cause, .. } => match cause {
                Some(e) => tracing::debug!(peer = %peer_id, "connection closed: {e}"),
                None => tracing::debug!(peer = %peer_id, "connection closed"),
            },
            SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
                self.on_dial_failed(peer_id, &error);
            }
            SwarmEvent::IncomingConnectionError {
                send_back_addr,
                error,
                ..
            } => {
                tracing::debug!(from = %send_back_addr, "incoming connection failed: {error}");
            }
            _ => {}
        }
    }

    /// A connection to `peer`: its dial error is forgotten, an address we dialled is the one
    /// to dial next time, deliveries waiting for it are told, and when it is our relay, the
    /// reservation is asked for at once (not after the backoff).
    fn on_connected(&mut self, peer: PeerId, endpoint: &ConnectedPoint) {
        self.dial_errors.remove(&peer);
        let address = endpoint.get_remote_address();
        tracing::debug!(%peer, %address, "connected");
        if endpoint.is_relayed() {
            self.counters.relayed_connections.inc();
        }
        if endpoint.is_dialer() {
            self.book
                .learn(peer, std::slice::from_ref(address), Freshness::Fresh);
        }
        // Nobody listening is fine.
        let _ = self.seen.send(peer);
        if self.relay.as_mut().is_some_and(|r| r.relay_is_back(peer)) {
            self.listen_on_relay();
        }
    }

    /// An address we listened on is gone (an interface went away).
    fn on_expired_listen_addr(&mut self, address: Multiaddr) {
        if self.relay_server {
            self.swarm.remove_external_address(&address);
        }
        let address = address.with_p2p(self.peer_id).unwrap_or_else(|a| a);
        tracing::info!(%address, "no longer listening");
        self.forget_listen_addrs(&[address]);
    }

    /// A listener failed; while starting, that fails the start.
    fn on_listener_error(&mut self, listener_id: ListenerId, error: &std::io::Error) {
        tracing::warn!("listener error: {error}");
        if self.awaiting.contains(&listener_id)
            && let Some(ready) = self.ready.take()
        {
            let _ = ready.send(Err(format!("a listener failed while starting: {error}")));
        }
    }

    /// A listener has an address: publish it, and tell `start` once every listener has one.
    fn on_new_listen_addr(&mut self, listener_id: ListenerId, address: Multiaddr) {
        let published = address.clone().with_p2p(self.peer_id).unwrap_or_else(|a| a);
        tracing::info!(address = %published, "listening");
        self.listen_addrs.send_if_modified(|addrs| {
            if addrs.contains(&published) {
                false
            } else {
                addrs.push(published);
                true
            }
        });
        // Once published: `start` reads the addresses when told of the reservation.
        self.on_relay_listen_addr(listener_id, &address);
        if self.awaiting.remove(&listener_id)
            && self.awaiting.is_empty()
            && let Some(ready) = self.ready.take()
        {
            let _ = ready.send(Ok(()));
        }
    }

    /// A listener closed: its addresses are no longer ours; while starting, that is a failure.
    fn on_listener_closed(
        &mut self,
        listener_id: ListenerId,
        addresses: Vec<Multiaddr>,
        reason: Result<(), std::io::Error>,
    ) {
        let gone: Vec<Multiaddr> = addresses
            .into_iter()
            .map(|a| a.with_p2p(self.peer_id).unwrap_or_else(|a| a))
            .collect();
        self.forget_listen_addrs(&gone);
        self.on_relay_listener_closed(listener_id);
        match reason {
            Ok(()) => tracing::info!(?gone, "listener closed"),
            Err(e) => tracing::warn!(?gone, "listener failed: {e}"),
        }
        if self.awaiting.remove(&listener_id)
            && let Some(ready) = self.ready.take()
        {
            let _ = ready.send(Err(format!(
                "a listener closed before reporting an address (addresses {gone:?})"
            )));
        }
    }

    /// Stops publishing `gone` as listen addresses.
    fn forget_listen_addrs(&mut self, gone: &[Multiaddr]) {
        self.listen_addrs.send_if_modified(|addrs| {
            let before = addrs.len();
            addrs.retain(|a| !gone.contains(a));
            addrs.len() != before
        });
    }

    /// A peer told where it listens: dialled there from now on.
    fn on_identify(&mut self, event: identify::Event) {
        if let identify::Event::Received { peer_id, info, .. } = event
            && self
                .book
                .learn(peer_id, &info.listen_addrs, Freshness::Fresh)
        {
            tracing::debug!(peer = %peer_id, addrs = ?info.listen_addrs, "identified");
        }
    }
}
