//! A flood does not stop the mesh's members. Half-open: a stranger opens hundreds of TCP
//! connections to P2's libp2p port and never starts a handshake, while paper instances run
//! between P1 and P2; P2 refuses the stranger's connections past its source's share
//! (`mobiwf_connections_refused_total`), closes the ones it held at its inbound handshake
//! deadline, and every instance completes (the times with and without the flood are printed,
//! not asserted).
//!
//! Requests: a stranger sends P2 as
//! many requests as it can, many at once, while paper instances run between P1 and P2. The
//! per-peer inbound gate sheds what is past its share (`mobiwf_inbound_shed_total` counts
//! it, and the count grows while the instances run) and every instance completes, each
//! activity where it belongs. The nodes run with a far lower rate than the default
//! (`--inbound-per-peer-per-sec`), one that the flood outruns for certain and all the time on
//! a busy machine; whether it outran the default 2,000/s depended on how much CPU a debug
//! build had left.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mobiwf_proto::{ActivityId, Envelope, InstanceId, Message, MessageId, Outcome};
use mobiwf_runtime::mesh::{self, MeshConfig};
use mobiwf_testkit::flood::{self, closed};
use mobiwf_tests::harness::{
    Controller, PAPER_PLACEMENT, assert_all_succeeded, http_get, metric, start_nodes_with,
};
use mobiwf_tests::{repo_root, scratch};

/// Requests the flooder keeps under way at once: far past `MAX_INBOUND_IN_FLIGHT_PER_PEER`.
const FLOOD_AT_ONCE: u64 = 512;

/// The nodes' `--inbound-per-peer-per-sec`: far under the rate at which the flood reaches
/// P2's gate.
/// At 200/s the gate shed in bursts, with pauses of seconds in which paper instances ran
/// through unchallenged; at 20/s it sheds all the time.
const RATE: &str = "20";

/// Paper instances run during the flood.
const INSTANCES: usize = 5;

/// Floods `address` from a new key until `stop`; counts the requests sent.
fn flood(
    address: String,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let key = libp2p::identity::Keypair::generate_ed25519();
            let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
            let (handle, _inbound) = mesh::start(MeshConfig::new(key, listen)).await.unwrap();
            let addr: libp2p::Multiaddr = address.parse().unwrap();
            let peer = address.rsplit("/p2p/").next().unwrap().parse().unwrap();
            let origin: mobiwf_proto::NodeId = handle.peer_id().to_string().into();
            let mut tasks = Vec::new();
            for lane in 0..FLOOD_AT_ONCE {
                let (handle, addr, origin) = (handle.clone(), addr.clone(), origin.clone());
                let (stop, sent) = (stop.clone(), sent.clone());
                tasks.push(tokio::spawn(async move {
                    // Numbers unique across lanes, and close together (a receiver leaves
                    // unanswered what is too far above what it has seen).
                    let mut seq = lane + 1;
                    while !stop.load(Ordering::Relaxed) {
                        seq += FLOOD_AT_ONCE;
                        // Words about instances nobody runs: each must reach the node's actor.
                        let envelope = Envelope {
                            answered_below: 0,
                            id: MessageId {
                                origin: origin.clone(),
                                incarnation: 1,
                                seq,
                            },
                            message: Message::Notify(mobiwf_proto::Notify::new(
                                InstanceId(1_000_000 + seq % 5_000),
                                ActivityId(17),
                                Outcome::Succeeded,
                            )),
                        };
                        sent.fetch_add(1, Ordering::Relaxed);
                        let _ = handle.request(peer, vec![addr.clone()], envelope).await;
                    }
                }));
            }
            for task in tasks {
                let _ = task.await;
            }
            handle.shutdown().await;
        });
    })
}

#[test]
fn instances_between_two_nodes_complete_while_a_third_peer_floods_one_of_them() {
    let dir = scratch("flood").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let nodes = [("P1", "1,2,3"), ("P2", "1,3")];
    let nodes = start_nodes_with(
        &dir,
        &controller,
        &nodes,
        &["--inbound-per-peer-per-sec", RATE],
    );
    let p2 = &nodes[1];
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let flooder = flood(p2.address.clone(), stop.clone(), sent.clone());
    let shed = || {
        metric(
            &http_get(&p2.api, "/metrics").unwrap(),
            "mobiwf_inbound_shed_total",
            &[],
        )
    };
    let shed_before = mobiwf_tests::harness::wait_for(
        "the flood to reach P2's limit",
        std::time::Duration::from_secs(60),
        || {
            let n = shed();
            (n > 0.0).then_some(n)
        },
    );

    let paper = repo_root().join("examples/paper/workflow.xml");
    let ids: Vec<u64> = (0..INSTANCES).map(|_| controller.submit(&paper)).collect();
    for id in &ids {
        controller
            .wait(*id, 120)
            .expect_code(0, "a paper instance during the flood");
        assert_all_succeeded(&controller.status(*id), &PAPER_PLACEMENT);
    }
    // The flood went on the whole time: more was shed while the instances ran.
    let shed_during = shed();
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    assert!(
        shed_during > shed_before,
        "the gate shed {shed_before} requests before the instances and none while they ran"
    );
    assert!(
        sent.load(Ordering::Relaxed) > FLOOD_AT_ONCE,
        "the flooder sent {} requests",
        sent.load(Ordering::Relaxed)
    );
}

/// Half-open connections the stranger opens to P2's port: far past every pending-connection
/// limit.
const HALF_OPEN: usize = 800;
/// Paper instances run at once, during the half-open flood and again without it.
const BATCH: usize = 20;

/// Opens `n` TCP connections to `address`'s port from 127.0.0.2 (another source than the
/// members' 127.0.0.1), and says nothing on them.
fn half_open(address: &str, n: usize) -> Vec<std::net::TcpStream> {
    let addr: libp2p::Multiaddr = address.parse().unwrap();
    let port = addr
        .iter()
        .find_map(|p| match p {
            libp2p::multiaddr::Protocol::Tcp(port) => Some(port),
            _ => None,
        })
        .unwrap();
    let to = SocketAddr::from(([127, 0, 0, 1], port));
    let from = IpAddr::from([127, 0, 0, 2]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    runtime.block_on(flood::open(from, to, n, &[])).unwrap()
}

/// Runs [`BATCH`] paper instances at once; every one must succeed. Returns how long they took.
fn batch(controller: &Controller, what: &str) -> std::time::Duration {
    let paper = repo_root().join("examples/paper/workflow.xml");
    let started = std::time::Instant::now();
    let ids: Vec<u64> = (0..BATCH).map(|_| controller.submit(&paper)).collect();
    for id in &ids {
        controller.wait(*id, 120).expect_code(0, what);
        assert_all_succeeded(&controller.status(*id), &PAPER_PLACEMENT);
    }
    started.elapsed()
}

#[test]
fn instances_complete_while_a_stranger_holds_half_open_connections_to_a_node() {
    let dir = scratch("flood-half-open").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let nodes = [("P1", "1,2,3"), ("P2", "1,3")];
    let nodes = start_nodes_with(&dir, &controller, &nodes, &[]);
    let p2 = &nodes[1];
    let refused = || {
        metric(
            &http_get(&p2.api, "/metrics").unwrap(),
            "mobiwf_connections_refused_total",
            &[],
        )
    };
    let most_held = mobiwf_runtime::mesh::guard::MAX_PENDING_INCOMING_PER_SOURCE;

    let held = half_open(&p2.address, HALF_OPEN);
    mobiwf_tests::harness::wait_for(
        "P2 refusing the connections past the stranger's share",
        std::time::Duration::from_secs(60),
        || (refused() >= (HALF_OPEN - most_held) as f64).then_some(()),
    );
    let flooded = batch(&controller, "a paper instance during the half-open flood");
    mobiwf_tests::harness::wait_for(
        "P2 closing the stranger's connections",
        std::time::Duration::from_secs(60),
        || (closed(&held) == HALF_OPEN).then_some(()),
    );
    let calm = batch(&controller, "a paper instance after the flood");
    println!(
        "{BATCH} paper instances: {flooded:?} while a stranger held {HALF_OPEN} half-open \
         connections to P2, {calm:?} after; P2 refused {} connections",
        refused()
    );
}
