//! Which owner of the controller's book a message comes from: controllers in a cluster own the
//! book's shards one at a time, each owner at an epoch that rises with every new owner, and
//! a clustered controller's messages carry its shard and epoch ([`crate::Envelope::epoch`]),
//! so that a node can refuse those of an owner that was fenced (`mobiwf-node-core`'s
//! `epochs`). The rules about epochs are `mobiwf-cluster`'s; these are only the names.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One shard of the controllers' book, `0..S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ShardId(pub u32);

impl fmt::Display for ShardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A shard owner's epoch: the etcd revision at which its owner key was created, so it rises
/// with every new owner (0 is never one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Epoch(pub i64);

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The shard a clustered controller owns and its epoch, as its messages carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShardEpoch {
    /// The shard.
    pub shard: ShardId,
    /// Its owner's epoch.
    pub epoch: Epoch,
}

impl fmt::Display for ShardEpoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shard {} at epoch {}", self.shard, self.epoch)
    }
}
