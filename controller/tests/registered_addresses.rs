//! A controller that starts again knows where its registered nodes said they are: the mesh's
//! address book (kept in memory only) is told each node's last registration before anything
//! is delivered, so that an outbox entry staged with an address a node has left since (it
//! moved and registered again while the controller was down) still reaches it. Found by the
//! simulator (`mobiwf-sim`): such a node, idle, never connects to the controller by itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use mobiwf_book::{Book, Input, NodeInfo};
use mobiwf_controller::{ControllerConfig, state};
use mobiwf_proto::{ActivityTypeId, NodeId, NodeName};
use mobiwf_runtime::store::{Batch, Durability, MemoryStore, Store};

#[tokio::test]
async fn a_restarted_controller_dials_a_node_where_it_last_registered() {
    let peer = libp2p::PeerId::random();
    let moved = format!("/ip4/10.9.9.9/tcp/4001/p2p/{peer}");
    let mut book = Book::new();
    let node = NodeInfo {
        peer: NodeId::new(peer.to_string()),
        name: NodeName::new("P1"),
        skills: vec![ActivityTypeId(1)],
        addrs: vec![moved],
        registered_ms: 0,
        seq: 2,
        suspected: None,
    };
    book.apply(0, Input::Register(node)).expect("registered");
    let store = Arc::new(MemoryStore::new());
    let mut batch = Batch::default();
    state::stage(&mut batch, &book.take_changes()).expect("staged");
    store.write(batch, Durability::Synced).expect("written");

    let dir = tempfile::tempdir().expect("a data directory");
    let controller = mobiwf_controller::start(ControllerConfig {
        data_dir: dir.path().join("controller"),
        listen: vec!["/ip4/127.0.0.1/tcp/0".parse().expect("an address")],
        api: "127.0.0.1:0".parse().expect("an address"),
        store: Some(store),
        detector: Default::default(),
        hub_routing: false,
        hour_ms: mobiwf_proto::DEFAULT_HOUR_MS,
        open_enrolment: false,
        relay_server: false,
        swarm_key: None,
        api_auth: true,
        retain_finished: None,
        admission: mobiwf_controller::admission::Policy::Adaptive,
        inbound: Default::default(),
        api_tls: None,
    })
    .await
    .expect("the controller starts");
    let known = controller.client().mesh.addresses(peer).await;
    let wanted: libp2p::Multiaddr = "/ip4/10.9.9.9/tcp/4001".parse().expect("an address");
    assert!(known.contains(&wanted), "{known:?}");
    controller.stop().await;
}
