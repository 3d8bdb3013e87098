//! Controllers in a cluster, as plain decisions: which shard an instance is in, which live
//! member owns a shard (rendezvous hashing), what a shard's epoch admits, and what a member
//! does about a shard it sees. The shell (`mobiwf-controller`'s `cluster` module) does the
//! I/O with etcd around these; nothing here reads a clock, a disk or the network.
//!
//! An instance's shard is `hash(instance id) % S`, S fixed when the cluster is created, so an
//! instance never changes shard. A shard's owner is the live member with the highest score
//! for it (highest random weight, Thaler and Ravishankar, "Using name-based mappings to
//! increase hit rates", section 3): when a member joins or leaves, only the shards it wins or
//! held move.
//!
//! What one etcd transaction may carry, and how a commit is cut to fit it: [`txn`]. How a
//! member waits for an etcd that does not answer, and until when its lease surely holds:
//! [`retry`].

mod claim;
mod epoch;
pub mod retry;
pub mod txn;

pub use claim::{ClaimView, Decision, PATIENCE_LOOKS, SeenOwner, decide};
pub use epoch::{Admitted, EpochGate, Stale};
/// A shard and its owner's epoch are named in `mobiwf-proto`, since messages carry them.
pub use mobiwf_proto::{Epoch, ShardEpoch, ShardId};

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU32;

use mobiwf_proto::InstanceId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How many shards a cluster has: fixed when the cluster is created (its `cluster` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardCount(NonZeroU32);

impl ShardCount {
    /// One shard: the whole book, owned by one controller at a time.
    pub const ONE: ShardCount = ShardCount(NonZeroU32::MIN);

    /// `n` shards; `None` for zero.
    pub fn new(n: u32) -> Option<ShardCount> {
        NonZeroU32::new(n).map(ShardCount)
    }

    /// The number of shards.
    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// Every shard, in order.
    pub fn all(self) -> impl Iterator<Item = ShardId> {
        (0..self.get()).map(ShardId)
    }
}

/// A controller of the cluster, by the name it registers under (its `members/` key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MemberId(pub String);

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first eight bytes of SHA-256 over `parts`, each followed by a zero byte (so that
/// ("ab", "c") and ("a", "bc") differ): stable across processes, machines and versions,
/// unlike the standard library's hasher.
fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The shard instance `id` is in.
pub fn shard_of(id: InstanceId, shards: ShardCount) -> ShardId {
    let hash = stable_hash(&[b"mobiwf-instance", id.0.to_string().as_bytes()]);
    let index = hash % u64::from(shards.get());
    // Below S, which is a u32.
    ShardId(u32::try_from(index).unwrap_or(0))
}

/// `member`'s score for `shard`: the highest live score owns it.
fn score(member: &MemberId, shard: ShardId) -> u64 {
    stable_hash(&[
        b"mobiwf-shard",
        member.0.as_bytes(),
        shard.0.to_string().as_bytes(),
    ])
}

/// The member that should own `shard` among `live` (rendezvous hashing); `None` when nobody
/// is live. Ties (equal scores, vanishingly rare) go to the smaller name, so every member
/// computes the same owner from the same list in any order.
pub fn owner_of(shard: ShardId, live: &[MemberId]) -> Option<&MemberId> {
    live.iter()
        .max_by(|a, b| score(a, shard).cmp(&score(b, shard)).then(b.cmp(a)))
}

/// Every shard's preferred owner among `live` (empty when nobody is live).
pub fn assignment(shards: ShardCount, live: &[MemberId]) -> BTreeMap<ShardId, MemberId> {
    shards
        .all()
        .filter_map(|shard| owner_of(shard, live).map(|m| (shard, m.clone())))
        .collect()
}

#[cfg(test)]
mod tests;
