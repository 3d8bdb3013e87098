//! A shard's epoch: the etcd revision at which its current owner's key was created. Every
//! claim creates the key anew, so epochs only grow; whatever carries an epoch lower than the
//! one known for its shard comes from an owner that was fenced, and is refused.

use std::collections::BTreeMap;

use crate::{Epoch, ShardId};

/// A word (a message, a write) from an epoch older than the one known for its shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("shard {shard}: epoch {given} is older than epoch {known}, its owner was fenced")]
pub struct Stale {
    /// The shard.
    pub shard: ShardId,
    /// The epoch the word carried.
    pub given: Epoch,
    /// The epoch known for the shard.
    pub known: Epoch,
}

/// What the gate made of an epoch it admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// The epoch known for the shard.
    Current,
    /// A newer one (the shard was taken over), known from now on.
    Newer {
        /// The epoch known before, if any.
        was: Option<Epoch>,
    },
}

/// The highest epoch seen per shard: admits it and newer ones, refuses older ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochGate {
    known: BTreeMap<ShardId, Epoch>,
}

impl EpochGate {
    /// A gate that knows no epoch yet.
    pub fn new() -> EpochGate {
        EpochGate::default()
    }

    /// The epoch known for `shard`.
    pub fn known(&self, shard: ShardId) -> Option<Epoch> {
        self.known.get(&shard).copied()
    }

    /// Admits a word of `shard` carrying `epoch` (raising the known epoch when it is newer),
    /// or refuses it when it is older than the one known.
    pub fn admit(&mut self, shard: ShardId, epoch: Epoch) -> Result<Admitted, Stale> {
        let was = self.known(shard);
        match was {
            Some(known) if epoch < known => Err(Stale {
                shard,
                given: epoch,
                known,
            }),
            Some(known) if epoch == known => Ok(Admitted::Current),
            _ => {
                self.known.insert(shard, epoch);
                Ok(Admitted::Newer { was })
            }
        }
    }
}
