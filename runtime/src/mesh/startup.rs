//! Starting the mesh: building the swarm, listening (on the relay's circuit too), spawning
//! the task that owns it, and waiting until it is reachable. Apart from the handle because it
//! runs once, before any handle exists; the handle is the way to the task from then on.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroU8;
use std::time::Duration;

use anyhow::Context as _;
use futures::stream::FuturesUnordered;
use libp2p::core::transport::ListenerId;
use libp2p::identify;
use libp2p::multiaddr::Protocol;
use libp2p::request_response::{self, ProtocolSupport};
use libp2p::{Multiaddr, PeerId, Swarm};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::task::{Behaviour, Task};
use super::{
    COMMAND_CAPACITY, Inbound, MAX_CONCURRENT_STREAMS, MeshConfig, MeshHandle, PING_INTERVAL,
    PING_TIMEOUT, SEEN_CAPACITY, addresses, guard, limits, private, relay,
};
use crate::codec::{STREAM_PROTOCOL, WireCodec};

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

/// Builds the swarm, listens on `config.listen` (and on the relay's circuit), and spawns the
/// task that owns the swarm (on the current tokio runtime). Returns once every listener has
/// reported its address(es) and the relay, if any, accepted the reservation (or
/// [`relay::RELAY_STARTUP_WAIT`] passed: it is tried again meanwhile), with the handle and the
/// receiver of inbound requests.
pub async fn start(config: MeshConfig) -> anyhow::Result<(MeshHandle, mpsc::Receiver<Inbound>)> {
    let peer_id = config.keypair.public().to_peer_id();
    let relay = relay_listen(&config, peer_id)?;
    let mut swarm = build_swarm(&config)?;
    let awaiting = listen(&mut swarm, &config.listen)?;
    let unspecified = config.listen.iter().any(is_unspecified);
    let listeners: Vec<ListenerId> = awaiting.iter().copied().collect();

    let (commands_tx, commands_rx) = mpsc::channel(COMMAND_CAPACITY);
    let (inbound_tx, inbound_rx) = mpsc::channel(config.inbound_capacity.max(1));
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
        blocked: std::collections::VecDeque::new(),
        outbound: HashMap::new(),
        queues: super::batches::Queues::default(),
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
        deadline: config
            .dial_timeout
            .saturating_add(config.request_timeout.saturating_mul(2)),
        circuit,
        epoch: config.epoch,
    };
    // Dropping `handle` on an error below stops the task.
    wait_started(&config, ready_rx, addrs_rx, unspecified).await?;
    if let Some(circuit) = &handle.circuit {
        wait_reserved(circuit, reserved_rx).await;
    }
    tracing::info!(peer = %peer_id, addrs = ?handle.listen_addrs(), "mesh started");
    Ok((handle, inbound_rx))
}

/// The relay to listen on, checked: it must name the relay and not be this daemon.
fn relay_listen(config: &MeshConfig, me: PeerId) -> anyhow::Result<Option<relay::RelayListen>> {
    let Some(addr) = &config.via_relay else {
        return Ok(None);
    };
    relay::check_relay_address(addr, me).map_err(|e| anyhow::anyhow!("relay: {e}"))?;
    Ok(Some(relay::RelayListen::new(addr.clone())))
}

/// Starts a listener on each of `addrs`: the listeners that have yet to report an address.
fn listen(
    swarm: &mut Swarm<Behaviour>,
    addrs: &[Multiaddr],
) -> anyhow::Result<HashSet<ListenerId>> {
    let mut awaiting = HashSet::new();
    for addr in addrs {
        let id = swarm
            .listen_on(addr.clone())
            .with_context(|| format!("cannot listen on {addr}"))?;
        awaiting.insert(id);
    }
    Ok(awaiting)
}

/// Waits for the first reservation on the relay, at most [`relay::RELAY_STARTUP_WAIT`]: a
/// daemon without one yet goes on (the task keeps trying), saying so.
async fn wait_reserved(circuit: &Multiaddr, reserved: oneshot::Receiver<()>) {
    match tokio::time::timeout(relay::RELAY_STARTUP_WAIT, reserved).await {
        Ok(Ok(())) => tracing::info!(%circuit, "reachable through the relay"),
        _ => tracing::warn!(
            %circuit,
            "no reservation on the relay within {:?}; going on, trying again meanwhile",
            relay::RELAY_STARTUP_WAIT
        ),
    }
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
            guard: guard::Guard::new(config.refused_connections.clone()),
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
