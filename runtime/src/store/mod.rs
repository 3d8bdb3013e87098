//! The durable store: an ordered key-value map written in atomic batches.
//!
//! The controller and nodes keep all their state here. A [`Batch`] written with
//! [`Durability::Synced`] is on disk (fsync) when `write` returns: that is what
//! "durable before acknowledged" rests on. [`RocksStore`] is the real one; [`MemoryStore`]
//! serves the tests of everything above it.

mod memory;
mod rocks;

pub use memory::MemoryStore;
pub use rocks::RocksStore;

/// A failure of the store. The process cannot go on safely after one: callers stop, and
/// nothing of the batch that failed was acknowledged or sent.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database itself failed (I/O, corruption, a lock held by another process).
    #[error("store: {0}")]
    Backend(String),
    /// An entry is there but cannot be read back.
    #[error(
        "the entry {key} of the data directory cannot be read ({why}); the data directory is \
         damaged or from an incompatible version"
    )]
    Unreadable {
        /// The entry's key, as text.
        key: String,
        /// What is wrong with it.
        why: String,
    },
    /// A value could not be encoded for writing: the batch is not written at all, rather
    /// than written with an empty value in its place.
    #[error("cannot encode {what} for the store: {why}")]
    Encode {
        /// What was being encoded.
        what: String,
        /// The encoder's complaint.
        why: String,
    },
}

/// `value` as the JSON the stores keep; an error (never an empty value) when it cannot be
/// encoded.
pub fn encode<T: serde::Serialize + ?Sized>(what: &str, value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Encode {
        what: what.to_owned(),
        why: e.to_string(),
    })
}

/// One change in a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set `key` to `value`.
    Put(Vec<u8>, Vec<u8>),
    /// Remove `key` (no error when absent).
    Delete(Vec<u8>),
}

/// Changes applied all together or not at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// The changes, applied in order.
    pub ops: Vec<Op>,
}

impl Batch {
    /// Adds a put.
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put(key.into(), value.into()));
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete(key.into()));
    }

    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// How far a write must have gone when `write` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// On disk (write-ahead log synced). For anything acknowledged or sent.
    Synced,
    /// In the process only; may be lost with the machine (not with the process). For
    /// bookkeeping whose loss only causes a harmless retry, such as deleting a delivered
    /// outbox entry.
    Lazy,
}

/// Key-value pairs, in key order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// An ordered key-value store with atomic batches.
pub trait Store: Send + Sync + 'static {
    /// The value of `key`, if any.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Every entry whose key starts with `prefix`, in key order.
    fn scan_prefix(&self, prefix: &[u8]) -> Result<Entries, StoreError>;
    /// At most `limit` entries whose key starts with `prefix` and is at least `from`, in key
    /// order: a page of a long prefix without reading all of it.
    fn scan_from(&self, prefix: &[u8], from: &[u8], limit: usize) -> Result<Entries, StoreError>;
    /// Applies `batch` atomically.
    fn write(&self, batch: Batch, durability: Durability) -> Result<(), StoreError>;
    /// The largest write (key and value) one entry may be, when the store has such a limit
    /// (etcd's request size); a write over it is refused and stops the daemon, so what comes
    /// in from outside is held under it at the door. `None`: no limit but memory's.
    fn largest_write(&self) -> Option<usize> {
        None
    }
    /// The shard and epoch this store writes under, for one owned by a member of a cluster
    /// (a clustered controller's book in etcd): its daemon's messages carry them. `None` for
    /// a store of its daemon's own.
    fn owned_at(&self) -> Option<mobiwf_proto::ShardEpoch> {
        None
    }
}

/// The error for an entry that cannot be read back: damage, or another version's format.
pub fn unreadable(key: &[u8], why: &dyn std::fmt::Display) -> StoreError {
    StoreError::Unreadable {
        key: String::from_utf8_lossy(key).into_owned(),
        why: why.to_string(),
    }
}

/// The number stored under `key` as decimal text; 0 when absent.
pub fn read_number(store: &dyn Store, key: &str) -> Result<u64, StoreError> {
    match store.get(key.as_bytes())? {
        Some(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| unreadable(key.as_bytes(), &"not a number")),
        None => Ok(0),
    }
}
