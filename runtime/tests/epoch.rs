//! A daemon whose store is owned at an epoch (a clustered controller's) says so in every
//! request its mesh sends, whatever the envelope it was given; any other mesh sends the
//! envelope as it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use libp2p::identity::Keypair;
use mobiwf_proto::{Envelope, Epoch, Message, MessageId, Reply, ShardEpoch, ShardId};
use mobiwf_runtime::mesh::{self, MeshConfig, MeshHandle};

fn config(epoch: Option<ShardEpoch>) -> MeshConfig {
    MeshConfig {
        request_timeout: Duration::from_secs(10),
        epoch,
        ..MeshConfig::new(
            Keypair::generate_ed25519(),
            vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()],
        )
    }
}

fn probe(from: &MeshHandle, epoch: Option<ShardEpoch>) -> Envelope {
    Envelope {
        answered_below: 0,
        epoch,
        id: MessageId {
            incarnation: 0,
            origin: from.peer_id().to_string().into(),
            seq: 0,
        },
        message: Message::Probe(mobiwf_proto::Probe::default()),
    }
}

fn at(epoch: i64) -> Option<ShardEpoch> {
    Some(ShardEpoch {
        shard: ShardId(0),
        epoch: Epoch(epoch),
    })
}

/// The epoch `from` sends `envelope` to a receiver with.
async fn received(from: &MeshHandle, envelope: Envelope) -> Option<ShardEpoch> {
    let (to, mut inbound) = mesh::start(config(None)).await.unwrap();
    let sending = {
        let (from, peer, addrs) = (from.clone(), to.peer_id(), to.listen_addrs());
        tokio::spawn(async move { from.request(peer, addrs, envelope).await })
    };
    let request = inbound.recv().await.unwrap();
    let epoch = request.envelope.epoch;
    request.reply.send(Reply::Ack).unwrap();
    assert_eq!(sending.await.unwrap().unwrap(), Reply::Ack);
    to.shutdown().await;
    epoch
}

#[tokio::test]
async fn an_owner_at_an_epoch_stamps_every_request_and_any_other_mesh_sends_it_as_given() {
    let (owner, _inbound) = mesh::start(config(at(17))).await.unwrap();
    assert_eq!(received(&owner, probe(&owner, None)).await, at(17));
    // Its own epoch, whatever the envelope said (an entry staged by the owner before it).
    assert_eq!(received(&owner, probe(&owner, at(3))).await, at(17));
    owner.shutdown().await;

    let (plain, _inbound) = mesh::start(config(None)).await.unwrap();
    assert_eq!(received(&plain, probe(&plain, None)).await, None);
    assert_eq!(received(&plain, probe(&plain, at(3))).await, at(3));
    plain.shutdown().await;
}
