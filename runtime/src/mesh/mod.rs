//! The libp2p swarm behind a cloneable handle, so the rest of the program can send requests and
//! answer them without sharing the `Swarm` (which only one task can poll).
//!
//! [`start`] builds a swarm (TCP with nodelay, Noise, Yamux; request-response on
//! `mobiwf_proto::PROTOCOL` with the length-prefixed JSON codec of `codec`; libp2p identify, so
//! that peers tell each other where they listen), starts listening, spawns
//! the task that owns it and returns a [`MeshHandle`] with the receiver of [`Inbound`]
//! requests (the task itself is `task`). The application answers each inbound request on its `reply` oneshot; dropping it
//! unanswered makes the requester see an error.
//!
//! A daemon nobody can dial listens on a relay's circuit instead ([`MeshConfig::via_relay`];
//! `relay`), and a daemon may serve as a relay for others ([`MeshConfig::relay_server`]);
//! every daemon can dial circuit addresses.
//!
//! Peers are addressed by peer id: the task keeps an address book (`addresses`) and dials a
//! peer at the addresses it learnt last (identify, dials that worked, [`MeshHandle::learn`])
//! before the ones a request was given. Every new connection is announced on
//! [`MeshHandle::seen`], so that deliveries waiting for that peer go at once.
//!
//! The inbound channel is bounded ([`INBOUND_CAPACITY`]). When it is full the task stops
//! polling the swarm (no further requests are read, and outgoing requests wait too) until the
//! application takes one; commands and answers still go through meanwhile. So the consumer of
//! the inbound channel must not wait for its own outgoing requests to complete while it lets
//! the channel fill up.

use std::collections::{HashMap, HashSet};
use std::io;
use std::num::NonZeroU8;
use std::time::Duration;

use anyhow::Context as _;
use futures::stream::FuturesUnordered;
use libp2p::core::transport::ListenerId;
use libp2p::identify;
use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol;
use libp2p::request_response::{self, ProtocolSupport};
use libp2p::{Multiaddr, PeerId, Swarm};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

pub mod addresses;
pub mod inbound_args;
pub mod limits;
pub mod private;
pub mod relay;
mod task;

pub use addresses::Freshness;
pub use inbound_args::InboundArgs;
pub use limits::InboundLimits;
pub use relay::RelayCounters;
use task::{Behaviour, Task};

use crate::codec::{STREAM_PROTOCOL, WireCodec};

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
/// The identify protocol version: peers of another family are not mobiwf peers.
const IDENTIFY_VERSION: &str = "/mobiwf/id/1";

/// How many of a peer's addresses are dialled at the same time.
const DIAL_CONCURRENCY: u8 = 8;
/// How long [`start`] waits for the listeners to report their addresses.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// When listening on an unspecified address (0.0.0.0 or ::), [`start`] also waits until no new
/// interface address has been reported for this long, so that all of them are in
/// [`MeshHandle::listen_addrs`].
const ADDRESS_SETTLE: Duration = Duration::from_millis(100);

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
    /// Counts inbound requests shed by the per-peer limits (`limits`).
    pub shed: prometheus_client::metrics::counter::Counter,
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
            shed: Default::default(),
            via_relay: None,
            relay_server: false,
            counters: RelayCounters::default(),
            swarm_key: None,
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
}

/// What a handle asks the swarm task to do.
enum Command {
    Request {
        to: PeerId,
        addrs: Vec<Multiaddr>,
        /// Boxed: an envelope is much larger than the other variant.
        envelope: Box<Envelope>,
        reply: oneshot::Sender<Result<Reply, SendError>>,
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
    /// The longest [`MeshHandle::request`] waits: one request timeout to connect, one for the
    /// exchange.
    deadline: Duration,
    /// Where peers reach this daemon through its relay, when it listens on one.
    circuit: Option<Multiaddr>,
}

impl std::fmt::Debug for MeshHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshHandle")
            .field("peer_id", &self.peer_id)
            .finish_non_exhaustive()
    }
}

/// Builds the swarm, listens on `config.listen` (and on the relay's circuit), and spawns the
/// task that owns the swarm (on the current tokio runtime). Returns once every listener has
/// reported its address(es) and the relay, if any, accepted the reservation (or
/// [`relay::RELAY_STARTUP_WAIT`] passed: it is tried again meanwhile), with the handle and the
/// receiver of inbound requests.
pub async fn start(config: MeshConfig) -> anyhow::Result<(MeshHandle, mpsc::Receiver<Inbound>)> {
    let peer_id = config.keypair.public().to_peer_id();
    let relay = match &config.via_relay {
        Some(addr) => {
            relay::check_relay_address(addr, peer_id).map_err(|e| anyhow::anyhow!("relay: {e}"))?;
            Some(relay::RelayListen::new(addr.clone()))
        }
        None => None,
    };
    let mut swarm = build_swarm(&config)?;

    let mut awaiting = HashSet::new();
    let unspecified = config.listen.iter().any(is_unspecified);
    for addr in &config.listen {
        let id = swarm
            .listen_on(addr.clone())
            .with_context(|| format!("cannot listen on {addr}"))?;
        awaiting.insert(id);
    }
    let listeners: Vec<ListenerId> = awaiting.iter().copied().collect();

    let (commands_tx, commands_rx) = mpsc::channel(COMMAND_CAPACITY);
    let (inbound_tx, inbound_rx) = mpsc::channel(INBOUND_CAPACITY);
    let (addrs_tx, addrs_rx) = watch::channel(Vec::new());
    let (ready_tx, ready_rx) = oneshot::channel();
    let (reserved_tx, reserved_rx) = oneshot::channel();
    let (seen, _) = broadcast::channel(SEEN_CAPACITY);
    let ready = if awaiting.is_empty() {
        let _ = ready_tx.send(Ok(()));
        None
    } else {
        Some(ready_tx)
    };
    let circuit = relay
        .as_ref()
        .map(|r| relay::circuit_address(&r.relay, peer_id));

    let mut task = Task {
        swarm,
        peer_id,
        commands: commands_rx,
        inbound: inbound_tx,
        blocked: None,
        outbound: HashMap::new(),
        replies: FuturesUnordered::new(),
        listen_addrs: addrs_tx,
        listeners,
        awaiting,
        ready,
        dial_errors: HashMap::new(),
        request_timeout: config.request_timeout,
        book: addresses::AddressBook::default(),
        seen: seen.clone(),
        gate: limits::InboundGate::new(config.inbound, config.shed.clone()),
        relay,
        reserved: Some(reserved_tx),
        relay_server: config.relay_server,
        counters: config.counters.clone(),
    };
    task.listen_on_relay();
    tokio::spawn(task.run());

    let handle = MeshHandle {
        peer_id,
        commands: commands_tx,
        listen_addrs: addrs_rx.clone(),
        seen,
        deadline: config.dial_timeout.saturating_add(config.request_timeout),
        circuit,
    };
    // Dropping `handle` on an error below stops the task.
    wait_started(&config, ready_rx, addrs_rx, unspecified).await?;
    if let Some(circuit) = &handle.circuit {
        match tokio::time::timeout(relay::RELAY_STARTUP_WAIT, reserved_rx).await {
            Ok(Ok(())) => tracing::info!(%circuit, "reachable through the relay"),
            _ => tracing::warn!(
                %circuit,
                "no reservation on the relay within {:?}; going on, trying again meanwhile",
                relay::RELAY_STARTUP_WAIT
            ),
        }
    }
    tracing::info!(peer = %peer_id, addrs = ?handle.listen_addrs(), "mesh started");
    Ok((handle, inbound_rx))
}

/// Waits until every listener reported its address(es) (on 0.0.0.0, until no new one came
/// for [`ADDRESS_SETTLE`]), at most [`STARTUP_TIMEOUT`].
async fn wait_started(
    config: &MeshConfig,
    ready_rx: oneshot::Receiver<Result<(), String>>,
    mut addrs_rx: watch::Receiver<Vec<Multiaddr>>,
    unspecified: bool,
) -> anyhow::Result<()> {
    let startup = async {
        match ready_rx.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => anyhow::bail!(e),
            Err(_) => anyhow::bail!("the mesh task ended while starting"),
        }
        if unspecified {
            addrs_rx.mark_unchanged();
            while let Ok(Ok(())) = tokio::time::timeout(ADDRESS_SETTLE, addrs_rx.changed()).await {}
        }
        Ok(())
    };
    match tokio::time::timeout(STARTUP_TIMEOUT, startup).await {
        Ok(result) => result,
        Err(_) => anyhow::bail!(
            "the listeners on {:?} reported no address within {STARTUP_TIMEOUT:?}",
            config.listen
        ),
    }
}

fn build_swarm(config: &MeshConfig) -> anyhow::Result<Swarm<Behaviour>> {
    let peer_id = config.keypair.public().to_peer_id();
    let rpc = request_response::Behaviour::with_codec(
        WireCodec,
        [(STREAM_PROTOCOL, ProtocolSupport::Full)],
        request_response::Config::default()
            .with_request_timeout(config.request_timeout)
            .with_max_concurrent_streams(MAX_CONCURRENT_STREAMS),
    );
    // The address book is the cache: identify's own stays off.
    let identify = identify::Behaviour::new(
        identify::Config::new(IDENTIFY_VERSION.to_owned(), config.keypair.public())
            .with_push_listen_addr_updates(true)
            .with_cache_size(0),
    );
    let relay_server = config.relay_server.then(|| {
        let mut server = libp2p::relay::Behaviour::new(peer_id, relay::server_config());
        // Serve whatever addresses it has: nodes are told to use it, no detection needed.
        server.set_status(Some(libp2p::relay::Status::Enable));
        server
    });
    let dial_concurrency = NonZeroU8::new(DIAL_CONCURRENCY).unwrap_or(NonZeroU8::MIN);
    let swarm = libp2p::SwarmBuilder::with_existing_identity(config.keypair.clone())
        .with_tokio()
        .with_other_transport(|keypair| private::transport(keypair, config.swarm_key))
        .context("cannot set up the Noise handshake")?
        // Every daemon can dial a circuit address; one with `via_relay` also listens on one.
        .with_relay_client(libp2p::noise::Config::new, libp2p::yamux::Config::default)
        .context("cannot set up the Noise handshake of relayed connections")?
        .with_behaviour(|_, relay_client| Behaviour {
            rpc,
            identify,
            ping: libp2p::ping::Behaviour::new(
                libp2p::ping::Config::new()
                    .with_interval(PING_INTERVAL)
                    .with_timeout(PING_TIMEOUT),
            ),
            relay_client,
            relay: relay_server.into(),
            limits: limits::connections(),
        })?
        .with_swarm_config(|c| {
            // Every peer speaks the one protocol: a new substream sends its request with the
            // protocol proposal instead of waiting a round trip for the listener's consent.
            c.with_substream_upgrade_protocol_override(libp2p::core::upgrade::Version::V1Lazy)
                .with_idle_connection_timeout(config.idle_timeout)
                .with_dial_concurrency_factor(dial_concurrency)
                .with_max_negotiating_inbound_streams(MAX_CONCURRENT_STREAMS)
        })
        .with_connection_timeout(config.dial_timeout)
        .build();
    Ok(swarm)
}

fn is_unspecified(addr: &Multiaddr) -> bool {
    addr.iter().any(|p| match p {
        Protocol::Ip4(ip) => ip.is_unspecified(),
        Protocol::Ip6(ip) => ip.is_unspecified(),
        _ => false,
    })
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

    /// Sends one request to `to` and waits for its reply. `addrs` are addresses to dial the
    /// peer at if there is no connection yet (each may end in `/p2p/<to>`); they are tried
    /// after the ones the address book learnt more recently. Waits at most the dial timeout
    /// plus the request timeout (connecting, then the exchange).
    pub async fn request(
        &self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        envelope: Envelope,
    ) -> Result<Reply, SendError> {
        let (reply, answer) = oneshot::channel();
        let command = Command::Request {
            to,
            addrs,
            envelope: Box::new(envelope),
            reply,
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
