//! The bytes of an envelope around its message, with and without the shard and epoch a
//! clustered controller's messages carry: an envelope as peers sent it and outboxes stored it
//! before epochs must still be read (and encoded again to the same bytes, as the outboxes
//! store what they send), and a peer that knows nothing of epochs must still read a stamped
//! one.

#![allow(clippy::unwrap_used, missing_docs)]

use mobiwf_proto::{
    ActivityId, Completed, Envelope, Epoch, InstanceId, Message, MessageId, NodeId, ShardEpoch,
    ShardId,
};
use serde::Deserialize;

/// An envelope as encoded before epochs, by a controller outside a cluster or a node.
const BEFORE: &str = r#"{"id":{"origin":"12D3KooWPeer","incarnation":5,"seq":9},"answered_below":3,"message":{"kind":"completed","instance":7,"by":9}}"#;

/// The same envelope, sent by the owner of shard 0 at epoch 17.
const STAMPED: &str = r#"{"id":{"origin":"12D3KooWPeer","incarnation":5,"seq":9},"answered_below":3,"epoch":{"shard":0,"epoch":17},"message":{"kind":"completed","instance":7,"by":9}}"#;

fn envelope(epoch: Option<ShardEpoch>) -> Envelope {
    Envelope {
        id: MessageId {
            origin: NodeId::new("12D3KooWPeer"),
            incarnation: 5,
            seq: 9,
        },
        answered_below: 3,
        epoch,
        message: Message::Completed(Completed {
            instance: InstanceId(7),
            by: ActivityId(9),
        }),
    }
}

fn at_17() -> Option<ShardEpoch> {
    Some(ShardEpoch {
        shard: ShardId(0),
        epoch: Epoch(17),
    })
}

#[test]
fn an_envelope_from_before_epochs_reads_as_unstamped_and_encodes_to_its_bytes() {
    let read: Envelope = serde_json::from_str(BEFORE).unwrap();
    assert_eq!(read, envelope(None));
    assert_eq!(serde_json::to_string(&read).unwrap(), BEFORE);
}

#[test]
fn a_stamped_envelope_carries_its_shard_and_epoch() {
    assert_eq!(serde_json::to_string(&envelope(at_17())).unwrap(), STAMPED);
    let read: Envelope = serde_json::from_str(STAMPED).unwrap();
    assert_eq!(read, envelope(at_17()));
}

/// The envelope as a peer from before epochs declares it.
#[derive(Debug, Deserialize)]
struct EarlierEnvelope {
    id: MessageId,
    #[serde(default)]
    answered_below: u64,
    message: Message,
}

#[test]
fn a_peer_from_before_epochs_reads_a_stamped_envelope_as_before() {
    let read: EarlierEnvelope = serde_json::from_str(STAMPED).unwrap();
    let now = envelope(None);
    assert_eq!(
        (read.id, read.answered_below, read.message),
        (now.id, now.answered_below, now.message)
    );
}
