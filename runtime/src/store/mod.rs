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

/// A failure of the store. The process cannot go on safely after one: callers stop.
#[derive(Debug, thiserror::Error)]
#[error("store: {0}")]
pub struct StoreError(pub String);

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
    /// Applies `batch` atomically.
    fn write(&self, batch: Batch, durability: Durability) -> Result<(), StoreError>;
}

/// The error for an entry that cannot be read back: damage, or another version's format.
pub fn unreadable(key: &[u8], why: &dyn std::fmt::Display) -> StoreError {
    StoreError(format!(
        "the entry {} of the data directory cannot be read ({why}); the data directory is \
         damaged or from an incompatible version",
        String::from_utf8_lossy(key)
    ))
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
