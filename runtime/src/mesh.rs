//! The libp2p swarm behind a cloneable handle, so the rest of the program can send requests and
//! answer them without sharing the `Swarm` (which only one task can poll).
//!
//! [`start`] builds a swarm (TCP with nodelay, Noise, Yamux; request-response on
//! `mobiwf_proto::PROTOCOL` with the length-prefixed JSON codec of `codec`), starts listening, spawns
//! the task that owns it and returns a [`MeshHandle`] with the receiver of [`Inbound`]
//! requests. The application answers each inbound request on its `reply` oneshot; dropping it
//! unanswered makes the requester see an error.
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
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use libp2p::core::transport::ListenerId;
use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol;
use libp2p::request_response::{
    self, InboundRequestId, OutboundFailure, OutboundRequestId, ProtocolSupport, ResponseChannel,
};
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, PeerId, Swarm};
use tokio::sync::{mpsc, oneshot, watch};

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
/// Default of [`MeshConfig::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

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
}

impl MeshConfig {
    /// A configuration with the default timeouts.
    pub fn new(keypair: Keypair, listen: Vec<Multiaddr>) -> Self {
        Self {
            keypair,
            listen,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
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

/// What a handle asks the swarm task to do.
enum Command {
    Request {
        to: PeerId,
        addrs: Vec<Multiaddr>,
        /// Boxed: an envelope is much larger than the other variant.
        envelope: Box<Envelope>,
        reply: oneshot::Sender<Result<Reply, SendError>>,
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
    /// The longest [`MeshHandle::request`] waits: one request timeout to connect, one for the
    /// exchange.
    deadline: Duration,
}

impl std::fmt::Debug for MeshHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshHandle")
            .field("peer_id", &self.peer_id)
            .finish_non_exhaustive()
    }
}

/// Builds the swarm, listens on `config.listen`, and spawns the task that owns the swarm (on the
/// current tokio runtime). Returns once every listener has reported its address(es), with the
/// handle and the receiver of inbound requests.
pub async fn start(config: MeshConfig) -> anyhow::Result<(MeshHandle, mpsc::Receiver<Inbound>)> {
    let peer_id = config.keypair.public().to_peer_id();
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
    let (addrs_tx, mut addrs_rx) = watch::channel(Vec::new());
    let (ready_tx, ready_rx) = oneshot::channel();
    let ready = if awaiting.is_empty() {
        let _ = ready_tx.send(Ok(()));
        None
    } else {
        Some(ready_tx)
    };

    let task = Task {
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
    };
    tokio::spawn(task.run());

    let handle = MeshHandle {
        peer_id,
        commands: commands_tx,
        listen_addrs: addrs_rx.clone(),
        deadline: config.request_timeout.saturating_mul(2),
    };

    // Dropping `handle` on an error below stops the task.
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
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => anyhow::bail!(
            "the listeners on {:?} reported no address within {STARTUP_TIMEOUT:?}",
            config.listen
        ),
    }
    tracing::info!(peer = %peer_id, addrs = ?handle.listen_addrs(), "mesh started");
    Ok((handle, inbound_rx))
}

fn build_swarm(
    config: &MeshConfig,
) -> anyhow::Result<Swarm<request_response::Behaviour<WireCodec>>> {
    let behaviour = request_response::Behaviour::with_codec(
        WireCodec,
        [(STREAM_PROTOCOL, ProtocolSupport::Full)],
        request_response::Config::default()
            .with_request_timeout(config.request_timeout)
            .with_max_concurrent_streams(MAX_CONCURRENT_STREAMS),
    );
    let dial_concurrency = NonZeroU8::new(DIAL_CONCURRENCY).unwrap_or(NonZeroU8::MIN);
    let swarm = libp2p::SwarmBuilder::with_existing_identity(config.keypair.clone())
        .with_tokio()
        .with_tcp(
            libp2p::tcp::Config::new().nodelay(true),
            libp2p::noise::Config::new,
            libp2p::yamux::Config::default,
        )
        .context("cannot set up the Noise handshake")?
        .with_behaviour(|_| behaviour)?
        .with_swarm_config(|c| {
            // Every peer speaks the one protocol: a new substream sends its request with the
            // protocol proposal instead of waiting a round trip for the listener's consent.
            c.with_substream_upgrade_protocol_override(libp2p::core::upgrade::Version::V1Lazy)
                .with_idle_connection_timeout(config.idle_timeout)
                .with_dial_concurrency_factor(dial_concurrency)
                .with_max_negotiating_inbound_streams(MAX_CONCURRENT_STREAMS)
        })
        .with_connection_timeout(config.request_timeout)
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

    /// Sends one request to `to` and waits for its reply. `addrs` are addresses to dial the
    /// peer at if there is no connection yet (each may end in `/p2p/<to>`); they are added to
    /// those the swarm knows for the peer. Waits at most twice the request timeout (connecting,
    /// then the exchange).
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

/// An outgoing request waiting for its reply.
struct PendingRequest {
    to: PeerId,
    reply: oneshot::Sender<Result<Reply, SendError>>,
}

/// An inbound request whose answer the application has given (or not).
struct Answer {
    peer: PeerId,
    request_id: InboundRequestId,
    channel: ResponseChannel<Reply>,
    /// `None` when the application took longer than the request timeout.
    reply: Option<Result<Reply, oneshot::error::RecvError>>,
}

/// The swarm task's state.
struct Task {
    swarm: Swarm<request_response::Behaviour<WireCodec>>,
    peer_id: PeerId,
    commands: mpsc::Receiver<Command>,
    inbound: mpsc::Sender<Inbound>,
    /// An inbound request that did not fit in the channel; while it is here the swarm is not
    /// polled.
    blocked: Option<Inbound>,
    outbound: HashMap<OutboundRequestId, PendingRequest>,
    replies: FuturesUnordered<BoxFuture<'static, Answer>>,
    listen_addrs: watch::Sender<Vec<Multiaddr>>,
    /// Every listener, to close them on shutdown.
    listeners: Vec<ListenerId>,
    /// Listeners that have not reported an address yet, while starting.
    awaiting: HashSet<ListenerId>,
    /// Tells [`start`] that every listener has an address (or why not).
    ready: Option<oneshot::Sender<Result<(), String>>>,
    /// The last dial error per peer, to say why an `OutboundFailure::DialFailure` happened.
    dial_errors: HashMap<PeerId, String>,
    request_timeout: Duration,
}

impl Task {
    async fn run(mut self) {
        let done = loop {
            tokio::select! {
                command = self.commands.recv() => match command {
                    Some(Command::Request { to, addrs, envelope, reply }) => {
                        self.send_request(to, addrs, *envelope, reply);
                    }
                    Some(Command::Shutdown { done }) => break Some(done),
                    None => break None,
                },
                // An owned permit, so that the branches below can borrow `self`.
                permit = self.inbound.clone().reserve_owned(), if self.blocked.is_some() => {
                    if let Some(inbound) = self.blocked.take() {
                        match permit {
                            Ok(permit) => {
                                tracing::debug!("inbound channel has room again; resuming");
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
                event = self.swarm.select_next_some(), if self.blocked.is_none() => {
                    self.on_swarm_event(event);
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
        self.listen_addrs.send_replace(Vec::new());
        let pending = self.outbound.len();
        for (_, request) in self.outbound.drain() {
            let _ = request
                .reply
                .send(Err(SendError::Stopped { peer: request.to }));
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

    fn send_request(
        &mut self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        envelope: Envelope,
        reply: oneshot::Sender<Result<Reply, SendError>>,
    ) {
        for addr in addrs {
            self.swarm.add_peer_address(to, addr);
        }
        if tracing::enabled!(tracing::Level::DEBUG) {
            let (kind, message) = (envelope.message.kind(), &envelope.id);
            tracing::debug!(%to, kind, %message, "sending request");
        }
        let request_id = self.swarm.behaviour_mut().send_request(&to, envelope);
        self.outbound
            .insert(request_id, PendingRequest { to, reply });
    }

    fn answer(&mut self, answer: Answer) {
        let Answer {
            peer,
            request_id,
            channel,
            reply,
        } = answer;
        match reply {
            Some(Ok(reply)) => {
                tracing::debug!(%peer, %request_id, ?reply, "answering request");
                if self
                    .swarm
                    .behaviour_mut()
                    .send_response(channel, reply)
                    .is_err()
                {
                    tracing::warn!(
                        %peer, %request_id,
                        "cannot answer: the request timed out or its connection closed"
                    );
                }
            }
            Some(Err(_)) => {
                tracing::warn!(%peer, %request_id, "the application dropped a request unanswered");
            }
            None => {
                tracing::warn!(
                    %peer, %request_id,
                    "the application did not answer a request within {:?}",
                    self.request_timeout
                );
            }
        }
    }

    fn deliver(&mut self, inbound: Inbound) {
        match self.inbound.try_send(inbound) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(inbound)) => {
                tracing::warn!(
                    "inbound channel full ({INBOUND_CAPACITY}); not reading further requests until \
                     the application takes one"
                );
                self.blocked = Some(inbound);
            }
            Err(mpsc::error::TrySendError::Closed(inbound)) => {
                tracing::warn!(
                    from = %inbound.from,
                    "no receiver for inbound requests; dropping one unanswered"
                );
            }
        }
    }

    fn on_swarm_event(&mut self, event: SwarmEvent<request_response::Event<Envelope, Reply>>) {
        match event {
            SwarmEvent::Behaviour(event) => self.on_behaviour_event(event),
            SwarmEvent::NewListenAddr {
                listener_id,
                address,
            } => {
                let address = address.with_p2p(self.peer_id).unwrap_or_else(|a| a);
                tracing::info!(%address, "listening");
                self.listen_addrs.send_if_modified(|addrs| {
                    if addrs.contains(&address) {
                        false
                    } else {
                        addrs.push(address);
                        true
                    }
                });
                if self.awaiting.remove(&listener_id)
                    && self.awaiting.is_empty()
                    && let Some(ready) = self.ready.take()
                {
                    let _ = ready.send(Ok(()));
                }
            }
            SwarmEvent::ExpiredListenAddr { address, .. } => {
                let address = address.with_p2p(self.peer_id).unwrap_or_else(|a| a);
                tracing::info!(%address, "no longer listening");
                self.listen_addrs.send_if_modified(|addrs| {
                    let before = addrs.len();
                    addrs.retain(|a| *a != address);
                    addrs.len() != before
                });
            }
            SwarmEvent::ListenerClosed {
                listener_id,
                addresses,
                reason,
            } => {
                let gone: Vec<Multiaddr> = addresses
                    .into_iter()
                    .map(|a| a.with_p2p(self.peer_id).unwrap_or_else(|a| a))
                    .collect();
                self.listen_addrs.send_if_modified(|addrs| {
                    let before = addrs.len();
                    addrs.retain(|a| !gone.contains(a));
                    addrs.len() != before
                });
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
            SwarmEvent::ListenerError { listener_id, error } => {
                tracing::warn!("listener error: {error}");
                if self.awaiting.contains(&listener_id)
                    && let Some(ready) = self.ready.take()
                {
                    let _ = ready.send(Err(format!("a listener failed while starting: {error}")));
                }
            }
            SwarmEvent::ConnectionEstablished {
                peer_id, endpoint, ..
            } => {
                self.dial_errors.remove(&peer_id);
                tracing::debug!(peer = %peer_id, address = %endpoint.get_remote_address(), "connected");
            }
            SwarmEvent::ConnectionClosed { peer_id, cause, .. } => match cause {
                Some(e) => tracing::debug!(peer = %peer_id, "connection closed: {e}"),
                None => tracing::debug!(peer = %peer_id, "connection closed"),
            },
            SwarmEvent::OutgoingConnectionError { peer_id, error, .. } => {
                tracing::debug!(peer = ?peer_id, "dial failed: {error}");
                if let Some(peer) = peer_id {
                    self.dial_errors.insert(peer, error.to_string());
                }
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

    fn on_behaviour_event(&mut self, event: request_response::Event<Envelope, Reply>) {
        match event {
            request_response::Event::Message { peer, message, .. } => match message {
                request_response::Message::Request {
                    request_id,
                    request,
                    channel,
                } => {
                    tracing::debug!(
                        from = %peer, %request_id,
                        kind = request.message.kind(), message = %request.id,
                        "received request"
                    );
                    let (reply, answer) = oneshot::channel();
                    let timeout = self.request_timeout;
                    self.replies.push(Box::pin(async move {
                        let reply = tokio::time::timeout(timeout, answer).await.ok();
                        Answer {
                            peer,
                            request_id,
                            channel,
                            reply,
                        }
                    }));
                    self.deliver(Inbound {
                        from: peer,
                        envelope: request,
                        reply,
                    });
                }
                request_response::Message::Response {
                    request_id,
                    response,
                } => {
                    tracing::debug!(from = %peer, %request_id, reply = ?response, "received reply");
                    match self.outbound.remove(&request_id) {
                        Some(pending) => {
                            let _ = pending.reply.send(Ok(response));
                        }
                        None => tracing::warn!(
                            from = %peer, %request_id,
                            "reply to a request nobody waits for"
                        ),
                    }
                }
            },
            request_response::Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                let error = match error {
                    OutboundFailure::DialFailure => SendError::Dial {
                        peer,
                        reason: self
                            .dial_errors
                            .get(&peer)
                            .cloned()
                            .unwrap_or_else(|| "no reachable address".to_owned()),
                    },
                    OutboundFailure::Timeout => SendError::Timeout {
                        peer,
                        after: self.request_timeout,
                    },
                    OutboundFailure::ConnectionClosed => SendError::ConnectionClosed { peer },
                    OutboundFailure::UnsupportedProtocols => {
                        SendError::UnsupportedProtocol { peer }
                    }
                    OutboundFailure::Io(source) => SendError::Codec { peer, source },
                };
                tracing::warn!(to = %peer, %request_id, "request failed: {error}");
                if let Some(pending) = self.outbound.remove(&request_id) {
                    let _ = pending.reply.send(Err(error));
                }
            }
            request_response::Event::InboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                tracing::warn!(from = %peer, %request_id, "inbound request failed: {error}");
            }
            request_response::Event::ResponseSent {
                peer, request_id, ..
            } => {
                tracing::debug!(to = %peer, %request_id, "reply sent");
            }
        }
    }
}
