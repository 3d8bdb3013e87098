//! Controllers in a cluster on etcd (`serve --etcd`): the shell around `mobiwf_cluster`'s
//! decisions. Without `--etcd` none of this runs and the book stays in RocksDB.
//!
//! Every controller of the cluster registers as a member (`members/<name>`, bound to its
//! etcd lease) and claims the shards rendezvous hashing gives it (`shards/<n>/owner`, bound
//! to the same lease); the owner key's creation revision is the shard's epoch. The owner
//! keeps the shard's entries under `shards/<n>/kv/` and writes each group commit as one
//! transaction conditional on its epoch (`store`), or, when it is larger than one etcd
//! transaction may be, several through a journal that keeps it all-or-nothing (`journal`).
//! When its lease lapses, the key goes with it, and another member claims the shard and loads
//! the book from its keys.
//!
//! This first landing runs one shard (`--shards 1`): the whole book, the cluster-wide keys
//! (registrations, the directory, enrolment, API tokens, definitions) included, is shard 0,
//! owned by one controller at a time; the others wait to take it over. Every controller of a
//! cluster is the same controller to the nodes: they share one libp2p identity (`identity`,
//! put there by the first one), so a takeover looks to a node like its controller restarted
//! at another address.

mod journal;
pub mod link;
pub mod owner;
pub mod patience;
pub mod serve;
pub mod store;

use mobiwf_cluster::{ShardCount, ShardId};
use serde::{Deserialize, Serialize};

pub use link::{Etcd, EtcdLink};
pub use owner::{MemberRecord, Membership, OwnerRecord, claim, ensure_cluster, ensure_identity};
pub use serve::{ClusterArgs, FENCED_EXIT, Joined};
pub use store::{Fenced, ShardStore};

/// The default prefix of the cluster's keys in etcd.
pub const DEFAULT_PREFIX: &str = "mobiwf/";

/// Where the cluster's keys are in etcd, below one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    prefix: String,
}

impl Layout {
    /// The keys below `prefix`.
    pub fn new(prefix: &str) -> Layout {
        Layout {
            prefix: prefix.to_owned(),
        }
    }

    /// `cluster`: the cluster's fixed settings ([`ClusterRecord`]).
    pub fn cluster(&self) -> String {
        format!("{}cluster", self.prefix)
    }

    /// `identity`: the libp2p key every controller of the cluster runs with.
    pub fn identity(&self) -> String {
        format!("{}identity", self.prefix)
    }

    /// `members/`: the live members, each bound to its lease.
    pub fn members(&self) -> String {
        format!("{}members/", self.prefix)
    }

    /// `shards/<n>/owner`: the shard's owner, bound to its lease; its creation revision is
    /// the shard's epoch.
    pub fn owner(&self, shard: ShardId) -> String {
        format!("{}shards/{:05}/owner", self.prefix, shard.0)
    }

    /// `shards/<n>/kv/`: the shard's store entries.
    pub fn entries(&self, shard: ShardId) -> String {
        format!("{}shards/{:05}/kv/", self.prefix, shard.0)
    }

    /// `shards/<n>/journal/`: a group commit too big for one transaction while it is
    /// written (`journal`).
    pub fn journal(&self, shard: ShardId) -> String {
        format!("{}shards/{:05}/journal/", self.prefix, shard.0)
    }
}

/// The cluster's settings, fixed when it is created (`cluster`, JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRecord {
    /// How many shards instances are spread over.
    pub shards: ShardCount,
}
