//! Which owner of the controllers' book the node still takes orders from. Controllers in a
//! cluster (`serve --etcd`) share one peer id, so the peer a message comes from cannot tell an
//! owner that was fenced (stopped past its lease, then running again) from the one that took
//! its shard over: the message's shard and epoch can ([`mobiwf_proto::Envelope::epoch`]).
//! The node keeps the highest epoch it heard per shard, and refuses a message of an older
//! one before anything else looks at it.
//!
//! The rule, [`NodeCore::admit`]: a message without an epoch (a controller outside a cluster,
//! a partner) is judged as always; an epoch is the controller's word only, so a partner's is
//! refused; the controller's is admitted at or above the one known for its shard (a newer one
//! is known from then on, and the daemon writes it in the group that applies the message),
//! and refused below it. So a node that never heard an epoch takes every message as before,
//! and one that heard the new owner of a shard takes nothing more from the owners before it.

use mobiwf_cluster::{Admitted, EpochGate};
use mobiwf_proto::{Epoch, NodeId, ShardEpoch, ShardId};

use crate::{NodeCore, NotTaken};

/// What the node made of the epoch a message carried, once admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// None: a controller outside a cluster, or a partner.
    Unstamped,
    /// The epoch known for its shard.
    Current,
    /// A newer epoch of its shard (a new owner): the daemon writes it with the group that
    /// applies the message, so that it is known after a restart.
    Newer {
        /// The shard and the epoch now known.
        now: ShardEpoch,
        /// The epoch known before, if any.
        was: Option<Epoch>,
    },
}

/// The epochs a node knows, one per shard it heard of.
#[derive(Debug, Clone, Default)]
pub(crate) struct Epochs {
    gate: EpochGate,
}

impl Epochs {
    /// The epochs as the store holds them.
    pub(crate) fn restore(known: &[ShardEpoch]) -> Epochs {
        let mut gate = EpochGate::new();
        for stamp in known {
            // Known once each: nothing to refuse while restoring.
            let _ = gate.admit(stamp.shard, stamp.epoch);
        }
        Epochs { gate }
    }
}

impl NodeCore {
    /// The node's core with the epochs its store holds (none for a node that never heard a
    /// clustered controller, or whose store is older than epochs).
    #[must_use]
    pub fn with_epochs(mut self, known: &[ShardEpoch]) -> NodeCore {
        self.epochs = Epochs::restore(known);
        self
    }

    /// The highest epoch heard for `shard`, if any.
    pub fn known_epoch(&self, shard: ShardId) -> Option<Epoch> {
        self.epochs.gate.known(shard)
    }

    /// Admits a message from `from` carrying `epoch`, or refuses it (nothing changed) when it
    /// is a partner's, or older than the epoch known for its shard: its sender owned the
    /// shard once and was fenced since. Called before anything else looks at the message.
    pub fn admit(&mut self, from: &NodeId, epoch: Option<ShardEpoch>) -> Result<Heard, NotTaken> {
        // 0 is never an epoch: a sender that says 0 is outside a cluster.
        let Some(stamp) = epoch.filter(|s| s.epoch.0 > 0) else {
            return Ok(Heard::Unstamped);
        };
        if *from != self.who.controller {
            return Err(NotTaken::Refused(format!(
                "only this node's controller sends an epoch, not {from}"
            )));
        }
        match self.epochs.gate.admit(stamp.shard, stamp.epoch) {
            Ok(Admitted::Current) => Ok(Heard::Current),
            Ok(Admitted::Newer { was }) => Ok(Heard::Newer { now: stamp, was }),
            Err(stale) => Err(NotTaken::Refused(stale.to_string())),
        }
    }
}
