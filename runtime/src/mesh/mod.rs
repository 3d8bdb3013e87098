//! The libp2p swarm behind a cloneable handle, so the rest of the program can send requests and
//! answer them without sharing the `Swarm` (which only one task can poll).
//!
//! [`start`] builds a swarm (TCP with nodelay, each dial from a new port (`dial_port`), Noise,
//! Yamux; request-response on `mobiwf_proto::PROTOCOL` with the length-prefixed JSON codec of
//! `codec`; libp2p identify, so that peers tell each other where they listen), starts
//! listening, spawns the task that owns it and returns a [`MeshHandle`] with the receiver of
//! [`Inbound`] requests (starting is `startup`, the task itself is `task`). The application
//! answers each inbound request on its `reply` oneshot; dropping it
//! unanswered makes the requester see an error.
//!
//! A daemon nobody can dial listens on a relay's circuit instead ([`MeshConfig::via_relay`];
//! `relay`), and a daemon may serve as a relay for others ([`MeshConfig::relay_server`]);
//! every daemon can dial circuit addresses.
//!
//! A stranger on the port holds at most its share of the connections being set up, and none
//! for long (`guard`); the limits on connections and on each peer's requests are `limits`.
//!
//! Peers are addressed by peer id: the task keeps an address book (`addresses`) and dials a
//! peer at the addresses it learnt last (identify, dials that worked, [`MeshHandle::learn`])
//! before the ones a request was given. Every new connection is announced on
//! [`MeshHandle::seen`], so that deliveries waiting for that peer go at once.
//!
//! The inbound channel is bounded ([`MeshConfig::inbound_capacity`]). When it is full the task
//! stops polling the swarm (no further requests are read, and outgoing requests wait too)
//! until the application takes one; commands and answers still go through meanwhile. So the
//! consumer of the inbound channel must not wait for its own outgoing requests to complete
//! while it lets the channel fill up.

use std::io;
use std::time::Duration;

use libp2p::identity::Keypair;
use libp2p::{Multiaddr, PeerId};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

pub mod addresses;
mod batches;
mod dial_port;
pub mod guard;
pub mod inbound_args;
pub mod limits;
pub mod private;
pub mod relay;
mod requests;
mod startup;
mod task;

pub use addresses::Freshness;
pub use batches::MAX_BATCHES_IN_FLIGHT_PER_PEER;
pub use inbound_args::InboundArgs;
pub use limits::InboundLimits;
pub use relay::RelayCounters;
pub use startup::start;

use mobiwf_proto::{Envelope, PROTOCOL, Reply};

/// Capacity of the channel that carries inbound requests to the application.
pub const INBOUND_CAPACITY: usize = 1024;
/// Capacity of the channel that carries commands from the handles to the swarm task.
pub const COMMAND_CAPACITY: usize = 1024;
/// Most request-response streams open at once on one connection (inbound and outbound
/// together). Yamux allows 512 streams per connection; requests beyond that fail.
pub const MAX_CONCURRENT_STREAMS: usize = 512;
/// Default of [`MeshConfig::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How often each connection is pinged (libp2p ping), and how long a ping may take: a
/// connection whose ping goes unanswered is closed, so the requests on it fail at once and the
/// next try dials afresh (within [`DEFAULT_DIAL_TIMEOUT`]) instead of each waiting out the
/// request timeout on a link that went silent.
pub const PING_INTERVAL: Duration = Duration::from_secs(5);
/// See [`PING_INTERVAL`].
pub const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// Default of [`MeshConfig::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`MeshConfig::dial_timeout`]: short, so that a peer whose link is gone holds a
/// delivery slot briefly (a connection on a working link takes milliseconds).
pub const DEFAULT_DIAL_TIMEOUT: Duration = Duration::from_secs(3);
/// How many connection announcements [`MeshHandle::seen`] buffers for a slow listener (one
/// that falls behind is told it lagged, and treats every peer as seen).
pub const SEEN_CAPACITY: usize = 256;

/// What [`start`] needs.
#[derive(Debug, Clone)]
pub struct MeshConfig {
    /// The node's identity (see `identity::load_or_create`).
    pub keypair: Keypair,
    /// The addresses to listen on, e.g. `/ip4/0.0.0.0/tcp/4001`. May be empty for a mesh that
    /// only sends.
    pub listen: Vec<Multiaddr>,
    /// How long to wait for a connection, and then for the reply to one request (default 10 s).
    /// It also bounds how long an inbound request may wait for the application's answer.
    pub request_timeout: Duration,
    /// How long a connection without any open stream is kept (default 60 s).
    pub idle_timeout: Duration,
    /// How long establishing one connection (TCP, Noise, Yamux) may take (default 3 s).
    pub dial_timeout: Duration,
    /// The per-peer limits on inbound requests (default: `limits`' constants).
    pub inbound: InboundLimits,
    /// How many inbound envelopes wait for the application at most (default
    /// [`INBOUND_CAPACITY`]; at least 1).
    pub inbound_capacity: usize,
    /// Counts inbound requests shed by the per-peer limits (`limits`).
    pub shed: prometheus_client::metrics::counter::Counter,
    /// Counts inbound connections refused by the limits per source address (`guard`).
    pub refused_connections: prometheus_client::metrics::counter::Counter,
    /// A relay to listen on (its address, ending in `/p2p/<relay>`): for a daemon nobody can
    /// dial. It keeps a reservation there and is reached at
    /// [`MeshHandle::circuit_addr`]; `None` (the default): only `listen`.
    pub via_relay: Option<Multiaddr>,
    /// Serve as a relay for others (reservations and circuits within the limits of `relay`).
    pub relay_server: bool,
    /// Where the relay's and the relayed connections' counts go (the daemon's metrics).
    pub counters: RelayCounters,
    /// The private mesh's pre-shared key (`--swarm-key-file`): every connection needs it
    /// (`private`). `None` (the default): an open transport, Noise only.
    pub swarm_key: Option<libp2p::pnet::PreSharedKey>,
    /// The shard and epoch of the book this daemon owns, for a controller in a cluster
    /// (`serve --etcd`): every request it sends carries them ([`Envelope::epoch`]), so that a
    /// node that heard a newer owner refuses them. `None` (the default): none is sent.
    pub epoch: Option<mobiwf_proto::ShardEpoch>,
}

impl MeshConfig {
    /// A configuration with the default timeouts.
    pub fn new(keypair: Keypair, listen: Vec<Multiaddr>) -> Self {
        Self {
            keypair,
            listen,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            dial_timeout: DEFAULT_DIAL_TIMEOUT,
            inbound: InboundLimits::default(),
            inbound_capacity: INBOUND_CAPACITY,
            shed: Default::default(),
            refused_connections: Default::default(),
            via_relay: None,
            relay_server: false,
            counters: RelayCounters::default(),
            swarm_key: None,
            epoch: None,
        }
    }
}

/// A request received from a peer; answer it by sending a [`Reply`] on `reply`. Dropping
/// `reply` without sending closes the stream, and the requester gets an error.
#[derive(Debug)]
pub struct Inbound {
    /// The peer that sent it (authenticated by Noise).
    pub from: PeerId,
    /// The request.
    pub envelope: Envelope,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Reply>,
}

/// Why [`MeshHandle::request`] got no reply.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// No connection to the peer could be established.
    #[error("cannot connect to peer {peer}: {reason}")]
    Dial {
        /// The peer.
        peer: PeerId,
        /// What the dial attempts reported.
        reason: String,
    },
    /// The peer did not reply in time. It may or may not have received the request.
    #[error("no reply from peer {peer} within {after:?}")]
    Timeout {
        /// The peer.
        peer: PeerId,
        /// How long it waited.
        after: Duration,
    },
    /// The connection closed before the reply came. The peer may or may not have received the
    /// request.
    #[error("the connection to peer {peer} closed before it replied")]
    ConnectionClosed {
        /// The peer.
        peer: PeerId,
    },
    /// The peer does not speak this protocol version.
    #[error("peer {peer} does not support protocol {PROTOCOL}")]
    UnsupportedProtocol {
        /// The peer.
        peer: PeerId,
    },
    /// Writing the request or reading the reply failed: a frame over the size limit, invalid
    /// JSON, or the stream closed without a reply (the peer dropped the request unanswered).
    #[error("exchanging a message with peer {peer} failed: {source}")]
    Codec {
        /// The peer.
        peer: PeerId,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// The mesh task has stopped ([`MeshHandle::shutdown`] was called, or it ended).
    #[error("cannot send to peer {peer}: the mesh is shut down")]
    Stopped {
        /// The peer.
        peer: PeerId,
    },
}

impl SendError {
    /// True when the peer took the request and let it go unanswered (its stream closed
    /// before any byte of a reply): it is there, but sheds the request or will take it later.
    pub fn unanswered(&self) -> bool {
        matches!(self, SendError::Codec { source, .. }
            if source.get_ref().is_some_and(|e| e.is::<crate::codec::Unanswered>()))
    }

    /// The same error again, for another envelope of the batch it ended (an I/O error's
    /// source is kept as its text, and an unanswered one stays unanswered).
    fn again(&self) -> SendError {
        match self {
            SendError::Dial { peer, reason } => SendError::Dial {
                peer: *peer,
                reason: reason.clone(),
            },
            SendError::Timeout { peer, after } => SendError::Timeout {
                peer: *peer,
                after: *after,
            },
            SendError::ConnectionClosed { peer } => SendError::ConnectionClosed { peer: *peer },
            SendError::UnsupportedProtocol { peer } => {
                SendError::UnsupportedProtocol { peer: *peer }
            }
            SendError::Codec { peer, source } => SendError::Codec {
                peer: *peer,
                source: match source
                    .get_ref()
                    .and_then(|e| e.downcast_ref::<crate::codec::Unanswered>())
                {
                    Some(unanswered) => io::Error::new(
                        source.kind(),
                        crate::codec::Unanswered(unanswered.0.clone()),
                    ),
                    None => io::Error::new(source.kind(), source.to_string()),
                },
            },
            SendError::Stopped { peer } => SendError::Stopped { peer: *peer },
        }
    }

    /// An envelope the peer answered `null`: it took it and let it go unanswered.
    fn left_unanswered(peer: PeerId) -> SendError {
        SendError::Codec {
            peer,
            source: io::Error::new(
                io::ErrorKind::UnexpectedEof,
                crate::codec::Unanswered("reply".to_owned()),
            ),
        }
    }
}

/// A message on its way to the swarm task.
struct OutgoingEnvelope {
    /// Encoded by the caller: off the swarm task, and sized for its batch.
    envelope: crate::codec::Encoded,
    /// It goes in a request of its own, at once ([`mobiwf_proto::Message::goes_alone`]).
    alone: bool,
    reply: oneshot::Sender<Result<Reply, SendError>>,
}

/// What a handle asks the swarm task to do.
enum Command {
    Request {
        to: PeerId,
        addrs: Vec<Multiaddr>,
        outgoing: OutgoingEnvelope,
    },
    /// Where a peer is now (see [`MeshHandle::learn`]).
    Learn {
        peer: PeerId,
        addrs: Vec<Multiaddr>,
        freshness: Freshness,
    },
    /// The addresses the book has for a peer.
    Addresses {
        peer: PeerId,
        reply: oneshot::Sender<Vec<Multiaddr>>,
    },
    Shutdown {
        done: oneshot::Sender<()>,
    },
}

/// The way to the swarm task. Cheap to clone; the task ends on [`MeshHandle::shutdown`] or
/// when the last handle is dropped.
#[derive(Clone)]
pub struct MeshHandle {
    peer_id: PeerId,
    commands: mpsc::Sender<Command>,
    listen_addrs: watch::Receiver<Vec<Multiaddr>>,
    /// Announces every connection established, with the peer's id.
    seen: broadcast::Sender<PeerId>,
    /// The longest [`MeshHandle::request`] waits: the dial timeout to connect, one request
    /// timeout waiting in its peer's queue behind the requests under way, one for its own.
    deadline: Duration,
    /// Where peers reach this daemon through its relay, when it listens on one.
    circuit: Option<Multiaddr>,
    /// What every request carries as its sender's shard and epoch ([`MeshConfig::epoch`]).
    epoch: Option<mobiwf_proto::ShardEpoch>,
}

impl std::fmt::Debug for MeshHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshHandle")
            .field("peer_id", &self.peer_id)
            .finish_non_exhaustive()
    }
}

impl MeshHandle {
    /// This node's peer id.
    pub fn peer_id(&self) -> PeerId {
        self.peer_id
    }

    /// The addresses it listens on, each with `/p2p/<peer id>` appended. Complete as soon as
    /// [`start`] returns (when listening on 0.0.0.0, every interface's address); kept up to
    /// date as interfaces come and go; empty after [`MeshHandle::shutdown`].
    pub fn listen_addrs(&self) -> Vec<Multiaddr> {
        self.listen_addrs.borrow().clone()
    }

    /// Where peers reach this daemon through its relay (`/…/p2p/<relay>/p2p-circuit/p2p/<it>`),
    /// when it listens on one ([`MeshConfig::via_relay`]).
    pub fn circuit_addr(&self) -> Option<Multiaddr> {
        self.circuit.clone()
    }

    /// Announces the peer id of every connection established from now on (inbound or
    /// outbound): a peer that is seen is reachable again.
    pub fn seen(&self) -> broadcast::Receiver<PeerId> {
        self.seen.subscribe()
    }

    /// Tells the address book where `peer` is (each address may end in `/p2p/<peer>`): a
    /// registration, the controller's answer to a `locate`. Fresh addresses are dialled first.
    pub async fn learn(&self, peer: PeerId, addrs: Vec<Multiaddr>, freshness: Freshness) {
        let command = Command::Learn {
            peer,
            addrs,
            freshness,
        };
        // A stopped mesh dials nobody: nothing to learn.
        let _ = self.commands.send(command).await;
    }

    /// The addresses the book has for `peer`, newest first (empty when the mesh stopped).
    pub async fn addresses(&self, peer: PeerId) -> Vec<Multiaddr> {
        let (reply, answer) = oneshot::channel();
        if self
            .commands
            .send(Command::Addresses { peer, reply })
            .await
            .is_err()
        {
            return Vec::new();
        }
        answer.await.unwrap_or_default()
    }

    /// Sends one message to `to` and waits for its reply (under load, in one request with
    /// others to the same peer: `batches`). `addrs` are addresses to dial the
    /// peer at if there is no connection yet (each may end in `/p2p/<to>`); they are tried
    /// after the ones the address book learnt more recently. Waits at most the dial timeout
    /// plus twice the request timeout (connecting, waiting behind the requests to the peer
    /// under way, then its own exchange). A daemon that owns a shard
    /// at an epoch says so in every request, here, at each try: whatever path the message
    /// took (the outbox, a probe, a question), and never stored with it, so that the owner
    /// after it sends what it staged with its own.
    pub async fn request(
        &self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        mut envelope: Envelope,
    ) -> Result<Reply, SendError> {
        if let Some(epoch) = self.epoch {
            envelope.epoch = Some(epoch);
        }
        if tracing::enabled!(tracing::Level::DEBUG) {
            let (kind, message) = (envelope.message.kind(), &envelope.id);
            tracing::debug!(%to, kind, %message, "sending request");
        }
        let alone = envelope.message.goes_alone();
        let envelope = crate::codec::encode(&envelope)
            .map_err(|source| SendError::Codec { peer: to, source })?;
        let (reply, answer) = oneshot::channel();
        let command = Command::Request {
            to,
            addrs,
            outgoing: OutgoingEnvelope {
                envelope,
                alone,
                reply,
            },
        };
        if self.commands.send(command).await.is_err() {
            return Err(SendError::Stopped { peer: to });
        }
        match tokio::time::timeout(self.deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(SendError::Stopped { peer: to }),
            Err(_) => Err(SendError::Timeout {
                peer: to,
                after: self.deadline,
            }),
        }
    }

    /// Stops the swarm task: closes the listeners and connections, fails the requests still
    /// waiting with [`SendError::Stopped`], and closes the inbound channel. Returns when the
    /// task has stopped; does nothing if it already has.
    pub async fn shutdown(&self) {
        let (done, stopped) = oneshot::channel();
        if self.commands.send(Command::Shutdown { done }).await.is_ok() {
            let _ = stopped.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_told_again_for_another_envelope_of_its_batch_says_the_same() {
        let peer = PeerId::random();
        let unanswered = SendError::left_unanswered(peer);
        assert!(unanswered.unanswered());
        assert!(unanswered.again().unanswered(), "still unanswered");
        assert_eq!(unanswered.again().to_string(), unanswered.to_string());

        let codec = SendError::Codec {
            peer,
            source: io::Error::new(io::ErrorKind::InvalidData, "a frame over the limit"),
        };
        let again = codec.again();
        assert!(!again.unanswered());
        assert_eq!(again.to_string(), codec.to_string());
        assert!(
            matches!(&again, SendError::Codec { source, .. } if source.kind() == io::ErrorKind::InvalidData)
        );
        for error in [
            SendError::Dial {
                peer,
                reason: "refused".to_owned(),
            },
            SendError::Timeout {
                peer,
                after: Duration::from_secs(3),
            },
            SendError::ConnectionClosed { peer },
            SendError::UnsupportedProtocol { peer },
            SendError::Stopped { peer },
        ] {
            assert_eq!(error.again().to_string(), error.to_string());
        }
    }
}
