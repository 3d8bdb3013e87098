//! An in-memory [`Store`], so that everything built on the store can be tested without
//! RocksDB, including what happens when a write fails.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::{Batch, Durability, Op, Store, StoreError};

/// The entries, in key order.
type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A [`Store`] kept in a `BTreeMap` behind a mutex. Nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: Mutex<Map>,
    fail_writes: AtomicBool,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// While `yes`, every [`Store::write`] fails with a [`StoreError`] and changes nothing,
    /// as if the disk had failed or the machine crashed before the write was durable. Reads
    /// keep working.
    pub fn fail_writes(&self, yes: bool) {
        self.fail_writes.store(yes, Ordering::SeqCst);
    }

    fn lock(&self) -> Result<MutexGuard<'_, Map>, StoreError> {
        self.map.lock().map_err(|_| {
            StoreError::Backend(
                "memory store: lock poisoned by a panic in another thread".to_string(),
            )
        })
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.lock()?.get(key).cloned())
    }

    fn scan_prefix(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let map = self.lock()?;
        Ok(map
            .range(prefix.to_vec()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect())
    }

    fn scan_from(
        &self,
        prefix: &[u8],
        from: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        let start = if from > prefix { from } else { prefix };
        let map = self.lock()?;
        Ok(map
            .range(start.to_vec()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .take(limit)
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect())
    }

    fn write(&self, batch: Batch, _durability: Durability) -> Result<(), StoreError> {
        if self.fail_writes.load(Ordering::SeqCst) {
            return Err(StoreError::Backend(
                "memory store: write failed (simulated by fail_writes)".to_string(),
            ));
        }
        // One lock for the whole batch: readers see all of it or none of it.
        let mut map = self.lock()?;
        for op in batch.ops {
            match op {
                Op::Put(key, value) => {
                    map.insert(key, value);
                }
                Op::Delete(key) => {
                    map.remove(&key);
                }
            }
        }
        Ok(())
    }
}
