//! Tests of circuit relay v2 in the mesh: a daemon that listens nowhere but on a relay is
//! reached through it by a peer that listens nowhere either, and again once the relay was
//! stopped and started anew on its address (the reservation is made again by itself).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use libp2p::identity::Keypair;
use libp2p::multiaddr::Protocol;
use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Envelope, Message, MessageId, Reply};
use mobiwf_runtime::mesh::{self, MeshConfig, MeshHandle, RelayCounters};

fn probe(from: &MeshHandle, seq: u64) -> Envelope {
    Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: from.peer_id().to_string().into(),
            seq,
        },
        message: Message::Probe(Default::default()),
    }
}

/// A relay with `key`, listening on `listen`; its counters.
async fn relay(key: &Keypair, listen: Multiaddr) -> (MeshHandle, RelayCounters) {
    let config = MeshConfig {
        relay_server: true,
        ..MeshConfig::new(key.clone(), vec![listen])
    };
    let counters = config.counters.clone();
    let (handle, inbound) = mesh::start(config).await.unwrap();
    drop(inbound);
    (handle, counters)
}

/// Waits up to 30 s for `done`.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_listening_only_on_a_relay_is_reached_through_it_even_after_the_relay_restarts() {
    let relay_key = Keypair::generate_ed25519();
    let (r, r_counters) = relay(&relay_key, "/ip4/127.0.0.1/tcp/0".parse().unwrap()).await;
    let relay_addr = r.listen_addrs()[0].clone();

    // Behind the relay: no listen address of its own.
    let behind = MeshConfig {
        via_relay: Some(relay_addr.clone()),
        ..MeshConfig::new(Keypair::generate_ed25519(), Vec::new())
    };
    let (hidden, mut hidden_in) = mesh::start(behind).await.unwrap();
    let circuit = hidden.circuit_addr().unwrap();
    assert_eq!(
        circuit,
        relay_addr
            .clone()
            .with(Protocol::P2pCircuit)
            .with(Protocol::P2p(hidden.peer_id()))
    );
    assert!(
        hidden.listen_addrs().contains(&circuit),
        "start returns once the reservation is made: {:?}",
        hidden.listen_addrs()
    );
    wait_until("the relay to count the reservation", || {
        r_counters.reservations.get() == 1
    })
    .await;
    let answered = tokio::spawn(async move {
        let mut served = 0;
        while let Some(request) = hidden_in.recv().await {
            let _ = request.reply.send(Reply::Ack);
            served += 1;
        }
        served
    });

    let partner_config = MeshConfig::new(Keypair::generate_ed25519(), Vec::new());
    let partner_counters = partner_config.counters.clone();
    let (partner, _partner_in) = mesh::start(partner_config).await.unwrap();
    let to: PeerId = hidden.peer_id();
    let reply = partner
        .request(to, vec![circuit.clone()], probe(&partner, 1))
        .await
        .unwrap();
    assert_eq!(reply, Reply::Ack);
    wait_until("the relay to count the circuit", || {
        r_counters.circuits.get() == 1
    })
    .await;
    assert_eq!(partner_counters.relayed_connections.get(), 1);

    // The relay goes away (the circuit with it) and comes back on the same address.
    r.shutdown().await;
    wait_until("the circuit to close", || {
        !hidden.listen_addrs().contains(&circuit)
    })
    .await;
    let listen: Multiaddr = relay_addr
        .iter()
        .filter(|p| !matches!(p, Protocol::P2p(_)))
        .collect();
    let (r2, r2_counters) = relay(&relay_key, listen).await;
    wait_until("the reservation on the new relay", || {
        hidden.listen_addrs().contains(&circuit)
    })
    .await;
    wait_until("the new relay to count the reservation", || {
        r2_counters.reservations.get() == 1
    })
    .await;
    let reply = partner
        .request(to, vec![circuit.clone()], probe(&partner, 2))
        .await
        .unwrap();
    assert_eq!(reply, Reply::Ack);
    wait_until("the new relay to count the circuit", || {
        r2_counters.circuits.get() == 1
    })
    .await;

    partner.shutdown().await;
    hidden.shutdown().await;
    r2.shutdown().await;
    assert_eq!(answered.await.unwrap(), 2);
}
