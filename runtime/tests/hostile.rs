//! A stranger on the mesh's port must not slow the mesh for its members: it opens TCP
//! connections to a node and never finishes the handshake (or sends garbage), and meanwhile
//! members still connect at the first try. The flooder speaks from another loopback address
//! (127.0.0.2 and up: Linux answers the whole of 127.0.0.0/8) than the members (127.0.0.1),
//! as a stranger on another machine would.
//!
//! What is asserted is the mechanism (the stranger's connections past its share are refused
//! and counted, the ones held are closed by the node's inbound handshake deadline, a member's
//! first request goes through),
//! never a time; the times of a few members' first requests with and without the flood are
//! printed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use futures::{AsyncRead, AsyncWrite, AsyncWriteExt, StreamExt};
use libp2p::Multiaddr;
use libp2p::StreamProtocol;
use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol;
use libp2p::request_response::{self, ProtocolSupport};
use libp2p::swarm::SwarmEvent;
use mobiwf_proto::{Envelope, Message, MessageId, Outcome, Reply};
use mobiwf_runtime::mesh::{self, MeshConfig, MeshHandle};
use mobiwf_testkit::flood::{self, closed};
use prometheus_client::metrics::counter::Counter;

/// Half-open connections the flooder opens: far past every pending-connection limit.
const FLOOD: usize = 800;
/// Members that each connect afresh and send one request, one after the other.
const MEMBERS: usize = 10;
/// How long a bounded wait may take before the test fails (never expected to be reached).
const PATIENCE: Duration = Duration::from_secs(60);

fn flooder(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

fn notify(origin: &MeshHandle, seq: u64) -> Envelope {
    Envelope {
        answered_below: 0,
        id: MessageId {
            incarnation: 0,
            origin: origin.peer_id().to_string().into(),
            seq,
        },
        message: Message::Notify(mobiwf_proto::Notify::new(
            mobiwf_proto::InstanceId(1),
            mobiwf_proto::ActivityId(seq),
            Outcome::Succeeded,
        )),
    }
}

/// A node on 127.0.0.1 that answers every request, and the counter of the connections it
/// refused. It never dials, so its dial timeout (which also bounds every handshake) is long.
async fn victim() -> (MeshHandle, Counter) {
    let refused = Counter::default();
    let config = MeshConfig {
        refused_connections: refused.clone(),
        // Far past the tests' patience: only the inbound handshake deadline closes a silent
        // connection in time.
        dial_timeout: Duration::from_secs(600),
        ..MeshConfig::new(
            Keypair::generate_ed25519(),
            vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()],
        )
    };
    let (handle, mut inbound) = mesh::start(config).await.unwrap();
    tokio::spawn(async move {
        while let Some(request) = inbound.recv().await {
            let _ = request.reply.send(Reply::Ack);
        }
    });
    (handle, refused)
}

fn socket_addr(handle: &MeshHandle) -> SocketAddr {
    let addr = handle.listen_addrs()[0].clone();
    let (mut ip, mut port) = (None, None);
    for p in addr.iter() {
        match p {
            Protocol::Ip4(a) => ip = Some(IpAddr::V4(a)),
            Protocol::Tcp(p) => port = Some(p),
            _ => {}
        }
    }
    SocketAddr::new(ip.unwrap(), port.unwrap())
}

/// Waits (bounded by [`PATIENCE`], polling) until `done` holds; returns how long it took.
async fn until(what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < PATIENCE,
            "{what}: not within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

/// Fresh members connect to `to` one after the other and send one request each, trying again
/// (after a short pause) when a request fails. Returns the time taken and the failed tries.
async fn members(to: &MeshHandle) -> (Duration, usize) {
    let addr: Multiaddr = to.listen_addrs()[0].clone();
    let start = Instant::now();
    let mut failed = 0;
    for _ in 0..MEMBERS {
        let (member, _inbound) = mesh::start(MeshConfig::new(Keypair::generate_ed25519(), vec![]))
            .await
            .unwrap();
        let mut seq = 0;
        loop {
            seq += 1;
            match member
                .request(to.peer_id(), vec![addr.clone()], notify(&member, seq))
                .await
            {
                Ok(_) => break,
                Err(e) => {
                    failed += 1;
                    assert!(
                        start.elapsed() < PATIENCE,
                        "a member never got through: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        member.shutdown().await;
    }
    (start.elapsed(), failed)
}

/// One member's first request: whether it went through.
async fn first_try(to: &MeshHandle) -> Result<(), String> {
    let (member, _inbound) = mesh::start(MeshConfig::new(Keypair::generate_ed25519(), vec![]))
        .await
        .unwrap();
    let result = member
        .request(to.peer_id(), to.listen_addrs(), notify(&member, 1))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string());
    member.shutdown().await;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_connect_at_once_while_a_stranger_holds_half_open_connections() {
    let (node, refused) = victim().await;
    let (calm, calm_failed) = members(&node).await;

    let started = Instant::now();
    let held = flood::open(flooder(2), socket_addr(&node), FLOOD, &[])
        .await
        .unwrap();
    // The node has taken every connection: all but the few it holds are closed.
    let most_held = usize::try_from(mesh::limits::MAX_PENDING_INCOMING).unwrap();
    until("the node refusing the flood", || {
        closed(&held) >= FLOOD - most_held
    })
    .await;
    let first = first_try(&node).await;
    let still_held = FLOOD - closed(&held);
    let (flooded, flooded_failed) = members(&node).await;
    println!(
        "{MEMBERS} members: {calm:?} ({calm_failed} failed tries) calm, {flooded:?} \
         ({flooded_failed} failed tries) under a flood of {FLOOD} half-open connections"
    );
    assert!(
        first.is_ok(),
        "a member's first request failed while the flood held {still_held} connections: {first:?}"
    );
    assert!(still_held > 0, "the flood was over before the member tried");
    assert!(
        refused.get()
            >= u64::try_from(FLOOD - mesh::guard::MAX_PENDING_INCOMING_PER_SOURCE).unwrap(),
        "the node counted {} refused connections",
        refused.get()
    );
    until("the node closing the half-open connections", || {
        closed(&held) == FLOOD
    })
    .await;
    println!(
        "the node closed the last half-open connection {:?} after the flood began",
        started.elapsed()
    );
    node.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_port_is_closed_and_members_still_connect() {
    let (node, _refused) = victim().await;
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 13) as u8).collect();
    let held = flood::open(flooder(3), socket_addr(&node), FLOOD / 4, &garbage)
        .await
        .unwrap();
    let took = until("the node closing every garbage connection", || {
        closed(&held) == held.len()
    })
    .await;
    println!("{} garbage connections closed within {took:?}", held.len());
    first_try(&node).await.unwrap();
    node.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_from_many_addresses_leave_room_for_a_member_that_connected_before() {
    let (node, refused) = victim().await;
    // Members have connected from 127.0.0.1: it is a known source from now on.
    first_try(&node).await.unwrap();
    let per_source = mesh::guard::MAX_PENDING_INCOMING_PER_SOURCE;
    let total = usize::try_from(mesh::limits::MAX_PENDING_INCOMING).unwrap();
    // Enough sources, each at its own limit, to fill every slot for connections being set up.
    let sources = total / per_source + 2;
    let mut held = Vec::new();
    for n in 0..sources {
        let from = flooder(10 + u8::try_from(n).unwrap());
        held.extend(
            flood::open(from, socket_addr(&node), per_source * 2, &[])
                .await
                .unwrap(),
        );
    }
    let most_held = total - mesh::guard::PENDING_INCOMING_KEPT_FOR_KNOWN;
    until("the node refusing the strangers past their slots", || {
        closed(&held) >= held.len() - most_held
    })
    .await;
    let first = first_try(&node).await;
    let still_held = held.len() - closed(&held);
    assert!(
        first.is_ok(),
        "a member's first request failed while strangers held {still_held} connections: {first:?}"
    );
    assert!(
        still_held > 0,
        "the strangers' connections were over before the member tried"
    );
    assert!(
        refused.get() >= u64::try_from(held.len() - most_held).unwrap(),
        "the node counted {} refused connections",
        refused.get()
    );
    node.shutdown().await;
}

/// Streams a connected stranger opens and leaves hanging: past every per-connection limit.
const STALLED_STREAMS: usize = 2000;

/// A codec that starts each request (its length prefix) and never finishes it.
#[derive(Clone, Default)]
struct StallCodec;

impl request_response::Codec for StallCodec {
    type Protocol = StreamProtocol;
    type Request = ();
    type Response = ();

    async fn read_request<T>(&mut self, _: &StreamProtocol, _: &mut T) -> std::io::Result<()>
    where
        T: AsyncRead + Unpin + Send,
    {
        Err(std::io::Error::other("not a server"))
    }

    async fn read_response<T>(&mut self, _: &StreamProtocol, _: &mut T) -> std::io::Result<()>
    where
        T: AsyncRead + Unpin + Send,
    {
        futures::future::pending().await
    }

    async fn write_request<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        (): (),
    ) -> std::io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        io.write_all(&100u32.to_be_bytes()).await?;
        io.flush().await?;
        futures::future::pending().await
    }

    async fn write_response<T>(
        &mut self,
        _: &StreamProtocol,
        _: &mut T,
        (): (),
    ) -> std::io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        Err(std::io::Error::other("not a server"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_connect_while_a_connected_stranger_leaves_streams_hanging() {
    let (node, _refused) = victim().await;
    let (calm, _) = members(&node).await;
    let mut stranger = libp2p::SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(
            libp2p::tcp::Config::default(),
            libp2p::noise::Config::new,
            libp2p::yamux::Config::default,
        )
        .unwrap()
        .with_behaviour(|_| {
            request_response::Behaviour::<StallCodec>::new(
                [(
                    StreamProtocol::new(mobiwf_proto::PROTOCOL),
                    ProtocolSupport::Outbound,
                )],
                request_response::Config::default()
                    .with_request_timeout(Duration::from_secs(600))
                    .with_max_concurrent_streams(STALLED_STREAMS),
            )
        })
        .unwrap()
        .build();
    for addr in node.listen_addrs() {
        stranger.add_peer_address(node.peer_id(), addr);
    }
    for _ in 0..STALLED_STREAMS {
        stranger.behaviour_mut().send_request(&node.peer_id(), ());
    }
    let (opened_tx, opened) = tokio::sync::oneshot::channel();
    let driver = tokio::spawn(async move {
        let mut opened_tx = Some(opened_tx);
        loop {
            if let SwarmEvent::ConnectionEstablished { .. } = stranger.select_next_some().await
                && let Some(tx) = opened_tx.take()
            {
                let _ = tx.send(());
            }
        }
    });
    tokio::time::timeout(PATIENCE, opened)
        .await
        .unwrap()
        .unwrap();
    let (stalled, failed) = members(&node).await;
    println!(
        "{MEMBERS} members: {calm:?} calm, {stalled:?} ({failed} failed tries) while a \
         connected stranger left {STALLED_STREAMS} streams hanging"
    );
    assert_eq!(
        failed, 0,
        "members' requests failed while the stranger's streams hung"
    );
    driver.abort();
    node.shutdown().await;
}

/// A socket on the host that holds a node's listen port on another local address (as one of
/// `flood`'s connections does when the kernel picks that port for it) must not stop the
/// node's dials: a dial bound to the wildcard address and the listen port (libp2p's default)
/// was refused with "address in use" for as long as the socket lived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_dials_out_while_another_socket_holds_its_port_on_another_address() {
    let (to, _refused) = victim().await;
    let (node, _inbound) = mesh::start(MeshConfig::new(
        Keypair::generate_ed25519(),
        vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()],
    ))
    .await
    .unwrap();
    let port = socket_addr(&node).port();
    let squatter = tokio::net::TcpSocket::new_v4().unwrap();
    squatter.bind(SocketAddr::new(flooder(4), port)).unwrap();

    let sent = node
        .request(to.peer_id(), to.listen_addrs(), notify(&node, 1))
        .await;
    assert!(
        sent.is_ok(),
        "a dial failed while another socket held the node's port {port} on {}: {:?}",
        flooder(4),
        sent.map(|_| ()).map_err(|e| e.to_string())
    );
    drop(squatter);
    node.shutdown().await;
    to.shutdown().await;
}
