//! A machine's simulated disk: an ordered key-value store written in atomic batches, as the
//! daemons' store (`mobiwf_runtime::store`) is. A synced batch is on disk when it is written; a
//! lazy one (the removal of a delivered outbox entry) survives the process but not the machine:
//! a machine crash undoes every lazy write made since the last synced one (a synced write
//! syncs the log of those before it, as RocksDB's write-ahead log does). A process crash loses
//! nothing written: what it loses is what it had not written yet (the group it was applying).

use std::collections::BTreeMap;

/// One change in a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set the key to the value.
    Put(Vec<u8>, Vec<u8>),
    /// Remove the key.
    Delete(Vec<u8>),
}

/// Changes written all together or not at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// The changes, in order.
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

/// A machine's disk.
#[derive(Debug, Default)]
pub struct Disk {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    /// What each lazy write since the last synced one replaced, newest last: undone by a
    /// machine crash.
    unsynced: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Disk {
    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&Vec<u8>> {
        self.map.get(key)
    }

    /// Every entry whose key starts with `prefix`, in key order.
    pub fn scan(&self, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.scan_from(prefix, prefix, usize::MAX)
    }

    /// At most `limit` entries under `prefix` from key `from` on, in key order.
    pub fn scan_from(&self, prefix: &[u8], from: &[u8], limit: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let start = if from > prefix { from } else { prefix };
        self.map
            .range(start.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The keys under `prefix`, in key order.
    pub fn keys(&self, prefix: &[u8]) -> impl Iterator<Item = &Vec<u8>> {
        self.map
            .range(prefix.to_vec()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k)
    }

    /// Writes `batch` synced: on disk when this returns, with every lazy write before it.
    pub fn write_synced(&mut self, batch: Batch) {
        self.apply(batch, false);
        self.unsynced.clear();
    }

    /// Writes `batch` lazily: a machine crash may undo it.
    pub fn write_lazy(&mut self, batch: Batch) {
        self.apply(batch, true);
    }

    fn apply(&mut self, batch: Batch, lazy: bool) {
        for op in batch.ops {
            let (key, before) = match op {
                Op::Put(k, v) => {
                    let before = self.map.insert(k.clone(), v);
                    (k, before)
                }
                Op::Delete(k) => {
                    let before = self.map.remove(&k);
                    (k, before)
                }
            };
            if lazy {
                self.unsynced.push((key, before));
            }
        }
    }

    /// The machine crashed: the lazy writes since the last synced one are lost.
    pub fn machine_crash(&mut self) {
        while let Some((key, before)) = self.unsynced.pop() {
            match before {
                Some(v) => self.map.insert(key, v),
                None => self.map.remove(&key),
            };
        }
    }

    /// The number stored under `key` as decimal text; 0 when absent or unreadable.
    pub fn number(&self, key: &str) -> u64 {
        self.get(key.as_bytes())
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_crash_undoes_the_lazy_writes_since_the_last_synced_one() {
        let mut disk = Disk::default();
        let mut b = Batch::default();
        b.put("a", "1");
        disk.write_synced(b);
        let mut lazy = Batch::default();
        lazy.delete("a");
        lazy.put("b", "2");
        disk.write_lazy(lazy);
        let mut lazy = Batch::default();
        lazy.put("c", "3");
        disk.write_lazy(lazy);
        assert_eq!(disk.get(b"a"), None);
        disk.machine_crash();
        assert_eq!(disk.get(b"a"), Some(&b"1".to_vec()));
        assert_eq!((disk.get(b"b"), disk.get(b"c")), (None, None));

        let mut lazy = Batch::default();
        lazy.put("d", "4");
        disk.write_lazy(lazy);
        disk.write_synced(Batch::default());
        disk.machine_crash();
        assert_eq!(
            disk.get(b"d"),
            Some(&b"4".to_vec()),
            "synced with a later write"
        );
    }
}
